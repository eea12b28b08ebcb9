#!/usr/bin/python3
"""Check tosac on the model zoo against onnxruntime's golden outputs.

Usage: tools/zoo/check_zoo.py --tosac PATH --models DIR [--only NAME ...] [--require-no-transpose]
                              [--jobs N] [--work DIR] [--json FILE]

DIR holds what tools/zoo/make_zoo.py writes (NAME.onnx, NAME.input.npy) plus the golden outputs
of tools/zoo/ort_run.js in NAME.ort/<output>.npy. For every model NAME.onnx in DIR:

  1. `tosac compile NAME.onnx -o NAME.tosa` (wall time measured) must succeed;
  2. `tosac validate --profile FP NAME.tosa` must report a valid graph;
  3. `tosac run NAME.tosa -i input=NAME.input.npy -o OUT` must run (VALID);
  4. every output must match onnxruntime's: relative L2 error ||tosac - ort|| / ||ort|| <= 1e-4
     shapes must agree; a golden that is all zeros or not finite fails (it would prove nothing).

Structural checks:
  - the CNNs (mobilenet_v2, mobilenet_v3_small, resnet18, resnet50, squeezenet1_1,
    shufflenet_v2_x1_0, efficientnet_b0 and MLPerf Tiny's ds_cnn, mobilenet_v1_025, resnet8): TRANSPOSE operators inside the program are counted
    (a TRANSPOSE that reads a graph input or writes a graph output is a layout boundary and
    not counted) in two groups: the model's own (located at one of its Transpose nodes, such as
    ShuffleNet's channel shuffles) and layout ones (every other: an NCHW/NHWC change left
    inside); with --require-no-transpose a layout count above zero fails the model;
  - dup_output: the ONNX outputs that carry the same value (following Identity nodes) must each
    be written by exactly one TOSA IDENTITY of one shared tensor, and the program must have
    exactly as many IDENTITY operators as such output slots (2 for `return y, y`);
  - equal_constants: for every group of ONNX initializers with identical values, the program
    must hold exactly one constant with those values.

A missing golden, a missing input or any failing step fails the model; nothing is skipped.
Prints a table (model, compile ms, ops (operators other than CONST / CONST_SHAPE),
transposes, worst rel L2, verdict) and the reasons of failures.

Exit status: 0 every model passed; 1 a model failed (or no models found); 2 bad usage.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

CNNS = {"mobilenet_v2", "mobilenet_v3_small", "resnet18", "resnet50", "squeezenet1_1",
        "shufflenet_v2_x1_0", "efficientnet_b0", "ds_cnn", "mobilenet_v1_025", "resnet8"}
REL_L2_TOL = 1e-4
STEP_TIMEOUT = 600


def run(cmd):
    """(returncode, combined output, seconds) of a command."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=STEP_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, "timed out after %d s" % STEP_TIMEOUT, time.perf_counter() - t0
    return p.returncode, p.stdout.decode("utf-8", "replace"), time.perf_counter() - t0


def last_lines(text, n=3):
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(lines[-n:])


def onnx_info(path):
    """Graph input names, output names, and the ONNX value each output carries after following
    Identity nodes (outputs with the same root are one value in several slots), and the groups
    of initializers (two or more) with identical type, values and element count."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path, load_external_data=False)
    g = m.graph
    inits = {t.name for t in g.initializer}
    inputs = [i.name for i in g.input if i.name not in inits]
    outputs = [o.name for o in g.output]
    ident = {n.output[0]: n.input[0] for n in g.node if n.op_type == "Identity"}

    def root(name):
        seen = set()
        while name in ident and name not in seen:
            seen.add(name)
            name = ident[name]
        return name

    roots = [root(o) for o in outputs]
    groups = {}
    for t in g.initializer:
        a = numpy_helper.to_array(t)
        key = (a.dtype.str, a.size, a.tobytes())
        groups.setdefault(key, []).append((t.name, a))
    equal = [v for v in groups.values() if len(v) > 1]
    transposes = {n.name for n in g.node if n.op_type == "Transpose"}
    return inputs, outputs, roots, equal, transposes


def inspect_block(tosac, tosa):
    rc, out, _ = run([tosac, "inspect", "--json", tosa])
    if rc != 0:
        raise RuntimeError("tosac inspect failed: " + last_lines(out))
    d = json.loads(out)
    return d["regions"][0]["blocks"][0], d["totals"]


def count_transposes(block, model_transposes):
    """TRANSPOSEs that neither read a graph input nor write a graph output, as (layout, own):
    `own` are the model's own Transpose nodes (the operator's location is such a node's name,
    e.g. ShuffleNet's channel shuffles), `layout` every other one (NCHW/NHWC changes the
    compiler failed to cancel)."""
    ins, outs = set(block["inputs"]), set(block["outputs"])
    layout = own = 0
    for op in block["operators"]:
        if op["op"] != "TRANSPOSE":
            continue
        if op["inputs"][0] in ins or op["outputs"][0] in outs:
            continue
        if op.get("location") in model_transposes:
            own += 1
        else:
            layout += 1
    return layout, own


def check_dup_outputs(block, onnx_outputs, roots):
    """[] or the reasons why the repeated output slots are not one IDENTITY each."""
    errs = []
    producer = {}
    for op in block["operators"]:
        for o in op["outputs"]:
            producer[o] = op
    slots = {}
    for name, r in zip(onnx_outputs, roots):
        slots.setdefault(r, []).append(name)
    repeated = [names for names in slots.values() if len(names) > 1]
    if not repeated:
        return ["the ONNX model has no output slots that carry the same value"]
    expected = sum(len(n) for n in repeated)
    for names in repeated:
        sources = set()
        for name in names:
            op = producer.get(name)
            if not op or op["op"] != "IDENTITY":
                errs.append("output '%s' is written by %s, not by an IDENTITY" % (name, op["op"] if op else "nothing"))
            else:
                sources.add(op["inputs"][0])
        if len(sources) > 1:
            errs.append("outputs %s come from different tensors %s" % (names, sorted(sources)))
    n_ident = sum(1 for op in block["operators"] if op["op"] == "IDENTITY")
    if n_ident != expected:
        errs.append("%d IDENTITY operators, expected %d (one per repeated output slot)" % (n_ident, expected))
    return errs


def check_equal_constants(block, groups):
    """[] or the reasons why equal ONNX initializers did not become one TOSA constant."""
    if not groups:
        return ["the ONNX model has no initializers with equal values"]
    errs = []
    consts = [t for t in block["tensors"] if t["const_bytes"]]
    for group in groups:
        names = [n for n, _ in group]
        a = group[0][1]
        if a.size > 16:
            errs.append("initializers %s have %d elements; tosac inspect lists values of at most 16" % (names, a.size))
            continue
        want = a.astype(np.float32).ravel() if a.dtype.kind == "f" else a.astype(np.int64).ravel()
        matches = []
        for t in consts:
            v = t["values"]
            if v is None or len(v) != want.size or any(isinstance(x, str) for x in v):
                continue
            got = np.asarray(v, dtype=want.dtype)
            if np.array_equal(got, want):
                matches.append(t["name"])
        if len(matches) != 1:
            errs.append("initializers %s (equal values) became %d TOSA constants %s, expected 1" % (names, len(matches), matches))
    return errs


def rel_l2(got, ref):
    ref64, got64 = ref.astype(np.float64), got.astype(np.float64)
    den = np.linalg.norm(ref64.ravel())
    num = np.linalg.norm((got64 - ref64).ravel())
    if den == 0:
        return 0.0 if num == 0 else float("inf")
    return float(num / den)


def check_model(tosac, models, work, name, require_no_transpose):
    r = {"model": name, "compile_ms": None, "ops": None, "transposes": None, "own_transposes": None, "rel_l2": None,
         "errors": []}
    onnx_path = os.path.join(models, name + ".onnx")
    inp = os.path.join(models, name + ".input.npy")
    gold = os.path.join(models, name + ".ort")
    tosa = os.path.join(work, name + ".tosa")
    out_dir = os.path.join(work, name + ".out")
    os.makedirs(out_dir, exist_ok=True)
    err = r["errors"]
    try:
        in_names, out_names, roots, equal, model_transposes = onnx_info(onnx_path)
    except Exception as e:  # an unreadable model fails this model only
        err.append("cannot read the ONNX model: %s" % e)
        return r

    rc, out, secs = run([tosac, "compile", onnx_path, "-o", tosa])
    r["compile_ms"] = secs * 1000.0
    if rc != 0:
        err.append("compile failed (exit %d): %s" % (rc, last_lines(out)))
        return r
    rc, out, _ = run([tosac, "validate", "--profile", "FP", tosa])
    if rc != 0:
        err.append("validate --profile FP failed (exit %d): %s" % (rc, last_lines(out)))
    try:
        block, totals = inspect_block(tosac, tosa)
    except Exception as e:  # inspect output is required for the structural checks
        err.append(str(e))
        return r
    by_type = totals["ops_by_type"]
    r["ops"] = totals["operators"] - by_type.get("CONST", 0) - by_type.get("CONST_SHAPE", 0)
    if name in CNNS:
        r["transposes"], r["own_transposes"] = count_transposes(block, model_transposes)
        if require_no_transpose and r["transposes"]:
            err.append("%d layout TRANSPOSE operators inside the program (--require-no-transpose)" % r["transposes"])
    if name == "dup_output":
        err.extend(check_dup_outputs(block, out_names, roots))
    if name == "equal_constants":
        err.extend(check_equal_constants(block, equal))

    if len(in_names) != 1:
        err.append("the zoo convention is one graph input, %s has %d" % (name, len(in_names)))
        return r
    if not os.path.exists(inp):
        err.append("missing input %s" % inp)
        return r
    rc, out, _ = run([tosac, "run", tosa, "-i", "%s=%s" % (in_names[0], inp), "-o", out_dir])
    if rc != 0:
        err.append("run failed (exit %d): %s" % (rc, last_lines(out)))
        return r
    worst = 0.0
    for o in out_names:
        gpath = os.path.join(gold, o + ".npy")
        tpath = os.path.join(out_dir, o + ".npy")
        if not os.path.exists(gpath):
            err.append("missing golden %s (run tools/zoo/ort_run.js)" % gpath)
            continue
        if not os.path.exists(tpath):
            err.append("tosac wrote no output %s" % tpath)
            continue
        ref, got = np.load(gpath), np.load(tpath)
        if ref.shape != got.shape:
            err.append("output '%s': shape %s, onnxruntime %s" % (o, got.shape, ref.shape))
            continue
        if ref.dtype.kind != "f":
            if not np.array_equal(ref.astype(np.int64), got.astype(np.int64)):
                err.append("output '%s': integer values differ" % o)
            continue
        if not np.any(ref):
            err.append("output '%s': the golden output is all zeros, which proves nothing (regenerate the zoo)" % o)
            continue
        if not np.all(np.isfinite(ref)):
            err.append("output '%s': the golden output has non-finite values" % o)
            continue
        if not np.all(np.isfinite(got)):
            err.append("output '%s': non-finite values" % o)
        e = rel_l2(got, ref)
        worst = max(worst, e)
        if not e <= REL_L2_TOL:
            err.append("output '%s': rel L2 %.3g > %g" % (o, e, REL_L2_TOL))
    r["rel_l2"] = worst
    return r


def fmt(v, f):
    return "-" if v is None else f % v


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tosac", required=True, help="path of the tosac executable")
    ap.add_argument("--models", required=True, help="zoo directory (make_zoo.py output + NAME.ort goldens)")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="check only these models")
    ap.add_argument("--require-no-transpose", action="store_true",
                    help="fail a CNN whose program has a TRANSPOSE inside (not at a graph input/output)")
    ap.add_argument("--jobs", type=int, default=1, help="models checked in parallel (default 1: compile times "
                    "are measured undisturbed)")
    ap.add_argument("--work", help="directory for .tosa files and tosac outputs (default: a temporary one)")
    ap.add_argument("--json", help="also write the results as JSON to this file")
    a = ap.parse_args(argv)
    if not os.path.isfile(a.tosac) or not os.access(a.tosac, os.X_OK):
        sys.stderr.write("check_zoo: %s is not an executable\n" % a.tosac)
        return 2
    if not os.path.isdir(a.models):
        sys.stderr.write("check_zoo: %s is not a directory\n" % a.models)
        return 1
    names = sorted(f[:-5] for f in os.listdir(a.models) if f.endswith(".onnx"))
    if a.only:
        missing = [n for n in a.only if n not in names]
        if missing:
            sys.stderr.write("check_zoo: not in %s: %s\n" % (a.models, ", ".join(missing)))
            return 1
        names = a.only
    if not names:
        sys.stderr.write("check_zoo: no .onnx models in %s\n" % a.models)
        return 1
    order = {n: i for i, n in enumerate(sorted(CNNS))}
    names.sort(key=lambda n: (n not in CNNS, order.get(n, 0), n))

    tmp = None
    work = a.work
    if not work:
        tmp = tempfile.TemporaryDirectory(prefix="check_zoo.")
        work = tmp.name
    os.makedirs(work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        results = list(ex.map(lambda n: check_model(a.tosac, a.models, work, n, a.require_no_transpose), names))

    print("%-20s %11s %6s %10s %10s %10s  %s" % ("model", "compile ms", "ops", "layout T", "model's T", "rel L2",
                                                 "verdict"))
    failed = 0
    for r in results:
        verdict = "FAIL" if r["errors"] else "ok"
        failed += bool(r["errors"])
        print("%-20s %11s %6s %10s %10s %10s  %s" % (r["model"], fmt(r["compile_ms"], "%.1f"), fmt(r["ops"], "%d"),
                                                     fmt(r["transposes"], "%d"), fmt(r["own_transposes"], "%d"),
                                                     fmt(r["rel_l2"], "%.2e"), verdict))
    for r in results:
        for e in r["errors"]:
            print("%s: %s" % (r["model"], e))
    print("%d models, %d passed, %d failed%s" % (len(results), len(results) - failed, failed,
                                                 "" if a.require_no_transpose else
                                                 " (layout TRANSPOSE counts reported, not required to be 0)"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    if tmp:
        tmp.cleanup()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
