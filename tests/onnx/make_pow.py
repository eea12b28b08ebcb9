#!/usr/bin/python3
"""Models for tests/scripts/pow_test.sh (issue 12): ONNX Pow at the edges of its domain, and the
exports that hit it in practice (torch's default opset writes LayerNorm as Pow(x - mean, 2)).

Writes into OUTDIR:
  pow_const.onnx    x[64] -> one output per constant exponent in EXPONENTS (Pow(x, e))
  pow_tensor.onnx   x[64], y[64] -> Pow(x, y) with a run-time exponent
  pow_int.onnx      x int32[8] -> Pow(x, 2), Pow(x, 3) (integer base, the result rounded)
  x.npy y.npy xi.npy  inputs covering negative, zero, +-inf, NaN, 1, -1 and ordinary values
  expected_*.npy    numpy's np.power in float32 (and int32), the independent oracle
  layernorm.onnx    torch.nn.LayerNorm(8) at torch's default opset; layernorm.input.npy
  vit.onnx          torchvision VisionTransformer (small config) at the default opset; vit.input.npy
"""
import os
import sys
import warnings

import numpy as np
import onnx
from onnx import TensorProto, helper

EXPONENTS = [2.0, 3.0, 4.0, 7.0, 0.5, -0.5, -1.0, -2.0, -3.0, 1.5, -2.5, 0.0, 1.0, 65.0, 66.0, 1.0 / 3.0]


def edge_values():
    v = [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 3.7, -3.7, 1e-20, -1e-20, 10.0]
    rng = np.random.default_rng(12)
    return np.array(v + list(rng.normal(0, 2, 64 - len(v))), np.float32)


def pow_models(out):
    x = edge_values()
    outs, nodes, inits = [], [], []
    for k, e in enumerate(EXPONENTS):
        inits.append(helper.make_tensor("e%d" % k, TensorProto.FLOAT, [], [e]))
        nodes.append(helper.make_node("Pow", ["x", "e%d" % k], ["y%d" % k]))
        outs.append(helper.make_tensor_value_info("y%d" % k, TensorProto.FLOAT, [64]))
        with np.errstate(all="ignore"):
            np.save(os.path.join(out, "expected_y%d.npy" % k), np.power(x, np.float32(e)))
    g = helper.make_graph(nodes, "pow_const", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64])], outs, inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(out, "pow_const.onnx"))
    np.save(os.path.join(out, "x.npy"), x)

    # every (base, exponent) pair of a grid of special values, then ordinary random ones
    sv = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, np.inf, -np.inf, np.nan, -3.0, 3.0], np.float32)
    ev = np.array([0.0, 1.0, 2.0, 3.0, -1.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 2.5], np.float32)
    gx, gy = np.meshgrid(sv, ev)
    rng = np.random.default_rng(13)
    xs = np.concatenate([gx.ravel(), rng.uniform(0.1, 4, 56)]).astype(np.float32)
    ys = np.concatenate([gy.ravel(), rng.uniform(-3, 3, 56)]).astype(np.float32)
    n = xs.size
    g = helper.make_graph([helper.make_node("Pow", ["x", "y"], ["z"])], "pow_tensor",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, [n])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [n])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(out, "pow_tensor.onnx"))
    np.save(os.path.join(out, "xt.npy"), xs)
    np.save(os.path.join(out, "yt.npy"), ys)
    with np.errstate(all="ignore"):
        np.save(os.path.join(out, "expected_z.npy"), np.power(xs, ys))

    xi = np.array([0, 1, -1, 2, -3, 7, -12, 100], np.int32)
    inits = [helper.make_tensor("two", TensorProto.INT32, [], [2]), helper.make_tensor("three", TensorProto.INT32, [], [3])]
    g = helper.make_graph([helper.make_node("Pow", ["x", "two"], ["p2"]), helper.make_node("Pow", ["x", "three"], ["p3"])],
                          "pow_int", [helper.make_tensor_value_info("x", TensorProto.INT32, [8])],
                          [helper.make_tensor_value_info("p2", TensorProto.INT32, [8]),
                           helper.make_tensor_value_info("p3", TensorProto.INT32, [8])], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), os.path.join(out, "pow_int.onnx"))
    np.save(os.path.join(out, "xi.npy"), xi)
    np.save(os.path.join(out, "expected_p2.npy"), xi ** 2)
    np.save(os.path.join(out, "expected_p3.npy"), xi ** 3)


def torch_models(out):
    import torch
    import torchvision
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
    import make_zoo
    torch.manual_seed(3)
    gen = torch.Generator().manual_seed(4)
    ln = torch.nn.LayerNorm(8).eval()
    make_zoo.randomize_zero_params(ln, gen)
    with torch.no_grad():
        ln.weight.copy_(torch.rand(8, generator=gen) + 0.5)
    vit = make_zoo.vit_small()[0].eval()
    make_zoo.randomize_zero_params(vit, gen)
    for name, m, shape in [("layernorm", ln, (2, 5, 8)), ("vit", vit, (1, 3, 32, 32))]:
        x = (torch.randn(shape, generator=gen) * 2 + 0.3).numpy().astype(np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # no opset_version: torch's default, which writes LayerNorm with Pow (opset < 17)
            torch.onnx.export(m, (torch.from_numpy(x),), os.path.join(out, name + ".onnx"), input_names=["input"],
                              output_names=["output"])
        np.save(os.path.join(out, name + ".input.npy"), x)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    pow_models(out)
    torch_models(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
