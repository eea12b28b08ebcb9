#!/usr/bin/python3
"""Writes a small transformer block and its data for tests/scripts/quant_test.sh (onnx.helper,
seeded numpy): the operators of a ViT encoder layer at toy size.

qtf.onnx: x [1,8,16] -> LayerNormalization -> Q, K, V (MatMul + Add) -> Q K^T (MatMul of two
          activations) * 1/4 -> Softmax -> P V (MatMul of two activations) -> MatMul + Add ->
          residual Add -> LayerNormalization -> MatMul + Add -> GELU (x * 0.5 * (1 + Erf(x/sqrt2)))
          -> MatMul + Add -> residual Add -> y [1,8,16]
calib_tf/NN.npy: 16 calibration inputs; tf_held_NN.npy: 4 held-out inputs (other seeds); names
apart from make_quant_cnn.py's, which writes into the same directory
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(23)
D, T, H = 16, 8, 32


def init(name, *shape, lo=-0.5, hi=0.5):
    return numpy_helper.from_array(rng.uniform(lo, hi, shape).astype(np.float32), name)


def scalar(name, v):
    return numpy_helper.from_array(np.array(v, np.float32), name)


inits = [init("g1", D, lo=0.8, hi=1.2), init("be1", D, lo=-0.1, hi=0.1),
         init("wq", D, D), init("bq", D, lo=-0.1, hi=0.1), init("wk", D, D), init("bk", D, lo=-0.1, hi=0.1),
         init("wv", D, D), init("bv", D, lo=-0.1, hi=0.1), init("wo", D, D), init("bo", D, lo=-0.1, hi=0.1),
         init("g2", D, lo=0.8, hi=1.2), init("be2", D, lo=-0.1, hi=0.1),
         init("w1", D, H), init("b1", H, lo=-0.1, hi=0.1), init("w2", H, D, lo=-0.3, hi=0.3),
         init("b2", D, lo=-0.1, hi=0.1),
         scalar("inv_sqrt_d", 0.25), scalar("inv_sqrt2", 1 / np.sqrt(2)), scalar("one", 1.0), scalar("half", 0.5)]


def linear(x, w, b, y):
    return [helper.make_node("MatMul", [x, w], [y + "_mm"]), helper.make_node("Add", [y + "_mm", b], [y])]


nodes = [helper.make_node("LayerNormalization", ["x", "g1", "be1"], ["ln1"], axis=-1, epsilon=1e-5)]
nodes += linear("ln1", "wq", "bq", "q") + linear("ln1", "wk", "bk", "k") + linear("ln1", "wv", "bv", "v")
nodes += [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
          helper.make_node("MatMul", ["q", "kt"], ["qk"]),
          helper.make_node("Mul", ["qk", "inv_sqrt_d"], ["s"]),
          helper.make_node("Softmax", ["s"], ["p"], axis=-1),
          helper.make_node("MatMul", ["p", "v"], ["a"])]
nodes += linear("a", "wo", "bo", "o")
nodes += [helper.make_node("Add", ["x", "o"], ["r1"]),
          helper.make_node("LayerNormalization", ["r1", "g2", "be2"], ["ln2"], axis=-1, epsilon=1e-5)]
nodes += linear("ln2", "w1", "b1", "h")
nodes += [helper.make_node("Mul", ["h", "inv_sqrt2"], ["hs"]), helper.make_node("Erf", ["hs"], ["he"]),
          helper.make_node("Add", ["he", "one"], ["he1"]), helper.make_node("Mul", ["h", "he1"], ["hg"]),
          helper.make_node("Mul", ["hg", "half"], ["gelu"])]
nodes += linear("gelu", "w2", "b2", "f")
nodes += [helper.make_node("Add", ["r1", "f"], ["y"])]
graph = helper.make_graph(nodes, "qtf", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, T, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, T, D])], inits)
m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
m.ir_version = 8
onnx.checker.check_model(m)
onnx.save(m, f"{out}/qtf.onnx")


def tokens(seed):
    return np.random.default_rng(seed).standard_normal((1, T, D)).astype(np.float32)


os.makedirs(f"{out}/calib_tf", exist_ok=True)
for k in range(16):
    np.save(f"{out}/calib_tf/{k:02d}.npy", tokens(100 + k))
for k in range(4):
    np.save(f"{out}/tf_held_{k:02d}.npy", tokens(500 + k))
