#!/usr/bin/python3
"""Write tosac's second model zoo (issue 12): the model families of ExecuTorch's Arm model list
that Debian's torch / torchvision / torchaudio build, each exported at torch's default opset and
at opset 17.

Usage: tools/zoo/make_zoo2.py OUTDIR [--only NAME ... | --skip NAME ...] [--list]

Weights are seeded random, never downloaded (make_zoo.py's randomize_zero_params and
randomize_batchnorm, so that no output is trivially constant and BatchNorm folding is exercised);
models are in eval mode, batch 1, static shapes. For each model NAME and opset tag T in
("default", "17") OUTDIR receives NAME.T.onnx and NAME.input.npy (the one graph input "input":
float32 from make_zoo.random_input, or int64 token ids, torch's type, for the token classifier).

Models: the MLPerf Tiny networks of make_zoo.py (ds_cnn, mobilenet_v1_025, resnet8, autoencoder:
its definitions, imported), torchvision deeplabv3 and lraspp with MobileNetV3-large backbones
(1x3x128x128), mobilenet_v3_large, a DeiT-tiny-sized ViT (12 layers, 3 heads, hidden 192, MLP 768,
patch 16 on 96x96), torchaudio Wav2Letter (MFCC, 13 x 100) and a small Conformer (2 layers,
80 features, 4 heads; lengths fixed to the input's), 2-layer LSTM and GRU sequence models, an
nn.TransformerEncoder, an embedding + transformer token classifier, a UNet with ConvTranspose and
bilinear upsampling, and a YOLO-style detector (no NMS). Also the first zoo's other models
(make_zoo.py's CNNs, vit_small, mlp, dup_output, equal_constants) at the default opset only, as
zoo1_NAME.default.onnx (make_zoo.py exports them at 17).

Exit status: 0 success, 1 failure (unknown model, export error), 2 bad usage.
"""
import argparse
import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_zoo  # noqa: E402 (the MLPerf Tiny definitions and the weight randomisation)

import torch  # noqa: E402
import torchvision  # noqa: E402

OPSETS = {"default": None, "17": 17}  # None: torch.onnx.export's own default (14 with torch 1.13)


class SeqModel(torch.nn.Module):
    """A 2-layer recurrent sequence model: 24 steps of 8 features, hidden 32, a Linear head per
    step."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(8, 32, num_layers=2)
        self.head = torch.nn.Linear(32, 5)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


class TokenClassifier(torch.nn.Module):
    """Embedding + transformer token classifier: nn.Embedding vocab x dim, learned positions, two
    nn.TransformerEncoder layers (2 heads), a Linear head per token."""

    def __init__(self, vocab=100, dim=32, seq=16, classes=5):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Parameter(torch.randn(1, seq, dim) * 0.1)
        layer = torch.nn.TransformerEncoderLayer(dim, 2, 2 * dim, dropout=0.0, batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 2)
        self.head = torch.nn.Linear(dim, classes)

    def forward(self, ids):
        return self.head(self.enc(self.emb(ids) + self.pos))


class Encoder(torch.nn.Module):
    """nn.TransformerEncoder: 3 layers, d_model 64, 4 heads, feed-forward 128, GELU, on 20 x 64."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, activation="gelu", batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, 3)

    def forward(self, x):
        return self.enc(x)


def conv_block(cin, cout):
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, 3, padding=1, bias=False), torch.nn.BatchNorm2d(cout),
                               torch.nn.ReLU(), torch.nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                               torch.nn.BatchNorm2d(cout), torch.nn.ReLU())


class UNet(torch.nn.Module):
    """A small UNet on 1x3x64x64: three levels (16, 32, 64 channels) with max pooling down, one
    ConvTranspose 2x2 stride 2 up and one bilinear upsampling up, skip concatenations, a 1x1 head
    of 4 classes."""

    def __init__(self):
        super().__init__()
        self.d1, self.d2, self.d3 = conv_block(3, 16), conv_block(16, 32), conv_block(32, 64)
        self.up2 = torch.nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.u2 = conv_block(64, 32)
        self.u1 = conv_block(48, 16)
        self.head = torch.nn.Conv2d(16, 4, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(torch.nn.functional.max_pool2d(a, 2))
        c = self.d3(torch.nn.functional.max_pool2d(b, 2))
        y = self.u2(torch.cat([self.up2(c), b], 1))
        y = torch.nn.functional.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False)
        return self.head(self.u1(torch.cat([y, a], 1)))


def cbs(cin, cout, k=3, s=1):
    """Conv + BatchNorm + SiLU, YOLOv5's basic block."""
    return torch.nn.Sequential(torch.nn.Conv2d(cin, cout, k, s, k // 2, bias=False), torch.nn.BatchNorm2d(cout),
                               torch.nn.SiLU())


class Yolo(torch.nn.Module):
    """A YOLO-style detector on 1x3x128x128 (no NMS): a strided CBS backbone with a residual
    bottleneck, an FPN neck (nearest 2x upsampling, concatenation), two detection heads of 3
    anchors x (5 + 8 classes) at strides 16 and 32, sigmoid-decoded boxes (grid offsets and anchor
    sizes), concatenated into [1, N, 13]."""

    def __init__(self, classes=8, anchors=3):
        super().__init__()
        self.na, self.no = anchors, 5 + classes
        self.stem = torch.nn.Sequential(cbs(3, 16, 3, 2), cbs(16, 32, 3, 2), cbs(32, 32), cbs(32, 64, 3, 2))
        self.res = torch.nn.Sequential(cbs(64, 32, 1), cbs(32, 64))
        self.p4 = cbs(64, 96, 3, 2)
        self.p5 = cbs(96, 128, 3, 2)
        self.lat = cbs(128, 96, 1)
        self.fuse = cbs(192, 96)
        self.h4 = torch.nn.Conv2d(96, anchors * self.no, 1)
        self.h5 = torch.nn.Conv2d(128, anchors * self.no, 1)
        self.register_buffer("anchor", torch.tensor([[10.0, 13.0], [16.0, 30.0], [33.0, 23.0]]))

    def decode(self, p, stride):
        n, _, h, w = p.shape
        p = p.view(n, self.na, self.no, h, w).permute(0, 1, 3, 4, 2).sigmoid()
        gy, gx = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
        grid = torch.stack([gx, gy], -1).view(1, 1, h, w, 2)
        xy = (p[..., :2] * 2 - 0.5 + grid) * stride
        wh = (p[..., 2:4] * 2) ** 2 * self.anchor.view(1, self.na, 1, 1, 2)
        return torch.cat([xy, wh, p[..., 4:]], -1).view(n, -1, self.no)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.res(x)
        p4 = self.p4(x)
        p5 = self.p5(p4)
        up = torch.nn.functional.interpolate(self.lat(p5), scale_factor=2.0, mode="nearest")
        f4 = self.fuse(torch.cat([up, p4], 1))
        return torch.cat([self.decode(self.h4(f4), 16), self.decode(self.h5(p5), 32)], 1)


class FixedLengthConformer(torch.nn.Module):
    """torchaudio's Conformer with every sequence as long as the input (lengths a constant, so the
    padding mask folds): 2 layers, 80 features, 4 heads, FFN 128, depthwise kernel 15, on 1x40x80."""

    def __init__(self):
        super().__init__()
        import torchaudio
        self.m = torchaudio.models.Conformer(input_dim=80, num_heads=4, ffn_dim=128, num_layers=2,
                                             depthwise_conv_kernel_size=15)

    def forward(self, x):
        lengths = torch.full((x.shape[0],), x.shape[1], dtype=torch.int64)
        return self.m(x, lengths)[0]


def wav2letter():
    import torchaudio
    return torchaudio.models.Wav2Letter(num_classes=29, input_type="mfcc", num_features=13)


def segmentation(name):
    def build():
        m = getattr(torchvision.models.segmentation, name)(weights=None, weights_backbone=None, num_classes=6)
        return Only(m, "out")
    return build


class Only(torch.nn.Module):
    """The one entry of a torchvision segmentation model's output dict."""

    def __init__(self, m, key):
        super().__init__()
        self.m, self.key = m, key

    def forward(self, x):
        return self.m(x)[self.key]


def deit_tiny():
    return torchvision.models.VisionTransformer(image_size=96, patch_size=16, num_layers=12, num_heads=3,
                                                hidden_dim=192, mlp_dim=768, num_classes=100)


# name: (builder, input shape, token vocabulary or None for float input)
MODELS = {
    "ds_cnn": (make_zoo.TINY["ds_cnn"][0], make_zoo.TINY["ds_cnn"][1], None),
    "mobilenet_v1_025": (make_zoo.TINY["mobilenet_v1_025"][0], make_zoo.TINY["mobilenet_v1_025"][1], None),
    "resnet8": (make_zoo.TINY["resnet8"][0], make_zoo.TINY["resnet8"][1], None),
    "autoencoder": (make_zoo.TINY["autoencoder"][0], make_zoo.TINY["autoencoder"][1], None),
    "deeplabv3_mnv3": (segmentation("deeplabv3_mobilenet_v3_large"), (1, 3, 128, 128), None),
    "lraspp_mnv3": (segmentation("lraspp_mobilenet_v3_large"), (1, 3, 128, 128), None),
    "mobilenet_v3_large": (lambda: torchvision.models.mobilenet_v3_large(weights=None), (1, 3, 224, 224), None),
    "deit_tiny": (deit_tiny, (1, 3, 96, 96), None),
    "wav2letter": (wav2letter, (1, 13, 100), None),
    "conformer": (FixedLengthConformer, (1, 40, 80), None),
    "lstm2": (lambda: SeqModel(torch.nn.LSTM), (24, 1, 8), None),
    "gru2": (lambda: SeqModel(torch.nn.GRU), (24, 1, 8), None),
    "transformer_encoder": (Encoder, (1, 20, 64), None),
    "token_classifier": (TokenClassifier, (1, 16), 100),
    "unet": (UNet, (1, 3, 64, 64), None),
    "yolo": (Yolo, (1, 3, 128, 128), None),
}


# The first zoo's models other than MLPerf Tiny (make_zoo.py, exported there at opset 17 and checked
# by CTest zoo) at torch's default opset only, as zoo1_NAME: FP checks only (their INT8 programs
# are zoo.int8_spec's).
ZOO1 = [n for n in make_zoo.MODELS if n not in make_zoo.TINY]


def export_zoo1(name, outdir):
    m, shape, outs = make_zoo.build(name)
    mode, train = make_zoo.export_mode(name)
    m.train(train)
    x = make_zoo.random_input(shape, torch.Generator().manual_seed(make_zoo.seed_for(name) + 2)).numpy().astype(np.float32)
    path = os.path.join(outdir, "zoo1_%s.default.onnx" % name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (torch.from_numpy(x),), path, input_names=["input"], output_names=outs,
                          do_constant_folding=True, training=mode)
    np.save(os.path.join(outdir, "zoo1_%s.input.npy" % name), x)
    return [path]


def build(name):
    builder, shape, vocab = MODELS[name]
    torch.manual_seed(make_zoo.seed_for(name))
    gen = torch.Generator().manual_seed(make_zoo.seed_for(name) + 1)
    m = builder()
    make_zoo.randomize_zero_params(m, gen)
    if vocab is None:
        make_zoo.randomize_batchnorm(m, shape, gen)
    m.eval()
    g2 = torch.Generator().manual_seed(make_zoo.seed_for(name) + 2)
    if vocab is not None:
        x = torch.randint(0, vocab, shape, generator=g2)
    else:
        x = make_zoo.random_input(shape, g2)
    return m, x


def export(name, outdir):
    m, x = build(name)
    paths = []
    for tag, opset in OPSETS.items():
        path = os.path.join(outdir, "%s.%s.onnx" % (name, tag))
        kw = {} if opset is None else {"opset_version": opset}
        # PRESERVE keeps BatchNormalization nodes for tosac to fold (make_zoo.export_mode)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(m, (x,), path, input_names=["input"], output_names=["output"], do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE, **kw)
        paths.append(path)
    a = x.numpy()
    np.save(os.path.join(outdir, name + ".input.npy"), a if a.dtype.kind == "i" else a.astype(np.float32))
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--only", nargs="+", metavar="NAME")
    ap.add_argument("--skip", nargs="+", metavar="NAME", default=[])
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    every = list(MODELS) + ["zoo1_" + n for n in ZOO1]
    if a.list:
        print("\n".join(every))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    if a.only and a.skip:
        ap.error("--only and --skip exclude each other")
    unknown = [n for n in (a.only or []) + a.skip if n not in every]
    if unknown:
        sys.stderr.write("make_zoo2: unknown model(s): %s (known: %s)\n" % (", ".join(unknown), ", ".join(every)))
        return 1
    os.makedirs(a.outdir, exist_ok=True)
    torch.set_num_threads(1)
    for n in a.only or [k for k in every if k not in a.skip]:
        try:
            paths = export_zoo1(n[5:], a.outdir) if n.startswith("zoo1_") else export(n, a.outdir)
        except Exception as e:  # report which model failed, then fail
            sys.stderr.write("make_zoo2: %s: export failed: %s: %s\n" % (n, type(e).__name__, e))
            return 1
        print("%-22s %s" % (n, " ".join("%d" % os.path.getsize(p) for p in paths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
