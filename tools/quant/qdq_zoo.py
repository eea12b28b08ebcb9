#!/usr/bin/python3
"""INT program vs its --emit-qdq model (onnxruntime, optimizations off) on zoo models.

For each model: the 16 calibration and 8 held-out inputs of tools/quant/eval_ptq.py (the zoo's
input generator, other seeds than the zoo's input), `tosac compile --target TOSA-1.0+INT
--calibrate ... --emit-qdq`, then tools/quant/qdq_agree.py on the held-out inputs: the fraction of
output elements identical and within one output quantization step, and the same for two float
runs of the QDQ model (onnxruntime against tosac in fp64) as a baseline.

  tools/quant/qdq_zoo.py --tosac build/gcc/tosac --models DIR [--only resnet18 vit_small] [--work DIR]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from eval_ptq import input_shape, inputs_for  # noqa: E402

DEFAULT = ["resnet18", "mobilenet_v2", "efficientnet_b0", "vit_small"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tosac", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--only", nargs="+", default=DEFAULT)
    ap.add_argument("--work")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="qdq_zoo_")
    bad = 0
    for name in a.only:
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        onnx_path = os.path.join(a.models, name + ".onnx")
        _, shape = input_shape(onnx_path)
        np.save(os.path.join(d, "calib.npy"), np.stack(inputs_for(name, shape, 16, 0)))
        held = []
        for k, x in enumerate(inputs_for(name, shape, 8, 100)):
            held.append(os.path.join(d, f"held_{k}.npy"))
            np.save(held[-1], x)
        q, qdq = os.path.join(d, "m.tosa"), os.path.join(d, "m.qdq.onnx")
        r = subprocess.run([a.tosac, "compile", onnx_path, "-o", q, "--target", "TOSA-1.0+INT", "--calibrate",
                            os.path.join(d, "calib.npy"), "--emit-qdq", qdq], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"{name}: compile failed: {r.stderr.strip()}")
            bad += 1
            continue
        r = subprocess.run([sys.executable, os.path.join(HERE, "qdq_agree.py"), "--tosac", a.tosac, "--work",
                            os.path.join(d, "agree"), "--float-baseline", q, qdq] + held, capture_output=True, text=True)
        print(f"{name}: {r.stdout.strip()} {r.stderr.strip()}")
        bad += r.returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
