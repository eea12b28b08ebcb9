#!/usr/bin/python3
"""FP32 convolution layers of the zoo's models, one small ONNX model per layer shape: tosac against
onnxruntime-node (and an older tosac with --base), alternating runs, medians (a benchmark, not a test).

    bench/conv_layers.py [--tosac build/gcc/tosac] [--base OTHER_TOSAC] [--threads 1,2] [--rounds 3]
                         [--min-time 0.2] [--only SUBSTRING,...] [--keep DIR]

Each model is Conv(+bias) -> Relu with seeded random weights (torch.nn.Conv2d, exported by
torch.onnx); a layer whose output shape equals its input shape is repeated 4 times in a chain so
that per-invoke overheads (onnxruntime-node's await, tosac's input decode) weigh less. Timing as
bench/vs_ort.py (tosac `run --time`: median in-process invoke; onnxruntime: bench/ort_time.js).
Prints per layer: milliseconds, tosac / ort, GMAC/s of tosac.
"""
import argparse, atexit, json, os, re, shutil, signal, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, H, W, IC, OC, kernel, stride, pad)
LAYERS = [
    ("resnet8_32x32x16_3x3x16", 32, 32, 16, 16, 3, 1, 1),
    ("resnet8_32x32x16_3x3s2x32", 32, 32, 16, 32, 3, 2, 1),
    ("resnet8_16x16x32_3x3x32", 16, 16, 32, 32, 3, 1, 1),
    ("resnet8_32x32x16_1x1s2x32", 32, 32, 16, 32, 1, 2, 0),
    ("resnet8_16x16x32_3x3s2x64", 16, 16, 32, 64, 3, 2, 1),
    ("resnet8_8x8x64_3x3x64", 8, 8, 64, 64, 3, 1, 1),
    ("resnet8_32x32x3_3x3x16", 32, 32, 3, 16, 3, 1, 1),
    ("squeeze_224x224x3_3x3s2x64", 224, 224, 3, 64, 3, 2, 0),
    ("squeeze_55x55x64_1x1x16", 55, 55, 64, 16, 1, 1, 0),
    ("squeeze_55x55x16_1x1x64", 55, 55, 16, 64, 1, 1, 0),
    ("squeeze_55x55x16_3x3x64", 55, 55, 16, 64, 3, 1, 1),
    ("squeeze_55x55x128_1x1x16", 55, 55, 128, 16, 1, 1, 0),
    ("squeeze_27x27x128_1x1x32", 27, 27, 128, 32, 1, 1, 0),
    ("squeeze_27x27x32_1x1x128", 27, 27, 32, 128, 1, 1, 0),
    ("squeeze_27x27x32_3x3x128", 27, 27, 32, 128, 3, 1, 1),
    ("squeeze_13x13x256_1x1x48", 13, 13, 256, 48, 1, 1, 0),
    ("squeeze_13x13x48_1x1x192", 13, 13, 48, 192, 1, 1, 0),
    ("squeeze_13x13x48_3x3x192", 13, 13, 48, 192, 3, 1, 1),
    ("squeeze_13x13x384_1x1x64", 13, 13, 384, 64, 1, 1, 0),
    ("squeeze_13x13x64_3x3x256", 13, 13, 64, 256, 3, 1, 1),
    ("squeeze_13x13x512_1x1x1000", 13, 13, 512, 1000, 1, 1, 0),
    ("resnet_56x56x64_3x3x64", 56, 56, 64, 64, 3, 1, 1),
    ("resnet_28x28x128_3x3x128", 28, 28, 128, 128, 3, 1, 1),
    ("resnet_14x14x256_3x3x256", 14, 14, 256, 256, 3, 1, 1),
    ("resnet_7x7x512_3x3x512", 7, 7, 512, 512, 3, 1, 1),
    ("resnet_56x56x64_3x3s2x128", 56, 56, 64, 128, 3, 2, 1),
    ("resnet_28x28x128_3x3s2x256", 28, 28, 128, 256, 3, 2, 1),
    ("resnet_14x14x256_3x3s2x512", 14, 14, 256, 512, 3, 2, 1),
    ("resnet_224x224x3_7x7s2x64", 224, 224, 3, 64, 7, 2, 3),
    ("resnet50_56x56x64_1x1x256", 56, 56, 64, 256, 1, 1, 0),
    ("resnet50_56x56x256_1x1x64", 56, 56, 256, 64, 1, 1, 0),
    ("resnet50_28x28x512_1x1x128", 28, 28, 512, 128, 1, 1, 0),
    ("resnet50_14x14x1024_1x1x256", 14, 14, 1024, 256, 1, 1, 0),
    ("resnet50_7x7x2048_1x1x512", 7, 7, 2048, 512, 1, 1, 0),
    ("resnet50_7x7x512_1x1x2048", 7, 7, 512, 2048, 1, 1, 0),
    ("mv3_112x112x16_1x1x16", 112, 112, 16, 16, 1, 1, 0),
    ("mv3_56x56x16_1x1x72", 56, 56, 16, 72, 1, 1, 0),
    ("mv3_56x56x72_1x1x24", 56, 56, 72, 24, 1, 1, 0),
    ("mv3_28x28x24_1x1x88", 28, 28, 24, 88, 1, 1, 0),
    ("mv3_28x28x88_1x1x24", 28, 28, 88, 24, 1, 1, 0),
    ("mv3_28x28x24_1x1x96", 28, 28, 24, 96, 1, 1, 0),
    ("mv3_14x14x96_1x1x40", 14, 14, 96, 40, 1, 1, 0),
    ("mv3_14x14x40_1x1x240", 14, 14, 40, 240, 1, 1, 0),
    ("mv3_14x14x240_1x1x40", 14, 14, 240, 40, 1, 1, 0),
    ("mv3_14x14x40_1x1x120", 14, 14, 40, 120, 1, 1, 0),
    ("mv3_14x14x120_1x1x48", 14, 14, 120, 48, 1, 1, 0),
    ("mv3_14x14x48_1x1x144", 14, 14, 48, 144, 1, 1, 0),
    ("mv3_14x14x144_1x1x48", 14, 14, 144, 48, 1, 1, 0),
    ("mv3_14x14x48_1x1x288", 14, 14, 48, 288, 1, 1, 0),
    ("mv3_7x7x288_1x1x96", 7, 7, 288, 96, 1, 1, 0),
    ("mv3_7x7x96_1x1x576", 7, 7, 96, 576, 1, 1, 0),
    ("mv3_7x7x576_1x1x96", 7, 7, 576, 96, 1, 1, 0),
]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True)


def make_models(todo):
    """todo: [(onnx path, input path, H, W, IC, OC, k, s, p, seed)], exported in one torch process."""
    code = """
import sys, numpy as np, torch
for path, inp, H, W, IC, OC, k, s, p, seed in eval(sys.argv[1]):
    torch.manual_seed(seed)
    n = 4 if IC == OC and s == 1 else 1
    layers = []
    for i in range(n):
        layers += [torch.nn.Conv2d(IC, OC, k, stride=s, padding=p), torch.nn.ReLU()]
    m = torch.nn.Sequential(*layers).eval()
    x = torch.randn(1, IC, H, W)
    torch.onnx.export(m, x, path, input_names=["input"], output_names=["output"], opset_version=13)
    np.save(inp, x.numpy())
"""
    if todo:
        run(["/usr/bin/python3", "-c", code, repr(todo)])


def tosac_ms(exe, prog, inp, runs, threads):
    r = run([exe, "run", prog, "-i", "input=" + inp, "--repeat", str(runs + 1), "--time", "--threads", str(threads)])
    return float(re.search(r"invoke: median ([0-9.]+) ms", r.stderr).group(1))


def ort_ms(onnx, inp, runs, threads):
    r = run(["node", os.path.join(ROOT, "bench", "ort_time.js"), onnx, inp, str(runs), str(threads)])
    return statistics.median(json.loads(r.stdout)["ms"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tosac", default=os.path.join(ROOT, "build", "gcc", "tosac"))
    ap.add_argument("--base")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--only", help="comma-separated substrings of layer names")
    ap.add_argument("--keep", help="directory for the models (reused when present)")
    a = ap.parse_args()
    threads = [int(t) for t in a.threads.split(",")]
    layers = [l for l in LAYERS if not a.only or any(s in l[0] for s in a.only.split(","))]
    work = a.keep or tempfile.mkdtemp(prefix="conv_layers.")
    if not a.keep:  # removed on any exit, a kill with SIGTERM included
        atexit.register(shutil.rmtree, work, True)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    os.makedirs(work, exist_ok=True)
    engines = [("tosac", a.tosac)] + ([("base", a.base)] if a.base else [])
    cfgs, macs = [], {}
    make_models([(os.path.join(work, l[0] + ".onnx"), os.path.join(work, l[0] + ".input.npy")) + tuple(l[1:]) +
                 (1000 + i,) for i, l in enumerate(LAYERS) if l in layers and
                 not os.path.exists(os.path.join(work, l[0] + ".input.npy"))])
    for name, H, W, IC, OC, k, s, p in layers:
        onnx, inp, prog = (os.path.join(work, name + e) for e in (".onnx", ".input.npy", ".tosa"))
        reps = 4 if IC == OC and s == 1 else 1
        OH, OW = (H + 2 * p - k) // s + 1, (W + 2 * p - k) // s + 1
        macs[name] = reps * OH * OW * OC * IC * k * k
        run([a.tosac, "compile", onnx, "-o", prog])
        for t in threads:
            probe = tosac_ms(a.tosac, prog, inp, 3, t)
            runs = max(10, min(5000, int(1e3 * a.min_time / max(probe, 1e-3))))
            cfgs.append(((name, t), "ort", lambda o=onnx, i=inp, t=t, r=runs: ort_ms(o, i, r, t)))
            for en, exe in engines:
                cfgs.append(((name, t), en, lambda e=exe, pr=prog, i=inp, t=t, r=runs: tosac_ms(e, pr, i, r, t)))
    times = {}
    for _ in range(a.rounds):
        for key, en, fn in cfgs:
            times.setdefault(key + (en,), []).append(fn())
    load = os.getloadavg()
    print(f"{a.rounds} rounds, medians in ms; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f}")
    head = f"{'layer':30} {'thr':>3} {'ort':>8} {'tosac':>8} {'ratio':>6} {'GMAC/s':>7}"
    if a.base:
        head += f" {'base':>8} {'ratio':>6}"
    print(head)
    for name, *_ in layers:
        for t in threads:
            om = statistics.median(times[(name, t, "ort")])
            tm = statistics.median(times[(name, t, "tosac")])
            line = f"{name:30} {t:3} {om:8.4f} {tm:8.4f} {tm / om:6.2f} {macs[name] / tm / 1e6:7.1f}"
            if a.base:
                bm = statistics.median(times[(name, t, "base")])
                line += f" {bm:8.4f} {bm / om:6.2f}"
            print(line)


if __name__ == "__main__":
    sys.exit(main())
