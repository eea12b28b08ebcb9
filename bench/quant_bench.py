#!/usr/bin/python3
"""INT8 compile-time benchmark: `tosac compile --target TOSA-1.0+INT` of mobilenet_v2 with 16
calibration inputs, and the FP compile of the same model as a reference, in one script.

Usage: bench/quant_bench.py --tosac PATH --models DIR [--runs N] [--only NAME ...] [--check]
                            [--calib-method M] [--per-tensor]

For each model (default mobilenet_v2, as tools/zoo/make_zoo.py writes it into DIR):
  - 16 calibration inputs from the zoo's input generator (tools/quant/eval_ptq.py's inputs_for),
    saved as one [16,1,3,224,224] .npy;
  - `tosac compile NAME.onnx -o T.tosa` (FP) and `tosac compile NAME.onnx -o T.tosa --target
    TOSA-1.0+INT --calibrate calib.npy` (INT8, default method unless --calib-method), each N
    times (default 5): the median and the best wall time of the whole process (read, import,
    passes, calibration on tosac's runtime, quantization, validation, write).
Target (issue 5): INT8 mobilenet_v2 under 2 s; --check makes a missed target exit 1.
Timings are of this machine, one process at a time (tosac is single-threaded).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tools", "quant"))

TARGET_S = {"mobilenet_v2": 2.0}


def wall(cmd, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if r.returncode != 0:
            raise SystemExit(f"failed: {' '.join(cmd)}\n{r.stderr.strip()}")
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tosac", default=os.path.join(HERE, "..", "build", "tosac"))
    ap.add_argument("--models", required=True, help="directory with NAME.onnx")
    ap.add_argument("--only", nargs="+", default=["mobilenet_v2"])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--calib-method", choices=["minmax", "percentile", "mse"])
    ap.add_argument("--per-tensor", action="store_true")
    ap.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    a = ap.parse_args(argv)
    from eval_ptq import input_shape, inputs_for  # torch only when run

    extra = (["--calib-method", a.calib_method] if a.calib_method else []) + (["--per-tensor"] if a.per_tensor else [])
    missed = 0
    print(f"{'model':<16} {'program':<24} {'median s':>9} {'best s':>8}  target")
    with tempfile.TemporaryDirectory() as work:
        for name in a.only:
            onnx_path = os.path.join(a.models, name + ".onnx")
            if not os.path.exists(onnx_path):
                raise SystemExit(f"{onnx_path} not found (tools/zoo/make_zoo.py {a.models} --only {name})")
            _, shape = input_shape(onnx_path)
            calib = os.path.join(work, "calib.npy")
            np.save(calib, np.stack(inputs_for(name, shape, 16, 0)))
            out = os.path.join(work, name + ".tosa")
            fp = wall([a.tosac, "compile", onnx_path, "-o", out], a.runs)
            q = wall([a.tosac, "compile", onnx_path, "-o", out, "--target", "TOSA-1.0+INT", "--calibrate", calib] + extra,
                     a.runs)
            tgt = TARGET_S.get(name)
            ok = tgt is None or statistics.median(q) < tgt
            missed += not ok
            print(f"{name:<16} {'FP (reference)':<24} {statistics.median(fp):9.3f} {min(fp):8.3f}")
            label = "INT8, 16 calib inputs" + (" " + " ".join(extra) if extra else "")
            print(f"{name:<16} {label:<24} {statistics.median(q):9.3f} {min(q):8.3f}  "
                  + (f"< {tgt:g} s {'met' if ok else 'MISSED'}" if tgt else ""), flush=True)
    return 1 if a.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
