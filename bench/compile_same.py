#!/usr/bin/python3
"""Byte-identity check of the quantizing compile against a second tosac (main's build, say): a
compile-time change must leave every output the same bytes.

Usage: bench/compile_same.py --tosac PATH --base PATH --models DIR [--only NAME ...]
                             [--calib NAME=FILE.npy ...] [--quick] [--keep DIR]

For every model DIR/NAME.onnx (the zoo of tools/zoo/make_zoo.py) both executables run
`tosac compile NAME.onnx -o OUT.tosa --target TOSA-1.0+INT --calibrate ...` under each of these
settings, and every file they write is compared byte for byte: the program (.tosa), its sidecar
(.tosa.quant.json), the --report-json file, the --emit-qdq model, and the warnings (stderr, with
the output folder's name made the same):
  - every model: --threads 1, 2 and 3 (the samples side by side on 2 and 3 threads, one after
    the other on 1), and --threads 2 with --report-json (every sample kept for the report);
  - the first --options-models models (default 9) also under each option set of OPTION_SETS.
Calibration data: the .npy given with --calib NAME=FILE (a batch: the zoo's 16-sample files in
/work/prof), else 5 seeded random samples (--calibrate random; an odd count, so that the
workers' shares differ). --quick: threads 2 only and no option sets.
Neither executable's timing is measured here (bench/compile_bench.py does that).

Exit status: 0 every compile identical; 1 a difference or a failed compile; 2 bad usage.
"""
import argparse
import filecmp
import os
import shutil
import subprocess
import sys
import tempfile

# (label, extra arguments); @OUT@ is the output folder of the executable that runs
OPTION_SETS = [
    ("minmax", ["--calib-method", "minmax"]),
    ("mse", ["--calib-method", "mse"]),
    ("per_tensor", ["--per-tensor"]),
    ("io_int8", ["--io", "int8"]),
    ("io_uint8", ["--io", "uint8"]),
    ("nhwc", ["--io-layout", "nhwc"]),
    ("samples3", ["--calib-samples", "3"]),
    ("emit_qdq", ["--emit-qdq", "@OUT@/qdq.onnx"]),
    ("a16w8", ["--a16w8", "--target", "TOSA-1.0+INT+int16"]),
    ("lowering", ["--lowering", "all"]),
]


def run(tosac, model, out_dir, args):
    """Compiles into out_dir (emptied first); returns (exit code, stderr with out_dir as @OUT@)."""
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    args = [a.replace("@OUT@", out_dir) for a in args]
    target = []
    if "--target" not in args:
        target = ["--target", "TOSA-1.0+INT"]
    cmd = [tosac, "compile", model, "-o", os.path.join(out_dir, "m.tosa")] + target + args
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return p.returncode, p.stderr.decode("utf-8", "replace").replace(out_dir, "@OUT@")


def differences(dir_a, dir_b):
    """Names of the files that are not in both folders or not the same bytes."""
    names = set(os.listdir(dir_a)) | set(os.listdir(dir_b))
    bad = []
    for n in sorted(names):
        fa, fb = os.path.join(dir_a, n), os.path.join(dir_b, n)
        if not (os.path.isfile(fa) and os.path.isfile(fb) and filecmp.cmp(fa, fb, shallow=False)):
            bad.append(n)
    return bad, sorted(names)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--tosac", required=True, help="the tosac executable under test")
    ap.add_argument("--base", required=True, help="the tosac executable it must match")
    ap.add_argument("--models", required=True, help="directory with NAME.onnx")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="these models only (default: every NAME.onnx)")
    ap.add_argument("--calib", action="append", default=[], metavar="NAME=FILE.npy",
                    help="calibration data of model NAME (default: 5 random samples)")
    ap.add_argument("--options-models", type=int, default=9, help="models that also run every option set")
    ap.add_argument("--quick", action="store_true", help="--threads 2 only, no option sets")
    ap.add_argument("--keep", help="keep the outputs in this folder (default: a temporary one, removed)")
    a = ap.parse_args(argv)
    for t in (a.tosac, a.base):
        if not os.access(t, os.X_OK):
            sys.stderr.write("compile_same: %s is not an executable\n" % t)
            return 2
    calib = {}
    for c in a.calib:
        name, _, path = c.partition("=")
        if not path or not os.path.isfile(path):
            sys.stderr.write("compile_same: --calib %s: expected NAME=FILE.npy of an existing file\n" % c)
            return 2
        calib[name] = path
    names = a.only or sorted(f[:-5] for f in os.listdir(a.models) if f.endswith(".onnx"))
    work = a.keep or tempfile.mkdtemp(prefix="compile_same.")
    compiles, failed = 0, []
    try:
        for i, name in enumerate(names):
            model = os.path.join(a.models, name + ".onnx")
            if not os.path.exists(model):
                sys.stderr.write("compile_same: %s not found\n" % model)
                return 1
            src = ["--calibrate", calib[name]] if name in calib else ["--calibrate", "random", "--calib-samples", "5"]
            sets = [("t2", ["--threads", "2"])]
            if not a.quick:
                sets += [("t1", ["--threads", "1"]), ("t3", ["--threads", "3"]),
                         ("report", ["--threads", "2", "--report-json", "@OUT@/report.json"])]
                if i < a.options_models:
                    sets += OPTION_SETS
            for label, extra in sets:
                if label == "samples3" and name not in calib:
                    continue  # random samples: --calib-samples is their count, the default set covers it
                outs = {}
                for k, t in (("a", a.tosac), ("b", a.base)):
                    d = os.path.join(work, name, label, k)
                    outs[k] = (d,) + run(t, model, d, src + extra)
                compiles += 1
                (da, ra, ea), (db, rb, eb) = outs["a"], outs["b"]
                what = "%s %s" % (name, label)
                if ra != rb:
                    failed.append("%s: exit %d against the base's %d: %s" % (what, ra, rb, (ea or eb).strip()[-300:]))
                    continue
                bad, files = differences(da, db)
                if ea != eb:
                    bad.append("warnings")
                if bad:
                    failed.append("%s: differs in %s" % (what, ", ".join(bad)))
                print("%-44s %s (%s%s)" % (what, "DIFFERS" if bad else "same", ", ".join(files) or "no files",
                                           ", exit %d" % ra if ra else ""), flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    for f in failed:
        print("FAIL " + f)
    print("%d of %d compiles identical to the base (program, sidecar, report JSON, QDQ model, warnings)"
          % (compiles - len(failed), compiles))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
