#!/usr/bin/python3
"""Run the ONNX node tests (Debian libonnx-testdata) through `tosac compile` + `tosac run`.

For every test_* case: input_N.pb / output_N.pb are decoded with python3-onnx (onnx.numpy_helper,
independent of tosac's reader) into .npy files; the model is compiled with no bindings, and every
graph input the compiler says must be constant ("... --bind NAME=FILE.npy") is bound to its test
data and the compile retried; the program is run with `tosac run -i NAME=FILE.npy` (inputs in the
program's types: int64 as int32, float64 as float32, bfloat16 bits as 2-byte void) and each output
compared with the expected one (float: rtol 1e-4, atol 1e-5; ints, bools and bfloat16 bits exact).

Each case is one of: pass, fail (wrong values, run error, internal compiler error), unsupported (a
clear compile error, or test data the program cannot take: another input shape than the model
declares, float64 beyond the float32 range, expected outputs not computed from the model
(BAD_DATA)), crash (signal, sanitizer report, timeout). Counts are printed per op type;
the last line is "N passed, M failed" where M counts wrong values, crashes and ratchet regressions
(cases in the ratchet file that no longer pass). Exit status 1 when M > 0 (a wrong value is a
failure, not a pass), else 0. --update rewrites the ratchet file with the passing cases (it only grows:
regressions are kept listed).
"""
import argparse
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

# Per case: a few ms in the release build; wide so an -O1 sanitizer build on a loaded 2-core
# machine (two CI runs side by side) cannot hit it. A real hang still fails.
TIMEOUT = 120
TESTDATA = "/usr/share/libonnx-testdata/data"
# Node tests exercise integer, bf16 and control-flow programs too: compile for a target that has
# them all (a deployment would name its own, e.g. TOSA-1.0+FP).
TARGET = "TOSA-1.0+INT+FP+bf16+int16+controlflow"
SUITES = ("node", "simple", "pytorch-converted", "pytorch-operator")

# The ONNX ops the front end must cover (issue 4); the pass rate over cases whose op is one of
# these is reported separately ("listed ops").
LISTED = set("""
Conv ConvTranspose Gemm MatMul Add Sub Mul Div Pow Sqrt Reciprocal Exp Log Abs Neg Floor Ceil Round
Sign Relu LeakyRelu PRelu Elu Selu Celu Clip Sigmoid HardSigmoid HardSwish Tanh Erf Gelu Softplus Mish
Softmax LogSoftmax MaxPool AveragePool GlobalAveragePool GlobalMaxPool BatchNormalization
InstanceNormalization LayerNormalization GroupNormalization Reshape Flatten Transpose Squeeze Unsqueeze
Concat Split Slice Gather GatherElements ScatterND Expand Tile Pad Resize Upsample DepthToSpace
SpaceToDepth ReduceMean ReduceSum ReduceMax ReduceMin ReduceProd ReduceL2 ReduceLogSumExp ArgMax ArgMin
TopK Cast Where Equal Greater GreaterOrEqual Less LessOrEqual And Or Xor Not Min Max Sum Mean Shape
Size ConstantOfShape Range Constant Identity Dropout Einsum CumSum Trilu If Loop
""".split())
BIND_RE = re.compile(r"--bind ([^=\s]+)=FILE\.npy")
# Cases whose expected outputs were not computed from their own model: they cannot pass, and a
# correct program gives "wrong values". Checked by hand; each is reported as unsupported with why.
BAD_DATA = {
    f"test_{w}window{s}_expanded": "expected values use pi = 3.1415 (onnx 1.12's generator), the model a float32 2*pi"
    for w in ("hann", "hamming", "blackman") for s in ("", "_symmetric")
}


def load_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def is_crash(proc):
    err = proc.stderr or ""
    return proc.returncode < 0 or "AddressSanitizer" in err or "runtime error:" in err or "LeakSanitizer" in err


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, errors="replace")
    except subprocess.TimeoutExpired:
        return None


def op_category(model):
    """The case's op: the first non-Constant op; "*" marks a case using an op outside LISTED."""
    ops = [n.op_type for n in model.graph.node if n.op_type != "Constant"]
    cat = ops[0] if ops else (model.graph.node[0].op_type if model.graph.node else "?")
    return cat if all(o in LISTED for o in ops) else cat + "*"


def first_error(text):
    for line in (text or "").splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return (text or "").strip().splitlines()[-1] if (text or "").strip() else "no message"


def run_case(tosac, case_dir):
    name = os.path.basename(case_dir)
    try:
        model = onnx.load(os.path.join(case_dir, "model.onnx"))
    except Exception as e:  # noqa: BLE001 - the python loader rejects some cases; not ours to judge
        return name, "?", "unsupported", f"python onnx cannot load the model: {e}"
    cat = op_category(model)
    if name in BAD_DATA:
        return name, cat, "unsupported", "test data inconsistent with the model: " + BAD_DATA[name]
    data = os.path.join(case_dir, "test_data_set_0")
    inits = {i.name for i in model.graph.initializer}
    in_names = [i.name for i in model.graph.input if i.name not in inits]
    in_types = {i.name: i.type.tensor_type.elem_type for i in model.graph.input}
    in_dims = {i.name: [d.dim_value if d.HasField("dim_value") else None for d in i.type.tensor_type.shape.dim]
               for i in model.graph.input if i.type.tensor_type.HasField("shape")}
    out_names = [o.name for o in model.graph.output]
    with tempfile.TemporaryDirectory(prefix="onnxnt_") as tmp:
        feeds = {}  # name -> (run npy, bind npy)
        try:
            for k, n in enumerate(in_names):
                p = os.path.join(data, f"input_{k}.pb")
                if not os.path.exists(p):
                    continue
                a = load_pb(p)
                # a static program cannot take data of another shape (size-1 dimensions aside, as tosac run)
                dims = in_dims.get(n)
                if dims is not None and None not in dims and [d for d in dims if d != 1] != [e for e in a.shape if e != 1]:
                    return name, cat, "unsupported", f"test data of input {n} has shape {a.shape}, the model declares {tuple(dims)}"
                bind_path = os.path.join(tmp, f"bind_{k}.npy")
                np.save(bind_path, a)
                run_path = bind_path
                # the TOSA program's input types: int64 -> INT32, float64 -> FP32 (TOSA has neither);
                # bfloat16 (decoded by python3-onnx as its uint16 bit patterns) -> numpy's 2-byte void
                conv = None
                if a.dtype == np.int64 and a.size and a.min() >= -2**31 and a.max() < 2**31:
                    conv = a.astype(np.int32)
                elif a.dtype == np.float64:
                    with np.errstate(over="ignore"):
                        conv = a.astype(np.float32)
                    if np.any(np.isinf(conv) & np.isfinite(a)):
                        return name, cat, "unsupported", f"float64 data of input {n} is outside the FP32 range"
                elif in_types.get(n) == onnx.TensorProto.BFLOAT16 and a.dtype == np.uint16:
                    conv = a.view("V2")
                if conv is not None:
                    run_path = os.path.join(tmp, f"in_{k}.npy")
                    np.save(run_path, conv)
                feeds[n] = (run_path, bind_path)
            expected = [load_pb(os.path.join(data, f"output_{k}.pb")) for k in range(len(out_names))]
        except Exception as e:  # noqa: BLE001 - sequences, optionals, strings...
            return name, cat, "unsupported", f"test data not decodable as tensors: {e}"
        binds = []
        tosa = os.path.join(tmp, "model.tosa")
        for _ in range(len(in_names) + 1):
            cmd = [tosac, "compile", os.path.join(case_dir, "model.onnx"), "-o", tosa, "--target", TARGET]
            for b in binds:
                cmd += ["--bind", f"{b}={feeds[b][1]}"]
            p = run(cmd)
            if p is None:
                return name, cat, "crash", "compile timed out"
            if is_crash(p):
                return name, cat, "crash", "compile: " + (p.stderr or "")[-400:]
            if p.returncode == 0:
                break
            want = [m for m in BIND_RE.findall(p.stderr) if m in feeds and m not in binds]
            if not want:
                msg = first_error(p.stderr)
                return name, cat, ("fail" if "internal error" in msg else "unsupported"), msg
            binds += want
        else:
            return name, cat, "unsupported", "binding loop did not converge"
        outdir = os.path.join(tmp, "out")
        os.mkdir(outdir)
        cmd = [tosac, "run", tosa, "-o", outdir]
        for n in in_names:
            if n in feeds and n not in binds:
                cmd += ["-i", f"{n}={feeds[n][0]}"]
        p = run(cmd)
        if p is None:
            return name, cat, "crash", "run timed out"
        if is_crash(p):
            return name, cat, "crash", "run: " + (p.stderr or "")[-400:]
        if p.returncode != 0:
            return name, cat, "fail", "run: " + first_error(p.stderr + p.stdout)
        for n, exp in zip(out_names, expected):
            path = os.path.join(outdir, n + ".npy")
            if not os.path.exists(path):
                return name, cat, "fail", f"output {n} missing"
            got = np.load(path)
            if got.dtype.kind == "V" and got.dtype.itemsize == 2:  # bfloat16 bits, as python3-onnx decodes them
                got = got.view(np.uint16)
            if got.shape != exp.shape:
                return name, cat, "fail", f"output {n}: shape {got.shape}, expected {exp.shape}"
            if exp.dtype.kind == "f":
                ok = np.allclose(got.astype(np.float64), exp.astype(np.float64), rtol=1e-4, atol=1e-5, equal_nan=True)
            else:
                ok = np.array_equal(got.astype(np.int64), exp.astype(np.int64))
            if not ok:
                return name, cat, "fail", f"output {n}: wrong values"
    return name, cat, "pass", ""


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tosac", required=True)
    ap.add_argument("--data", action="append",
                    help="a folder of test_* cases (repeatable); default: node, simple, pytorch-converted and "
                    "pytorch-operator of " + TESTDATA)
    ap.add_argument("--ratchet")
    ap.add_argument("--update", action="store_true")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--filter", default="", help="only cases whose name contains this")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every non-passing case")
    args = ap.parse_args()

    dirs = args.data or [os.path.join(TESTDATA, s) for s in SUITES]
    # Case names: the folder name for the node suite, "suite/name" for the others (names repeat).
    cases = {}
    for d in dirs:
        suite = os.path.basename(os.path.normpath(d))
        for n in sorted(os.listdir(d)):
            if n.startswith("test_") and args.filter in n:
                cases[n if suite == "node" else f"{suite}/{n}"] = os.path.join(d, n)
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for key, r in zip(cases, ex.map(lambda k: run_case(args.tosac, cases[k]), cases)):
            results.append((key,) + r[1:])

    ratchet = set()
    if args.ratchet and os.path.exists(args.ratchet):
        with open(args.ratchet) as f:
            ratchet = {l.strip() for l in f if l.strip() and not l.startswith("#")}
    passed = {n for n, _, k, _ in results if k == "pass"}
    regressions = sorted(n for n in ratchet if n not in passed and n in set(cases))

    cats = {}
    for n, cat, kind, why in results:
        cats.setdefault(cat, {"pass": 0, "fail": 0, "unsupported": 0, "crash": 0})[kind] += 1
        if kind in ("fail", "crash") or (args.verbose and kind != "pass"):
            print(f"{kind.upper():12s} {n} [{cat}]: {why}")
    print(f"{'op type':24s} {'pass':>5s} {'fail':>5s} {'unsup':>5s} {'crash':>5s}")
    for cat in sorted(cats):
        c = cats[cat]
        print(f"{cat:24s} {c['pass']:5d} {c['fail']:5d} {c['unsupported']:5d} {c['crash']:5d}")
    tot = {k: sum(c[k] for c in cats.values()) for k in ("pass", "fail", "unsupported", "crash")}
    print(f"{'total':24s} {tot['pass']:5d} {tot['fail']:5d} {tot['unsupported']:5d} {tot['crash']:5d}")
    for n in regressions:
        print(f"REGRESSION   {n}: listed in {args.ratchet} but no longer passes")
    if args.update and args.ratchet:
        with open(args.ratchet, "w") as f:
            f.write("# ONNX node tests that pass (tools/onnx/node_tests.py --update); this list may only grow\n")
            for n in sorted(passed | ratchet):
                f.write(n + "\n")
    # The bar is over the node suite's cases made only of listed ops; the other suites are mostly
    # opset 6 (outside 7-21).
    listed = [k for n, cat, k, _ in results if cat in LISTED and "/" not in n]
    if listed:
        n_ok = listed.count("pass")
        print(f"listed ops, node suite: {n_ok} of {len(listed)} cases pass ({100.0 * n_ok / len(listed):.1f}%)")
    print(f"{tot['unsupported']} unsupported")
    print(f"{tot['pass']} passed, {tot['fail'] + tot['crash'] + len(regressions)} failed")
    return 1 if tot["fail"] or tot["crash"] or regressions else 0


if __name__ == "__main__":
    sys.exit(main())
