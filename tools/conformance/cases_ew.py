"""Cases: elementwise binary/unary/ternary operators, comparisons, activations, CLAMP, TABLE."""
import numpy as np

import cmpmodes as C
import refimpl as R
from casebase import Case, fp_specials, put_edges, rand_bool, rand_fp, rand_int
from common import FMT, INT_BITS, imax, imin, round_fp
from registry import gen

FP3 = ('fp32', 'fp16', 'bf16')

# (tag, shape1, shape2): rank 0, equal shapes (edge values go here), broadcasts up to rank 6
BIN_SHAPES = [
    ('r0', (), ()),
    ('eq', (29,), (29,)),
    ('bc3', (2, 3, 4), (2, 1, 4)),
    ('bc4', (3, 1, 2, 1), (1, 4, 2, 5)),
    ('r6', (1, 2, 1, 2, 3, 2), (2, 1, 3, 1, 1, 2)),
]
QUICK_BIN = ('eq', 'bc3')


def out_shape(s1, s2):
    return R.bcast_shape(s1, s2)


def _mark_quick(cases, tags_ok):
    for c in cases:
        if any(('_%s_' % t) in ('_' + c.name + '_') for t in tags_ok):
            c.quick = True
    return cases


def _binary(ctx, op, row, s1, s2, a, b, t_in, t_out, exp, attr=None, variant='', compare=None, shift=None,
            tag=None):
    so = out_shape(s1, s2)
    c = Case(op, row, tag or so, variant, ctx=ctx)
    c.inp('input1', t_in, a, s1)
    c.inp('input2', t_in, b, s2)
    ins = ['input1', 'input2']
    if shift is not None:
        c.const('shift', 'i8', np.array([shift]))
        ins.append('shift')
    c.out('output', t_out, so, exp, compare)
    c.node(op, ins, ['output'], attr)
    return c


# ------------------------------------------------------------------------------------------------
# Integer binary operators
# ------------------------------------------------------------------------------------------------

def _int_pairs(op, t):
    lo, hi = imin(t), imax(t)
    if op == 'ADD':
        return [(hi, 0), (lo, 0), (hi, lo), (-1, 1), (1 << 30, (1 << 30) - 1), (lo, hi), (-5, 5)]
    if op == 'SUB':
        return [(hi, 0), (lo, 0), (-1, hi), (0, hi), (lo, -1), (hi, hi), (lo, lo)]
    if op == 'INTDIV':
        return [(-7, 2), (7, 2), (-7, -2), (1, 3), (lo, 1), (hi, -1), (lo, 2), (0, -5), (lo, hi), (hi, lo),
                (-1, 2), (5, -7)]
    if op in ('MAXIMUM', 'MINIMUM', 'EQUAL', 'GREATER', 'GREATER_EQUAL'):
        return [(hi, lo), (lo, hi), (0, -1), (-1, 0), (hi, hi), (lo, lo), (5, 5), (0, 0)]
    if op in ('BITWISE_AND', 'BITWISE_OR', 'BITWISE_XOR'):
        return [(-1, lo), (hi, lo), (-1, -1), (0, -1), (0x55 & hi, -86)]
    bits = INT_BITS[t]
    if op == 'ARITHMETIC_RIGHT_SHIFT':
        return [(-5, 1), (5, 1), (-4, 1), (7, 2), (lo, bits - 1), (hi, bits - 1), (-1, bits - 1), (lo, 0),
                (-3, 1), (3, 1), (-6, 2), (6, 2), (hi, 1), (lo, 1)]
    if op == 'LOGICAL_LEFT_SHIFT':
        return [(-1, bits - 1), (lo, 1), (1, bits - 1), (-1, 0), (hi, 1), (3, bits - 2), (-128, 3)]
    if op == 'LOGICAL_RIGHT_SHIFT':
        return [(-1, bits - 1), (lo, 1), (-1, 1), (lo, bits - 1), (hi, 0), (-128, 3), (-2, 1)]
    return []


def _int_operands(op, t, rng, s1, s2):
    bits = INT_BITS[t]
    if op in ('ADD', 'SUB'):
        a = rand_int(rng, t, s1, -(1 << 30), (1 << 30) - 1)
        b = rand_int(rng, t, s2, -(1 << 30), (1 << 30) - 1)
    elif op == 'INTDIV':
        a = rand_int(rng, t, s1)
        b = rand_int(rng, t, s2, -300, 300)
        big = rng.random(s2) < 0.3
        b = np.where(big, rand_int(rng, t, s2), b)
        b = np.where(b == 0, 7, b)
        a = np.where(a == imin(t), a + 1, a)
    elif op in ('ARITHMETIC_RIGHT_SHIFT', 'LOGICAL_LEFT_SHIFT', 'LOGICAL_RIGHT_SHIFT'):
        a = rand_int(rng, t, s1)
        b = rand_int(rng, t, s2, 0, bits - 1)
    elif op in ('EQUAL', 'GREATER', 'GREATER_EQUAL'):
        pool = np.array([imin(t), -3, -1, 0, 1, 2, 3, imax(t)], np.int64)
        a = np.where(rng.random(s1) < 0.5, pool[rng.integers(0, len(pool), s1)], rand_int(rng, t, s1))
        b = np.where(rng.random(s2) < 0.5, pool[rng.integers(0, len(pool), s2)], rand_int(rng, t, s2))
    else:
        a = rand_int(rng, t, s1)
        b = rand_int(rng, t, s2)
    return np.asarray(a, np.int64), np.asarray(b, np.int64)


def _int_eval(op, t, a, b, attr):
    if op == 'ADD':
        return R.int_add(a, b, t)
    if op == 'SUB':
        return R.int_sub(a, b, t)
    if op == 'INTDIV':
        return R.intdiv(a, b)
    if op == 'ARITHMETIC_RIGHT_SHIFT':
        return R.ars(a, b, t, attr['round'])
    if op == 'LOGICAL_LEFT_SHIFT':
        return R.lls(a, b, t)
    if op == 'LOGICAL_RIGHT_SHIFT':
        return R.lrs(a, b, t)
    if op == 'BITWISE_AND':
        return np.bitwise_and(a, b)
    if op == 'BITWISE_OR':
        return np.bitwise_or(a, b)
    if op == 'BITWISE_XOR':
        return np.bitwise_xor(a, b)
    if op == 'MAXIMUM':
        return np.maximum(a, b)
    if op == 'MINIMUM':
        return np.minimum(a, b)
    if op == 'EQUAL':
        return np.equal(a, b)
    if op == 'GREATER':
        return np.greater(a, b)
    if op == 'GREATER_EQUAL':
        return np.greater_equal(a, b)
    raise KeyError(op)


INT_BIN_ROWS = {
    'ADD': ['i32'], 'SUB': ['i32'], 'INTDIV': ['i32'],
    'ARITHMETIC_RIGHT_SHIFT': ['i8', 'i16', 'i32'],
    'LOGICAL_LEFT_SHIFT': ['i8', 'i16', 'i32'], 'LOGICAL_RIGHT_SHIFT': ['i8', 'i16', 'i32'],
    'BITWISE_AND': ['i8', 'i16', 'i32'], 'BITWISE_OR': ['i8', 'i16', 'i32'], 'BITWISE_XOR': ['i8', 'i16', 'i32'],
    'MAXIMUM': ['i32'], 'MINIMUM': ['i32'],
    'EQUAL': ['i32'], 'GREATER': ['i32'], 'GREATER_EQUAL': ['i32'],
}


def _int_binary_cases(ctx, op):
    cases = []
    for t in INT_BIN_ROWS[op]:
        attrs = [({'round': False}, 'rnd0'), ({'round': True}, 'rnd1')] if op == 'ARITHMETIC_RIGHT_SHIFT' \
            else [({'nan_mode': 'PROPAGATE'}, '')] if op in ('MAXIMUM', 'MINIMUM') else [(None, '')]
        for attr, vtag in attrs:
            for tag, s1, s2 in BIN_SHAPES:
                if len(INT_BIN_ROWS[op]) > 1 and t != 'i32' and tag in ('r6', 'bc4'):
                    continue
                c0 = Case(op, t, out_shape(s1, s2), vtag, ctx=ctx)
                a, b = _int_operands(op, t, c0.rng, s1, s2)
                if s1 == s2 and len(s1) == 1:
                    pairs = _int_pairs(op, t)
                    a = put_edges(a, [p[0] for p in pairs])
                    b = put_edges(b, [p[1] for p in pairs])
                exp = _int_eval(op, t, a, b, attr or {})
                to = 'bool' if op in ('EQUAL', 'GREATER', 'GREATER_EQUAL') else t
                row = t if to == t else '%s_%s' % (t, to)
                c = _binary(ctx, op, row, s1, s2, a, b, t, to, exp, attr, vtag)
                c.quick = tag in QUICK_BIN
                cases.append(c)
    return cases


for _op in INT_BIN_ROWS:
    gen(_op)(lambda ctx, _op=_op: _int_binary_cases(ctx, _op))


@gen('LOGICAL_AND', 'LOGICAL_OR', 'LOGICAL_XOR')
def logical_binary(ctx):
    cases = []
    fn = {'LOGICAL_AND': np.logical_and, 'LOGICAL_OR': np.logical_or, 'LOGICAL_XOR': np.logical_xor}
    for op in fn:
        for tag, s1, s2 in BIN_SHAPES:
            c0 = Case(op, 'bool', out_shape(s1, s2), ctx=ctx)
            a = rand_bool(c0.rng, s1)
            b = rand_bool(c0.rng, s2)
            if s1 == s2 and len(s1) == 1:
                a = put_edges(a, [False, False, True, True])
                b = put_edges(b, [False, True, False, True])
            c = _binary(ctx, op, 'bool', s1, s2, a, b, 'bool', 'bool', fn[op](a, b))
            c.quick = tag in QUICK_BIN
            cases.append(c)
    return cases


@gen('MUL')
def mul_cases(ctx):
    cases = []
    for t in ('i8', 'i16'):
        for tag, s1, s2 in BIN_SHAPES[:4]:
            c0 = Case('MUL', '%s_i32' % t, out_shape(s1, s2), ctx=ctx)
            a = rand_int(c0.rng, t, s1)
            b = rand_int(c0.rng, t, s2)
            if s1 == s2 and len(s1) == 1:
                pairs = [(imin(t), imin(t)), (imax(t), imin(t)), (imax(t), imax(t)), (-1, imin(t)), (0, imin(t))]
                a = put_edges(a, [p[0] for p in pairs])
                b = put_edges(b, [p[1] for p in pairs])
            c = _binary(ctx, 'MUL', '%s_i32' % t, s1, s2, a, b, t, 'i32', R.int_mul(a, b, 0, t), shift=0)
            c.quick = tag in QUICK_BIN
            cases.append(c)
    # i32 with shift 0 (wrapping low 32 bits) and with rounding shifts
    for shift in (0, 1, 15, 31):
        for tag, s1, s2 in BIN_SHAPES:
            if shift not in (0, 1) and tag in ('r0', 'r6', 'bc4'):
                continue
            c0 = Case('MUL', 'i32', out_shape(s1, s2), 'shift%d' % shift, ctx=ctx)
            if shift == 0:
                a = rand_int(c0.rng, 'i32', s1)
                b = rand_int(c0.rng, 'i32', s2)
                pairs = [(65536, 65536), (3, 5), (imin('i32'), -1), (imax('i32'), imax('i32')), (-65536, 65536),
                         (imin('i32'), imin('i32')), (46341, 46341)]
            else:
                lim = 1 << ((31 + shift) // 2 - 1)
                a = rand_int(c0.rng, 'i32', s1, -lim, lim)
                b = rand_int(c0.rng, 'i32', s2, -lim, lim)
                h = 1 << (shift - 1)
                pairs = [(15, 1), (-15, 1), (21, 1), (h, 1), (-h, 1), (3 * h, 1), (-3 * h, 1), (h - 1, 1),
                         (-h - 1, 1), (0, 5)]
                if shift == 31:
                    pairs += [(imax('i32'), imax('i32')), (imin('i32'), imax('i32')), (imin('i32'), 2)]
            pairs = [p for p in pairs if imin('i32') <= min(p) and max(p) <= imax('i32')]
            if s1 == s2 and len(s1) == 1:
                a = put_edges(a, [p[0] for p in pairs])
                b = put_edges(b, [p[1] for p in pairs])
            c = _binary(ctx, 'MUL', 'i32', s1, s2, a, b, 'i32', 'i32', R.int_mul(a, b, shift, 'i32'),
                        variant='shift%d' % shift, shift=shift)
            c.quick = tag in QUICK_BIN and shift in (0, 1)
            cases.append(c)
    # FP rows
    for t in FP3:
        for tag, s1, s2 in BIN_SHAPES[:4]:
            c0 = Case('MUL', t, out_shape(s1, s2), ctx=ctx)
            a = rand_fp(c0.rng, t, s1, -8, 8)
            b = rand_fp(c0.rng, t, s2, -8, 8)
            c = _binary(ctx, 'MUL', t, s1, s2, a, b, t, t, a * b, compare=C.ulp(0.5), shift=0)
            c.quick = tag in QUICK_BIN
            cases.append(c)
        cases.append(_fp_special_binary(ctx, 'MUL', t))
    return cases


# ------------------------------------------------------------------------------------------------
# FP binary operators
# ------------------------------------------------------------------------------------------------

def _fp_bin_eval(op, a, b, attr):
    with np.errstate(all='ignore'):
        if op == 'ADD':
            return a + b
        if op == 'SUB':
            return a - b
        if op == 'MUL':
            return a * b
        if op == 'POW':
            return np.power(a, b)
        if op == 'MAXIMUM':
            return R.fp_max(a, b, attr['nan_mode'])
        if op == 'MINIMUM':
            return R.fp_min(a, b, attr['nan_mode'])
        if op == 'EQUAL':
            return np.equal(a, b)
        if op == 'GREATER':
            return np.greater(a, b)
        if op == 'GREATER_EQUAL':
            return np.greater_equal(a, b)
    raise KeyError(op)


def _fp_bin_compare(op, t):
    if op in ('ADD', 'SUB', 'MUL'):
        return C.ulp(0.5)
    if op == 'POW':
        return C.abs_error('POW', t)
    return None


def _fp_special_binary(ctx, op, t, attr=None, vtag='special'):
    sp = fp_specials(t)
    # subnormal inputs are left out: an implementation may flush them to zero
    sp = sp[(sp == 0) | np.isnan(sp) | (np.abs(sp) >= FMT[t].normal_min)]
    n = len(sp)
    a = np.repeat(sp, n)
    b = np.tile(sp, n)
    exp = _fp_bin_eval(op, a, b, attr or {})
    to = 'bool' if op in ('EQUAL', 'GREATER', 'GREATER_EQUAL') else t
    row = t if to == t else '%s_%s' % (t, to)
    return _binary(ctx, op, row, a.shape, b.shape, a, b, t, to, exp, attr,
                   (vtag + '_' + attr['nan_mode'].lower()) if attr and 'nan_mode' in attr else vtag,
                   compare=_fp_bin_compare(op, t), shift=0 if op == 'MUL' else None)


@gen('ADD', 'SUB', 'MAXIMUM', 'MINIMUM', 'POW', 'EQUAL', 'GREATER', 'GREATER_EQUAL')
def fp_binary(ctx):
    cases = []
    for op in ('ADD', 'SUB', 'MAXIMUM', 'MINIMUM', 'POW', 'EQUAL', 'GREATER', 'GREATER_EQUAL'):
        attrs = [{'nan_mode': 'PROPAGATE'}, {'nan_mode': 'IGNORE'}] if op in ('MAXIMUM', 'MINIMUM') else [None]
        for t in FP3:
            for attr in attrs:
                for tag, s1, s2 in BIN_SHAPES[:4]:
                    if attr and attr['nan_mode'] == 'IGNORE' and tag != 'eq':
                        continue
                    vt = attr['nan_mode'].lower() if attr else ''
                    c0 = Case(op, t, out_shape(s1, s2), vt, ctx=ctx)
                    if op == 'POW':
                        a = rand_fp(c0.rng, t, s1, 0.05, 6.0)
                        b = rand_fp(c0.rng, t, s2, -3.0, 3.0)
                        if s1 == s2 and len(s1) == 1:
                            a = put_edges(a, [0.0, 0.0, 1.0, 2.0, 4.0, 0.5])
                            b = put_edges(b, [1.0, 2.5, -3.0, 3.0, 0.5, -1.0])
                    else:
                        a = rand_fp(c0.rng, t, s1, -100, 100)
                        b = rand_fp(c0.rng, t, s2, -100, 100)
                        if op in ('EQUAL', 'GREATER', 'GREATER_EQUAL', 'MAXIMUM', 'MINIMUM') and s1 == s2:
                            b = np.where(c0.rng.random(s2) < 0.3, a, b)
                        if s1 == s2 and len(s1) == 1:
                            a = put_edges(a, [1.0, 2.0, -0.0, 0.0, 3.0])
                            b = put_edges(b, [1.0, -2.0, 0.0, -0.0, np.nan])
                    exp = _fp_bin_eval(op, a, b, attr or {})
                    to = 'bool' if op in ('EQUAL', 'GREATER', 'GREATER_EQUAL') else t
                    row = t if to == t else '%s_%s' % (t, to)
                    c = _binary(ctx, op, row, s1, s2, a, b, t, to, exp, attr, vt, compare=_fp_bin_compare(op, t))
                    if op == 'POW':
                        c.ofms[0]['bounds'] = _pow_bounds(a, b)
                    c.quick = tag in QUICK_BIN
                    cases.append(c)
                if op != 'POW':
                    cases.append(_fp_special_binary(ctx, op, t, attr))
    return cases


def _pow_bounds(a, b):
    with np.errstate(all='ignore'):
        a, b = np.broadcast_arrays(a, b)
        z = np.log(np.abs(a)) * b
        return 7.5 * np.abs(z)


# ------------------------------------------------------------------------------------------------
# Unary operators
# ------------------------------------------------------------------------------------------------

UN_SHAPES = [('r0', ()), ('v', (37,)), ('r3', (2, 3, 5)), ('r6', (2, 1, 3, 1, 2, 2))]


def _unary_case(ctx, op, row, shape, x, t_in, t_out, exp, compare=None, variant='', bounds=None, zps=None):
    c = Case(op, row, shape, variant, ctx=ctx)
    c.inp('input1', t_in, x, shape)
    ins = ['input1']
    if zps is not None:
        c.const('input1_zp', t_in, np.array([zps[0]]))
        c.const('output_zp', t_in, np.array([zps[1]]))
        ins += ['input1_zp', 'output_zp']
    c.out('output', t_out, shape, exp, compare, bounds)
    c.node(op, ins, ['output'])
    return c


@gen('ABS', 'BITWISE_NOT', 'CLZ', 'NEGATE', 'LOGICAL_NOT')
def int_unary(ctx):
    cases = []
    for tag, shp in UN_SHAPES:
        start = len(cases)
        c0 = Case('ABS', 'i32', shp, ctx=ctx)
        x = rand_int(c0.rng, 'i32', shp, imin('i32') + 1)
        x = put_edges(x, [imax('i32'), imin('i32') + 1, 0, -1, 1])
        cases.append(_unary_case(ctx, 'ABS', 'i32', shp, x, 'i32', 'i32', R.int_abs(x, 'i32')))
        for t in ('i8', 'i16', 'i32'):
            x = rand_int(c0.rng, t, shp)
            x = put_edges(x, [imax(t), imin(t), 0, -1])
            cases.append(_unary_case(ctx, 'BITWISE_NOT', t, shp, x, t, t, np.bitwise_not(x)))
        x = rand_int(c0.rng, 'i32', shp)
        if x.size > 1:
            x = np.where(c0.rng.random(shp) < 0.5, x >> c0.rng.integers(0, 31, shp), x)
        x = put_edges(x, [0, -1, 1, imax('i32'), imin('i32'), 2, 3, 0x00010000, 0x7fff])
        cases.append(_unary_case(ctx, 'CLZ', 'i32', shp, x, 'i32', 'i32', R.clz(x)))
        b = rand_bool(c0.rng, shp)
        cases.append(_unary_case(ctx, 'LOGICAL_NOT', 'bool', shp, b, 'bool', 'bool', np.logical_not(b)))
        # NEGATE: i8 with zero points, i16/i32 with zero zero points
        for t, zps in (('i8', (0, 0)), ('i8', (5, -3)), ('i8', (-128, 127)), ('i16', (0, 0)), ('i32', (0, 0))):
            x = rand_int(c0.rng, t, shp, imin(t) + (1 if t == 'i32' else 0))
            x = put_edges(x, [imin(t) + (1 if t == 'i32' else 0), 0, 5, imax(t), -1])
            exp = R.negate_int(x, zps[0], zps[1], t)
            cases.append(_unary_case(ctx, 'NEGATE', t, shp, x, t, t, exp,
                                     variant='zp%d_%d' % zps if zps != (0, 0) else '', zps=zps))
        for c in cases[start:]:
            c.quick = tag == 'v'
    return cases


def _fp_unary_ref(op, x):
    with np.errstate(all='ignore'):
        if op == 'ABS':
            return np.abs(x)
        if op == 'NEGATE':
            return -x
        if op == 'CEIL':
            return np.ceil(x)
        if op == 'FLOOR':
            return np.floor(x)
        if op == 'EXP':
            return np.exp(x)
        if op == 'LOG':
            return np.log(x)
        if op == 'SIN':
            return np.sin(x)
        if op == 'COS':
            return np.cos(x)
        if op == 'RECIPROCAL':
            return 1.0 / x
        if op == 'RSQRT':
            return 1.0 / np.sqrt(x)
        if op == 'ERF':
            return R.erf(x)
        if op == 'SIGMOID':
            return 1.0 / (1.0 + np.exp(-x))
        if op == 'TANH':
            return np.tanh(x)
    raise KeyError(op)


def _fp_unary_bounds(op, x):
    with np.errstate(all='ignore'):
        a = np.abs(x)
        if op == 'EXP':
            return 2.0 * a
        if op == 'LOG':
            return np.full(x.shape, 5.0)
        if op == 'SIN':
            return x.copy()
        if op == 'COS':
            return 1.0 + a
        if op == 'SIGMOID':
            return 2.0 * (1.0 + a)
        if op == 'TANH':
            return 8.0 * a
    return None


FP_UNARY_RANGE = {
    'ABS': (-100, 100), 'NEGATE': (-100, 100), 'CEIL': (-50, 50), 'FLOOR': (-50, 50), 'EXP': (-8, 8),
    'LOG': (0.001, 200), 'SIN': (-12, 12), 'COS': (-12, 12), 'RECIPROCAL': (0.05, 50), 'RSQRT': (0.001, 500),
    'ERF': (-4, 4), 'SIGMOID': (-12, 12), 'TANH': (-6, 6),
}
FP_UNARY_SPECIALS = {
    'ABS': [0.0, -0.0, np.inf, -np.inf, np.nan, 'max', '-max'],
    'NEGATE': [0.0, -0.0, np.inf, -np.inf, np.nan, 'max', '-max'],
    'CEIL': [0.5, -0.5, 1.5, -1.5, 2.0, -0.0, np.inf, -np.inf, np.nan, 'max'],
    'FLOOR': [0.5, -0.5, 1.5, -1.5, 2.0, -0.0, np.inf, -np.inf, np.nan, '-max'],
    'EXP': [0.0, -0.0, -np.inf, np.inf, np.nan, 1.0, -1.0],
    'LOG': [1.0, 0.0, -0.0, -1.0, np.inf, np.nan, 'max'],
    'SIN': [0.0, -0.0, np.nan, np.inf, 3.140625, 1.5703125],
    'COS': [0.0, -0.0, np.nan, np.inf, 3.140625, 1.5703125],
    'RECIPROCAL': [1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 2.0, -4.0],
    'RSQRT': [1.0, 4.0, 0.0, np.inf, -1.0, np.nan, 0.25],
    'ERF': [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0],
    'SIGMOID': [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0],
    'TANH': [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0],
}


def _fp_unary_compare(op, t):
    if op in C.ULP_OPS:
        return C.ulp(C.ULP_OPS[op])
    if op in ('ABS', 'NEGATE'):
        return C.exact()
    return C.abs_error(op, t)


@gen('ABS', 'NEGATE', 'CEIL', 'FLOOR', 'EXP', 'LOG', 'SIN', 'COS', 'RECIPROCAL', 'RSQRT', 'ERF', 'SIGMOID', 'TANH')
def fp_unary(ctx):
    cases = []
    for op, (lo, hi) in FP_UNARY_RANGE.items():
        for t in FP3:
            for tag, shp in UN_SHAPES:
                if t != 'fp32' and tag in ('r0', 'r6'):
                    continue
                c0 = Case(op, t, shp, ctx=ctx)
                x = rand_fp(c0.rng, t, shp, lo, hi)
                if op in ('RECIPROCAL',) and x.size > 1:
                    x = np.where(c0.rng.random(shp) < 0.5, -x, x)
                if op == 'LOG' and t == 'fp16':
                    x = np.maximum(x, 0.01)
                exp = _fp_unary_ref(op, x)
                c = _unary_case(ctx, op, t, shp, x, t, t, exp, _fp_unary_compare(op, t),
                                bounds=_fp_unary_bounds(op, x), zps=(0.0, 0.0) if op == 'NEGATE' else None)
                c.quick = tag == 'v'
                cases.append(c)
            sp = []
            for v in FP_UNARY_SPECIALS[op]:
                if v == 'max':
                    v = FMT[t].max
                elif v == '-max':
                    v = -FMT[t].max
                sp.append(v)
            x = round_fp(np.array(sp, np.float64), t)
            cases.append(_unary_case(ctx, op, t, x.shape, x, t, t, _fp_unary_ref(op, x), _fp_unary_compare(op, t),
                                     'special', bounds=_fp_unary_bounds(op, x),
                                     zps=(0.0, 0.0) if op == 'NEGATE' else None))
    return cases


# ------------------------------------------------------------------------------------------------
# SELECT, CLAMP, TABLE
# ------------------------------------------------------------------------------------------------

SEL_SHAPES = [('r0', (), (), ()), ('eq', (19,), (19,), (19,)), ('bc3', (2, 1, 4), (1, 3, 4), (2, 3, 1)),
              ('r6', (1, 2, 1, 2, 1, 2), (2, 1, 2, 1, 2, 1), (2, 2, 2, 2, 2, 2))]


@gen('SELECT')
def select_cases(ctx):
    cases = []
    for t in ('bool', 'i8', 'i16', 'i32', 'fp16', 'bf16', 'fp32'):
        for tag, s1, s2, s3 in SEL_SHAPES:
            if t not in ('i32', 'fp32') and tag in ('r0', 'r6'):
                continue
            so = R.bcast_shape(s1, s2, s3)
            c = Case('SELECT', t, so, ctx=ctx)
            cond = rand_bool(c.rng, s1)
            if t == 'bool':
                a, b = rand_bool(c.rng, s2), rand_bool(c.rng, s3)
            elif t.startswith('i'):
                a, b = rand_int(c.rng, t, s2), rand_int(c.rng, t, s3)
            else:
                a, b = rand_fp(c.rng, t, s2, -10, 10), rand_fp(c.rng, t, s3, -10, 10)
                if tag == 'eq':
                    a = put_edges(a, [np.nan, np.inf, -0.0])
                    b = put_edges(b, [1.0, -np.inf, 0.0])
            c.inp('input1', 'bool', cond, s1)
            c.inp('input2', t, a, s2)
            c.inp('input3', t, b, s3)
            c.out('output', t, so, np.where(cond, a, b))
            c.node('SELECT', ['input1', 'input2', 'input3'], ['output'])
            c.quick = tag == 'eq'
            cases.append(c)
    return cases


@gen('CLAMP')
def clamp_cases(ctx):
    from common import scalar_bytes
    cases = []
    specs = [('i8', -20, 35), ('i8', -128, 127), ('i8', 0, 0), ('i16', -1000, 30000), ('i16', -32768, -32768),
             ('fp32', -1.5, 2.25), ('fp16', -1.0, 6.0), ('bf16', 0.0, 6.0), ('fp32', -np.inf, np.inf)]
    for t, lo, hi in specs:
        fp = t.startswith('fp') or t == 'bf16'
        modes = ['PROPAGATE', 'IGNORE'] if fp else ['PROPAGATE']
        for nm in modes:
            for tag, shp in (('v', (41,)), ('r4', (2, 3, 2, 3)), ('r0', ()), ('r6', (1, 2, 2, 1, 3, 2))):
                if nm == 'IGNORE' and tag != 'v':
                    continue
                if tag in ('r0', 'r6') and t not in ('i8', 'fp32'):
                    continue
                vt = 'min%s_max%s' % (lo, hi) + ('_' + nm.lower() if fp else '')
                c = Case('CLAMP', t, shp, vt.replace('-', 'm').replace('.', 'p'), ctx=ctx)
                if fp:
                    x = rand_fp(c.rng, t, shp, -10, 10)
                    x = put_edges(x, [np.nan, np.inf, -np.inf, lo if np.isfinite(lo) else 0.0, -0.0, 0.0])
                else:
                    x = rand_int(c.rng, t, shp)
                    x = put_edges(x, [imin(t), imax(t), lo, hi, lo - 1 if lo > imin(t) else lo])
                exp = R.clamp(x, lo, hi, nm, fp)
                c.inp('input', t, x)
                c.out('output', t, shp, exp)
                attr = {'min_val': scalar_bytes(t, lo), 'max_val': scalar_bytes(t, hi), 'nan_mode': nm}
                c.node('CLAMP', ['input'], ['output'], attr)
                c.quick = tag == 'v' and nm == 'PROPAGATE'
                cases.append(c)
    return cases


@gen('TABLE')
def table_cases(ctx):
    cases = []
    for tag, shp in (('full', (256,)), ('r3', (2, 5, 7)), ('r0', ())):
        c = Case('TABLE', 'i8', shp, ctx=ctx)
        tab = rand_int(c.rng, 'i8', (256,))
        x = np.arange(-128, 128, dtype=np.int64) if tag == 'full' else rand_int(c.rng, 'i8', shp)
        c.inp('input1', 'i8', x, shp)
        c.const('table', 'i8', tab)
        c.out('output', 'i8', shp, R.table_i8(x, tab))
        c.node('TABLE', ['input1', 'table'], ['output'])
        c.quick = tag == 'full'
        cases.append(c)
    for tag, shp in (('lin', (64,)), ('rand', (3, 37)), ('edge', (20,))):
        c = Case('TABLE', 'i16_i32', shp, tag, ctx=ctx)
        if tag == 'lin':
            tab = (np.arange(513, dtype=np.int64) - 256) * 100
        else:
            tab = rand_int(c.rng, 'i16', (513,), -16384, 16383)
        x = rand_int(c.rng, 'i16', shp)
        x = put_edges(x, [-32768, -1, 0, 64, 32767, 127, 128, -129, -32641, 32640, 255, -256])
        c.inp('input1', 'i16', x, shp)
        c.const('table', 'i16', tab)
        c.out('output', 'i32', shp, R.table_i16(x, tab))
        c.node('TABLE', ['input1', 'table'], ['output'])
        c.quick = tag == 'lin'
        cases.append(c)
    return cases
