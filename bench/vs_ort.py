#!/usr/bin/python3
"""tosac vs onnxruntime-node on every zoo model, FP32 and INT8, one and two threads, in one script
(a benchmark, not a test).

    bench/vs_ort.py [--tosac build/gcc/tosac] [--base OTHER_TOSAC] [--models build/gcc/tests/zoo/models]
                    [--rounds 3] [--runs 10] [--min-time 0.3] [--threads 1,2] [--only resnet18,...]
                    [--kinds fp32,int8] [--ort-weights int8|uint8]

FP32: tosac's program compiled from the ONNX model against onnxruntime (graph optimisation 'all')
on the same model. INT8: tosac's INT program (`--target TOSA-1.0+INT`, 4 random calibration
samples) against onnxruntime on the same model quantized to QDQ u8 by tools/quant/make_qdq.py
(int8 weights; --ort-weights uint8 stores the same codes as uint8 with zero point 128, which
onnxruntime runs on its u8 x u8 kernels: on AVX2 without VNNI its u8 x s8 ones let int16 pair sums
saturate, its u8 x u8 ones are exact, as tosac's are).
Both engines get the same thread count (tosac `run --threads N`, onnxruntime intra-op threads).
Each round runs every configuration once, alternating between the engines; one configuration is
one process: a warm-up invoke, then timed invokes, of which the median counts (tosac:
`tosac run --repeat N+1 --time`, in-process; onnxruntime: bench/ort_time.js): --runs of them, or
more for a small model, as many as fill --min-time seconds at the time a short tosac run measures
for that configuration (the same count for every engine; sub-millisecond models otherwise swing
from round to round on a shared machine). The figure per
configuration is the median over the rounds; the ratio is tosac / onnxruntime (below 1: tosac is
faster), and "rounds" the lowest and highest ratio of a single round (a range much wider than the
distance of the ratio from 1 means the machine's load decided the cell). GFLOP/s counts a multiply-add as 2 over the model's Conv / Gemm / MatMul operators (from
ONNX shape inference) at tosac's median time; % of peak divides by the threads times one core's
peak that `ops_bench --peak` measures (fused multiply-adds on the widest vectors, best of its
runs; INT8 rows: its int8 peak, of vpdpbusd, or vpmaddwd on AVX2 without VNNI). Those are the direct convolution's multiply-adds: FP32
3x3 layers that run as Winograd (docs/RUNTIME.md) do 2.25x fewer, so for models with such layers
the figure is an effective rate, not the hardware's (`tosac run --no-winograd --time` gives the
direct path's). --base adds a second tosac binary (e.g. an older
build) timed in the same rounds.
The machine may be shared: the load average is printed with the results, ratios are what count.
"""
import argparse, atexit, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True, **kw)


def tosac_ms(tosac, model, inp, runs, threads):
    r = run([tosac, "run", model, "-i", "input=" + inp, "--repeat", str(runs + 1), "--time", "--threads", str(threads)])
    m = re.search(r"invoke: median ([0-9.]+) ms", r.stderr)
    if not m:
        raise RuntimeError("no timing from tosac run: " + r.stderr[-300:])
    return float(m.group(1))


def ort_ms(onnx, inp, runs, threads):
    r = run(["node", os.path.join(ROOT, "bench", "ort_time.js"), onnx, inp, str(runs), str(threads)])
    return statistics.median(json.loads(r.stdout)["ms"])


def model_gflop(onnx_path):
    """Multiply-adds x 2 of the Conv, ConvTranspose, Gemm and MatMul nodes, in GFLOP (None if the
    shapes cannot be inferred)."""
    try:
        import numpy as np
        import onnx
        from onnx import numpy_helper, shape_inference
    except ImportError:
        return None
    m = shape_inference.infer_shapes(onnx.load(onnx_path))
    g = m.graph
    shapes = {}
    for v in list(g.value_info) + list(g.input) + list(g.output):
        dims = [d.dim_value for d in v.type.tensor_type.shape.dim]
        if dims and all(d > 0 for d in dims):
            shapes[v.name] = dims
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    macs = 0
    for n in g.node:
        out = shapes.get(n.output[0])
        if n.op_type in ("Conv", "ConvTranspose"):
            w = shapes.get(n.input[1])
            if not out or not w:
                return None
            # out elements x (input channels per group x kernel taps); ConvTranspose: input x weights
            if n.op_type == "Conv":
                macs += int(np.prod(out)) * int(np.prod(w[1:]))
            else:
                x = shapes.get(n.input[0])
                macs += int(np.prod(x)) * int(np.prod(w[1:])) if x else 0
        elif n.op_type in ("Gemm", "MatMul"):
            a = shapes.get(n.input[0])
            if not out or not a:
                return None
            k = a[-1] if not (n.op_type == "Gemm" and any(x.name == "transA" and x.i for x in n.attribute)) else a[0]
            macs += int(np.prod(out)) * k
    return 2 * macs / 1e9


def peak_gflops(tosac):
    """{'fp32': GFLOP/s, 'int8': GOP/s (vpdpbusd, else vpmaddwd on AVX2)} of one core, or None."""
    exe = os.path.join(os.path.dirname(os.path.abspath(tosac)), "bench", "ops_bench")
    try:
        r = run([exe, "--peak", "--seconds", "1"])
    except (OSError, subprocess.CalledProcessError):
        return None
    peaks = {k: float(v) for k, v in re.findall(r"peak (fp32|int8) ([0-9.]+) G", r.stdout)}
    return peaks or None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tosac", default=os.path.join(ROOT, "build", "gcc", "tosac"))
    ap.add_argument("--base", help="a second tosac binary timed alongside (before / after)")
    ap.add_argument("--models", default=os.path.join(ROOT, "build", "gcc", "tests", "zoo", "models"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--min-time", type=float, default=0.3,
                    help="seconds of timed invokes per process at least (more runs for small models)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--only", help="comma-separated model names")
    ap.add_argument("--kinds", default="fp32,int8", help="comma-separated: fp32, int8 (int8: compile and quantize too)")
    ap.add_argument("--ort-weights", default="int8", choices=("int8", "uint8"),
                    help="onnxruntime's QDQ weights: int8 (its u8 x s8 kernels; default) or the same codes as uint8 "
                         "with zero point 128 (its u8 x u8 kernels, exact on AVX2 like tosac's)")
    a = ap.parse_args()
    want = set(a.kinds.split(","))
    threads = [int(t) for t in a.threads.split(",")]
    names = sorted(f[:-5] for f in os.listdir(a.models)
                   if f.endswith(".onnx") and os.path.exists(os.path.join(a.models, f[:-5] + ".input.npy")))
    if a.only:
        keep = set(a.only.split(","))
        names = [n for n in names if n in keep]
    engines = [("tosac", a.tosac)] + ([("base", a.base)] if a.base else [])
    work = tempfile.mkdtemp(prefix="vs_ort.")
    # the compiled programs are ~300 MB: remove them on any exit, a kill with SIGTERM included
    atexit.register(shutil.rmtree, work, True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cfgs = []  # ((model, kind, threads), engine, callable)
    gflop = {}
    peak = peak_gflops(a.tosac)
    for n in names:
        onnx, inp = os.path.join(a.models, n + ".onnx"), os.path.join(a.models, n + ".input.npy")
        fp, i8, qdq = (os.path.join(work, n + s) for s in (".fp.tosa", ".i8.tosa", ".qdq.onnx"))
        try:
            run([a.tosac, "compile", onnx, "-o", fp])
        except subprocess.CalledProcessError as e:
            print(f"skip {n}: FP32 compile failed: {e.stderr.strip()[-200:]}", file=sys.stderr)
            continue
        kinds = [("fp32", fp, onnx)] if "fp32" in want else []
        try:
            if "int8" in want:
                run([a.tosac, "compile", onnx, "-o", i8, "--target", "TOSA-1.0+INT", "--calibrate", "random",
                     "--calib-samples", "4"])
                run([PY, os.path.join(ROOT, "tools", "quant", "make_qdq.py"), onnx, inp, qdq, "--weights", a.ort_weights])
                kinds.append(("int8", i8, qdq))
        except subprocess.CalledProcessError as e:
            print(f"no INT8 for {n}: {(e.stderr or '').strip()[-200:]}", file=sys.stderr)
        gflop[n] = model_gflop(onnx)
        for kind, prog, ref in kinds:
            for t in threads:
                try:
                    probe = tosac_ms(a.tosac, prog, inp, 3, t)
                except (subprocess.CalledProcessError, RuntimeError, OSError):
                    probe = None
                runs = max(a.runs, min(5000, int(1e3 * a.min_time / probe))) if probe else a.runs
                cfgs.append(((n, kind, t), "ort", lambda ref=ref, inp=inp, t=t, r=runs: ort_ms(ref, inp, r, t)))
                for ename, exe in engines:
                    cfgs.append(((n, kind, t), ename,
                                 lambda exe=exe, prog=prog, inp=inp, t=t, r=runs: tosac_ms(exe, prog, inp, r, t)))
    times = {}
    for r in range(a.rounds):
        for key, eng, fn in cfgs:
            try:
                times.setdefault(key + (eng,), []).append(fn())
            except (subprocess.CalledProcessError, RuntimeError, OSError) as e:
                print(f"{key} {eng}: failed: {getattr(e, 'stderr', e)}"[:300], file=sys.stderr)
    load = os.getloadavg()
    print(f"{a.rounds} rounds x {a.runs}+ runs (at least {a.min_time} s per process), medians in ms; "
          f"INT8: onnxruntime's QDQ weights {a.ort_weights}; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} "
          f"on {os.cpu_count()} cores; peak per core " +
          (", ".join(f"{k} {v:.1f} G{'FLOP' if k == 'fp32' else 'OP'}/s" for k, v in peak.items()) if peak else "unknown"))
    head = (f"{'model':22} {'kind':5} {'thr':>3} {'ort':>9} {'tosac':>9} {'ratio':>7} {'rounds':>11} {'GFLOP/s':>8} "
            f"{'%peak':>6}")
    if a.base:
        head += f" {'base':>9} {'ratio':>7}"
    print(head)
    for n in names:
        for kind in ("fp32", "int8"):
            for t in threads:
                o = times.get((n, kind, t, "ort"))
                if not o:
                    continue
                om = statistics.median(o)
                line = f"{n:22} {kind:5} {t:3} {om:9.3f}"
                for ename, _ in engines:
                    tt = times.get((n, kind, t, ename))
                    if tt:
                        tm = statistics.median(tt)
                        line += f" {tm:9.3f} {tm / om:6.2f}x" if om > 0 else f" {tm:9.3f} {'-':>7}"
                        if ename == "tosac":
                            # each round's own ratio (its two runs were back to back): a wide range
                            # says the machine's load, not the engines, moved the medians
                            rr = [x / y for x, y in zip(tt, o) if y > 0] if len(tt) == len(o) else []
                            line += f" {min(rr):5.2f}-{max(rr):<5.2f}" if rr else f" {'-':>11}"
                            gf = gflop.get(n)
                            rate = gf / (tm / 1e3) if gf and tm > 0 else None
                            line += f" {rate:8.1f}" if rate else f" {'-':>8}"
                            pk = peak.get(kind) if peak else None  # INT8 against the int8 peak
                            line += f" {100 * rate / (pk * t):5.0f}%" if rate and pk else f" {'-':>6}"
                    else:
                        line += f" {'-':>9} {'-':>7}"
                print(line)


if __name__ == "__main__":
    main()
