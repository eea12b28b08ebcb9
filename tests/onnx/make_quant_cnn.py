#!/usr/bin/python3
"""Writes a small CNN and its data for tests/scripts/quant_test.sh (onnx.helper, seeded numpy).

qcnn.onnx: Conv -> BatchNormalization -> Relu -> [Conv 1x1 -> Clip(0,6)] and
           [depthwise Conv -> x*Sigmoid(x)] -> Concat -> AveragePool 2x2 -> Conv + residual Add ->
           Relu -> GlobalAveragePool -> Flatten -> Gemm; input "x" [1,3,16,16], output "y" [1,10]
calib/NN.npy: 16 calibration inputs, one per file; calib_batch.npy: the same as one [16,1,3,16,16]
held_NN.npy: 4 held-out inputs (other seeds)
Inputs are smooth random fields plus noise, as the model zoo's images.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)


def init(name, *shape, lo=-0.5, hi=0.5):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def image(seed):
    g = np.random.default_rng(seed)
    lo = g.standard_normal((1, 3, 4, 4))
    up = np.kron(lo, np.ones((1, 1, 4, 4)))
    return (up * 1.5 + g.standard_normal((1, 3, 16, 16)) * 0.5).astype(np.float32)


inits = [init("w1", 8, 3, 3, 3), init("b1", 8), init("gamma", 8, lo=0.5, hi=1.5), init("beta", 8),
         init("mean", 8), init("var", 8, lo=0.5, hi=2.0), init("wa", 8, 8, 1, 1), init("ba", 8),
         init("wd", 8, 1, 3, 3), init("bd", 8), init("w3", 16, 16, 3, 3, lo=-0.2, hi=0.2), init("b3", 16),
         init("wf", 10, 16), init("bf", 10),
         numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
         numpy_helper.from_array(np.array(6.0, np.float32), "six")]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "mean", "var"], ["bn"], name="bn1"),
    helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "wa", "ba"], ["ca"], name="conv_a"),
    helper.make_node("Clip", ["ca", "zero", "six"], ["ra"], name="relu6_a"),
    helper.make_node("Conv", ["r1", "wd", "bd"], ["cd"], pads=[1, 1, 1, 1], group=8, name="dwconv"),
    helper.make_node("Sigmoid", ["cd"], ["sd"], name="sig"),
    helper.make_node("Mul", ["cd", "sd"], ["silu"], name="silu"),
    helper.make_node("Concat", ["ra", "silu"], ["cat"], axis=1, name="concat"),
    helper.make_node("AveragePool", ["cat"], ["ap"], kernel_shape=[2, 2], strides=[2, 2], name="avgpool"),
    helper.make_node("Conv", ["ap", "w3", "b3"], ["c3"], pads=[1, 1, 1, 1], name="conv3"),
    helper.make_node("Add", ["c3", "ap"], ["res"], name="residual"),
    helper.make_node("Relu", ["res"], ["r3"], name="relu3"),
    helper.make_node("GlobalAveragePool", ["r3"], ["gap"], name="gap"),
    helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
    helper.make_node("Gemm", ["flat", "wf", "bf"], ["y"], transB=1, name="fc"),
]
graph = helper.make_graph(nodes, "qcnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, f"{out}/qcnn.onnx")

os.makedirs(f"{out}/calib", exist_ok=True)
calib = [image(100 + k) for k in range(16)]
for k, x in enumerate(calib):
    np.save(f"{out}/calib/{k:02d}.npy", x)
np.save(f"{out}/calib_batch.npy", np.stack(calib))
for k in range(4):
    np.save(f"{out}/held_{k:02d}.npy", image(500 + k))
