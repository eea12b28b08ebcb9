#!/usr/bin/python3
"""Writes the models of tests/scripts/quant_lowering_test.sh (the TOSAC_LOWER_* target lowering,
docs/QUANT.md "Target lowering"), each with a seeded random input NAME.in.npy (onnx.helper, opset 13):
  fc        Gemm (transB) -> Relu -> Gemm, and a token MatMul [1,5,16] x [16,8] + bias: MATMUL today
  attn      x [1,5,8]: MatMul(x, x^T) (two activations: stays MATMUL) and MatMul by a constant
  gap       conv -> Relu -> GlobalAveragePool (8x8) -> Flatten: REDUCE_SUM over H and W today
  gap_tiled GlobalAveragePool of a 96x96 map (beyond U55's kernel limits: 2x2 tiles of 48x48)
  gap_big   GlobalAveragePool of a 67x67 map (a prime above U55's kernel height 64: AVG_POOL2D)
  concat    two conv -> Relu branches -> Concat -> conv (SqueezeNet's fire module)
  scaled    x * 0.5 -> conv: the input widened exactly (x - zp), then rescaled for the conv
  gather    Gather of constant indices along the tokens: [0] (a class token) and [3, 1, 2]
  dilated   3x3 convolution, dilation 6, pad 6, on a 5x5 map (only the centre tap reads the input),
            and its depthwise twin
  up1x1     GlobalAveragePool -> 1x1 conv -> Resize nearest and linear to 6x6 (ASPP's image pool)
  addsame   conv -> Relu -> the two channel halves added: an ADD of two inputs at one scale
  shuffle   two ShuffleNet units: Concat(Slice(c)[:4], conv(Slice(c)[4:])), the second one reading
            the first's Concat through a Slice (the branch convs' ranges are wider than the Slices')
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(15)


def w(name, *shape, scale=None):
    fan = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
    return numpy_helper.from_array(rng.normal(0, scale or (2.0 / fan) ** 0.5, shape).astype(np.float32), name)


def save(name, nodes, inits, x_shape, y_shapes):
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in y_shapes]
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)], outs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + ".in.npy"), rng.normal(0, 1, x_shape).astype(np.float32))


def conv(name, x, y, cin, cout, k=3, **kw):
    pad = kw.pop("pad", k // 2)
    ws = kw.pop("wscale", None)
    inits.extend([w(name + "_w", cout, cin // kw.get("group", 1), k, k, scale=ws), w(name + "_b", cout, scale=0.1)])
    return helper.make_node("Conv", [x, name + "_w", name + "_b"], [y], pads=[pad] * 4, name=name, **kw)


inits = [w("w1", 32, 16), w("b1", 32, scale=0.1), w("w2", 10, 32), w("b2", 10, scale=0.1)]
save("fc", [helper.make_node("Flatten", ["x"], ["f"]),
            helper.make_node("Gemm", ["f", "w1", "b1"], ["g1"], transB=1),
            helper.make_node("Relu", ["g1"], ["r1"]),
            helper.make_node("Gemm", ["r1", "w2", "b2"], ["y"], transB=1)], inits, [1, 16], [("y", [1, 10])])

inits = [w("wt", 8, 8), w("bt", 8, scale=0.1)]
save("attn", [helper.make_node("MatMul", ["x", "wt"], ["t"]),
              helper.make_node("Add", ["t", "bt"], ["tb"]),
              helper.make_node("Transpose", ["tb"], ["tt"], perm=[0, 2, 1]),
              helper.make_node("MatMul", ["tb", "tt"], ["y"])], inits, [1, 5, 8], [("y", [1, 5, 5])])

inits = []
save("gap", [conv("c1", "x", "c", 3, 8), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Flatten", ["p"], ["y"])],
     inits, [1, 3, 8, 8], [("y", [1, 8])])

inits = []
save("gap_big", [conv("c1", "x", "c", 3, 4, k=1, pad=0), helper.make_node("Relu", ["c"], ["r"]),
                 helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Flatten", ["p"], ["y"])],
     inits, [1, 3, 67, 67], [("y", [1, 4])])

inits = []
save("concat", [conv("sq", "x", "s", 4, 4, k=1, pad=0), helper.make_node("Relu", ["s"], ["sr"]),
                conv("e1", "sr", "a", 4, 6, k=1, pad=0), helper.make_node("Relu", ["a"], ["ar"]),
                conv("e3", "sr", "b", 4, 6), helper.make_node("Relu", ["b"], ["br"]),
                helper.make_node("Concat", ["ar", "br"], ["cat"], axis=1), conv("out", "cat", "y", 12, 4)],
     inits, [1, 4, 6, 6], [("y", [1, 4, 6, 6])])

inits = [numpy_helper.from_array(np.array(0.5, np.float32), "half")]
save("scaled", [helper.make_node("Mul", ["x", "half"], ["h"]), conv("c", "h", "y", 4, 4)], inits, [1, 4, 6, 6],
     [("y", [1, 4, 6, 6])])

inits = [numpy_helper.from_array(np.array([0], np.int64), "i0"), numpy_helper.from_array(np.array([3, 1, 2], np.int64), "i1")]
save("gather", [helper.make_node("Gather", ["x", "i0"], ["y0"], axis=1),
                helper.make_node("Gather", ["x", "i1"], ["y1"], axis=1)], inits, [1, 5, 8],
     [("y0", [1, 1, 8]), ("y1", [1, 3, 8])])

inits = []
save("dilated", [conv("d", "x", "y", 4, 6, dilations=[6, 6], pad=6),
                 conv("dw", "x", "y2", 4, 4, dilations=[6, 6], pad=6, group=4)], inits, [1, 4, 5, 5],
     [("y", [1, 6, 5, 5]), ("y2", [1, 4, 5, 5])])

inits = [numpy_helper.from_array(np.array([1, 1, 6, 6], np.float32), "scales")]
save("up1x1", [helper.make_node("GlobalAveragePool", ["x"], ["p"]), conv("c", "p", "c1", 4, 4, k=1, pad=0),
               helper.make_node("Resize", ["c1", "", "scales"], ["yn"], mode="nearest",
                                coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
               helper.make_node("Resize", ["c1", "", "scales"], ["yl"], mode="linear",
                                coordinate_transformation_mode="half_pixel")],
     inits, [1, 4, 6, 6], [("yn", [1, 4, 6, 6]), ("yl", [1, 4, 6, 6])])

def half(x, y, lo):
    return helper.make_node("Slice", [x, "lo" if lo else "mid", "mid" if lo else "end", "ax"], [y])


halves = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("lo", 0), ("mid", 4), ("end", 8), ("ax", 1))]
inits = list(halves)
save("addsame", [conv("c", "x", "c0", 8, 8), helper.make_node("Relu", ["c0"], ["r"]), half("r", "a", True),
                 half("r", "b", False), helper.make_node("Add", ["a", "b"], ["s"]), conv("o", "s", "y", 4, 4)],
     inits, [1, 8, 6, 6], [("y", [1, 4, 6, 6])])

inits = list(halves)
unit = []
for k, src in enumerate(["r0", "cat0"]):
    unit += [half(src, "p%d" % k, True), half(src, "q%d" % k, False), conv("u%d" % k, "q%d" % k, "v%d" % k, 4, 4, wscale=2.0),
             helper.make_node("Relu", ["v%d" % k], ["vr%d" % k]),
             helper.make_node("Concat", ["p%d" % k, "vr%d" % k], ["cat%d" % k], axis=1)]
save("shuffle", [conv("c", "x", "c0", 8, 8), helper.make_node("Relu", ["c0"], ["r0"])] + unit + [conv("o", "cat1", "y", 8, 4)],
     inits, [1, 8, 6, 6], [("y", [1, 4, 6, 6])])

inits = []
save("gap_tiled", [conv("c1", "x", "c", 3, 4, k=1, pad=0), helper.make_node("Relu", ["c"], ["r"]),
                   helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Flatten", ["p"], ["y"])],
     inits, [1, 3, 96, 96], [("y", [1, 4])])

inits = []
# a residual ADD of two values at different scales (the second through a conv with larger weights)
save("resadd", [conv("c1", "x", "c", 4, 4), helper.make_node("Relu", ["c"], ["r"]), conv("c2", "r", "d", 4, 4, wscale=3.0),
                helper.make_node("Add", ["r", "d"], ["s"]), conv("o", "s", "y", 4, 4)],
     inits, [1, 4, 6, 6], [("y", [1, 4, 6, 6])])

inits = []
# a squeeze-and-excitation style pool of a SiLU (an int16 TABLE under --a16w8) on a 20x20 map, whose
# SiLU is also multiplied by the pool's gate
save("gap_silu", [conv("c1", "x", "c", 3, 4), helper.make_node("Sigmoid", ["c"], ["g"]), helper.make_node("Mul", ["c", "g"], ["s"]),
                  helper.make_node("GlobalAveragePool", ["s"], ["p"]), conv("f", "p", "e", 4, 4, k=1, pad=0),
                  helper.make_node("Sigmoid", ["e"], ["eg"]), helper.make_node("Mul", ["s", "eg"], ["y"])],
     inits, [1, 3, 20, 20], [("y", [1, 4, 20, 20])])
