#!/usr/bin/python3
"""Writes the quantizer's edge-case models for tests/scripts/quant_edge_test.sh (issue 11, found by
fuzz_onnx_quant): gemm_nan.onnx (Gemm with alpha = NaN: every constant made integer from NaN) and
hsig_scalar.onnx (HardSigmoid on a rank-0 input: constants without a shape)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, nodes, x_shape, y_shape, inits=()):
    g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(out, name + ".onnx"))


save("gemm_nan", [helper.make_node("Gemm", ["x", "w", "b"], ["y"], alpha=float("nan"), transB=1)], [1, 3], [1, 4],
     [numpy_helper.from_array(np.ones((4, 3), np.float32), "w"), numpy_helper.from_array(np.ones(4, np.float32), "b")])
save("hsig_scalar", [helper.make_node("HardSigmoid", ["x"], ["y"])], [], [])
