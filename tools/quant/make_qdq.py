#!/usr/bin/python3
"""Turns a float CNN (the model zoo's ONNX exports) into a QDQ model the way onnxruntime's
quantize_static (QDQ format, default settings) lays one out, for measuring tosac's QDQ path on
real graphs without onnxruntime's Python package:

  BatchNormalization folded into the Conv before it (onnxruntime's pre-processing does that);
  uint8 asymmetric activations (MinMax ranges over the calibration inputs, widened to contain 0)
  on the graph input and every node output, except a Conv/Gemm read only by a Relu (the pair is
  quantized after the Relu) and Flatten/Reshape (they keep their input's codes); MaxPool's output
  reuses its input's q-params; int8 symmetric per-channel weights (scale = absmax/127), int32
  bias at s_in * s_w.

Ranges come from onnxruntime-node (tools/zoo/ort_run.js) running the BN-folded float model with
every intermediate value as an output.

  tools/quant/make_qdq.py MODEL.onnx CALIB.npy OUT.onnx [--weights int8|uint8]

--weights uint8 stores the same weight codes shifted by 128 as uint8 with zero point 128: the same
dequantized weights and integer arithmetic, for which onnxruntime runs its u8 x u8 kernels (exact
on AVX2, where its u8 x s8 ones let int16 pair sums saturate; bench/vs_ort.py --ort-weights).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

wtype = "int8"
if len(sys.argv) == 6 and sys.argv[4] == "--weights" and sys.argv[5] in ("int8", "uint8"):
    wtype = sys.argv[5]
elif len(sys.argv) != 4:
    sys.exit("usage: make_qdq.py MODEL.onnx CALIB.npy OUT.onnx [--weights int8|uint8]")
src, calib, dst = sys.argv[1:4]
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
m = onnx.load(src)
g = m.graph
init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
users = {}
for n in g.node:
    for i in n.input:
        users.setdefault(i, []).append(n)

# fold BatchNormalization into the Conv that feeds it alone
nodes, drop = [], set()
for n in g.node:
    if n.op_type == "BatchNormalization":
        conv = [c for c in g.node if c.output[0] == n.input[0]]
        if conv and conv[0].op_type == "Conv" and len(users[n.input[0]]) == 1:
            c = conv[0]
            gamma, beta, mean, var = (init[k] for k in n.input[1:5])
            eps = next((a.f for a in n.attribute if a.name == "epsilon"), 1e-5)
            k = gamma / np.sqrt(var + eps)
            w = init[c.input[1]] * k.reshape(-1, 1, 1, 1)
            b = (init[c.input[2]] if len(c.input) > 2 else 0) * k + beta - mean * k
            init[c.input[1] + "_bn"] = w.astype(np.float32)
            init[c.output[0] + "_bias_bn"] = b.astype(np.float32)
            c.input[1] = c.input[1] + "_bn"
            if len(c.input) > 2:
                c.input[2] = c.output[0] + "_bias_bn"
            else:
                c.input.append(c.output[0] + "_bias_bn")
            c.output[0] = n.output[0]
            drop.add(id(n))
            continue
    nodes.append(n)
nodes = [n for n in nodes if id(n) not in drop]
users = {}
for n in nodes:
    for i in n.input:
        users.setdefault(i, []).append(n)

# ranges: every float value an operator computes, as an output of the float model
inferred = onnx.shape_inference.infer_shapes(m).graph
is_float = {v.name for v in list(inferred.value_info) + list(inferred.output)
            if v.type.tensor_type.elem_type == TensorProto.FLOAT}
acts = [g.input[0].name] + [o for n in nodes if n.op_type != "Constant" for o in n.output if o in is_float]
used = {i for n in nodes for i in n.input}
fm = helper.make_model(helper.make_graph(nodes, "f", list(g.input),
                                         [helper.make_tensor_value_info(a, TensorProto.FLOAT, None) for a in acts],
                                         [numpy_helper.from_array(v, k) for k, v in init.items() if k in used]),
                       opset_imports=m.opset_import)
fm.ir_version = m.ir_version
lo, hi = {}, {}
with tempfile.TemporaryDirectory() as tmp:
    onnx.save(fm, f"{tmp}/f.onnx")
    data = np.load(calib)
    data = data.reshape((-1,) + tuple(d.dim_value for d in g.input[0].type.tensor_type.shape.dim))
    for s in range(data.shape[0]):
        np.save(f"{tmp}/in.npy", data[s])
        subprocess.run(["node", f"{root}/tools/zoo/ort_run.js", f"{tmp}/f.onnx", f"{tmp}/in.npy", f"{tmp}/o"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for a in acts:
            v = np.load(f"{tmp}/o/{a.replace('/', '_')}.npy")
            lo[a], hi[a] = min(lo.get(a, 0.0), float(v.min())), max(hi.get(a, 0.0), float(v.max()))

out_nodes, inits, qp = [], dict(init), {}


def act_qparams(a):
    s = np.float32((hi[a] - lo[a]) / 255 or 1.0)
    return s, np.uint8(np.clip(round(-lo[a] / float(s)), 0, 255))


def add_qdq(a, q):
    s, zp = q
    inits[a + "_s"], inits[a + "_zp"] = s, zp
    out_nodes.append(helper.make_node("QuantizeLinear", [a, a + "_s", a + "_zp"], [a + "_q"], name=a + "_Q"))
    out_nodes.append(helper.make_node("DequantizeLinear", [a + "_q", a + "_s", a + "_zp"], [a + "_dq"], name=a + "_DQ"))
    qp[a] = q


def read(a):
    return a + "_dq" if a in qp else a


add_qdq(g.input[0].name, act_qparams(g.input[0].name))
for n in nodes:
    ins = [read(i) for i in n.input]
    if n.op_type in ("Conv", "Gemm"):
        w = init[n.input[1]]
        s_w = (np.abs(w).reshape(w.shape[0], -1).max(axis=1) / 127).astype(np.float32)
        s_w[s_w == 0] = 1
        wq = np.clip(np.round(w / s_w.reshape((-1,) + (1,) * (w.ndim - 1))), -127, 127).astype(np.int8)
        wn = n.input[1] + "_w"
        if wtype == "uint8":
            wq = (wq.astype(np.int16) + 128).astype(np.uint8)
        inits[wn + "_q"], inits[wn + "_s"] = wq, s_w
        inits[wn + "_zp"] = np.full(len(s_w), 128, np.uint8) if wtype == "uint8" else np.zeros(len(s_w), np.int8)
        out_nodes.append(helper.make_node("DequantizeLinear", [wn + "_q", wn + "_s", wn + "_zp"], [wn], axis=0,
                                          name=wn + "_DQ"))
        ins[1] = wn
        if len(n.input) > 2:
            s_b = (qp[n.input[0]][0] * s_w).astype(np.float32)
            bq = np.round(init[n.input[2]] / s_b).astype(np.int32)
            bn = n.input[2] + "_b"
            inits[bn + "_q"], inits[bn + "_s"], inits[bn + "_zp"] = bq, s_b, np.zeros(len(bq), np.int32)
            out_nodes.append(helper.make_node("DequantizeLinear", [bn + "_q", bn + "_s", bn + "_zp"], [bn], axis=0,
                                              name=bn + "_DQ"))
            ins[2] = bn
    nn = helper.make_node(n.op_type, ins, list(n.output), name=n.name)
    nn.attribute.extend(n.attribute)
    out_nodes.append(nn)
    y = n.output[0]
    only_relu = n.op_type in ("Conv", "Gemm") and all(u.op_type == "Relu" for u in users.get(y, [])) and users.get(y)
    if only_relu or n.op_type in ("Flatten", "Reshape"):
        if n.op_type in ("Flatten", "Reshape") and n.input[0] in qp:  # the input's codes, as onnxruntime
            qp[y] = qp[n.input[0]]
            out_nodes[-1].output[0] = y + "_dq"
        continue
    if y in lo:
        add_qdq(y, qp[n.input[0]] if n.op_type == "MaxPool" and n.input[0] in qp else act_qparams(y))

# a graph output y is now read by its QuantizeLinear: the float value becomes y_float and the
# DequantizeLinear's result takes the name y
outs = {o.name for o in g.output}
for n in out_nodes:
    n.input[:] = [i + "_float" if i in outs else i for i in n.input]
    n.output[:] = [o + "_float" if o in outs else o[:-3] if o.endswith("_dq") and o[:-3] in outs else o
                   for o in n.output]
final = out_nodes
used = {i for n in final for i in n.input}
inits = {k: v for k, v in inits.items() if k in used}
qm = helper.make_model(helper.make_graph(final, "qdq", list(g.input), list(g.output),
                                         [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()]),
                       opset_imports=m.opset_import)
qm.ir_version = m.ir_version
onnx.checker.check_model(qm)
onnx.save(qm, dst)
