#!/usr/bin/python3
"""tosac conformance runner/checker.

usage: run.py --cases DIR [--tosac PATH] [--jobs 2] [--ops ADD,...] [--out DIR] [--keep]
              [--sut tosac|reference_model] [--ref-model PATH] [--precise] [--timeout S]
              [--skip-ext EXT,...] [--lenient-descr] [-v]

For every case directory under --cases (made by gen.py) the system under test is run on the case's
desc.json, and its graph status and outputs are checked:
  --sut tosac (default):      tosac run --test_desc CASE/desc.json -o OUTDIR
  --sut reference_model:      tosa_reference_model --test_desc CASE/desc.json --output_dir OUTDIR
Exit status convention of both: 0 VALID (outputs written), 1 UNPREDICTABLE, 2 ERROR.

Checks: expected_result "valid" needs exit 0 and every ofm_file matching its expected .npy under
the case's compare rule (exact for integers/bool; ulp / abs_error / dot_product / relative /
reduce_product / rescale_inexact for FP and inexact rescale, TOSA.md D.5); "error" needs exit 2;
"unpredictable" accepts exit 1 or 2. A crash, a sanitizer report, a timeout or any other exit status
is a failure. Output .npy descrs must follow TOSA.md D.3 (--lenient-descr accepts any integer /
float descr of the right kind).

Prints one line per failing case, a per-operator table, and finally "N passed, M failed"; exits 1
when M > 0.  --precise runs the SUT with --precise_mode 1 and compares its fp64 outputs with our fp64
references directly (|d| <= 1e-9 max(1,|ref|); with the reference model: a check of the generator).
"""
import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean (CTest may run from a read-only checkout)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import is_fp, npy_as_type, npy_values, read_npy  # noqa: E402
from compare import compare_output  # noqa: E402

OUT_DESCR = {'i4': '|i1', 'i8': '|i1', 'i16': '<i2', 'i32': '<i4', 'i48': '<i8', 'bool': '|b1', 'shape': '<i8',
             'fp32': '<f4', 'fp16': '<f2', 'bf16': '<V2', 'fp8e4m3': '<V1', 'fp8e5m2': '|u1'}
SANITIZER_MARKS = ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'UndefinedBehaviorSanitizer',
                   'runtime error:', 'ERROR: MemorySanitizer', 'ThreadSanitizer')
DEFAULT_REF_MODEL = '/tmp/interop/refmodel-build/reference_model/tosa_reference_model'


def find_cases(root, ops=None, skip_ext=None):
    """Returns (case directories to run, skipped case directories)."""
    out, skipped = [], []
    for n in sorted(os.listdir(root)):
        d = os.path.join(root, n)
        dj = os.path.join(d, 'desc.json')
        if os.path.isdir(d) and os.path.exists(dj):
            try:
                desc = json.load(open(dj))
            except Exception:
                desc = {}
            if ops and desc.get('op', '').upper() not in ops:
                continue
            exts = set(desc.get('test_requirements', {}).get('extensions_required', []))
            if skip_ext and exts & skip_ext:
                skipped.append(d)
                continue
            out.append(d)
    return out, skipped


def sut_command(args, desc, outdir):
    if args.sut == 'reference_model':
        cmd = [args.ref_model, '--test_desc', desc, '--output_dir', outdir]
        if args.precise:
            cmd += ['--precise_mode', '1']
        return cmd
    cmd = [args.tosac, 'run', '--test_desc', desc, args.output_flag, outdir]
    if args.precise:
        cmd += ['--precise_mode', '1']
    return cmd


def _tail(s, n=300):
    s = (s or '').strip().replace('\n', ' | ')
    return s if len(s) <= n else '...' + s[-n:]


def check_case(args, case_dir, out_root):
    """Returns (name, op, status, message) with status 'pass' or 'fail'; the outputs of a passing
    case are removed unless --keep."""
    r = _check_case(args, case_dir, out_root)
    if r[2] == 'pass' and not args.keep:
        shutil.rmtree(os.path.join(out_root, r[0]), ignore_errors=True)
    return r


def _check_case(args, case_dir, out_root):
    name = os.path.basename(case_dir)
    try:
        desc = json.load(open(os.path.join(case_dir, 'desc.json')))
    except Exception as e:
        return name, '?', 'fail', 'unreadable desc.json: %s' % e
    op = desc.get('op', '?')
    expect = desc.get('expected_result', 'error' if desc.get('expected_failure') else 'valid')
    if not os.path.exists(os.path.join(case_dir, desc.get('tosa_file', ''))):
        return name, op, 'fail', 'incomplete case: %s missing (regenerate the cases)' % desc.get('tosa_file')
    outdir = os.path.join(out_root, name)
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    cmd = sut_command(args, os.path.join(case_dir, 'desc.json'), outdir)
    env = dict(os.environ, TOSA_MODEL_NO_BACKTRACE='1')
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env,
                           errors='replace')
    except subprocess.TimeoutExpired:
        return name, op, 'fail', 'timeout after %d s' % args.timeout
    except OSError as e:
        return name, op, 'fail', 'cannot run %s: %s' % (cmd[0], e)
    dt = time.time() - t0
    rc = p.returncode
    text = (p.stdout or '') + (p.stderr or '')
    if any(m in text for m in SANITIZER_MARKS):
        return name, op, 'fail', 'sanitizer report (exit %d): %s' % (rc, _tail(
            '\n'.join(l for l in text.splitlines() if any(m in l for m in SANITIZER_MARKS) or 'SUMMARY' in l)))
    if rc < 0:
        return name, op, 'fail', 'crashed with signal %d: %s' % (-rc, _tail(p.stderr))
    if rc not in (0, 1, 2):
        return name, op, 'fail', 'exit status %d (not a graph result): %s' % (rc, _tail(text))
    status = {0: 'VALID', 1: 'UNPREDICTABLE', 2: 'ERROR'}[rc]
    if expect == 'error':
        if rc != 2:
            return name, op, 'fail', 'expected ERROR (exit 2), got %s' % status
        return name, op, 'pass', ''
    if expect == 'unpredictable':
        if rc not in (1, 2):
            return name, op, 'fail', 'expected UNPREDICTABLE or ERROR (exit 1/2), got %s' % status
        return name, op, 'pass', ''
    if rc != 0:
        return name, op, 'fail', 'expected VALID, got %s: %s' % (status, _tail(text))
    types = desc.get('output_types', [])
    for i, (oname, ofile) in enumerate(zip(desc['ofm_name'], desc['ofm_file'])):
        t = types[i] if i < len(types) else None
        path = os.path.join(outdir, ofile)
        if not os.path.exists(path):
            return name, op, 'fail', 'output %s: %s not written' % (oname, ofile)
        cmp_ = desc['compare'][i]
        exp_path = os.path.join(case_dir, desc['expected'][i])
        try:
            descr, shape, _ = read_npy(path)
            want = OUT_DESCR.get(t)
            if args.precise and is_fp(t):
                want = '<f8'
            if want and descr != want and not (args.lenient_descr and descr[1] == want[1]) and \
                    not (args.lenient_descr and want[1:] in ('V2', 'V1', 'u1') and descr[1:] in ('V2', 'V1', 'u1')):
                return name, op, 'fail', 'output %s: .npy descr %s, expected %s' % (oname, descr, want)
            if args.precise and is_fp(t):
                _, imp = npy_values(path)
                imp = imp.astype(np.float64)
            else:
                imp = npy_as_type(path, t)
            _, exp = npy_values(exp_path)
            if t == 'bool':
                exp = exp.astype(bool)
            bounds = None
            if 'bounds_file' in cmp_:
                _, bounds = npy_values(os.path.join(case_dir, cmp_['bounds_file']))
            if args.precise and is_fp(t):
                ok, msg = precise_agree(imp, exp)
            else:
                ok, msg = compare_output(imp, exp, cmp_, t, bounds)
        except Exception as e:  # malformed output file etc.
            return name, op, 'fail', 'output %s: %s: %s' % (oname, type(e).__name__, e)
        if not ok:
            return name, op, 'fail', 'output %s: %s' % (oname, msg)
    return name, op, 'pass', '%.2fs' % dt


def precise_agree(imp, ref):
    if imp.shape != ref.shape:
        return False, 'shape %s, expected %s' % (imp.shape, ref.shape)
    with np.errstate(all='ignore'):
        both_nan = np.isnan(imp) & np.isnan(ref)
        same = (imp == ref) | both_nan
        tol = 1e-9 * np.maximum(1.0, np.abs(ref))
        ok = same | (np.abs(imp - ref) <= tol)
    if ok.all():
        return True, ''
    pos = tuple(int(i) for i in np.argwhere(~ok)[0])
    return False, 'precise: %d of %d differ; first at %s: got %r, generator reference %r' % (
        int(np.sum(~ok)), ok.size, pos, float(imp[pos]), float(ref[pos]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--cases', required=True, help='directory made by gen.py')
    ap.add_argument('--tosac', help='tosac executable (--sut tosac)')
    ap.add_argument('--sut', choices=('tosac', 'reference_model'), default='tosac')
    ap.add_argument('--output-flag', default='-o', help='tosac run option naming the output directory (-o)')
    ap.add_argument('--ref-model', default=DEFAULT_REF_MODEL, help='tosa_reference_model executable')
    ap.add_argument('--precise', action='store_true',
                    help='run the SUT with --precise_mode 1 and compare its fp64 outputs with our fp64 references')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--ops', help='only these operators (comma-separated)')
    ap.add_argument('--out', help='directory for the outputs (default: a temporary directory)')
    ap.add_argument('--keep', action='store_true', help='keep the outputs of passing cases too')
    ap.add_argument('--timeout', type=int, default=120, help='seconds per case')
    ap.add_argument('--lenient-descr', action='store_true')
    ap.add_argument('--skip-ext', help='skip cases that need one of these extensions (comma-separated, e.g. '
                    'tosa-ext-variable); skipped cases are reported but never count as passed')
    ap.add_argument('-v', '--verbose', action='store_true', help='print every case')
    args = ap.parse_args(argv)
    if args.sut == 'tosac' and not args.tosac:
        ap.error('--tosac PATH is required with --sut tosac')
    ops = set(x.strip().upper() for x in args.ops.split(',')) if args.ops else None
    skip_ext = set(x.strip() for x in args.skip_ext.split(',')) if args.skip_ext else None
    cases, skipped = find_cases(args.cases, ops, skip_ext)
    if not cases:
        print('run.py: no cases found under %s' % args.cases, file=sys.stderr)
        print('0 passed, 0 failed')
        return 1
    out_root = args.out or tempfile.mkdtemp(prefix='tosac-conf-out-')
    os.makedirs(out_root, exist_ok=True)
    t0 = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        futs = [ex.submit(check_case, args, c, out_root) for c in cases]
        for f in futs:
            r = f.result()
            results.append(r)
            if r[2] != 'pass':
                print('FAIL %s: %s' % (r[0], r[3]), flush=True)
            elif args.verbose:
                print('pass %s %s' % (r[0], r[3]), flush=True)
    if not args.out and not args.keep:
        shutil.rmtree(out_root, ignore_errors=True)
    per_op = {}
    for name, op, st, _ in results:
        e = per_op.setdefault(op, [0, 0])
        e[0 if st == 'pass' else 1] += 1
    print()
    print('%-24s %7s %7s' % ('operator', 'passed', 'failed'))
    for op in sorted(per_op):
        print('%-24s %7d %7d' % (op, per_op[op][0], per_op[op][1]))
    npass = sum(1 for r in results if r[2] == 'pass')
    nfail = len(results) - npass
    if skipped:
        print('skipped (extension not claimed): %d cases' % len(skipped))
    print('(%s, %d cases run, %.1f s)' % (args.sut, len(results), time.time() - t0))
    print('%d passed, %d failed' % (npass, nfail))
    return 1 if nfail else 0


if __name__ == '__main__':
    sys.exit(main())
