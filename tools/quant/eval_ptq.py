#!/usr/bin/env python3
"""Measure tosac's INT8 post-training quantization against the FP program on zoo models.

For each model: 16 calibration inputs and 8 held-out inputs are drawn with the zoo's input
generator (tools/zoo/make_zoo.py's random_input, other seeds than the zoo's own input); the
model is compiled twice (TOSA-1.0+FP, and TOSA-1.0+INT with --calibrate on the 16 inputs);
both programs run with `tosac run` on the held-out inputs (the INT program through its
.quant.json sidecar: float in, dequantized float out); printed per model: cosine similarity
and relative L2 of INT8 vs FP outputs (over all held-out outputs together, and the worst
input), compile time of the INT8 program.

Every model is measured with tosac's default quantization (per-channel weights, the default
--calib-method); mobilenet_v2 and efficientnet_b0 (the issue's comparison) are measured a second
time with plain per-tensor min/max (`--per-tensor --calib-method minmax`), printed on the line
below, so both numbers are shown. --methods adds one line per calibration method for every model.
--a16w8 measures every model twice, int8 and `--a16w8` (int16 activations, int8 weights, INT48
accumulators; target TOSA-1.0+INT+int16, validated with the int16 extension), on the same inputs.

  tools/quant/eval_ptq.py --tosac build/q/tosac --models DIR [--only resnet18 mobilenet_v2]
DIR holds NAME.onnx (tools/zoo/make_zoo.py DIR --only ...).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "zoo"))

DEFAULT = ["resnet18", "mobilenet_v2", "squeezenet1_1", "efficientnet_b0", "vit_small"]
# the comparison: plain per-tensor min/max next to the default for these
PLAIN = ["mobilenet_v2", "efficientnet_b0"]
PLAIN_FLAGS = ["--per-tensor", "--calib-method", "minmax"]


def inputs_for(name, shape, n, offset):
    import torch
    from make_zoo import random_input, seed_for
    out = []
    for k in range(n):
        gen = torch.Generator().manual_seed(seed_for(name) + 1000 + offset + k)
        out.append(random_input(tuple(shape), gen).numpy().astype(np.float32))
    return out


def input_shape(onnx_path):
    import onnx
    m = onnx.load(onnx_path, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    ins = [i for i in m.graph.input if i.name not in inits]
    if len(ins) != 1:
        raise SystemExit(f"{onnx_path}: one graph input expected")
    dims = [d.dim_value if d.dim_value > 0 else 1 for d in ins[0].type.tensor_type.shape.dim]
    return ins[0].name, dims


def run(tosac, model, iname, x, work):
    xp = os.path.join(work, "x.npy")
    np.save(xp, x)
    od = os.path.join(work, "out")
    shutil.rmtree(od, ignore_errors=True)  # outputs of another model must not be read back
    subprocess.run([tosac, "run", model, "-i", f"{iname}={xp}", "-o", od], check=True, capture_output=True)
    return [np.load(os.path.join(od, f)).astype(np.float64).ravel() for f in sorted(os.listdir(od))]


def cosine(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30))


def rel_l2(a, ref):
    return float(np.linalg.norm(a - ref) / (np.linalg.norm(ref) + 1e-30))


def evaluate(tosac, models, name, work, extra, a16w8=False):
    onnx_path = os.path.join(models, name + ".onnx")
    iname, shape = input_shape(onnx_path)
    calib = np.stack(inputs_for(name, shape, 16, 0))
    held = inputs_for(name, shape, 8, 100)
    cp = os.path.join(work, "calib.npy")
    np.save(cp, calib)  # one file, leading sample dimension
    fp = os.path.join(work, name + ".fp.tosa")
    q = os.path.join(work, name + ".int8.tosa")
    subprocess.run([tosac, "compile", onnx_path, "-o", fp], check=True, capture_output=True)
    t0 = time.perf_counter()
    target = ["--target", "TOSA-1.0+INT+int16", "--a16w8"] if a16w8 else ["--target", "TOSA-1.0+INT"]
    r = subprocess.run([tosac, "compile", onnx_path, "-o", q] + target + ["--calibrate", cp] + extra,
                       capture_output=True, text=True)
    t_int = time.perf_counter() - t0
    if r.returncode != 0:
        return {"name": name, "error": (r.stderr.strip().splitlines() or ["?"])[-1]}
    v = subprocess.run([tosac, "validate", "--profile", "INT", "--ext", "int16" if a16w8 else "none", "-q", q],
                       capture_output=True, text=True)
    a_all, b_all, worst_cos, worst_rel = [], [], 1.0, 0.0
    for x in held:
        ref = np.concatenate(run(tosac, fp, iname, x, work))
        got = np.concatenate(run(tosac, q, iname, x, work))
        a_all.append(got)
        b_all.append(ref)
        worst_cos = min(worst_cos, cosine(got, ref))
        worst_rel = max(worst_rel, rel_l2(got, ref))
    got, ref = np.concatenate(a_all), np.concatenate(b_all)
    return {"name": name, "cos": cosine(got, ref), "rel": rel_l2(got, ref), "worst_cos": worst_cos,
            "worst_rel": worst_rel, "compile_s": t_int, "valid": v.returncode == 0}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosac", default=os.path.join(HERE, "..", "..", "build", "tosac"))
    ap.add_argument("--models", required=True, help="directory with NAME.onnx")
    ap.add_argument("--only", nargs="+", default=DEFAULT)
    ap.add_argument("--methods", action="store_true", help="also one line per --calib-method")
    ap.add_argument("--no-plain", action="store_true", help="skip the per-tensor min/max comparison")
    ap.add_argument("--a16w8", action="store_true", help="also --a16w8 (int16 activations) for every model")
    ap.add_argument("--extra", nargs=argparse.REMAINDER, default=[], help="more tosac compile flags")
    a = ap.parse_args(argv)
    print(f"{'model':<20} {'config':<22} {'cosine':>8} {'rel L2':>8} {'worst cos':>10} {'worst rel':>10} "
          f"{'INT8 compile':>13} valid")
    bad = 0
    with tempfile.TemporaryDirectory() as work:
        for name in a.only:
            configs = [("default", [], False)]
            if a.methods:
                configs += [(m, ["--calib-method", m], False) for m in ("minmax", "percentile", "mse")]
            if name in PLAIN and not a.no_plain:
                configs.append(("per-tensor minmax", PLAIN_FLAGS, False))
            if a.a16w8:
                configs.append(("a16w8", [], True))
            for label, flags, wide in configs:
                r = evaluate(a.tosac, a.models, name, work, flags + a.extra, wide)
                if "error" in r:
                    bad += 1
                    print(f"{name:<20} {label:<22} not quantized: {r['error']}")
                    continue
                bad += not r["valid"]
                print(f"{name:<20} {label:<22} {r['cos']:8.4f} {r['rel']:8.4f} {r['worst_cos']:10.4f} "
                      f"{r['worst_rel']:10.4f} {r['compile_s']:12.2f}s {'yes' if r['valid'] else 'NO'}", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
