#!/usr/bin/python3
"""Differential check: tosac against the TOSA reference model, output by output.

usage: diffref.py --tosac PATH [--ref-model PATH] --cases DIR [--jobs 2] [--out DIR] [--keep]
                  [--timeout S] [--ops A,B] [-v]

Runs every case directory under --cases (made by gen.py or randgraph.py) through both
  tosac run --test_desc CASE/desc.json -o OUT/tosac/CASE
  tosa_reference_model --test_desc CASE/desc.json --output_dir OUT/ref/CASE
and compares the two runs directly:
- graph status (exit 0 VALID / 1 UNPREDICTABLE / 2 ERROR) must be the same; for a case whose
  expected_result is "unpredictable", 1 and 2 count as the same;
- integer and bool outputs must be bit-identical;
- FP outputs agree when they are bit-identical (NaN = NaN) or when both meet the case's compare rule
  against the generator's float64 reference (the outputs of two conforming implementations may
  differ in the last bits).
A crash, a sanitizer report, a timeout or an exit status other than 0/1/2 of either side is a
disagreement. For every disagreement the report names the case, the output, the operator that
produces it (from graph.json), the first differing element with both values, the generator's
expected value (refimpl.py, the spec formula) at that element, and which side deviates from it.
Ends with "N passed, M failed" (exit 1 when M > 0). A developer tool, not a CTest: the reference
model is not built by the project.
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

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from common import is_fp, npy_as_type, npy_values  # noqa: E402
from compare import compare_output  # noqa: E402
from run import DEFAULT_REF_MODEL, SANITIZER_MARKS, find_cases  # noqa: E402

STATUS = {0: 'VALID', 1: 'UNPREDICTABLE', 2: 'ERROR'}


def _tail(s, n=240):
    s = (s or '').strip().replace('\n', ' | ')
    return s if len(s) <= n else '...' + s[-n:]


def run_one(cmd, timeout):
    """Returns (status code or None, problem text or '')."""
    env = dict(os.environ, TOSA_MODEL_NO_BACKTRACE='1')
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, errors='replace')
    except subprocess.TimeoutExpired:
        return None, 'timeout after %d s' % timeout
    except OSError as e:
        return None, 'cannot run %s: %s' % (cmd[0], e)
    text = (p.stdout or '') + (p.stderr or '')
    if any(m in text for m in SANITIZER_MARKS):
        return None, 'sanitizer report: ' + _tail('\n'.join(l for l in text.splitlines()
                                                            if any(m in l for m in SANITIZER_MARKS)))
    if p.returncode < 0:
        return None, 'signal %d: %s' % (-p.returncode, _tail(text))
    if p.returncode not in STATUS:
        return None, 'exit %d: %s' % (p.returncode, _tail(text))
    return p.returncode, _tail(text) if p.returncode else ''


def producers(case_dir, desc):
    """tensor name -> producing operator (main block of graph.json), when graph.json is there."""
    out = {}
    try:
        g = json.load(open(os.path.join(case_dir, 'graph.json')))
        for op in g['regions'][0]['blocks'][0]['operators']:
            for t in op.get('outputs', []):
                out[t] = op['op']
    except Exception:
        pass
    return out


def _val(a, pos):
    v = a[pos] if a.ndim else a[()]
    if isinstance(v, (np.floating, float)):
        return repr(float(v))
    if isinstance(v, (np.bool_, bool)):
        return str(bool(v))
    return str(int(v))


def compare_case(args, case_dir, out_root):
    """Returns (name, ok, messages, stats)."""
    name = os.path.basename(case_dir)
    stats = {'int_outputs': 0, 'fp_outputs': 0, 'fp_bitexact': 0}
    try:
        desc = json.load(open(os.path.join(case_dir, 'desc.json')))
    except Exception as e:
        return name, False, ['unreadable desc.json: %s' % e], stats
    expect = desc.get('expected_result', 'error' if desc.get('expected_failure') else 'valid')
    dj = os.path.join(case_dir, 'desc.json')
    o_t = os.path.join(out_root, 'tosac', name)
    o_r = os.path.join(out_root, 'ref', name)
    for d in (o_t, o_r):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    st_t, msg_t = run_one([args.tosac, 'run', '--test_desc', dj, '-o', o_t], args.timeout)
    st_r, msg_r = run_one([args.ref_model, '--test_desc', dj, '--output_dir', o_r], args.timeout)
    msgs = []
    if st_t is None or st_r is None:
        if st_t is None:
            msgs.append('tosac: %s' % msg_t)
        if st_r is None:
            msgs.append('reference model: %s' % msg_r)
        return name, False, msgs, stats
    if st_t != st_r:
        if expect == 'unpredictable' and st_t in (1, 2) and st_r in (1, 2):
            pass
        else:
            msgs.append('status: tosac %s, reference model %s (expected %s)%s%s' % (
                STATUS[st_t], STATUS[st_r], expect, ('; tosac: ' + msg_t) if msg_t else '',
                ('; reference model: ' + msg_r) if msg_r else ''))
            return name, False, msgs, stats
    if st_t != 0:
        return name, True, [], stats
    prod = producers(case_dir, desc)
    types = desc.get('output_types', [])
    for i, (oname, ofile) in enumerate(zip(desc['ofm_name'], desc['ofm_file'])):
        t = types[i] if i < len(types) else None
        where = 'output %s (%s %s)' % (oname, prod.get(oname, desc.get('op', '?')), t)
        pt, pr = os.path.join(o_t, ofile), os.path.join(o_r, ofile)
        missing = [who for who, p in (('tosac', pt), ('reference model', pr)) if not os.path.exists(p)]
        if missing:
            msgs.append('%s: not written by %s' % (where, ' and '.join(missing)))
            continue
        try:
            a = npy_as_type(pt, t)
            r = npy_as_type(pr, t)
        except Exception as e:
            msgs.append('%s: unreadable output: %s' % (where, e))
            continue
        if a.shape != r.shape:
            msgs.append('%s: shape tosac %s, reference model %s' % (where, a.shape, r.shape))
            continue
        exp = None
        exp_files = desc.get('expected') or []
        cmp_ = (desc.get('compare') or [{}] * (i + 1))[i]
        if expect == 'valid' and i < len(exp_files):
            try:
                _, exp = npy_values(os.path.join(case_dir, exp_files[i]))
                if t == 'bool':
                    exp = exp.astype(bool)
            except Exception:
                exp = None
        if not is_fp(t):
            stats['int_outputs'] += 1
            same = np.asarray(a == r)
            if same.all():
                continue
            pos = tuple(int(x) for x in np.argwhere(~same)[0]) if same.ndim else ()
            line = '%s: %d of %d elements differ; first at %s: tosac %s, reference model %s' % (
                where, int(np.sum(~same)), same.size, list(pos), _val(a, pos), _val(r, pos))
            if exp is not None and exp.shape == a.shape and cmp_.get('mode', 'exact') == 'exact':
                e = _val(exp, pos)
                dev = [who for who, v in (('tosac', a), ('reference model', r)) if _val(v, pos) != e]
                line += ', spec (refimpl) %s -> deviates from the spec: %s' % (e, ' and '.join(dev) or 'neither')
            msgs.append(line)
            continue
        stats['fp_outputs'] += 1
        with np.errstate(invalid='ignore'):
            same = (a == r) | (np.isnan(a) & np.isnan(r))
        if np.all(same):
            stats['fp_bitexact'] += 1
            continue
        if exp is None:
            pos = tuple(int(x) for x in np.argwhere(~same)[0]) if same.ndim else ()
            msgs.append('%s: FP outputs differ and the case has no reference; first at %s: tosac %s, '
                        'reference model %s' % (where, list(pos), _val(a, pos), _val(r, pos)))
            continue
        bounds = None
        if 'bounds_file' in cmp_:
            _, bounds = npy_values(os.path.join(case_dir, cmp_['bounds_file']))
        ok_t, m_t = compare_output(a, exp, cmp_, t, bounds)
        ok_r, m_r = compare_output(r, exp, cmp_, t, bounds)
        if ok_t and ok_r:
            continue
        pos = tuple(int(x) for x in np.argwhere(~same)[0]) if same.ndim else ()
        msgs.append('%s: FP outputs differ (first at %s: tosac %s, reference model %s, reference %s); %s%s' % (
            where, list(pos), _val(a, pos), _val(r, pos), _val(np.asarray(exp), pos),
            '' if ok_t else 'tosac outside the %s rule: %s; ' % (cmp_.get('mode'), m_t),
            '' if ok_r else 'reference model outside the %s rule: %s' % (cmp_.get('mode'), m_r)))
    return name, not msgs, msgs, stats


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tosac', required=True)
    ap.add_argument('--ref-model', default=DEFAULT_REF_MODEL)
    ap.add_argument('--cases', required=True, help='directory made by gen.py or randgraph.py')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--ops', help='only cases of these desc.json "op" values (comma-separated)')
    ap.add_argument('--out', help='directory for both runs\' outputs (default: a temporary directory)')
    ap.add_argument('--keep', action='store_true', help='keep the outputs of agreeing cases too')
    ap.add_argument('--timeout', type=int, default=120)
    ap.add_argument('-v', '--verbose', action='store_true')
    args = ap.parse_args(argv)
    ops = set(x.strip().upper() for x in args.ops.split(',')) if args.ops else None
    cases, _ = find_cases(args.cases, ops)
    if not cases:
        print('diffref.py: no cases under %s' % args.cases, file=sys.stderr)
        print('0 passed, 0 failed')
        return 1
    out_root = args.out or tempfile.mkdtemp(prefix='tosac-diffref-')
    t0 = time.time()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
        for name, ok, msgs, st in ex.map(lambda c: compare_case(args, c, out_root), cases):
            results.append((name, ok, st))
            if not ok:
                for m in msgs:
                    print('DIFF %s: %s' % (name, m), flush=True)
            else:
                if args.verbose:
                    print('same %s' % name, flush=True)
                if not args.keep:
                    shutil.rmtree(os.path.join(out_root, 'tosac', name), ignore_errors=True)
                    shutil.rmtree(os.path.join(out_root, 'ref', name), ignore_errors=True)
    if not args.out and not args.keep:
        shutil.rmtree(out_root, ignore_errors=True)
    npass = sum(1 for r in results if r[1])
    nint = sum(r[2]['int_outputs'] for r in results)
    nfp = sum(r[2]['fp_outputs'] for r in results)
    nbit = sum(r[2]['fp_bitexact'] for r in results)
    print('(%d cases, %.1f s; compared %d integer/bool outputs and %d FP outputs, %d of them bit-identical)' % (
        len(results), time.time() - t0, nint, nfp, nbit))
    print('%d passed, %d failed' % (npass, len(results) - npass))
    return 0 if npass == len(results) else 1


if __name__ == '__main__':
    sys.exit(main())
