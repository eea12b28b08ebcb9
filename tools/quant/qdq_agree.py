#!/usr/bin/python3
"""Agreement of an INT8 TOSA program with the QDQ model `tosac compile --emit-qdq` wrote for it.

    tools/quant/qdq_agree.py --tosac build/tosac M.tosa M.qdq.onnx IN.npy... [--min 0.99] [--work DIR]

Each input is run through the QDQ model by onnxruntime-node with graph optimizations disabled
(tools/zoo/ort_run.js: ONNX's literal float Q/DQ semantics) and through M.tosa by `tosac run`
(the float input quantized with the M.tosa.quant.json sidecar, outputs dequantized). Both outputs
lie on the output's int8 grid; the difference is counted in output steps (the sidecar's output
scale). Prints the fraction of elements identical and within one step; exit 1 when the
within-one-step fraction is below --min.

--float-baseline also runs the QDQ model itself through tosac's FP runtime in double precision
(`tosac run M.qdq.onnx --precise_mode 1`) and prints how well those two float runs of the same
QDQ model agree: what a float runtime's own rounding does to the comparison. In a deep
random-weight network a single code that a float rounding flips near a boundary is amplified
layer after layer, so the end-to-end figure cannot beat that baseline by much.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosac", required=True)
    ap.add_argument("tosa")
    ap.add_argument("qdq")
    ap.add_argument("inputs", nargs="+")
    ap.add_argument("--min", type=float, default=0.99)
    ap.add_argument("--work")
    ap.add_argument("--float-baseline", action="store_true")
    a = ap.parse_args()
    side = json.load(open(a.tosa + ".quant.json"))
    if len(side["inputs"]) != 1:
        sys.exit("one-input models only")
    iname = side["inputs"][0]["name"]
    work = a.work or tempfile.mkdtemp(prefix="qdq_agree_")
    tally = {"int": [0, 0, 0, 0.0], "base": [0, 0, 0, 0.0]}  # n, identical, within one, worst

    def count(key, r, t, scale):
        steps = np.abs(r - t) / scale
        c = tally[key]
        c[0] += steps.size
        c[1] += int(np.sum(steps < 0.5))
        c[2] += int(np.sum(steps < 1.5))
        c[3] = max(c[3], float(steps.max()))

    for k, inp in enumerate(a.inputs):
        od, td = os.path.join(work, f"ort_{k}"), os.path.join(work, f"int_{k}")
        subprocess.run(["node", os.path.join(ROOT, "tools/zoo/ort_run.js"), a.qdq, inp, od], check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([a.tosac, "run", a.tosa, "-i", f"{iname}={inp}", "-o", td], check=True,
                       stdout=subprocess.DEVNULL)
        bd = os.path.join(work, f"f64_{k}")
        if a.float_baseline:
            subprocess.run([a.tosac, "run", a.qdq, "-i", f"{iname}={inp}", "-o", bd, "--precise_mode", "1"],
                           check=True, stdout=subprocess.DEVNULL)
        for o in side["outputs"]:
            fn = "".join(c if c.isalnum() or c in "._-" else "_" for c in o["name"]) + ".npy"
            r = np.load(os.path.join(od, fn)).astype(np.float64).ravel()
            t = np.load(os.path.join(td, fn)).astype(np.float64).ravel()
            count("int", r, t, o["scale"])
            if a.float_baseline:
                count("base", r, np.load(os.path.join(bd, fn)).astype(np.float64).ravel(), o["scale"])
    n, ident, within, worst = tally["int"]
    line = f"{n} elements: identical {ident / n:.4f}, within one step {within / n:.4f}, worst {worst:.0f} steps"
    if a.float_baseline:
        bn, bi, bw, bwo = tally["base"]
        line += f" (QDQ model, onnxruntime vs tosac fp64: identical {bi / bn:.4f}, within one {bw / bn:.4f})"
    print(line)
    return 0 if within / n >= a.min else 1


if __name__ == "__main__":
    sys.exit(main())
