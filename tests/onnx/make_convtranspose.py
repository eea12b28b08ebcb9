#!/usr/bin/python3
"""Models for tests/scripts/convtranspose_test.sh (issue 12): ONNX ConvTranspose grouped, dilated,
strided, with output_padding, pads beyond the kernel, output_shape and auto_pad, 1-D and 2-D,
seeded random weights; the expected values come from onnxruntime (tools/zoo/ort_run.js).

Writes OUTDIR/NAME.onnx, OUTDIR/NAME.input.npy (graph input "x") and OUTDIR/cases.txt.
"""
import os
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import onnx.shape_inference
from onnx import TensorProto, helper

# name: (input shape, C_in, C_out per group, group, kernel, attributes)
CASES = {
    "group2": ((1, 4, 5, 6), 2, 2, (3, 3), dict(strides=[2, 2])),
    "group4_dil": ((1, 8, 4, 5), 3, 4, (3, 2), dict(dilations=[2, 3], strides=[1, 2])),
    "depthwise": ((1, 6, 5, 5), 1, 6, (4, 4), dict(strides=[2, 2], pads=[1, 1, 1, 1])),
    "outpad": ((1, 3, 4, 4), 5, 1, (3, 3), dict(strides=[3, 2], output_padding=[2, 1], pads=[1, 0, 0, 1])),
    "bigpads": ((1, 2, 6, 6), 3, 1, (2, 2), dict(strides=[2, 2], pads=[2, 3, 2, 2])),
    "output_shape": ((1, 4, 3, 4), 2, 2, (3, 3), dict(strides=[2, 2], output_shape=[8, 10])),
    "same_upper": ((1, 2, 4, 5), 3, 1, (3, 4), dict(strides=[2, 2], auto_pad="SAME_UPPER")),
    "same_lower": ((1, 4, 4, 5), 2, 2, (3, 3), dict(strides=[2, 3], auto_pad="SAME_LOWER")),
    "grouped_1d": ((1, 6, 7), 2, 3, (3,), dict(strides=[2], dilations=[2], output_padding=[1])),
    "nobias_group3": ((2, 6, 3, 3), 4, 3, (2, 3), dict(strides=[1, 1], nobias=True)),
}


def make(out, name, xs, mg, group, k, attrs, seed):
    rng = np.random.default_rng(seed)
    attrs = dict(attrs)
    nobias = attrs.pop("nobias", False)
    C = xs[1]
    w = rng.standard_normal((C, mg) + k).astype(np.float32) * 0.4
    inits = [onnx.numpy_helper.from_array(w, "w")]
    ins = ["x", "w"]
    if not nobias:
        inits.append(onnx.numpy_helper.from_array(rng.standard_normal(mg * group).astype(np.float32), "b"))
        ins.append("b")
    node = helper.make_node("ConvTranspose", ins, ["y"], group=group, **attrs)
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xs))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    m = onnx.shape_inference.infer_shapes(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + ".input.npy"), rng.standard_normal(xs).astype(np.float32))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, (name, (xs, mg, group, k, attrs)) in enumerate(CASES.items()):
        make(out, name, xs, mg, group, k, attrs, 40 + i)
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(CASES) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
