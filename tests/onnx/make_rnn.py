#!/usr/bin/python3
"""Models for tests/scripts/rnn_test.sh (issue 12): ONNX RNN, GRU and LSTM nodes in every
configuration the converter takes, with seeded random weights, and torch's 2-layer nn.LSTM / nn.GRU
exports. The expected values come from onnxruntime (tools/zoo/ort_run.js).

Writes OUTDIR/NAME.onnx and OUTDIR/NAME.input.npy (the single graph input "X") per case, and
OUTDIR/cases.txt listing the names; for layout 1, which onnxruntime does not run, NAME.ref.onnx is
the same node at layout 0 between Transposes (the oracle's model).
"""
import os
import sys
import warnings

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def case(out, name, op, direction="forward", layout=0, T=5, batch=2, I=3, H=4, bias=True, init=False, peep=False,
         seq_lens=False, acts=None, alpha=None, beta=None, clip=None, lbr=None, input_forget=None, opset=14, seed=0):
    rng = np.random.default_rng(seed)
    d = 2 if direction == "bidirectional" else 1
    G = GATES[op]
    f = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    inits = [helper.make_tensor("W", TensorProto.FLOAT, [d, G * H, I], f(d, G * H, I).ravel()),
             helper.make_tensor("R", TensorProto.FLOAT, [d, G * H, H], f(d, G * H, H).ravel())]
    ins = ["X", "W", "R"]
    ins.append("B" if bias else "")
    if bias:
        inits.append(helper.make_tensor("B", TensorProto.FLOAT, [d, 2 * G * H], f(d, 2 * G * H).ravel()))
    ins.append("L" if seq_lens else "")
    if seq_lens:
        inits.append(helper.make_tensor("L", TensorProto.INT32, [batch], [T] * batch))
    hs = [batch, d, H] if layout else [d, batch, H]
    ins.append("h0" if init else "")
    if init:
        inits.append(helper.make_tensor("h0", TensorProto.FLOAT, hs, f(*hs).ravel()))
    if op == "LSTM":
        ins.append("c0" if init else "")
        if init:
            inits.append(helper.make_tensor("c0", TensorProto.FLOAT, hs, f(*hs).ravel()))
        ins.append("P" if peep else "")
        if peep:
            inits.append(helper.make_tensor("P", TensorProto.FLOAT, [d, 3 * H], f(d, 3 * H).ravel()))
    while ins[-1] == "":
        ins.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    attrs = {"hidden_size": H, "direction": direction}
    if opset >= 14:
        attrs["layout"] = layout
    if acts:
        attrs["activations"] = acts
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    if clip:
        attrs["clip"] = clip
    if lbr is not None:
        attrs["linear_before_reset"] = lbr
    if input_forget is not None:
        attrs["input_forget"] = input_forget
    node = helper.make_node(op, ins, outs, **attrs)
    xs = [batch, T, I] if layout else [T, batch, I]
    ys = [batch, T, d, H] if layout else [T, d, batch, H]
    g = helper.make_graph([node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, xs)],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ys)] +
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, hs) for o in outs[1:]], inits)
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name + ".onnx"))
    np.save(os.path.join(out, name + ".input.npy"), (rng.standard_normal(xs) * 1.5).astype(np.float32))
    if layout:
        # onnxruntime runs layout 0 only: the oracle is the same node at layout 0 between Transposes
        for t in inits:
            if t.name in ("h0", "c0"):
                a = onnx.numpy_helper.to_array(t).transpose(1, 0, 2)
                t.CopyFrom(onnx.numpy_helper.from_array(np.ascontiguousarray(a), t.name))
        attrs["layout"] = 0
        nodes = [helper.make_node("Transpose", ["X"], ["X0"], perm=[1, 0, 2]),
                 helper.make_node(op, ["X0"] + ins[1:], [o + "0" for o in outs], **attrs),
                 helper.make_node("Transpose", ["Y0"], ["Y"], perm=[2, 0, 1, 3])]
        nodes += [helper.make_node("Transpose", [o + "0"], [o], perm=[1, 0, 2]) for o in outs[1:]]
        g = helper.make_graph(nodes, name + "_ref", g.input, g.output, inits)
        onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), os.path.join(out, name + ".ref.onnx"))
    return name


def cases(out):
    names = []
    k = 0
    for op in ["RNN", "GRU", "LSTM"]:
        for direction in ["forward", "reverse", "bidirectional"]:
            for layout in [0, 1]:
                k += 1
                names.append(case(out, "%s_%s_l%d" % (op.lower(), direction, layout), op, direction, layout,
                                  init=layout == 1, seq_lens=direction == "reverse", peep=op == "LSTM", seed=k))
        names.append(case(out, "%s_nobias_opset7" % op.lower(), op, bias=False, opset=7, seed=100 + k))
        names.append(case(out, "%s_clip" % op.lower(), op, "bidirectional", clip=0.7, init=True, seed=200 + k))
    # the alternative activations, with and without alpha/beta, for each kind
    names.append(case(out, "rnn_relu", "RNN", acts=["Relu"], seed=300))
    names.append(case(out, "rnn_affine_bi", "RNN", "bidirectional", acts=["Affine", "ScaledTanh"], alpha=[0.5, 0.8],
                      beta=[0.1, 1.3], seed=301))
    names.append(case(out, "rnn_leaky", "RNN", acts=["LeakyRelu"], alpha=[0.2], seed=302))
    names.append(case(out, "rnn_elu", "RNN", acts=["Elu"], seed=303))
    names.append(case(out, "rnn_softsign", "RNN", acts=["Softsign"], seed=304))
    names.append(case(out, "rnn_softplus", "RNN", acts=["Softplus"], seed=305))
    names.append(case(out, "rnn_thresholded", "RNN", acts=["ThresholdedRelu"], alpha=[0.3], seed=306))
    names.append(case(out, "gru_hardsigmoid", "GRU", acts=["HardSigmoid", "Softsign"], alpha=[0.3], beta=[0.4], seed=307))
    names.append(case(out, "gru_lbr", "GRU", "bidirectional", lbr=1, init=True, seed=308))
    names.append(case(out, "gru_lbr_nobias", "GRU", lbr=1, bias=False, seed=309))
    names.append(case(out, "lstm_scaledtanh", "LSTM", acts=["HardSigmoid", "ScaledTanh", "Affine"], alpha=[0.25, 0.9, 0.7],
                      beta=[0.45, 1.1, 0.05], seed=310))
    names.append(case(out, "lstm_input_forget", "LSTM", input_forget=1, seed=311))
    return names


def torch_models(out):
    import torch

    # the second zoo's 2-layer recurrent sequence model (one definition)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
    from make_zoo2 import SeqModel

    names = []
    for cell, name in [(torch.nn.LSTM, "torch_lstm2"), (torch.nn.GRU, "torch_gru2")]:
        torch.manual_seed(5)
        m = SeqModel(cell).eval()
        x = torch.randn(24, 1, 8, generator=torch.Generator().manual_seed(6))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, (x,), os.path.join(out, name + ".onnx"), input_names=["X"], output_names=["Y"])
        np.save(os.path.join(out, name + ".input.npy"), x.numpy())
        names.append(name)
    return names


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    names = cases(out)
    tn = torch_models(out)
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(names) + "\n")
    with open(os.path.join(out, "torch.txt"), "w") as f:
        f.write("\n".join(tn) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
