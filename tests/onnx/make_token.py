#!/usr/bin/python3
"""Model for tests/scripts/int_inputs_test.sh (issue 12): tools/zoo/make_zoo2.py's embedding +
transformer token classifier (nn.Embedding 100 x 32, learned positions, 2 nn.TransformerEncoder
layers, 2 heads, a Linear head of 5 classes per token), exported at torch's default opset with
int64 token ids.

Writes OUTDIR/tok.onnx, OUTDIR/ids.npy (int64 token ids [1, 16], torch's dtype) and
OUTDIR/ids32.npy (the same as int32, the program's input type).
"""
import os
import sys
import warnings

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "zoo"))
from make_zoo2 import TokenClassifier  # noqa: E402 (the second zoo's token classifier)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(21)
    m = TokenClassifier().eval()
    ids = torch.randint(0, 100, (1, 16), generator=torch.Generator().manual_seed(22))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (ids,), os.path.join(out, "tok.onnx"), input_names=["ids"], output_names=["output"])
    np.save(os.path.join(out, "ids.npy"), ids.numpy())
    np.save(os.path.join(out, "ids32.npy"), ids.numpy().astype(np.int32))
    return 0


if __name__ == "__main__":
    sys.exit(main())
