#!/usr/bin/python3
"""Writes small ONNX models for tests/scripts/compile_test.sh (onnx.helper, seeded numpy weights).

cnn.onnx: Conv -> BatchNormalization -> Relu -> MaxPool -> Conv(1x1) + residual Add -> Relu ->
          GlobalAveragePool -> Flatten -> Gemm, input "x" [1,3,8,8], output "y" [1,5]
dup.onnx: y = Exp(x) returned in two output slots (the second through an Identity), plus Abs(y)
bad.onnx: a Conv whose weight is a graph input (cannot be lowered without --bind)
edge_*.onnx: inputs the compile fuzzer once crashed on (must fail or succeed cleanly)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def init(name, *shape, lo=-0.5, hi=0.5):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def save(graph, name):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, f"{out}/{name}")


inits = [init("w1", 4, 3, 3, 3), init("b1", 4), init("gamma", 4, lo=0.5, hi=1.5), init("beta", 4),
         init("mean", 4), init("var", 4, lo=0.5, hi=2.0), init("w2", 4, 4, 1, 1), init("b2", 4),
         init("wf", 5, 4), init("bf", 5)]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"], name="bn1"),
    helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
    helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool1"),
    helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], name="conv2"),
    helper.make_node("Add", ["c2", "p1"], ["a"], name="residual"),
    helper.make_node("Relu", ["a"], ["r2"], name="relu2"),
    helper.make_node("GlobalAveragePool", ["r2"], ["g"], name="gap"),
    helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc"),
]
save(helper.make_graph(nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits), "cnn.onnx")

nodes = [helper.make_node("Exp", ["x"], ["y"], name="exp"), helper.make_node("Identity", ["y"], ["y2"], name="id"),
         helper.make_node("Abs", ["y"], ["z"], name="abs")]
outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in ("y", "y2", "z")]
save(helper.make_graph(nodes, "dup", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])], outs), "dup.onnx")

nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="conv_w_input")]
ins = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
       helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3, 3, 3])]
save(helper.make_graph(nodes, "bad", ins, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])]),
     "bad.onnx")
np.save(f"{out}/x_nchw.npy", rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
np.save(f"{out}/x_dup.npy", rng.standard_normal((2, 3)).astype(np.float32))

# fuzzer regressions: Shape with start beyond the rank; a graph without operators; a Reshape to
# 2^62 x 15 elements
big = numpy_helper.from_array(np.array([15, 2**62], dtype=np.int64), "big_shape")
nodes = [helper.make_node("Reshape", ["x", "big_shape"], ["y"], name="reshape_huge")]
save(helper.make_graph(nodes, "edge_reshape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [15, 2**62])], [big]), "edge_reshape.onnx")
nodes = [helper.make_node("Shape", ["x"], ["s"], start=100, name="shape_far"),
         helper.make_node("Relu", ["x"], ["y"], name="relu")]
save(helper.make_graph(nodes, "edge_shape", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])]), "edge_shape.onnx")
m = helper.make_model(helper.make_graph([], "edge_empty", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                                        []), opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.save(m, f"{out}/edge_empty.onnx")  # no outputs: not a valid model for onnx.checker, on purpose
