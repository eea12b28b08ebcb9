#!/usr/bin/python3
"""Model for tests/scripts/int_inputs_test.sh (issue 12): an embedding + transformer token
classifier (nn.Embedding 100 x 32, learned positions, 2 nn.TransformerEncoder layers, 2 heads, a
Linear head of 5 classes per token), exported at torch's default opset with int64 token ids.

Writes OUTDIR/tok.onnx, OUTDIR/ids.npy (int64 token ids [1, 16], torch's dtype) and
OUTDIR/ids32.npy (the same as int32, the program's input type).
"""
import os
import sys
import warnings

import numpy as np
import torch


class TokenClassifier(torch.nn.Module):
    def __init__(self, vocab=100, dim=32, seq=16, classes=5):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, dim) * 0.1)
        layer = torch.nn.TransformerEncoderLayer(dim, 2, 2 * dim, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids) + self.pos))


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
