#!/usr/bin/python3
"""Writes malformed ONNX models for tests/scripts/onnx_robust_test.sh (onnx.helper, never the checker,
which would refuse them): node input/output counts the operator does not have, required positions
given as empty names, attributes of the wrong type, a graph without outputs; and valid models whose
optional inputs are given as empty names. Each model is NAME.onnx; the expected compile answer is in
the test script.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, f"{out}/{name}.onnx")


x = helper.make_tensor_value_info("x", F, [2, 3])
y = helper.make_tensor_value_info("y", F, [2, 3])
scale = numpy_helper.from_array(np.array(0.1, np.float32), "s")
zp = numpy_helper.from_array(np.array(0, np.int8), "zp")

# nodes with no outputs (the fuzzer's crashes), with y produced elsewhere so the graph itself is fine
save("cast_no_output", [helper.make_node("Cast", ["x"], [], name="c", to=F), helper.make_node("Relu", ["x"], ["y"])],
     [x], [y])
save("quant_no_output", [helper.make_node("QuantizeLinear", ["x", "s", "zp"], [], name="q"),
                         helper.make_node("Relu", ["x"], ["y"])], [x], [y], [scale, zp])
# too few / too many inputs and outputs
save("add_one_input", [helper.make_node("Add", ["x"], ["y"], name="a")], [x], [y])
save("relu_two_inputs", [helper.make_node("Relu", ["x", "x"], ["y"], name="r")], [x], [y])
save("topk_one_output", [helper.make_node("TopK", ["x", "k"], ["y"], name="t")], [x], [y],
     [numpy_helper.from_array(np.array([3], np.int64), "k")])
save("relu_two_outputs", [helper.make_node("Relu", ["x"], ["y", "z"], name="r")], [x], [y])
# required positions given as empty names
save("relu_empty_input", [helper.make_node("Relu", [""], ["y"], name="r")], [x], [y])
save("cast_empty_output", [helper.make_node("Cast", ["x"], [""], name="c", to=F), helper.make_node("Relu", ["x"], ["y"])],
     [x], [y])
# a Cast inside an If branch with no outputs: subgraph nodes go through the same dispatcher
then_g = helper.make_graph([helper.make_node("Cast", ["x"], [], name="inner", to=F),
                            helper.make_node("Identity", ["x"], ["t"])], "then", [],
                           [helper.make_tensor_value_info("t", F, [2, 3])])
else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                           [helper.make_tensor_value_info("e", F, [2, 3])])
save("if_branch_cast_no_output",
     [helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g, else_branch=else_g)],
     [x], [y], [numpy_helper.from_array(np.array(True), "cond")])
# attributes of the wrong type
save("cast_to_string", [helper.make_node("Cast", ["x"], ["y"], name="c", to="float")], [x], [y])
save("transpose_perm_floats", [helper.make_node("Transpose", ["x"], ["y"], name="t", perm=[1.0, 0.0])],
     [x], [helper.make_tensor_value_info("y", F, [3, 2])])
save("leaky_alpha_int", [helper.make_node("LeakyRelu", ["x"], ["y"], name="l", alpha=2)], [x], [y])
# a graph without outputs
save("no_outputs", [helper.make_node("Relu", ["x"], ["r"])], [x], [])

# valid: optional inputs given as empty names (Clip without min, Resize without roi and scales)
save("clip_empty_min", [helper.make_node("Clip", ["x", "", "hi"], ["y"], name="clip")], [x], [y],
     [numpy_helper.from_array(np.array(0.25, np.float32), "hi")])
x4 = helper.make_tensor_value_info("x4", F, [1, 1, 2, 2])
save("resize_empty_roi_scales",
     [helper.make_node("Resize", ["x4", "", "", "sizes"], ["y4"], name="rs", mode="nearest")], [x4],
     [helper.make_tensor_value_info("y4", F, [1, 1, 4, 4])],
     [numpy_helper.from_array(np.array([1, 1, 4, 4], np.int64), "sizes")], opset=13)
# found by fuzz_onnx_compile (slow under ASan): an upsampling whose dense weight matrix would have 12.6M entries
save("resize_huge",
     [helper.make_node("Resize", ["x4", "", "", "sizes"], ["y4"], name="rs", mode="nearest")], [x4],
     [helper.make_tensor_value_info("y4", F, [1, 1, 4, 6291460])],
     [numpy_helper.from_array(np.array([1, 1, 4, 6291460], np.int64), "sizes")], opset=13)
# and one whose result would have 2.2G elements: refused before any weight is computed
save("resize_oversize",
     [helper.make_node("Resize", ["x4", "", "", "sizes"], ["y4"], name="rs", mode="nearest")], [x4],
     [helper.make_tensor_value_info("y4", F, [33, 4128813, 4, 4])],
     [numpy_helper.from_array(np.array([33, 4128813, 4, 4], np.int64), "sizes")], opset=13)
rng = np.random.default_rng(3)
np.save(f"{out}/x.npy", rng.normal(0, 1, (2, 3)).astype(np.float32))
np.save(f"{out}/x4.npy", rng.normal(0, 1, (1, 1, 2, 2)).astype(np.float32))
