#!/usr/bin/python3
"""tosac conformance test generator.

usage: gen.py OUTDIR [--ops ADD,CONV2D,...] [--seed N] [--quick] [--list] [--flatc PATH]

Writes one directory per test case under OUTDIR:
  <case>/desc.json        TOSA.md D.2 test descriptor + our fields (expected, compare, expected_result)
  <case>/graph.json       the graph as flatc JSON (final TOSA 1.0 schema)
  <case>/<case>.tosa      the same graph as a flatbuffer (flatc -b)
  <case>/input_*.npy      inputs (TOSA.md D.3 dtype conventions)
  <case>/expected_*.npy   expected outputs from the numpy implementation of the spec (refimpl.py):
                          exact integer/bool values, float64 references for FP outputs
  <case>/bounds_*.npy     error-bound inputs for the ABS_ERROR / DOT_PRODUCT rules
and OUTDIR/index.json (all cases with op, row, expected result).
Everything is deterministic for a given --seed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # keep the source tree clean (CTest may run from a read-only checkout)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import cases_ew  # noqa: E402,F401  (registers generators)
import cases_conv  # noqa: E402,F401
import cases_misc  # noqa: E402,F401
import cases_neg  # noqa: E402,F401
from casebase import GENERATOR_TAG, write_case  # noqa: E402
from common import SCHEMA  # noqa: E402
from refimpl import Unpredictable  # noqa: E402
from registry import GENERATORS, Ctx  # noqa: E402


def collect(ctx, ops=None):
    cases = []
    for gops, fn in GENERATORS:
        if ops is not None and not (set(gops) & ops):
            continue
        try:
            got = fn(ctx)
        except Unpredictable as e:
            raise SystemExit('generator %s produced a REQUIRE violation in a valid case: %s' % (fn.__name__, e))
        for c in got:
            if ops is None or c.op in ops:
                cases.append(c)
    # unique names
    seen = {}
    for c in cases:
        if c.name in seen:
            seen[c.name] += 1
            c.name = '%s_%d' % (c.name, seen[c.name])
        else:
            seen[c.name] = 1
    return cases


def select_quick(cases):
    """--quick: per (operator, type row) one valid case (the first one marked quick, else the first),
    and per operator the first ERROR_IF case and the first REQUIRE case."""
    first, marked, neg = {}, {}, {}
    for i, c in enumerate(cases):
        if c.expect == 'valid':
            key = (c.op, c.row)
            first.setdefault(key, i)
            if c.quick:
                marked.setdefault(key, i)
        else:
            neg.setdefault((c.op, c.expect), i)
    keep = set(neg.values())
    for key, i in first.items():
        keep.add(marked.get(key, i))
    return [c for i, c in enumerate(cases) if i in keep]


def print_coverage(cases):
    """Markdown table: operator, type rows (with their valid-case counts), ERROR_IF / REQUIRE counts."""
    ops = {}
    for c in cases:
        e = ops.setdefault(c.op, {'rows': {}, 'error': 0, 'unpredictable': 0})
        if c.expect == 'valid':
            e['rows'][c.row] = e['rows'].get(c.row, 0) + 1
        else:
            e[c.expect] += 1
    print('| operator | type rows (valid cases) | valid | ERROR_IF | REQUIRE |')
    print('|---|---|---|---|---|')
    for op in sorted(ops):
        e = ops[op]
        rows = ', '.join('%s (%d)' % (r, n) for r, n in e['rows'].items())
        print('| %s | %s | %d | %d | %d |' % (op, rows or '-', sum(e['rows'].values()), e['error'],
                                             e['unpredictable']))
    print()
    print('%d cases, %d operators' % (len(cases), len(ops)))


def run_flatc(flatc, outdir, names):
    """Converts OUTDIR/<case>/graph.json to OUTDIR/<case>/<case>.tosa, many files per flatc call."""
    stage = tempfile.mkdtemp(prefix='tosac-conf-flatc-')
    failed = []
    try:
        for i in range(0, len(names), 200):
            chunk = names[i:i + 200]
            files = []
            for n in chunk:
                src = os.path.join(outdir, n, 'graph.json')
                dst = os.path.join(stage, n + '.json')
                os.symlink(os.path.abspath(src), dst)
                files.append(dst)
            p = subprocess.run([flatc, '-b', '-o', stage, SCHEMA] + files, capture_output=True, text=True)
            if p.returncode != 0:
                # locate the failing file(s)
                for n, f in zip(chunk, files):
                    q = subprocess.run([flatc, '-b', '-o', stage, SCHEMA, f], capture_output=True, text=True)
                    if q.returncode != 0:
                        failed.append((n, (q.stderr or q.stdout).strip()))
            for n in chunk:
                t = os.path.join(stage, n + '.tosa')
                if os.path.exists(t):
                    shutil.move(t, os.path.join(outdir, n, n + '.tosa'))
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    return failed


def clean_outdir(outdir):
    if not os.path.isdir(outdir):
        os.makedirs(outdir)
        return
    for n in os.listdir(outdir):
        d = os.path.join(outdir, n)
        dj = os.path.join(d, 'desc.json')
        if os.path.isdir(d) and os.path.exists(dj):
            try:
                tag = json.load(open(dj)).get('generator')
            except Exception:
                tag = None
            if tag == GENERATOR_TAG:
                shutil.rmtree(d)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('outdir')
    ap.add_argument('--ops', help='comma-separated operator names (e.g. ADD,CONV2D); default: all')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--quick', action='store_true', help='a small subset for development')
    ap.add_argument('--list', action='store_true', help='only list the case names')
    ap.add_argument('--coverage', action='store_true', help='only print the operator x type-row coverage table')
    ap.add_argument('--flatc', default=shutil.which('flatc') or 'flatc')
    a = ap.parse_args(argv)
    ops = None
    if a.ops:
        ops = set(x.strip().upper() for x in a.ops.split(',') if x.strip())
    t0 = time.time()
    ctx = Ctx(seed=a.seed, quick=a.quick)
    cases = collect(ctx, ops)
    if a.quick:
        cases = select_quick(cases)
    if a.list:
        for c in cases:
            print(c.name)
        return 0
    if a.coverage:
        print_coverage(cases)
        return 0
    if not cases:
        print('gen.py: no cases selected', file=sys.stderr)
        return 1
    clean_outdir(a.outdir)
    for c in cases:
        write_case(c, a.outdir)
    failed = run_flatc(a.flatc, a.outdir, [c.name for c in cases])
    for n, msg in failed:
        print('gen.py: flatc failed on %s: %s' % (n, msg), file=sys.stderr)
    index = [{'name': c.name, 'op': c.op, 'row': c.row, 'variant': c.variant, 'expected_result': c.expect}
             for c in cases]
    with open(os.path.join(a.outdir, 'index.json'), 'w') as f:
        json.dump({'generator': GENERATOR_TAG, 'seed': a.seed, 'quick': a.quick, 'cases': index}, f, indent=0)
    nv = sum(c.expect == 'valid' for c in cases)
    ne = sum(c.expect == 'error' for c in cases)
    nu = sum(c.expect == 'unpredictable' for c in cases)
    print('gen.py: %d cases (%d valid, %d error, %d unpredictable), %d operators, in %.1f s -> %s' % (
        len(cases), nv, ne, nu, len(set(c.op for c in cases)), time.time() - t0, a.outdir))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
