#!/usr/bin/python3
"""Compile-time benchmark: the FP compile against onnxruntime-node session creation, and the INT8
compile with 16 calibration inputs against its target, each optionally against a second tosac.

Usage: bench/compile_bench.py --tosac PATH --models DIR [--base PATH] [--runs N] [--only NAME ...]
                              [--fp | --int8] [--threads N] [--cpu K] [--check] [--json FILE]

For each model (default mobilenet_v2 and resnet50, as written by tools/zoo/make_zoo.py into DIR):
  FP (issue 4), pinned to one CPU (--cpu, default the first this process may use):
  - `tosac compile DIR/NAME.onnx -o TMP/NAME.tosa --report`, N times (default 5): the median
    wall time of the whole process (read, import, passes, validation, write), the median of the
    report's own total, and the median time of every step of the report;
  - onnxruntime-node InferenceSession.create of the same file, N times in one node process
    (bench/ort_session.js; one thread, default optimisation level), median; node start-up and
    module loading are not included; the ratio tosac wall / onnxruntime session creation.
  INT8 (issue 16), on every CPU this process may use:
  - `tosac compile NAME.onnx -o T.tosa --target TOSA-1.0+INT --calibrate calib.npy [--threads N]`
    with 16 calibration inputs from the zoo's input generator (tools/quant/eval_ptq.py's
    inputs_for, one [16,1,C,H,W] .npy), N times: the median wall time of the whole process and
    the median CPU time (user + system of the process and its threads). Without --threads the
    compile uses its default (one thread per processor).
With --base, the same compiles run with that second tosac (main's build, say), alternating with
the first run by run so that both see the same machine load, and the ratio base / tosac is
printed. Targets: FP mobilenet_v2 < 100 ms, resnet50 < 500 ms (issue 4); INT8 mobilenet_v2
< 0.3 s, resnet50 < 1.5 s of wall time (issue 16); --check makes a missed target exit 1.

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

HERE = os.path.dirname(os.path.abspath(__file__))
FP_TARGETS_MS = {"mobilenet_v2": 100.0, "resnet50": 500.0}
INT8_TARGETS_MS = {"mobilenet_v2": 300.0, "resnet50": 1500.0}
STEP_RE = re.compile(r"^([a-z_]+)\s+([0-9.]+)\s+(\d+)\s+(\d+)\s*$")  # step  ms  ops  changes
IO_RE = re.compile(r"^(read ONNX|write TOSA|quantize)\s+([0-9.]+)\s*$")  # outside the pass table
TOTAL_RE = re.compile(r"^total\s+([0-9.]+)\s*$")


def timed(cmd):
    """(wall ms, CPU ms, stdout text) of one process; CPU = user + system of it and its threads."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = (time.perf_counter() - t0) * 1000.0
    p.returncode = os.waitstatus_to_exitcode(status)
    text = out.decode("utf-8", "replace")
    if p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, text.strip()[-500:]))
    return wall, (ru.ru_utime + ru.ru_stime) * 1000.0, text


def alternate(cmds, runs):
    """Runs each command of `cmds` (a dict) once per round, `runs` rounds: {key: [(wall, cpu, text)]}."""
    res = {k: [] for k in cmds}
    for _ in range(runs):
        for k, c in cmds.items():
            res[k].append(timed(c))
    return res


def steps_of(texts):
    totals, steps = [], {}
    for text in texts:
        for line in text.splitlines():
            m = STEP_RE.match(line) or IO_RE.match(line)
            if m:
                steps.setdefault(m.group(1), []).append(float(m.group(2)))
                continue
            m = TOTAL_RE.match(line)
            if m:
                totals.append(float(m.group(1)))
    return (statistics.median(totals) if totals else None), {k: statistics.median(v) for k, v in steps.items()}


def bench_ort(node, model, runs):
    script = os.path.join(HERE, "ort_session.js")
    p = subprocess.run([node, script, model, str(runs)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("onnxruntime-node session creation failed: %s" % p.stderr.decode("utf-8", "replace").strip())
    return json.loads(p.stdout.decode())["ms"]


def calib_file(name, model, tmp):
    sys.path.insert(0, os.path.join(HERE, "..", "tools", "quant"))
    import numpy as np
    from eval_ptq import input_shape, inputs_for  # torch only when run
    _, shape = input_shape(model)
    path = os.path.join(tmp, name + ".calib.npy")
    np.save(path, np.stack(inputs_for(name, shape, 16, 0)))
    return path


def time_alternately(cmds, runs, r):
    """Warms the page cache with one run of each command, then runs them alternately; returns the
    raw results and r with each tool's median wall and CPU ms."""
    for c in cmds.values():
        subprocess.run(c, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    res = alternate(cmds, runs)
    r["runs"] = runs
    for k, xs in res.items():
        r[k + "_wall_ms"] = statistics.median(x[0] for x in xs)
        r[k + "_cpu_ms"] = statistics.median(x[1] for x in xs)
    return res, r


def run_fp(a, name, model, tmp):
    tools = {"tosac": a.tosac, **({"base": a.base} if a.base else {})}
    cmds = {k: [t, "compile", model, "-o", os.path.join(tmp, "%s.%s.tosa" % (name, k)), "--report"]
            for k, t in tools.items()}
    res, r = time_alternately(cmds, a.runs, {"model": name, "kind": "fp", "target_ms": FP_TARGETS_MS.get(name)})
    for k in tools:
        r[k + "_report_total_ms"], r[k + "_steps_ms"] = steps_of(x[2] for x in res[k])
    r["ort_session_ms"] = statistics.median(bench_ort(a.node, model, a.runs))
    return r


def run_int8(a, name, model, tmp):
    calib = calib_file(name, model, tmp)
    tools = {"tosac": a.tosac, **({"base": a.base} if a.base else {})}
    extra = ["--threads", str(a.threads)] if a.threads is not None else []
    cmds = {k: [t, "compile", model, "-o", os.path.join(tmp, "%s.%s.i8.tosa" % (name, k)), "--target", "TOSA-1.0+INT",
                "--calibrate", calib] + (extra if k == "tosac" or a.base_threads else [])
            for k, t in tools.items()}
    _, r = time_alternately(cmds, a.runs, {"model": name, "kind": "int8", "target_ms": INT8_TARGETS_MS.get(name)})
    if a.base:
        with open(os.path.join(tmp, "%s.tosac.i8.tosa" % name), "rb") as f1, \
                open(os.path.join(tmp, "%s.base.i8.tosa" % name), "rb") as f2:
            r["same_program"] = f1.read() == f2.read()
    return r


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tosac", required=True, help="path of the tosac executable")
    ap.add_argument("--base", help="a second tosac to compare with (e.g. main's build), run alternately")
    ap.add_argument("--models", required=True, help="directory with NAME.onnx (tools/zoo/make_zoo.py)")
    ap.add_argument("--only", nargs="+", metavar="NAME", default=["mobilenet_v2", "resnet50"],
                    help="models (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=5, help="runs per model and tool; medians are reported (default 5)")
    kind = ap.add_mutually_exclusive_group()
    kind.add_argument("--fp", action="store_true", help="only the FP compile")
    kind.add_argument("--int8", action="store_true", help="only the INT8 compile")
    ap.add_argument("--threads", type=int, help="INT8: tosac compile --threads N (default: the compile's own default)")
    ap.add_argument("--base-threads", action="store_true", help="also pass --threads to --base (a build that has it)")
    ap.add_argument("--cpu", type=int, help="FP: CPU to pin to (default: the first allowed)")
    ap.add_argument("--node", default="node", help="node executable (default: node)")
    ap.add_argument("--check", action="store_true", help="exit 1 when a model misses its target")
    ap.add_argument("--json", help="also write the figures as JSON to this file")
    a = ap.parse_args(argv)
    if a.runs < 1:
        ap.error("--runs must be at least 1")
    for t in [a.tosac] + ([a.base] if a.base else []):
        if not os.access(t, os.X_OK):
            sys.stderr.write("compile_bench: %s is not an executable\n" % t)
            return 2
    allowed = os.sched_getaffinity(0)
    cpu = a.cpu if a.cpu is not None else min(allowed)

    results = []
    with tempfile.TemporaryDirectory(prefix="compile_bench.") as tmp:
        for name in a.only:
            model = os.path.join(a.models, name + ".onnx")
            if not os.path.exists(model):
                sys.stderr.write("compile_bench: %s not found (tools/zoo/make_zoo.py %s --only %s)\n"
                                 % (model, a.models, name))
                return 1
            try:
                if not a.int8:
                    os.sched_setaffinity(0, {cpu})  # children (tosac, node) inherit the single-CPU mask
                    results.append(run_fp(a, name, model, tmp))
                    os.sched_setaffinity(0, allowed)
                if not a.fp:
                    results.append(run_int8(a, name, model, tmp))
            except RuntimeError as e:
                sys.stderr.write("compile_bench: %s\n" % e)
                return 1

    missed = [r for r in results if r["target_ms"] is not None and r["tosac_wall_ms"] >= r["target_ms"]]
    head = "%-16s %-5s %10s %10s" % ("model", "kind", "wall ms", "CPU ms")
    if a.base:
        head += " %10s %10s %7s" % ("base wall", "base CPU", "speedup")
    print(head + " %10s  %s" % ("ort ms", "target (wall)"))
    for r in results:
        line = "%-16s %-5s %10.1f %10.1f" % (r["model"], r["kind"], r["tosac_wall_ms"], r["tosac_cpu_ms"])
        if a.base:
            line += " %10.1f %10.1f %6.2fx" % (r["base_wall_ms"], r["base_cpu_ms"], r["base_wall_ms"] / r["tosac_wall_ms"])
        line += " %10s" % ("%.1f" % r["ort_session_ms"] if "ort_session_ms" in r else "-")
        if r["target_ms"] is not None:
            line += "  %s %.0f" % ("MISS <" if r in missed else "ok <", r["target_ms"])
        if r.get("same_program") is False:
            line += "  (programs differ from base)"
        print(line)
    for r in results:
        if r["kind"] == "fp":
            print("%s: FP compile steps (median ms): %s" % (
                r["model"], ", ".join("%s %.1f" % (k, v) for k, v in r["tosac_steps_ms"].items())))
    print("medians of %d runs; FP pinned to CPU %d (onnxruntime-node: InferenceSession.create only); INT8 on %d CPUs, "
          "16 calibration inputs, %s; CPU = user + system time of the whole process"
          % (a.runs, cpu, len(allowed), "--threads %d" % a.threads if a.threads is not None else "default threads"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 1 if (a.check and missed) else 0


if __name__ == "__main__":
    sys.exit(main())
