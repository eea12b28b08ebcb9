#!/usr/bin/python3
"""Writes qdq_cnn.onnx and held-out inputs qdq_cnn_in_NN.npy for tests/scripts/qdq_test.sh: a
statically quantized CNN in the QDQ layout onnxruntime's quantization tool writes (every tensor
between operators is QuantizeLinear -> DequantizeLinear; weights are int8 initializers read by
DequantizeLinear; biases int32 at s_in * s_w), made with onnx.helper:

  x -Q/DQ(int8)-> Conv(per-channel int8 W, int32 b) -> Relu -Q/DQ(uint8)-> MaxPool -Q/DQ(same)->
  Conv(per-tensor int8 W) -Q/DQ(int8)-> a;  Conv 1x1(per-channel) on a -Q/DQ(int8)-> c;
  Add(a, c) -Q/DQ(int8)-> GlobalAveragePool -Q/DQ(int8)-> Flatten -> Gemm(per-channel int8 W,
  transB) -Q/DQ(uint8)-> y

Static scales come from the FP network (same weights, numpy float64) run on 16 seeded inputs
(min/max, as a calibrated quantizer would have chosen them); weights are symmetric int8 with the
largest code 127 per channel (or per tensor), as onnxruntime quantizes them.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(21)


def conv_np(x, w, b, pad):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,oc->nohw", xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)


def sym_q(w, axis):
    """Symmetric int8 codes and scales, per channel on `axis` (None: per tensor)."""
    if axis is None:
        s = np.float32(np.abs(w).max() / 127)
        return np.clip(np.rint(w / s), -127, 127).astype(np.int8), s
    red = tuple(k for k in range(w.ndim) if k != axis)
    s = (np.abs(w).max(axis=red) / 127).astype(np.float32)
    shp = [1] * w.ndim
    shp[axis] = -1
    return np.clip(np.rint(w / s.reshape(shp)), -127, 127).astype(np.int8), s


def act_q(v, unsigned):
    lo, hi = min(float(v.min()), 0.0), max(float(v.max()), 0.0)
    if unsigned:
        s = np.float32((hi - lo) / 255)
        return s, np.uint8(np.clip(np.rint(-lo / s), 0, 255))
    s = np.float32((hi - lo) / 255)
    return s, np.int8(np.clip(np.rint(-128 - lo / s), -128, 127))


w1 = rng.normal(0, 0.3, (8, 3, 3, 3))
b1 = rng.normal(0, 0.1, 8)
w2 = rng.normal(0, 0.15, (8, 8, 3, 3))
w3 = rng.normal(0, 0.3, (8, 8, 1, 1))
b3 = rng.normal(0, 0.1, 8)
wf = rng.normal(0, 0.3, (5, 8))  # Gemm transB: [N, K]
bf = rng.normal(0, 0.1, 5)
w1q, s_w1 = sym_q(w1, 0)
w2q, s_w2 = sym_q(w2, None)
w3q, s_w3 = sym_q(w3, 0)
wfq, s_wf = sym_q(wf, 0)
# the FP network on the quantized weights (what the QDQ model's DequantizeLinear gives back)
W1, W2, W3, WF = (w1q * s_w1.reshape(-1, 1, 1, 1), w2q * s_w2, w3q * s_w3.reshape(-1, 1, 1, 1),
                  wfq * s_wf.reshape(-1, 1))
calib = rng.normal(0, 1, (16, 3, 10, 10))
x = calib
r = np.maximum(conv_np(x, W1, b1, 1), 0)
p = r.reshape(16, 8, 5, 2, 5, 2).max(axis=(3, 5))
a = conv_np(p, W2, np.zeros(8), 1)
c = conv_np(a, W3, b3, 0)
sm = a + c
g = sm.mean(axis=(2, 3))
yv = g @ WF.T + bf
s_x, zp_x = act_q(x, False)
s_r, zp_r = act_q(r, True)
s_a, zp_a = act_q(a, False)
s_c, zp_c = act_q(c, False)
s_s, zp_s = act_q(sm, False)
s_g, zp_g = act_q(g, False)
s_y, zp_y = act_q(yv, True)

inits = []


def init(name, v):
    inits.append(numpy_helper.from_array(np.asarray(v), name))
    return name


nodes = []


def qdq(t, s, zp, name):
    init(f"{name}_s", s)
    init(f"{name}_zp", zp)
    nodes.append(helper.make_node("QuantizeLinear", [t, f"{name}_s", f"{name}_zp"], [f"{name}_q"], name=f"q_{name}"))
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_zp"], [f"{name}_dq"],
                                  name=f"dq_{name}"))
    return f"{name}_dq"


def weight(name, q, s, axis, bias=None, s_in=None):
    init(f"{name}_wq", q)
    init(f"{name}_ws", s)
    init(f"{name}_wzp", np.zeros(np.shape(s), np.int8))
    kw = {"axis": axis} if np.ndim(s) else {}
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_wq", f"{name}_ws", f"{name}_wzp"], [f"{name}_w"],
                                  name=f"dq_{name}_w", **kw))
    if bias is None:
        return [f"{name}_w"]
    sb = (np.float32(s_in) * np.asarray(s, np.float32)).astype(np.float32)
    init(f"{name}_bq", np.rint(bias / sb).astype(np.int32))
    init(f"{name}_bs", sb)
    init(f"{name}_bzp", np.zeros(sb.shape, np.int32))
    nodes.append(helper.make_node("DequantizeLinear", [f"{name}_bq", f"{name}_bs", f"{name}_bzp"], [f"{name}_b"],
                                  name=f"dq_{name}_b", axis=0))
    return [f"{name}_w", f"{name}_b"]


t = qdq("x", s_x, zp_x, "xin")
nodes.append(helper.make_node("Conv", [t] + weight("conv1", w1q, s_w1, 0, b1, s_x), ["c1"], pads=[1, 1, 1, 1],
                              name="conv1"))
nodes.append(helper.make_node("Relu", ["c1"], ["r1"], name="relu1"))
t = qdq("r1", s_r, zp_r, "r1")
nodes.append(helper.make_node("MaxPool", [t], ["p1"], kernel_shape=[2, 2], strides=[2, 2], name="pool"))
t = qdq("p1", s_r, zp_r, "p1")
nodes.append(helper.make_node("Conv", [t] + weight("conv2", w2q, s_w2, None), ["c2"], pads=[1, 1, 1, 1], name="conv2"))
ta = qdq("c2", s_a, zp_a, "a")
nodes.append(helper.make_node("Conv", [ta] + weight("conv3", w3q, s_w3, 0, b3, s_a), ["c3"], name="conv3"))
tc = qdq("c3", s_c, zp_c, "c")
nodes.append(helper.make_node("Add", [ta, tc], ["sum"], name="residual"))
t = qdq("sum", s_s, zp_s, "sum")
nodes.append(helper.make_node("GlobalAveragePool", [t], ["gap"], name="gap"))
t = qdq("gap", s_g, zp_g, "gap")
nodes.append(helper.make_node("Flatten", [t], ["flat"], name="flatten"))
nodes.append(helper.make_node("Gemm", ["flat"] + weight("fc", wfq, s_wf, 0, bf, s_g), ["fc"], transB=1, name="fc"))
nodes.append(helper.make_node("QuantizeLinear", ["fc", init("y_s", s_y), init("y_zp", zp_y)], ["y_q"], name="q_y"))
nodes.append(helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_zp"], ["y"], name="dq_y"))

graph = helper.make_graph(nodes, "qdq_cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.checker.check_model(m)
onnx.save(m, f"{out}/qdq_cnn.onnx")
for k in range(8):
    np.save(f"{out}/qdq_cnn_in_{k:02d}.npy", rng.normal(0, 1, (1, 3, 10, 10)).astype(np.float32))
