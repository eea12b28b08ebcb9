#!/usr/bin/python3
"""Write the tosac model zoo: ONNX models with seeded random weights and one input each.

Usage: tools/zoo/make_zoo.py OUTDIR [--only NAME ... | --skip NAME ...] [--list]

Every model is built with Debian's torch/torchvision (no downloads: weights are drawn from a
seeded generator, never pretrained), put in eval mode and exported with torch.onnx.export at
opset 17 with static shapes and batch 1, keeping BatchNormalization nodes (see export_mode).
BatchNorm layers get random affine parameters and randomly perturbed running statistics
(positive variances, see randomize_batchnorm), so that BatchNorm folding in the compiler is
really exercised instead of folding an identity; parameters initialised to all zeros (biases, the
ViT head) get small random values, so that no output is trivially zero.

For each model NAME the directory receives:
  NAME.onnx          the model (graph input "input", outputs "output" or "output0", "output1"...)
  NAME.input.npy     a seeded random float32 input (images: a smooth random field plus noise,
                     see random_input; other inputs: standard normal)

Output is deterministic: the same torch/torchvision versions give the same bytes on every run
(one torch thread; per-model seeds, so --only gives the same bytes as a full run).

Models: the CNNs mobilenet_v2, mobilenet_v3_small, resnet18, resnet50, squeezenet1_1,
shufflenet_v2_x1_0, efficientnet_b0 (224x224); vit_small (torchvision VisionTransformer, image
32, patch 8, 2 layers, 2 heads, hidden 64, MLP 128); mlp; dup_output (returns the same tensor
twice); equal_constants (two distinct buffers with identical values added in different places);
the MLPerf Tiny networks ds_cnn (keyword spotting, 1x1x49x10), mobilenet_v1_025 (visual wake
words, 96x96), resnet8 (CIFAR-10) and autoencoder (anomaly detection, 640 features).

Exit status: 0 success, 1 failure (an unknown model name, an export error), 2 bad usage.
"""
import argparse
import hashlib
import os
import sys
import warnings

import numpy as np

try:
    import torch
    import torchvision
except ImportError as e:  # the zoo test must fail, not skip, without torch
    sys.stderr.write("make_zoo: %s (install python3-torch and python3-torchvision: "
                     "scripts/install-deps.sh)\n" % e)
    sys.exit(1)

OPSET = 17
CNNS = ["mobilenet_v2", "mobilenet_v3_small", "resnet18", "resnet50", "squeezenet1_1",
        "shufflenet_v2_x1_0", "efficientnet_b0"]


def seed_for(name):
    """A per-model seed, so that building one model alone (--only) gives the same bytes."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def random_input(shape, gen):
    """A seeded random input. Images (rank 4) are a smooth random field (a 4x4 Gaussian grid
    upsampled bilinearly) plus white noise: with white noise alone the features of a random
    CNN are nearly independent across positions, the global average pool at the end averages
    them away, and the output barely depends on the input (squeezenet1_1: 2% change between
    two inputs; 18% with this input), which would hide conversion errors in the body."""
    if len(shape) != 4:
        return torch.randn(shape, generator=gen)
    lo = torch.randn((shape[0], shape[1], 4, 4), generator=gen)
    up = torch.nn.functional.interpolate(lo, size=tuple(shape[2:]), mode="bilinear", align_corners=False)
    return up * 1.5 + torch.randn(shape, generator=gen) * 0.5


def randomize_batchnorm(model, shape, gen):
    """Random affine parameters and data-derived, randomly perturbed running statistics for every
    BatchNorm, so that folding them into the convolutions changes the weights (a fresh
    BatchNorm is the identity).

    Plain random statistics would not do: with random weights the input-dependent part of the
    activations then shrinks layer by layer until the output is a constant of the biases (the
    output of mobilenet_v2 changed by under 0.1% between two inputs), and a compiler bug in an
    early layer could not show. So the statistics are first measured on a seeded random batch
    (train-mode forward, cumulative averages), then each mean is shifted and each variance
    scaled by a random factor."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return
    with torch.no_grad():
        for m in bns:
            if m.affine:
                m.weight.copy_(torch.rand(m.num_features, generator=gen) * 0.5 + 0.75)
                m.bias.copy_(torch.randn(m.num_features, generator=gen) * 0.1)
            m.reset_running_stats()
            m.momentum = None
        model.train()
        # images: 2 samples give every channel many positions; a feature vector (BatchNorm1d)
        # needs more, or its variance from 2 values is near 0 for some features and the
        # activations grow ~10x per layer (the autoencoder's output reached 1e8)
        model(random_input((2 if len(shape) == 4 else 32,) + tuple(shape[1:]), gen))
        for m in bns:
            n = m.num_features
            std = m.running_var.sqrt()
            m.running_mean.add_(torch.randn(n, generator=gen) * 0.1 * std)
            m.running_var.mul_(torch.rand(n, generator=gen) * 0.6 + 0.7)
            m.momentum = 0.1


def randomize_zero_params(model, gen):
    """Small random values for every parameter and buffer that is initialised to all zeros
    (biases, torchvision ViT's classification head and class token): a zero head makes the
    model's output identically zero, and a comparison against it would prove nothing."""
    with torch.no_grad():
        for _, t in list(model.named_parameters()) + list(model.named_buffers()):
            if t.is_floating_point() and t.numel() and not t.any():
                t.copy_(torch.randn(t.shape, generator=gen) * 0.05)


def cnn(name):
    def build():
        return getattr(torchvision.models, name)(weights=None), (1, 3, 224, 224)
    return build


def vit_small():
    m = torchvision.models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                             hidden_dim=64, mlp_dim=128, num_classes=10)
    return m, (1, 3, 32, 32)


class Mlp(torch.nn.Module):
    """Three Linear layers (Gemm) with ReLU and GELU in between."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 24)
        self.fc2 = torch.nn.Linear(24, 24)
        self.fc3 = torch.nn.Linear(24, 8)

    def forward(self, x):
        return self.fc3(torch.nn.functional.gelu(self.fc2(torch.relu(self.fc1(x)))))


class DupOutput(torch.nn.Module):
    """Returns one tensor in two output slots (`return y, y`)."""

    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = torch.relu(self.fc(x))
        return y, y


class EqualConstants(torch.nn.Module):
    """Two distinct buffers with identical values, added in two different places: the compiler
    must keep one constant for both (constant dedupe). 16 elements, so that `tosac inspect
    --json` lists their values."""

    def __init__(self, gen):
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 16)
        self.fc2 = torch.nn.Linear(16, 16)
        v = torch.randn(16, generator=gen)
        self.register_buffer("a", v.clone())
        self.register_buffer("b", v.clone())

    def forward(self, x):
        y = torch.relu(self.fc1(x) + self.a)
        return torch.tanh(self.fc2(y) * 0.5) + self.b


# MLPerf Tiny (v1.x reference models, written here from their published layer lists; the
# deployment targets of docs/MCU.md). Batch 1, NCHW; BatchNorm after every conv/dense but the
# classifier, as in the Keras references.
def conv_bn_relu(cin, cout, k, stride=1, padding=0, groups=1):
    return [torch.nn.Conv2d(cin, cout, k, stride, padding, groups=groups, bias=False),
            torch.nn.BatchNorm2d(cout), torch.nn.ReLU()]


class DsCnn(torch.nn.Module):
    """Keyword spotting DS-CNN (MLPerf Tiny KWS): 49x10 MFCC in; conv 10x4 stride 2 to 64
    channels (padding 5x1 gives the reference's 25x5 'same' map), four depthwise 3x3 + pointwise
    64 blocks, global average pool, FC 12, softmax. 2.66 M MACs."""

    def __init__(self):
        super().__init__()
        layers = conv_bn_relu(1, 64, (10, 4), 2, (5, 1))
        for _ in range(4):
            layers += conv_bn_relu(64, 64, 3, 1, 1, groups=64) + conv_bn_relu(64, 64, 1)
        self.body = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(64, 12)

    def forward(self, x):
        y = torch.nn.functional.adaptive_avg_pool2d(self.body(x), 1).flatten(1)
        return torch.softmax(self.fc(y), dim=1)


class MobileNetV1(torch.nn.Module):
    """Visual wake words MobileNetV1 alpha=0.25 (MLPerf Tiny VWW): 96x96x3 in, conv 3x3 s2 to 8,
    13 depthwise-separable blocks (16, 32/2, 32, 64/2, 64, 128/2, 5x128, 256/2, 256), global
    average pool, FC 2, softmax. 7.49 M MACs."""

    def __init__(self):
        super().__init__()
        plan = [(16, 1), (32, 2), (32, 1), (64, 2), (64, 1), (128, 2)] + [(128, 1)] * 5 + [(256, 2), (256, 1)]
        layers, c = conv_bn_relu(3, 8, 3, 2, 1), 8
        for cout, stride in plan:
            layers += conv_bn_relu(c, c, 3, stride, 1, groups=c) + conv_bn_relu(c, cout, 1)
            c = cout
        self.body = torch.nn.Sequential(*layers)
        self.fc = torch.nn.Linear(c, 2)

    def forward(self, x):
        y = torch.nn.functional.adaptive_avg_pool2d(self.body(x), 1).flatten(1)
        return torch.softmax(self.fc(y), dim=1)


class ResNet8(torch.nn.Module):
    """Image classification ResNet-8 (MLPerf Tiny IC, CIFAR-10): 32x32x3 in, conv 3x3 to 16, three
    residual stacks of two 3x3 convs (16; 32 stride 2 with a 1x1 stride-2 shortcut; 64 likewise),
    global average pool, FC 10, softmax. 12.5 M MACs."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Sequential(*conv_bn_relu(3, 16, 3, 1, 1))
        self.stacks = torch.nn.ModuleList()
        c = 16
        for cout, stride in [(16, 1), (32, 2), (64, 2)]:
            branch = torch.nn.Sequential(*conv_bn_relu(c, cout, 3, stride, 1),
                                         torch.nn.Conv2d(cout, cout, 3, 1, 1, bias=False), torch.nn.BatchNorm2d(cout))
            short = torch.nn.Identity() if stride == 1 and c == cout else torch.nn.Conv2d(c, cout, 1, stride)
            self.stacks.append(torch.nn.ModuleList([branch, short]))
            c = cout
        self.fc = torch.nn.Linear(c, 10)

    def forward(self, x):
        y = self.stem(x)
        for branch, short in self.stacks:
            y = torch.relu(branch(y) + short(y))
        y = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return torch.softmax(self.fc(y), dim=1)


class Autoencoder(torch.nn.Module):
    """Anomaly detection deep autoencoder (MLPerf Tiny AD, ToyADMOS): 640 in, dense
    128x4 - 8 - 128x4 each with BatchNorm and ReLU, dense 640 out. 0.264 M MACs."""

    def __init__(self):
        super().__init__()
        dims = [640, 128, 128, 128, 128, 8, 128, 128, 128, 128]
        layers = []
        for a, b in zip(dims, dims[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.BatchNorm1d(b), torch.nn.ReLU()]
        self.body = torch.nn.Sequential(*layers, torch.nn.Linear(128, 640))

    def forward(self, x):
        return self.body(x)


TINY = {"ds_cnn": (DsCnn, (1, 1, 49, 10)), "mobilenet_v1_025": (MobileNetV1, (1, 3, 96, 96)),
        "resnet8": (ResNet8, (1, 3, 32, 32)), "autoencoder": (Autoencoder, (1, 640))}


def build(name):
    """(model in eval mode, input shape, output names) for zoo model `name`."""
    # torch's default initialisers draw from the global generator

    torch.manual_seed(seed_for(name))
    gen = torch.Generator().manual_seed(seed_for(name) + 1)
    outs = ["output"]
    if name in CNNS:
        m, shape = cnn(name)()
    elif name == "vit_small":
        m, shape = vit_small()
    elif name in TINY:
        cls, shape = TINY[name]
        m = cls()
    elif name == "mlp":
        m, shape = Mlp(), (1, 16)
    elif name == "dup_output":
        m, shape, outs = DupOutput(), (1, 8), ["output0", "output1"]
    elif name == "equal_constants":
        m, shape = EqualConstants(gen), (1, 16)
    else:
        raise KeyError(name)
    randomize_zero_params(m, gen)
    randomize_batchnorm(m, shape, gen)
    m.eval()
    return m, shape, outs


def export_mode(name):
    """(torch.onnx.TrainingMode, module train flag) for the export of `name`.

    All models are exported with TrainingMode.PRESERVE from their own mode: with
    TrainingMode.EVAL torch runs _jit_pass_onnx_eval_peephole, which folds every BatchNorm into
    the preceding Conv, and the ONNX model would never show tosac a BatchNormalization to fold.
    The CNNs stay in eval mode (dropout off, running statistics: BatchNormalization with
    training_mode=0).

    equal_constants is additionally in train mode: in eval mode torch.onnx.export merges
    initializers with equal values (_jit_pass_onnx_deduplicate_initializers), in train mode only
    shared storage, so its two equal buffers stay two ONNX initializers. It has no layer that
    behaves differently in training (no dropout, no BatchNorm)."""
    return torch.onnx.TrainingMode.PRESERVE, name == "equal_constants"


MODELS = CNNS + ["vit_small", "mlp", "dup_output", "equal_constants"] + list(TINY)


def export(name, outdir):
    m, shape, outs = build(name)
    mode, train = export_mode(name)
    m.train(train)
    x = random_input(shape, torch.Generator().manual_seed(seed_for(name) + 2)).numpy().astype(np.float32)
    path = os.path.join(outdir, name + ".onnx")
    # Not under torch.no_grad(): with gradients enabled and parameters that require them,
    # nn.MultiheadAttention (ViT) takes its decomposed path instead of the fused
    # aten::_native_multi_head_attention, which has no ONNX export. Eval mode is what matters
    # for the exported graph (dropout off, BatchNorm running statistics).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(m, (torch.from_numpy(x),), path, opset_version=OPSET, input_names=["input"],
                          output_names=outs, do_constant_folding=True, dynamic_axes=None,
                          training=mode)
    np.save(os.path.join(outdir, name + ".input.npy"), x)
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("outdir", nargs="?", help="directory to write NAME.onnx and NAME.input.npy into")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="build only these models")
    ap.add_argument("--skip", nargs="+", metavar="NAME", default=[], help="build all models but these")
    ap.add_argument("--list", action="store_true", help="print the model names and exit")
    a = ap.parse_args(argv)
    if a.list:
        print("\n".join(MODELS))
        return 0
    if not a.outdir:
        ap.error("OUTDIR is required")
    if a.only and a.skip:
        ap.error("--only and --skip exclude each other")
    names = a.only or [n for n in MODELS if n not in a.skip]
    unknown = [n for n in (a.only or []) + a.skip if n not in MODELS]
    if unknown:
        sys.stderr.write("make_zoo: unknown model(s): %s (known: %s)\n" % (", ".join(unknown), ", ".join(MODELS)))
        return 1
    os.makedirs(a.outdir, exist_ok=True)
    torch.set_num_threads(1)  # the same bytes on every machine: no thread-count-dependent sums
    for n in names:
        try:
            p = export(n, a.outdir)
        except Exception as e:  # report which model failed, then fail
            sys.stderr.write("make_zoo: %s: export failed: %s: %s\n" % (n, type(e).__name__, e))
            return 1
        print("%-20s %10d bytes" % (n, os.path.getsize(p)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
