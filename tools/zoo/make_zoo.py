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
twice); equal_constants (two distinct buffers with identical values added in different places).

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
        model(random_input((2,) + tuple(shape[1:]), gen))
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


MODELS = CNNS + ["vit_small", "mlp", "dup_output", "equal_constants"]


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
