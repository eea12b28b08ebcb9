#!/usr/bin/python3
"""tosac vs onnxruntime-node on every zoo model, FP32 and INT8, in one script (a benchmark, not a test).

    bench/vs_ort.py [--tosac build/gcc/tosac] [--base OTHER_TOSAC] [--models build/gcc/tests/zoo/models]
                    [--rounds 3] [--runs 10] [--threads 1] [--only resnet18,...]

FP32: tosac's program compiled from the ONNX model against onnxruntime (graph optimisation 'all')
on the same model. INT8: tosac's INT program (`--target TOSA-1.0+INT`, 4 random calibration
samples) against onnxruntime on the same model quantized to QDQ u8 by tools/quant/make_qdq.py.
Each round runs every configuration once, alternating between the engines; one configuration is
one process: a warm-up invoke, then --runs timed invokes, of which the median counts (tosac:
`tosac run --repeat N+1 --time`, in-process; onnxruntime: bench/ort_time.js). The figure per
configuration is the median over the rounds; the ratio is tosac / onnxruntime (below 1: tosac is
faster). --base adds a second tosac binary (e.g. an older build) timed in the same rounds.
The machine may be shared: the load average is printed with the results, ratios are what count.
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def tosac_ms(tosac, model, inp, runs):
    r = run([tosac, "run", model, "-i", "input=" + inp, "--repeat", str(runs + 1), "--time"])
    m = re.search(r"invoke: median ([0-9.]+) ms", r.stderr)
    if not m:
        raise RuntimeError("no timing from tosac run: " + r.stderr[-300:])
    return float(m.group(1))


def ort_ms(onnx, inp, runs, threads):
    r = run(["node", os.path.join(ROOT, "bench", "ort_time.js"), onnx, inp, str(runs), str(threads)])
    return statistics.median(json.loads(r.stdout)["ms"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tosac", default=os.path.join(ROOT, "build", "gcc", "tosac"))
    ap.add_argument("--base", help="a second tosac binary timed alongside (before / after)")
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "gcc", "tests", "zoo", "models"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--only", help="comma-separated model names")
    a = ap.parse_args()
    if a.threads != 1:
        sys.exit("vs_ort: tosac has no threads yet; only --threads 1 compares like with like")
    names = sorted(f[:-5] for f in os.listdir(a.models)
                   if f.endswith(".onnx") and os.path.exists(os.path.join(a.models, f[:-5] + ".input.npy")))
    if a.only:
        keep = set(a.only.split(","))
        names = [n for n in names if n in keep]
    engines = [("tosac", a.tosac)] + ([("base", a.base)] if a.base else [])
    work = tempfile.mkdtemp(prefix="vs_ort.")
    cfgs = []  # (model, kind, engine, callable)
    for n in names:
        onnx, inp = os.path.join(a.models, n + ".onnx"), os.path.join(a.models, n + ".input.npy")
        fp, i8, qdq = (os.path.join(work, n + s) for s in (".fp.tosa", ".i8.tosa", ".qdq.onnx"))
        try:
            run([a.tosac, "compile", onnx, "-o", fp])
        except subprocess.CalledProcessError as e:
            print(f"skip {n}: FP32 compile failed: {e.stderr.strip()[-200:]}", file=sys.stderr)
            continue
        kinds = [("fp32", fp, onnx)]
        try:
            run([a.tosac, "compile", onnx, "-o", i8, "--target", "TOSA-1.0+INT", "--calibrate", "random",
                 "--calib-samples", "4"])
            run([PY, os.path.join(ROOT, "tools", "quant", "make_qdq.py"), onnx, inp, qdq])
            kinds.append(("int8", i8, qdq))
        except subprocess.CalledProcessError as e:
            print(f"no INT8 for {n}: {(e.stderr or '').strip()[-200:]}", file=sys.stderr)
        for kind, prog, ref in kinds:
            cfgs.append((n, kind, "ort", lambda ref=ref, inp=inp: ort_ms(ref, inp, a.runs, a.threads)))
            for ename, exe in engines:
                cfgs.append((n, kind, ename, lambda exe=exe, prog=prog, inp=inp: tosac_ms(exe, prog, inp, a.runs)))
    times = {}
    for r in range(a.rounds):
        for n, kind, eng, fn in cfgs:
            try:
                times.setdefault((n, kind, eng), []).append(fn())
            except (subprocess.CalledProcessError, RuntimeError) as e:
                print(f"{n} {kind} {eng}: failed: {getattr(e, 'stderr', e)}"[:300], file=sys.stderr)
    load = os.getloadavg()
    print(f"threads {a.threads}, {a.rounds} rounds x {a.runs} runs, medians in ms; "
          f"load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    head = f"{'model':22} {'kind':5} {'ort':>9} {'tosac':>9} {'ratio':>7}"
    if a.base:
        head += f" {'base':>9} {'ratio':>7}"
    print(head)
    for n in names:
        for kind in ("fp32", "int8"):
            o = times.get((n, kind, "ort"))
            if not o:
                continue
            om = statistics.median(o)
            line = f"{n:22} {kind:5} {om:9.2f}"
            for ename, _ in engines:
                t = times.get((n, kind, ename))
                if t:
                    tm = statistics.median(t)
                    line += f" {tm:9.2f} {tm / om:6.2f}x"
                else:
                    line += f" {'-':>9} {'-':>7}"
            print(line)


if __name__ == "__main__":
    main()
