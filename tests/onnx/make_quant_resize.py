#!/usr/bin/python3
"""Writes qresize.onnx, calibration inputs (calib/NN.npy) and held-out inputs (held_NN.npy) for
tests/scripts/quant_resize_test.sh: conv -> ReLU -> Resize nearest x2 (asymmetric, floor) -> conv ->
Resize linear x2 (half_pixel) -> conv, the upsampling of segmentation and detection necks, with
seeded random weights (onnx.helper, opset 13)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)


def conv(name, x, cin, cout, y):
    w = rng.normal(0, (2.0 / (cin * 9)) ** 0.5, (cout, cin, 3, 3)).astype(np.float32)
    b = rng.normal(0, 0.1, cout).astype(np.float32)
    inits.extend([numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")])
    return helper.make_node("Conv", [x, name + "_w", name + "_b"], [y], pads=[1, 1, 1, 1], name=name)


inits = [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
nodes = [
    conv("conv1", "x", 3, 8, "c1"),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Resize", ["r1", "", "scales"], ["u1"], mode="nearest", coordinate_transformation_mode="asymmetric",
                     nearest_mode="floor", name="up_nearest"),
    conv("conv2", "u1", 8, 8, "c2"),
    helper.make_node("Resize", ["c2", "", "scales"], ["u2"], mode="linear", coordinate_transformation_mode="half_pixel",
                     name="up_linear"),
    conv("conv3", "u2", 8, 4, "y"),
]
g = helper.make_graph(nodes, "qresize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 24, 24])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, os.path.join(out, "qresize.onnx"))
os.makedirs(os.path.join(out, "calib"), exist_ok=True)
for k in range(16):
    np.save(os.path.join(out, "calib", f"{k:02d}.npy"), rng.normal(0, 1, (1, 3, 6, 6)).astype(np.float32))
for k in range(4):
    np.save(os.path.join(out, f"held_{k:02d}.npy"), rng.normal(0, 1, (1, 3, 6, 6)).astype(np.float32))
