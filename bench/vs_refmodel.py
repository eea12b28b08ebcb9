#!/usr/bin/python3
"""tosac run vs tosa_reference_model on the same compute-heavy graphs, in one script.

    bench/vs_refmodel.py --tosac build/gcc/tosac --ref-model PATH/tosa_reference_model [--runs 5]

Each graph is written as flatc JSON and encoded with Debian's flatc (schema/tosa.fbs), then both
programs run the same desc.json; the best wall time of --runs process runs is compared, and the
outputs must be identical (integers) or within 1e-5 relative (fp32). The reference model is not
built by this project: pass the path of one you have.
"""
import argparse, json, os, subprocess, sys, tempfile, time
import numpy as np

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "schema", "tosa.fbs")


def tensor(name, shape, ty, data=None):
    t = {"name": name, "shape": list(shape), "type": ty}
    if data is not None:
        raw = np.ascontiguousarray(data).tobytes()
        t["data"] = list(raw + b"\0" * ((-len(raw)) % 8))
    return t


def const_op(name):
    return {"op": "CONST", "attribute_type": "ConstAttribute", "attribute": {}, "inputs": [], "outputs": [name]}


def conv_graph(rng, dtype, H, C, OC, K):
    np_t, ty, acc = (np.int8, "INT8", "INT32") if dtype == "i8" else (np.float32, "FP32", "FP32")
    w = rng.integers(-128, 128, (OC, K, K, C)).astype(np_t) if dtype == "i8" else rng.uniform(-1, 1, (OC, K, K, C)).astype(np_t)
    b = np.zeros(OC, np.int32 if dtype == "i8" else np.float32)
    zero = np.zeros(1, np_t)
    p = K // 2
    tensors = [tensor("x", [1, H, H, C], ty), tensor("w", w.shape, ty, w), tensor("b", b.shape, acc, b),
               tensor("zi", [1], ty, zero), tensor("zw", [1], ty, zero), tensor("y", [1, H, H, OC], acc)]
    ops = [const_op(n) for n in ("w", "b", "zi", "zw")] + [{
        "op": "CONV2D", "attribute_type": "Conv2dAttribute",
        "attribute": {"pad": [p] * 4, "stride": [1, 1], "dilation": [1, 1], "acc_type": acc},
        "inputs": ["x", "w", "b", "zi", "zw"], "outputs": ["y"]}]
    x = rng.integers(-128, 128, (1, H, H, C)).astype(np_t) if dtype == "i8" else rng.uniform(-1, 1, (1, H, H, C)).astype(np_t)
    return tensors, ops, x, H * H * C * OC * K * K


def matmul_graph(rng, dtype, M):
    np_t, ty, acc = (np.int8, "INT8", "INT32") if dtype == "i8" else (np.float32, "FP32", "FP32")
    b = rng.integers(-128, 128, (1, M, M)).astype(np_t) if dtype == "i8" else rng.uniform(-1, 1, (1, M, M)).astype(np_t)
    zero = np.zeros(1, np_t)
    tensors = [tensor("x", [1, M, M], ty), tensor("w", b.shape, ty, b), tensor("za", [1], ty, zero),
               tensor("zb", [1], ty, zero), tensor("y", [1, M, M], acc)]
    ops = [const_op(n) for n in ("w", "za", "zb")] + [{
        "op": "MATMUL", "attribute_type": "MatMulAttribute", "attribute": {},
        "inputs": ["x", "w", "za", "zb"], "outputs": ["y"]}]
    x = rng.integers(-128, 128, (1, M, M)).astype(np_t) if dtype == "i8" else rng.uniform(-1, 1, (1, M, M)).astype(np_t)
    return tensors, ops, x, M * M * M


def write_case(d, tensors, ops, x):
    g = {"version": {"_major": 1, "_minor": 0, "_patch": 0, "_draft": False},
         "regions": [{"name": "main", "blocks": [{"name": "main", "inputs": ["x"], "outputs": ["y"],
                                                  "tensors": tensors, "shapes": [], "operators": ops}]}]}
    with open(os.path.join(d, "g.json"), "w") as f:
        json.dump(g, f)
    subprocess.run(["flatc", "-b", "-o", d, SCHEMA, os.path.join(d, "g.json")], check=True)
    np.save(os.path.join(d, "x.npy"), x)
    for name, out in (("tosac.json", "tosac_y.npy"), ("ref.json", "ref_y.npy")):
        with open(os.path.join(d, name), "w") as f:
            json.dump({"tosa_file": "g.tosa", "ifm_name": ["x"], "ifm_file": ["x.npy"], "ofm_name": ["y"], "ofm_file": [out]}, f)


def best_time(cmd, runs):
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        best = min(best, time.perf_counter() - t)
        if r.returncode != 0:
            sys.exit("%s failed (exit %d): %s" % (cmd[0], r.returncode, r.stderr.decode()[-400:]))
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tosac", required=True)
    ap.add_argument("--ref-model", required=True)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    cases = [("conv2d i8 56x56x64 3x3 ->64", conv_graph(rng, "i8", 56, 64, 64, 3)),
             ("conv2d fp32 56x56x64 3x3 ->64", conv_graph(rng, "fp32", 56, 64, 64, 3)),
             ("conv2d i8 28x28x128 1x1 ->128", conv_graph(rng, "i8", 28, 128, 128, 1)),
             ("matmul i8 256^3", matmul_graph(rng, "i8", 256)),
             ("matmul fp32 256^3", matmul_graph(rng, "fp32", 256))]
    print("%-32s %12s %14s %8s  %s" % ("graph (whole process)", "tosac ms", "ref model ms", "ratio", "outputs"))
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, (tensors, ops, x, macs)) in enumerate(cases):
            d = os.path.join(tmp, "c%d" % k)
            os.mkdir(d)
            write_case(d, tensors, ops, x)
            t_ours = best_time([a.tosac, "run", "--test_desc", os.path.join(d, "tosac.json")], a.runs)
            t_ref = best_time([a.ref_model, "--test_desc", os.path.join(d, "ref.json")], a.runs)
            ours, ref = np.load(os.path.join(d, "tosac_y.npy")), np.load(os.path.join(d, "ref_y.npy"))
            if ours.dtype.kind == "i":
                same = "bit-exact" if np.array_equal(ours, ref) else "DIFFER"
            else:
                err = np.max(np.abs(ours.astype(np.float64) - ref) / np.maximum(1.0, np.abs(ref)))
                same = "max rel err %.1e" % err
            print("%-32s %12.1f %14.1f %7.1fx  %s" % (name, t_ours * 1e3, t_ref * 1e3, t_ref / t_ours, same))


if __name__ == "__main__":
    main()
