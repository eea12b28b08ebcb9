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


def classify_failure(proc):
    """Kind and reason of a `tosac run` that did not succeed."""
    err = (proc.stderr or "") + (proc.stdout or "")
    msg = first_error(err)
    if "not compiled, nothing was run" in err:
        # a clear compile error is "unsupported"; an internal error is a converter bug
        return ("fail" if "internal error" in msg else "unsupported"), msg
    if proc.returncode == 3 and re.search(r"for input '[^']*': (has shape|element \d+ )|unsupported descr", err):
        # test data the program cannot take: another shape than the model declares, values
        # beyond the program input's type, strings
        return "unsupported", msg
    return "fail", "run: " + msg


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
    out_names = [o.name for o in model.graph.output]
    with tempfile.TemporaryDirectory(prefix="onnxnt_") as tmp:
        cmd = [tosac, "run", os.path.join(case_dir, "model.onnx")]
        try:
            for k, n in enumerate(in_names):
                p = os.path.join(data, f"input_{k}.pb")
                if not os.path.exists(p):
                    continue
                a = load_pb(p)
                # as ONNX stores it (int64 stays int64, float64 float64); bfloat16, which numpy
                # lacks and python3-onnx decodes as its uint16 bit patterns, as 2-byte void (what
                # ml_dtypes' bfloat16 arrays save as)
                if in_types.get(n) == onnx.TensorProto.BFLOAT16 and a.dtype == np.uint16:
                    a = a.view("V2")
                path = os.path.join(tmp, f"input_{k}.npy")
                np.save(path, a)
                cmd += ["-i", f"{n}={path}"]
            expected = [load_pb(os.path.join(data, f"output_{k}.pb")) for k in range(len(out_names))]
        except Exception as e:  # noqa: BLE001 - sequences, optionals, strings...
            return name, cat, "unsupported", f"test data not decodable as tensors: {e}"
        outdir = os.path.join(tmp, "out")
        p = run(cmd + ["-o", outdir])
        if p is None:
            return name, cat, "crash", "timed out"
        if is_crash(p):
            return name, cat, "crash", (p.stderr or "")[-400:]
        if p.returncode != 0:
            kind, why = classify_failure(p)
            return name, cat, kind, why
        for n, exp in zip(out_names, expected):
            path = os.path.join(outdir, n.replace("/", "_") + ".npy")
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


REASONS = [  # unsupported cases grouped by the first that matches
    ("no converter", r"no converter"),
    ("needs a constant that is not an input", r"must be .*not known at compile time"),
    ("element type", r"element type|type .* is not supported|not supported: .*type|descr"),
    ("test data the program cannot take", r"for input '[^']*': (has shape|element)|unsupported descr"),
    ("test data not decodable / loadable", r"not decodable|python onnx cannot load"),
    ("inconsistent test data", r"test data inconsistent"),
    ("zero-size tensors", r"no elements|zero-size"),
    ("rank beyond 6", r"rank"),
]


def reason_of(why):
    for label, pat in REASONS:
        if re.search(pat, why):
            return label
    return "other unsupported attribute/combination"


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

    ratchet, min_node = set(), 0
    if args.ratchet and os.path.exists(args.ratchet):
        with open(args.ratchet) as f:
            for line in f:
                m = re.match(r"# node suite: (\d+) of", line)
                if m:
                    min_node = int(m.group(1))
                elif line.strip() and not line.startswith("#"):
                    ratchet.add(line.strip())
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

    # Per suite: the node suite is the bar (issue 12); the others are mostly opset 6 (outside 7-21).
    suites = {}
    for n, cat, kind, why in results:
        suites.setdefault(n.split("/")[0] if "/" in n else "node", []).append((cat, kind, why))
    for suite, rs in suites.items():
        c = {k: sum(1 for _, kk, _ in rs if kk == k) for k in ("pass", "fail", "unsupported", "crash")}
        print(f"suite {suite}: {c['pass']} of {len(rs)} pass ({100.0 * c['pass'] / len(rs):.1f}%), "
              f"{c['fail']} failed, {c['crash']} crashed, {c['unsupported']} unsupported")
    node = suites.get("node", [])
    if node:
        why_hist, op_hist = {}, {}
        for cat, kind, why in node:
            if kind == "unsupported":
                r = reason_of(why)
                why_hist[r] = why_hist.get(r, 0) + 1
            if kind != "pass":
                # the op a message names ("node 'n' (OpType): ..."), else the case's first op
                m = re.search(r"node '[^']*' \(([A-Za-z0-9_]+)\)", why)
                op = m.group(1) if m else cat.rstrip("*")
                op_hist[op] = op_hist.get(op, 0) + 1
        print("node suite, unsupported by reason: " +
              ", ".join(f"{r} {c}" for r, c in sorted(why_hist.items(), key=lambda x: -x[1])))
        print("node suite, op types of the cases that do not pass: " +
              ", ".join(f"{o} {c}" for o, c in sorted(op_hist.items(), key=lambda x: (-x[1], x[0]))))
    n_node_pass = sum(1 for _, k, _ in node if k == "pass")
    node_regressed = bool(node) and len(node) == sum(1 for k in cases if "/" not in k) and n_node_pass < min_node
    for n in regressions:
        print(f"REGRESSION   {n}: listed in {args.ratchet} but no longer passes")
    if node_regressed:
        print(f"REGRESSION   node suite: {n_node_pass} pass, {args.ratchet} records {min_node}")
    if args.update and args.ratchet:
        with open(args.ratchet, "w") as f:
            f.write("# ONNX node tests that pass as a user runs them (tosac run model.onnx -i ...;\n"
                    "# tools/onnx/node_tests.py --update); this list may only grow\n")
            f.write(f"# node suite: {max(n_node_pass, min_node)} of {len(node)} cases pass\n")
            for n in sorted(passed | ratchet):
                f.write(n + "\n")
    listed = [k for n, cat, k, _ in results if cat in LISTED and "/" not in n]
    if listed:
        n_ok = listed.count("pass")
        print(f"listed ops, node suite: {n_ok} of {len(listed)} cases pass ({100.0 * n_ok / len(listed):.1f}%)")
    print(f"{tot['unsupported']} unsupported")
    n_bad = tot["fail"] + tot["crash"] + len(regressions) + node_regressed
    print(f"{tot['pass']} passed, {n_bad} failed")
    return 1 if n_bad else 0


if __name__ == "__main__":
    sys.exit(main())
