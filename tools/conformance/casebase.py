"""Test-case model of the conformance generator: a Case holds a TOSA graph (flatc JSON builder),
its input tensors, the expected outputs with their compare rules, and the expected graph result.
write_case() lays a case out on disk in the TOSA.md D.2 desc.json format (plus our own fields)."""
import json
import os
import re
import zlib

import numpy as np

from common import (Graph, FMT, imin, imax, is_fp, is_int, round_fp, write_f64_npy,
                    write_tensor_npy)

GENERATOR_TAG = 'tosac-conformance 1'


def case_rng(seed, name):
    return np.random.default_rng([seed & 0xffffffff, zlib.crc32(name.encode())])


def shape_tag(shape):
    if shape is None:
        return 'x'
    if len(shape) == 0:
        return 'r0'
    return 'x'.join(str(int(s)) for s in shape)


def _clean(s):
    return re.sub(r'[^a-z0-9_.-]+', '', s.lower().replace(' ', '_'))


# Profile / extension requirement of a type row (informative; desc.json test_requirements).
def requirements(types):
    prof, ext = set(), set()
    for t in types:
        if t in ('i8', 'i32', 'bool'):
            pass
        elif t in ('i16', 'i48'):
            ext.add('tosa-ext-int16')
        elif t == 'i4':
            ext.add('tosa-ext-int4')
        elif t == 'bf16':
            ext.add('tosa-ext-bf16')
        elif t in ('fp8e4m3', 'fp8e5m2'):
            ext.add('tosa-ext-' + t)
    if any(is_fp(t) for t in types):
        prof.add('tosa-pro-fp')
    else:
        prof.add('tosa-pro-int')
    return sorted(prof), sorted(ext)


class Case:
    def __init__(self, op, row, shape, variant='', expect='valid', ctx=None):
        self.op = op
        self.row = row
        self.variant = variant
        tag = shape if isinstance(shape, str) else shape_tag(shape)
        self.name = _clean('%s_%s_%s%s' % (op, tag, row, ('_' + variant) if variant else ''))
        self.g = Graph()
        self.b = self.g.main
        self.ifms = []
        self.ofms = []
        self.expect = expect  # valid | error | unpredictable
        self.exts = []
        self.profiles = []
        self.quick = False
        self.note = ''
        self.rng = case_rng(ctx.seed if ctx else 1, self.name)

    # --- graph construction helpers -----------------------------------------------------------
    def inp(self, name, t, values, shape=None):
        values = np.asarray(values)
        shape = tuple(values.shape) if shape is None else tuple(shape)
        if is_int(t) and values.size:
            lo = -7 if t == 'i4' else imin(t)
            assert values.min() >= lo and values.max() <= imax(t), '%s: input %s out of %s range' % (
                self.name, name, t)
        self.b.tensor(name, t, shape)
        self.b.inputs.append(name)
        self.ifms.append((name, t, values.reshape(shape)))
        return name

    def const(self, name, t, values, shape=None):
        return self.b.const(name, t, np.asarray(values), shape)

    def cshape(self, name, values):
        return self.b.const_shape(name, values)

    def tens(self, name, t, shape):
        return self.b.tensor(name, t, shape)

    def node(self, op, ins, outs, attr=None):
        return self.b.op(op, ins, outs, attr)

    def out(self, name, t, shape, expected=None, compare=None, bounds=None, declare=True):
        if declare:
            self.b.tensor(name, t, shape)
        self.b.outputs.append(name)
        if compare is None:
            compare = {'mode': 'exact'}
        self.ofms.append({'name': name, 't': t, 'shape': tuple(shape), 'expected': expected,
                          'compare': compare, 'bounds': bounds})
        return name

    def types(self):
        ts = set()
        for _, t, _ in self.ifms:
            ts.add(t)
        for o in self.ofms:
            ts.add(o['t'])
        for tn in self.b.tensors:
            for k, v in (('BOOL', 'bool'), ('INT4', 'i4'), ('INT8', 'i8'), ('INT16', 'i16'), ('INT32', 'i32'),
                         ('INT48', 'i48'), ('FP32', 'fp32'), ('FP16', 'fp16'), ('BF16', 'bf16'),
                         ('FP8E4M3', 'fp8e4m3'), ('FP8E5M2', 'fp8e5m2')):
                if tn['type'] == k:
                    ts.add(v)
        return ts


def check_expected(o):
    """Sanity checks on an expected output (catches generator bugs early)."""
    t, e = o['t'], o['expected']
    if e is None:
        raise AssertionError('output %s has no expected value' % o['name'])
    e = np.asarray(e)
    if tuple(e.shape) != tuple(o['shape']):
        raise AssertionError('output %s: expected shape %s != declared %s' % (o['name'], e.shape, o['shape']))
    if is_int(t):
        if e.dtype.kind not in 'iu':
            raise AssertionError('output %s: integer type with %s values' % (o['name'], e.dtype))
        if e.size and (e.min() < imin(t) or e.max() > imax(t)):
            raise AssertionError('output %s: values out of %s range: %s..%s' % (o['name'], t, e.min(), e.max()))


def write_case(case, outdir):
    d = os.path.join(outdir, case.name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'graph.json'), 'w') as f:
        json.dump(case.g.to_json(), f, separators=(',', ':'))
    ifm_name, ifm_file = [], []
    for i, (name, t, v) in enumerate(case.ifms):
        fn = 'input_%d_%s.npy' % (i, _clean(name))
        write_tensor_npy(os.path.join(d, fn), t, v)
        ifm_name.append(name)
        ifm_file.append(fn)
    ofm_name, ofm_file, expected, compare, otypes = [], [], [], [], []
    for i, o in enumerate(case.ofms):
        ofm_name.append(o['name'])
        ofm_file.append('result_%d_%s.npy' % (i, _clean(o['name'])))
        otypes.append(o['t'])
        cmp_ = dict(o['compare'])
        if case.expect == 'valid':
            f64 = is_fp(o['t']) or cmp_.get('mode') == 'rescale_inexact'
            try:
                if not f64:
                    check_expected(o)
                elif tuple(np.shape(o['expected'])) != tuple(o['shape']):
                    raise AssertionError('output %s: expected shape %s != declared %s' % (
                        o['name'], np.shape(o['expected']), o['shape']))
            except AssertionError as ex:
                raise AssertionError('%s: %s' % (case.name, ex))
            fn = 'expected_%d_%s.npy' % (i, _clean(o['name']))
            if f64:
                write_f64_npy(os.path.join(d, fn), o['expected'])
            else:
                write_tensor_npy(os.path.join(d, fn), o['t'], o['expected'])
            expected.append(fn)
            if o['bounds'] is not None:
                bf = 'bounds_%d_%s.npy' % (i, _clean(o['name']))
                write_f64_npy(os.path.join(d, bf), o['bounds'])
                cmp_['bounds_file'] = bf
        compare.append(cmp_)
    prof, ext = requirements(case.types())
    desc = {
        'tosa_file': case.name + '.tosa',
        'ifm_name': ifm_name,
        'ifm_file': ifm_file,
        'ofm_name': ofm_name,
        'ofm_file': ofm_file,
        'expected_failure': case.expect == 'error',
        'expected_result': case.expect,
        'expected': expected,
        'compare': compare,
        'output_types': otypes,
        'op': case.op,
        'row': case.row,
        'variant': case.variant,
        'test_requirements': {'profiles_supported': case.profiles or prof,
                              'extensions_required': sorted(set(ext) | set(case.exts))},
        'generator': GENERATOR_TAG,
    }
    if case.note:
        desc['note'] = case.note
    with open(os.path.join(d, 'desc.json'), 'w') as f:
        json.dump(desc, f, indent=1)
    return d


# ------------------------------------------------------------------------------------------------
# Data helpers
# ------------------------------------------------------------------------------------------------

def rand_int(rng, t, shape, lo=None, hi=None):
    lo = imin(t) if lo is None else lo
    hi = imax(t) if hi is None else hi
    if t == 'i4':
        lo = max(lo, -7)
    return rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)


def rand_bool(rng, shape):
    return rng.integers(0, 2, size=shape).astype(bool)


def rand_fp(rng, t, shape, lo=-1.0, hi=1.0):
    return round_fp(rng.uniform(lo, hi, size=shape), t)


def put_edges(arr, values):
    """Overwrites the first elements (C order) of arr with `values` (as many as fit)."""
    a = np.array(arr, copy=True)
    flat = a.reshape(-1)
    n = min(len(values), flat.size)
    flat[:n] = np.asarray(values[:n], dtype=a.dtype)
    return flat.reshape(a.shape)


def fp_specials(t):
    f = FMT[t]
    vals = [0.0, -0.0, 1.0, -1.0, f.max, -f.max, f.normal_min, -f.normal_min,
            f.normal_min * 2.0 ** -2, np.nan]
    if f.has_inf:
        vals += [np.inf, -np.inf]
    return round_fp(np.array(vals), t)
