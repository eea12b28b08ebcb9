#!/usr/bin/python3
"""Compile-time benchmark: `tosac compile` against onnxruntime-node session creation.

Usage: bench/compile_bench.py --tosac PATH --models DIR [--runs N] [--only NAME ...] [--cpu K]
                              [--check] [--json FILE]

For each model (default mobilenet_v2 and resnet50, as written by tools/zoo/make_zoo.py into DIR):
  - `tosac compile DIR/NAME.onnx -o TMP/NAME.tosa --report`, N times (default 5): the median
    wall time of the whole process (read, import, passes, validation, write), the median of the
    report's own total, and the median time of every step of the report;
  - onnxruntime-node InferenceSession.create of the same file, N times in one node process
    (bench/ort_session.js; one thread, default optimisation level), median; node start-up and
    module loading are not included;
  - the ratio tosac wall / onnxruntime session creation.
Everything runs pinned to one CPU (--cpu, default the first this process may use). Targets
(issue 4): mobilenet_v2 < 100 ms, resnet50 < 500 ms of tosac wall time; --check makes a missed
target exit 1.

Exit status: 0 done (targets met, or not --check); 1 a failure (missing model, compile error,
onnxruntime-node missing) or, with --check, a missed target; 2 bad usage.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

TARGETS_MS = {"mobilenet_v2": 100.0, "resnet50": 500.0}
STEP_RE = re.compile(r"^([a-z_]+)\s+([0-9.]+)\s+(\d+)\s+(\d+)\s*$")  # step  ms  ops  changes
IO_RE = re.compile(r"^(read ONNX|write TOSA)\s+([0-9.]+)\s*$")  # file I/O outside the pass table
TOTAL_RE = re.compile(r"^total\s+([0-9.]+)\s*$")


def bench_tosac(tosac, model, out, runs):
    """(wall ms list, report total ms list, {step: [ms]}) of `runs` compiles."""
    walls, totals, steps = [], [], {}
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run([tosac, "compile", model, "-o", out, "--report"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        walls.append((time.perf_counter() - t0) * 1000.0)
        text = p.stdout.decode("utf-8", "replace")
        if p.returncode != 0:
            raise RuntimeError("tosac compile %s failed (exit %d): %s" % (model, p.returncode, text.strip()[-500:]))
        for line in text.splitlines():
            m = STEP_RE.match(line) or IO_RE.match(line)
            if m:
                steps.setdefault(m.group(1), []).append(float(m.group(2)))
                continue
            m = TOTAL_RE.match(line)
            if m:
                totals.append(float(m.group(1)))
    return walls, totals, steps


def bench_ort(node, model, runs):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_session.js")
    p = subprocess.run([node, script, model, str(runs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("onnxruntime-node session creation failed: %s" % p.stderr.decode("utf-8", "replace").strip())
    return json.loads(p.stdout.decode())["ms"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tosac", required=True, help="path of the tosac executable")
    ap.add_argument("--models", required=True, help="directory with NAME.onnx (tools/zoo/make_zoo.py)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=list(TARGETS_MS), help="models (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=5, help="runs per model and tool; medians are reported (default 5)")
    ap.add_argument("--cpu", type=int, help="CPU to pin to (default: the first allowed)")
    ap.add_argument("--node", default="node", help="node executable (default: node)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a model misses its target")
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    if not os.access(a.tosac, os.X_OK):
        sys.stderr.write("compile_bench: %s is not an executable\n" % a.tosac)
        return 2
    cpu = a.cpu if a.cpu is not None else min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpu})  # children (tosac, node) inherit the single-CPU mask

    results, missed = [], []
    with tempfile.TemporaryDirectory(prefix="compile_bench.") as tmp:
        for name in a.only:
            model = os.path.join(a.models, name + ".onnx")
            if not os.path.exists(model):
                sys.stderr.write("compile_bench: %s not found (tools/zoo/make_zoo.py %s --only %s)\n"
                                 % (model, a.models, name))
                return 1
            try:
                subprocess.run([a.tosac, "compile", model, "-o", os.path.join(tmp, "warm.tosa")],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # page cache warm-up
                walls, totals, steps = bench_tosac(a.tosac, model, os.path.join(tmp, name + ".tosa"), a.runs)
                ort = bench_ort(a.node, model, a.runs)
            except RuntimeError as e:
                sys.stderr.write("compile_bench: %s\n" % e)
                return 1
            r = {"model": name, "runs": a.runs, "cpu": cpu,
                 "tosac_wall_ms": statistics.median(walls),
                 "tosac_report_total_ms": statistics.median(totals) if totals else None,
                 "ort_session_ms": statistics.median(ort),
                 "steps_ms": {k: statistics.median(v) for k, v in steps.items()},
                 "target_ms": TARGETS_MS.get(name)}
            r["ratio"] = r["tosac_wall_ms"] / r["ort_session_ms"]
            results.append(r)
            if r["target_ms"] is not None and r["tosac_wall_ms"] >= r["target_ms"]:
                missed.append(name)

    print("%-16s %12s %14s %12s %8s %10s" % ("model", "tosac ms", "(report total)", "ort ms", "ratio", "target"))
    for r in results:
        tgt = "-" if r["target_ms"] is None else "%s %.0f" % ("ok <" if r["model"] not in missed else "MISS <", r["target_ms"])
        print("%-16s %12.1f %14s %12.1f %8.2f %10s" % (
            r["model"], r["tosac_wall_ms"],
            "-" if r["tosac_report_total_ms"] is None else "%.1f" % r["tosac_report_total_ms"],
            r["ort_session_ms"], r["ratio"], tgt))
    for r in results:
        print("%s: tosac compile steps (median ms): %s" % (
            r["model"], ", ".join("%s %.1f" % (k, v) for k, v in r["steps_ms"].items())))
    print("medians of %d runs on CPU %d; tosac: whole process, onnxruntime-node: InferenceSession.create only"
          % (a.runs, cpu))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if (a.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
