"""Fixtures of the Python package tests (run by tests/python/run_pytest.sh, CTest python.pytest).

Environment: TOSAC_SOURCE_DIR (the repository: examples, tools/zoo/ort_run.js) and TOSAC_BIN (the
`tosac` command, the independent path the package's results are compared with)."""

import os
import subprocess

import numpy as np
import pytest

SOURCE = os.environ.get("TOSAC_SOURCE_DIR") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SMALL_CNN = os.path.join(SOURCE, "examples", "small_cnn.onnx")
SMALL_CNN_INPUT = os.path.join(SOURCE, "examples", "small_cnn_input.npy")


@pytest.fixture(scope="session")
def tosac_bin():
    path = os.environ.get("TOSAC_BIN")
    assert path and os.access(path, os.X_OK), "TOSAC_BIN must name the tosac command"
    return path


def run_tosac(tosac_bin, *args):
    """Runs `tosac ARGS`; fails the test with its stderr when it fails."""
    r = subprocess.run([tosac_bin, *map(str, args)], capture_output=True, text=True)
    assert r.returncode == 0, f"tosac {' '.join(map(str, args))}: {r.stderr}"
    return r.stdout


def tosac_run_outputs(tosac_bin, program, inputs, out_dir):
    """`tosac run PROGRAM -i NAME=FILE.npy ... -o OUT_DIR` on arrays: {output name: array}."""
    os.makedirs(out_dir, exist_ok=True)
    args = []
    for name, x in inputs.items():
        path = os.path.join(out_dir, f"in_{name}.npy")
        np.save(path, x)
        args += ["-i", f"{name}={path}"]
    run_tosac(tosac_bin, "run", program, *args, "-o", out_dir)
    return {f[:-4]: np.load(os.path.join(out_dir, f)) for f in os.listdir(out_dir)
            if f.endswith(".npy") and not f.startswith("in_")}


def ort_outputs(model, inputs, out_dir):
    """onnxruntime's outputs (tools/zoo/ort_run.js): {output name: array}."""
    os.makedirs(out_dir, exist_ok=True)
    args = []
    for name, x in inputs.items():
        path = os.path.join(out_dir, f"in_{name}.npy")
        np.save(path, x)
        args.append(f"{name}={path}")
    golden = os.path.join(out_dir, "golden")
    r = subprocess.run(["node", os.path.join(SOURCE, "tools", "zoo", "ort_run.js"), model, *args, golden],
                       capture_output=True, text=True)
    assert r.returncode == 0, f"ort_run.js: {r.stderr}"
    return {f[:-4]: np.load(os.path.join(golden, f)) for f in os.listdir(golden)}


def rel_l2(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))
