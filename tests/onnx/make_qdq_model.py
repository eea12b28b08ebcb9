#!/usr/bin/python3
"""Writes qdq.onnx (and qdq_in.npy) for tests/scripts/qdq_test.sh: a QDQ model as onnxruntime's
quantization tool lays them out, made with onnx.helper and static scales: the input quantized to
int8 (zero point 3), a Conv whose weight is an int8 initializer with per-channel scales (axis 0)
and whose int32 bias is dequantized at s_in * s_w, ReLU, the activation quantized to uint8 (zero
point 10), a second per-tensor int8 weight Conv, and the output dequantized from uint8.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)


def arr(name, a):
    return numpy_helper.from_array(a, name)


s_x, zp_x = np.float32(0.02), np.int8(3)
s_w = rng.uniform(0.002, 0.01, 4).astype(np.float32)
w_q = rng.integers(-127, 128, (4, 3, 3, 3)).astype(np.int8)
b_q = rng.integers(-2000, 2000, 4).astype(np.int32)
s_a, zp_a = np.float32(0.05), np.uint8(10)
s_w2 = np.float32(0.01)
w2_q = rng.integers(-127, 128, (2, 4, 1, 1)).astype(np.int8)
s_y, zp_y = np.float32(0.04), np.uint8(128)

inits = [arr("s_x", s_x), arr("zp_x", zp_x), arr("w_q", w_q), arr("s_w", s_w), arr("zp_w", np.zeros(4, np.int8)),
         arr("b_q", b_q), arr("s_b", (s_x * s_w).astype(np.float32)), arr("zp_b", np.zeros(4, np.int32)),
         arr("s_a", s_a), arr("zp_a", zp_a), arr("w2_q", w2_q), arr("s_w2", s_w2), arr("zp_w2", np.int8(0)),
         arr("s_y", s_y), arr("zp_y", zp_y)]
nodes = [
    helper.make_node("QuantizeLinear", ["x", "s_x", "zp_x"], ["x_q"], name="q_in"),
    helper.make_node("DequantizeLinear", ["x_q", "s_x", "zp_x"], ["x_dq"], name="dq_in"),
    helper.make_node("DequantizeLinear", ["w_q", "s_w", "zp_w"], ["w"], axis=0, name="dq_w"),
    helper.make_node("DequantizeLinear", ["b_q", "s_b", "zp_b"], ["b"], axis=0, name="dq_b"),
    helper.make_node("Conv", ["x_dq", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
    helper.make_node("Relu", ["c"], ["r"], name="relu"),
    helper.make_node("QuantizeLinear", ["r", "s_a", "zp_a"], ["r_q"], name="q_a"),
    helper.make_node("DequantizeLinear", ["r_q", "s_a", "zp_a"], ["r_dq"], name="dq_a"),
    helper.make_node("DequantizeLinear", ["w2_q", "s_w2", "zp_w2"], ["w2"], name="dq_w2"),
    helper.make_node("Conv", ["r_dq", "w2"], ["c2"], name="conv2"),
    helper.make_node("QuantizeLinear", ["c2", "s_y", "zp_y"], ["y_q"], name="q_y"),
    helper.make_node("DequantizeLinear", ["y_q", "s_y", "zp_y"], ["y"], name="dq_y"),
]
g = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])], inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, f"{out}/qdq.onnx")
np.save(f"{out}/qdq_in.npy", rng.uniform(-1.5, 1.5, (1, 3, 8, 8)).astype(np.float32))
