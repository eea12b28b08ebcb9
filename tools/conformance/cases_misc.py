"""Cases: CAST, RESCALE, data layout, GATHER/SCATTER, IDENTITY/CONST, control flow, variables."""
import math

import numpy as np

import cmpmodes as C
import refimpl as R
from casebase import Case, put_edges, rand_bool, rand_fp, rand_int
from common import FMT, INT_BITS, imax, imin, is_fp, is_int, round_fp, wrap
from registry import gen

ALL_T = ('bool', 'i8', 'i16', 'i32', 'fp16', 'bf16', 'fp32', 'fp8e4m3', 'fp8e5m2')


def rand_of(rng, t, shape):
    if t == 'bool':
        return rand_bool(rng, shape)
    if is_int(t):
        return rand_int(rng, t, shape)
    return rand_fp(rng, t, shape, -50, 50)


# ------------------------------------------------------------------------------------------------
# CAST
# ------------------------------------------------------------------------------------------------

CAST_ROWS = [
    ('bool', 'i8'), ('bool', 'i16'), ('bool', 'i32'), ('i8', 'bool'), ('i8', 'i16'), ('i8', 'i32'),
    ('i16', 'bool'), ('i16', 'i8'), ('i16', 'i32'), ('i32', 'bool'), ('i32', 'i8'), ('i32', 'i16'),
    ('i8', 'fp16'), ('i8', 'fp32'), ('i16', 'fp16'), ('i16', 'fp32'), ('i32', 'fp16'), ('i32', 'fp32'),
    ('fp16', 'i8'), ('fp16', 'i16'), ('fp16', 'i32'), ('fp16', 'fp32'), ('fp32', 'i8'), ('fp32', 'i16'),
    ('fp32', 'i32'), ('fp32', 'fp16'),
    ('i8', 'bf16'), ('i16', 'bf16'), ('i32', 'bf16'), ('bf16', 'i8'), ('bf16', 'i16'), ('bf16', 'i32'),
    ('bf16', 'fp32'), ('fp32', 'bf16'),
    ('bf16', 'fp8e4m3'), ('bf16', 'fp8e5m2'), ('fp8e4m3', 'fp16'), ('fp8e4m3', 'fp32'), ('fp16', 'fp8e4m3'),
    ('fp32', 'fp8e4m3'), ('fp8e4m3', 'bf16'), ('fp8e5m2', 'fp16'), ('fp8e5m2', 'fp32'), ('fp16', 'fp8e5m2'),
    ('fp32', 'fp8e5m2'), ('fp8e5m2', 'bf16'),
]


def _cast_input(rng, it, ot, shape):
    if it == 'bool':
        return rand_bool(rng, shape)
    if is_int(it):
        x = rand_int(rng, it, shape)
        edges = [imin(it), imax(it), 0, -1, 1, 127, 128, -128, -129, 255, 256, 300, 32767, 32768, -32769,
                 65535, 16777217, -16777217, 2049, 4095]
        return put_edges(x, [e for e in edges if imin(it) <= e <= imax(it)])
    f = FMT[it]
    if is_int(ot):
        lim = float(imax(ot)) * 1.5
        x = round_fp(rng.uniform(-min(lim, f.max), min(lim, f.max), shape), it)
        edges = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 127.4, 127.5, 127.6, -128.5, -128.6, 300.0, -1e9, 1e9,
                 np.inf, -np.inf, 32767.5, -32768.5, 2147483520.0, -2147483648.0, 3e9, -0.0, f.max, -f.max,
                 0.49999997, 1e-3]
        return put_edges(x, list(round_fp(np.array(edges), it)))
    g = FMT[ot] if ot in FMT else None
    hi = min(f.max, g.max * 4 if g else f.max)
    x = round_fp(np.exp(rng.uniform(-np.log(hi), np.log(hi), shape)) * rng.choice([-1.0, 1.0], shape), it)
    edges = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, f.max, -f.max, f.normal_min,
             1.0 + 2.0 ** -9, 1.0 + 3 * 2.0 ** -11, 65504.0, 65520.0, 448.0, 464.0, 57344.0, 61440.0,
             2.0 ** -20, 2.0 ** -15, 3 * 2.0 ** -17, 2.0 ** -8]
    if g is not None:
        edges += [g.max, g.normal_min, g.normal_min / 2, g.normal_min * 1.5]
    return put_edges(x, list(round_fp(np.array(edges), it)))


@gen('CAST')
def cast_cases(ctx):
    cases = []
    for it, ot in CAST_ROWS:
        for tag, shp in (('v', (61,)), ('r3', (2, 3, 4)), ('r0', ()), ('r6', (2, 1, 2, 3, 1, 2))):
            if tag == 'r3' and (it.startswith('fp8') or ot.startswith('fp8')):
                continue
            if tag in ('r0', 'r6') and (it, ot) not in (('i32', 'i8'), ('fp32', 'i32'), ('i8', 'fp32'),
                                                          ('fp32', 'bf16')):
                continue
            c = Case('CAST', '%s_%s' % (it, ot), shp, ctx=ctx)
            x = _cast_input(c.rng, it, ot, shp)
            cmp_ = None
            if ot == 'bool':
                exp = x != 0
            elif it == 'bool':
                exp = x.astype(np.int64)
            elif is_int(it) and is_int(ot):
                exp = wrap(x, INT_BITS[ot])
            elif is_int(ot):
                exp = R.cast_fp_to_int(x, ot)
            else:
                exp = np.asarray(x, np.float64)
                cmp_ = C.cast_fp()
            c.inp('input', it, x)
            c.out('output', ot, shp, exp, cmp_)
            c.node('CAST', ['input'], ['output'])
            c.quick = tag == 'v'
            cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# RESCALE
# ------------------------------------------------------------------------------------------------

RESCALE_ROWS = [('i8', 'i8'), ('i8', 'i16'), ('i8', 'i32'), ('i16', 'i8'), ('i16', 'i16'), ('i16', 'i32'),
                ('i32', 'i8'), ('i32', 'i16'), ('i32', 'i32'), ('i48', 'i8'), ('i48', 'i16'), ('i48', 'i32')]


def _eff_bits(t, unsigned):
    return 16 if t == 'i16' and unsigned else (8 if t == 'i8' and unsigned else INT_BITS[t])


def _choose_scale(rng, target, min_shift, scale32, nc):
    mults, shifts = [], []
    for _ in range(nc):
        s_t = target * rng.uniform(0.3, 1.6)
        base = 30 if scale32 else 14
        shift = int(max(min_shift, base + math.ceil(-math.log2(s_t))))
        shift = min(max(shift, 2), 62)
        mmax = (1 << 31) - 1 if scale32 else 32767
        m = int(min(mmax, max(0, round(s_t * 2.0 ** shift))))
        mults.append(m)
        shifts.append(shift)
    return np.array(mults, np.int64), np.array(shifts, np.int64)


def _min_shift(v):
    """Smallest shift with -2^(shift-1) <= v < 2^(shift-1) for all v."""
    v = np.asarray(v, np.int64)
    if v.size == 0:
        return 2
    hi = max(int(v.max()), -int(v.min()) - 1, 0)
    return max(2, hi.bit_length() + 1)


def _rescale_case(ctx, it, ot, shape, variant, scale32=True, rounding='SINGLE_ROUND', per_channel=False,
                  iu=False, ou=False, izp=0, ozp=0, x=None, mult=None, shift=None, target=None, inexact=False):
    row = '%s%s_%s%s' % ('u' if iu else '', it, 'u' if ou else '', ot)
    c = Case('RESCALE', row, shape, variant, ctx=ctx)
    rng = c.rng
    nc = shape[-1] if per_channel else 1
    if x is None:
        if iu:
            bits = INT_BITS[it]
            x = wrap(rng.integers(0, (1 << bits) - 1, size=shape, endpoint=True), bits)
        elif it == 'i48':
            x = rng.integers(-(1 << 40), 1 << 40, size=shape, dtype=np.int64)
            x = put_edges(x, [(1 << 47) - 1, -(1 << 47), 0, -1])
        else:
            x = rand_int(rng, it, shape)
            x = put_edges(x, [imin(it), imax(it), 0, -1, 1])
    x = np.asarray(x, np.int64).reshape(shape)
    if mult is None:
        if target is None:
            target = 2.0 ** (_eff_bits(ot, ou) - _eff_bits(it, iu))
        for attempt in range(8):
            ext = (x & ((1 << INT_BITS[it]) - 1)) if iu else x
            izx = (izp & ((1 << INT_BITS[it]) - 1)) if iu else izp
            mult, shift = _choose_scale(rng, target, _min_shift(ext - izx) if scale32 else 2, scale32, nc)
            try:
                R.rescale(x, mult, shift, izp, ozp, it, ot, scale32, rounding, per_channel, iu, ou)
                break
            except R.Unpredictable:
                x = x // 4
    exp_ref = None
    if inexact:
        exp_ref = R.rescale_inexact_ref(x, mult, shift, izp, it, per_channel, iu)
        exp = exp_ref
        oz_ext = (ozp & ((1 << INT_BITS[ot]) - 1)) if ou else ozp
        cmp_ = {'mode': 'rescale_inexact', 'ozp': int(oz_ext), 'output_unsigned': ou}
    else:
        exp = R.rescale(x, mult, shift, izp, ozp, it, ot, scale32, rounding, per_channel, iu, ou)
        cmp_ = None
    c.inp('input', it, x, shape)
    c.const('multiplier', 'i32' if scale32 else 'i16', np.asarray(mult, np.int64))
    c.const('shift', 'i8', np.asarray(shift, np.int64))
    c.const('input_zp', it, np.array([izp]))
    c.const('output_zp', ot, np.array([ozp]))
    c.out('output', ot, shape, exp, cmp_)
    attr = {'scale32': scale32, 'rounding_mode': rounding, 'per_channel': per_channel, 'input_unsigned': iu,
            'output_unsigned': ou}
    c.node('RESCALE', ['input', 'multiplier', 'shift', 'input_zp', 'output_zp'], ['output'], attr)
    return c


@gen('RESCALE')
def rescale_cases(ctx):
    cases = []
    for it, ot in RESCALE_ROWS:
        i48 = it == 'i48'
        zi = 0
        if it == 'i8':
            zi = -3
        zo = 5 if ot == 'i8' else 0
        if not i48:
            c = _rescale_case(ctx, it, ot, (3, 7), 'single', izp=zi, ozp=zo)
            c.quick = True
            cases.append(c)
            cases.append(_rescale_case(ctx, it, ot, (2, 3, 5), 'double', rounding='DOUBLE_ROUND'))
            cases.append(_rescale_case(ctx, it, ot, (2, 2, 6), 'perchannel', per_channel=True, izp=zi, ozp=zo))
            # identity-like scale with saturation
            cases.append(_rescale_case(ctx, it, ot, (33,), 'unit', mult=np.array([1 << 30]),
                                       shift=np.array([30 if it != 'i32' else 32]), izp=zi, ozp=zo))
        cases.append(_rescale_case(ctx, it, ot, (4, 9), 'scale16', scale32=False, izp=zi, ozp=zo,
                                   target=2.0 ** (INT_BITS[ot] - (41 if i48 else INT_BITS[it]))))
        cases.append(_rescale_case(ctx, it, ot, (2, 2, 2, 3), 'scale16_perchannel', scale32=False, per_channel=True,
                                   target=2.0 ** (INT_BITS[ot] - (41 if i48 else INT_BITS[it]))))
        if i48:
            cases[-2].quick = True
    # rank 0 and rank 6
    cases.append(_rescale_case(ctx, 'i32', 'i8', (), 'single', izp=0, ozp=-7))
    cases.append(_rescale_case(ctx, 'i8', 'i32', (1, 2, 1, 3, 2, 2), 'perchannel', per_channel=True, izp=11))
    # spot check of TOSA.md B.4 (SINGLE vs DOUBLE rounding)
    spot = np.array([-11, 5, 11, 22, -128, 127, 0, -1], np.int64)
    for rm in ('SINGLE_ROUND', 'DOUBLE_ROUND'):
        cases.append(_rescale_case(ctx, 'i8', 'i8', (8,), 'spot_' + rm.lower(), rounding=rm, izp=-3, ozp=5, x=spot,
                                   mult=np.array([1518500250]), shift=np.array([33])))
    # rounding ties: scale 1/2 (and 1/4) with odd values, both signs
    ties = np.array([1, -1, 3, -3, 5, -5, 2, -2, 7, -7, 127, -128, 6, -6], np.int64)
    cases.append(_rescale_case(ctx, 'i8', 'i8', (14,), 'ties_s31', x=ties, mult=np.array([1 << 30]),
                               shift=np.array([31])))
    cases.append(_rescale_case(ctx, 'i8', 'i8', (14,), 'ties_double_s32', rounding='DOUBLE_ROUND', x=ties,
                               mult=np.array([1 << 30]), shift=np.array([32])))
    cases.append(_rescale_case(ctx, 'i16', 'i16', (14,), 'ties_scale16', scale32=False, x=ties,
                               mult=np.array([1 << 14]), shift=np.array([15])))
    tiesw = np.array([(1 << 31) - 1, -(1 << 31), 3 << 20, -(3 << 20), (1 << 21) + (1 << 20), -(1 << 20), 1, -1],
                     np.int64)
    cases.append(_rescale_case(ctx, 'i32', 'i32', (8,), 'ties_double_s51', rounding='DOUBLE_ROUND', x=tiesw,
                               mult=np.array([1 << 30]), shift=np.array([51])))
    # unsigned inputs / outputs (uint8 / uint16 models); u16 zero point 32768 is stored as -32768
    cases.append(_rescale_case(ctx, 'i8', 'i8', (5, 7), 'u8in_zp128', iu=True, izp=-128, ozp=-3))
    cases.append(_rescale_case(ctx, 'i8', 'i16', (5, 7), 'u8in', iu=True, izp=37))
    cases.append(_rescale_case(ctx, 'i8', 'i8', (5, 7), 'u8out_zp128', ou=True, izp=4, ozp=-128))
    cases.append(_rescale_case(ctx, 'i16', 'i8', (5, 7), 'u8out', ou=True, ozp=100))
    cases.append(_rescale_case(ctx, 'i16', 'i16', (5, 7), 'u16in_zp32768', iu=True, izp=-32768))
    cases.append(_rescale_case(ctx, 'i16', 'i8', (5, 7), 'u16in_zp0', iu=True, izp=0))
    cases.append(_rescale_case(ctx, 'i16', 'i16', (5, 7), 'u16out_zp32768', ou=True, ozp=-32768))
    cases.append(_rescale_case(ctx, 'i8', 'i16', (5, 7), 'u16out_zp0', ou=True, izp=-1, ozp=0))
    cases.append(_rescale_case(ctx, 'i16', 'i16', (2, 3, 4), 'u16in_perchannel_scale16', scale32=False, iu=True,
                               izp=-32768, per_channel=True))
    cases.append(_rescale_case(ctx, 'i8', 'i8', (2, 5), 'u8in_u8out_id', iu=True, izp=0, x=np.arange(-5, 5),
                               mult=np.array([1 << 30]), shift=np.array([30])))
    # EXT-INEXACTROUND: any result within 0.5 + a few fp32 rounding errors
    cases.append(_rescale_case(ctx, 'i32', 'i8', (4, 8), 'inexact', rounding='INEXACT_ROUND', ozp=3, inexact=True))
    cases.append(_rescale_case(ctx, 'i16', 'i16', (3, 5), 'inexact_perchannel', rounding='INEXACT_ROUND',
                               per_channel=True, inexact=True))
    for c in cases:
        if 'inexact' in c.variant:
            c.exts = ['tosa-ext-inexactround']
        elif 'double' in c.variant:
            c.exts = ['tosa-ext-doubleround']
    return cases


# ------------------------------------------------------------------------------------------------
# Data layout
# ------------------------------------------------------------------------------------------------

def _types_for(op):
    ts = list(ALL_T)
    return ts


def _few(t):
    """Shapes/variants are reduced for the less central types."""
    return t not in ('i8', 'i32', 'fp32')


@gen('CONCAT')
def concat_cases(ctx):
    cases = []
    specs = [((5,), [(3,), (5,), (1,)], 0), ((2, 3, 4), [(2, 1, 4), (2, 3, 4)], 1),
             ((2, 3, 2), [(2, 3, 1), (2, 3, 2), (2, 3, 3)], 2), ((1, 2, 1, 2, 1, 3), [(1, 2, 1, 2, 1, 3), (2, 2, 1, 2, 1, 3)], 0),
             ((4, 2), [(4, 2)], 0)]
    for t in ALL_T:
        for si, (_, shapes, axis) in enumerate(specs):
            if _few(t) and si in (3, 4):
                continue
            oshape = list(shapes[0])
            oshape[axis] = sum(s[axis] for s in shapes)
            c = Case('CONCAT', t, tuple(oshape), 'axis%d_n%d' % (axis, len(shapes)), ctx=ctx)
            parts = []
            names = []
            for i, s in enumerate(shapes):
                v = rand_of(c.rng, t, s)
                parts.append(v)
                names.append(c.inp('input%d' % i, t, v))
            exp = np.concatenate(parts, axis=axis)
            c.out('output', t, tuple(oshape), exp.astype(np.float64) if is_fp(t) else exp)
            c.node('CONCAT', names, ['output'], {'axis': axis})
            c.quick = si == 1
            cases.append(c)
    return cases


@gen('PAD')
def pad_cases(ctx):
    cases = []
    specs = [((7,), [2, 3]), ((3, 4), [0, 1, 2, 0]), ((2, 3, 1, 2), [1, 0, 0, 2, 3, 1, 0, 0]),
             ((1, 2, 1, 2, 1, 2), [0, 1, 1, 0, 0, 0, 2, 0, 0, 1, 1, 1]), ((2, 2), [0, 0, 0, 0])]
    for t in ALL_T:
        for si, (shp, padding) in enumerate(specs):
            if _few(t) and si in (3, 4):
                continue
            c = Case('PAD', t, shp, 'p' + ''.join(str(p) for p in padding), ctx=ctx)
            x = rand_of(c.rng, t, shp)
            if t == 'bool':
                pc = True
            elif is_int(t):
                pc = imin(t) if si % 2 else 7
            else:
                pc = round_fp(-1.5 if si != 2 else np.inf, t)
                if t == 'fp8e4m3' and si == 2:
                    pc = 448.0
            pw = [(padding[2 * i], padding[2 * i + 1]) for i in range(len(shp))]
            exp = np.pad(x, pw, mode='constant', constant_values=pc)
            c.inp('input1', t, x)
            c.cshape('padding', padding)
            c.const('pad_const', t, np.array([pc]))
            c.out('output', t, exp.shape, exp.astype(np.float64) if is_fp(t) else exp)
            c.node('PAD', ['input1', 'padding', 'pad_const'], ['output'])
            c.quick = si == 1
            cases.append(c)
    return cases


@gen('RESHAPE')
def reshape_cases(ctx):
    cases = []
    specs = [((2, 3, 4), (4, 6)), ((2, 3, 4), (24,)), ((6, 4), (1, 2, 12, 1)), ((), (1,)), ((1, 1), ()),
             ((1, 2, 1, 3, 2, 2), (24,)), ((24,), (2, 1, 2, 3, 1, 2))]
    for t in ALL_T:
        for si, (s1, s2) in enumerate(specs):
            if _few(t) and si >= 3:
                continue
            c = Case('RESHAPE', t, s1, 'to_' + ('x'.join(str(d) for d in s2) or 'r0'), ctx=ctx)
            x = rand_of(c.rng, t, s1)
            exp = np.reshape(x, s2)
            c.inp('input1', t, x)
            c.cshape('shape', list(s2))
            c.out('output', t, s2, exp.astype(np.float64) if is_fp(t) else exp)
            c.node('RESHAPE', ['input1', 'shape'], ['output'])
            c.quick = si == 0
            cases.append(c)
    return cases


@gen('REVERSE')
def reverse_cases(ctx):
    cases = []
    specs = [((9,), 0), ((3, 4, 5), 1), ((2, 3, 4, 5), 3), ((2, 1, 2, 3, 1, 2), 5), ((3, 4), 0)]
    for t in ALL_T:
        for si, (shp, axis) in enumerate(specs):
            if _few(t) and si >= 3:
                continue
            c = Case('REVERSE', t, shp, 'axis%d' % axis, ctx=ctx)
            x = rand_of(c.rng, t, shp)
            exp = np.flip(x, axis=axis)
            c.inp('input1', t, x)
            c.out('output', t, shp, exp.astype(np.float64) if is_fp(t) else exp)
            c.node('REVERSE', ['input1'], ['output'], {'axis': axis})
            c.quick = si == 1
            cases.append(c)
    return cases


@gen('SLICE')
def slice_cases(ctx):
    cases = []
    specs = [((10,), [3], [4]), ((4, 5, 6), [1, 0, 2], [2, 5, 3]), ((3, 3), [2, 2], [1, 1]),
             ((2, 3, 2, 3, 2, 3), [1, 1, 0, 1, 0, 2], [1, 2, 2, 1, 2, 1]), ((5, 4), [0, 0], [5, 4])]
    for t in ALL_T:
        for si, (shp, start, size) in enumerate(specs):
            if _few(t) and si >= 3:
                continue
            c = Case('SLICE', t, shp, 's%s_z%s' % (''.join(map(str, start)), ''.join(map(str, size))), ctx=ctx)
            x = rand_of(c.rng, t, shp)
            exp = x[tuple(slice(a, a + b) for a, b in zip(start, size))]
            c.inp('input1', t, x)
            c.cshape('start', start)
            c.cshape('size', size)
            c.out('output', t, tuple(size), exp.astype(np.float64) if is_fp(t) else exp)
            c.node('SLICE', ['input1', 'start', 'size'], ['output'])
            c.quick = si == 1
            cases.append(c)
    return cases


@gen('TILE')
def tile_cases(ctx):
    cases = []
    specs = [((4,), [3]), ((2, 3), [2, 1]), ((1, 2, 3, 1), [2, 1, 2, 3]), ((2, 1, 1, 2, 1, 1), [1, 2, 1, 1, 3, 2]),
             ((3, 2), [1, 1])]
    for t in ALL_T:
        for si, (shp, mult) in enumerate(specs):
            if _few(t) and si >= 3:
                continue
            c = Case('TILE', t, shp, 'm' + ''.join(map(str, mult)), ctx=ctx)
            x = rand_of(c.rng, t, shp)
            exp = np.tile(x, mult)
            c.inp('input1', t, x)
            c.cshape('multiples', mult)
            c.out('output', t, exp.shape, exp.astype(np.float64) if is_fp(t) else exp)
            c.node('TILE', ['input1', 'multiples'], ['output'])
            c.quick = si == 1
            cases.append(c)
    return cases


@gen('TRANSPOSE')
def transpose_cases(ctx):
    cases = []
    specs = [((2, 3), [1, 0]), ((2, 3, 4), [2, 0, 1]), ((2, 3, 4, 5), [0, 3, 1, 2]),
             ((2, 1, 3, 2, 1, 2), [5, 3, 0, 4, 2, 1]), ((7,), [0]), ((3, 4, 2), [0, 1, 2])]
    for t in ALL_T:
        for si, (shp, perms) in enumerate(specs):
            if _few(t) and si >= 3:
                continue
            c = Case('TRANSPOSE', t, shp, 'p' + ''.join(map(str, perms)), ctx=ctx)
            x = rand_of(c.rng, t, shp)
            exp = np.transpose(x, perms)
            c.inp('input1', t, x)
            c.out('output', t, exp.shape, exp.astype(np.float64) if is_fp(t) else exp)
            c.node('TRANSPOSE', ['input1'], ['output'], {'perms': perms})
            c.quick = si == 1
            cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# GATHER / SCATTER
# ------------------------------------------------------------------------------------------------

GS_T = ('i8', 'i16', 'i32', 'fp16', 'bf16', 'fp32', 'fp8e4m3', 'fp8e5m2')


@gen('GATHER')
def gather_cases(ctx):
    cases = []
    for t in GS_T:
        for si, (N, K, Cc, W) in enumerate([(2, 5, 3, 4), (1, 7, 1, 9), (3, 1, 4, 2)]):
            if _few(t) and si == 2:
                continue
            c = Case('GATHER', 'i32_' + t, (N, K, Cc), 'w%d' % W, ctx=ctx)
            v = rand_of(c.rng, t, (N, K, Cc))
            idx = c.rng.integers(0, K, size=(N, W))
            idx = put_edges(idx, [0, K - 1, K - 1])
            exp = np.stack([v[n][idx[n]] for n in range(N)])
            c.inp('values', t, v)
            c.inp('indices', 'i32', idx)
            c.out('output', t, (N, W, Cc), exp.astype(np.float64) if is_fp(t) else exp)
            c.node('GATHER', ['values', 'indices'], ['output'])
            c.quick = si == 0
            cases.append(c)
    return cases


@gen('SCATTER')
def scatter_cases(ctx):
    cases = []
    for t in GS_T:
        for si, (N, K, Cc, W) in enumerate([(2, 6, 3, 4), (1, 5, 2, 5), (3, 4, 1, 1)]):
            if _few(t) and si == 2:
                continue
            c = Case('SCATTER', 'i32_' + t, (N, K, Cc), 'w%d' % W, ctx=ctx)
            vin = rand_of(c.rng, t, (N, K, Cc))
            inp = rand_of(c.rng, t, (N, W, Cc))
            idx = np.stack([c.rng.permutation(K)[:W] for _ in range(N)]).astype(np.int64)
            exp = np.array(vin, copy=True)
            for n in range(N):
                for w in range(W):
                    exp[n, idx[n, w]] = inp[n, w]
            c.inp('values_in', t, vin)
            c.inp('indices', 'i32', idx)
            c.inp('input', t, inp)
            c.out('values_out', t, (N, K, Cc), exp.astype(np.float64) if is_fp(t) else exp)
            c.node('SCATTER', ['values_in', 'indices', 'input'], ['values_out'])
            c.quick = si == 0
            cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# IDENTITY, CONST, CONST_SHAPE
# ------------------------------------------------------------------------------------------------

@gen('IDENTITY', 'CONST')
def identity_const_cases(ctx):
    cases = []
    for t in ALL_T + ('i48', 'i4'):
        for tag, shp in (('r2', (3, 5)), ('r0', ())):
            if tag == 'r0' and _few(t):
                continue
            c = Case('IDENTITY', t, shp, ctx=ctx)
            if t == 'i4':
                x = rand_int(c.rng, 'i4', shp, -7, 7)
            elif t == 'i48':
                x = put_edges(c.rng.integers(-(1 << 47), (1 << 47) - 1, size=shp, dtype=np.int64),
                              [(1 << 47) - 1, -(1 << 47)])
            else:
                x = rand_of(c.rng, t, shp)
            c.inp('input1', t, x)
            c.out('output', t, shp, np.asarray(x, np.float64) if is_fp(t) else x)
            c.node('IDENTITY', ['input1'], ['output'])
            c.quick = tag == 'r2'
            cases.append(c)
        # CONST feeding IDENTITY, and a CONST that is itself the graph output
        for tag in ('ident', 'direct'):
            if tag == 'direct' and _few(t):
                continue
            shp = (2, 3)
            c = Case('CONST', t, shp, tag, ctx=ctx)
            if t == 'i4':
                v = rand_int(c.rng, 'i4', shp, -7, 7)
            elif t == 'i48':
                v = c.rng.integers(-(1 << 47), (1 << 47) - 1, size=shp, dtype=np.int64)
            else:
                v = rand_of(c.rng, t, shp)
                if is_fp(t):
                    v = put_edges(v, list(round_fp(np.array([np.inf, -0.0, FMT[t].max]), t)))
            c.const('c', t, v)
            ev = np.asarray(v, np.float64) if is_fp(t) else v
            if tag == 'ident':
                c.out('output', t, shp, ev)
                c.node('IDENTITY', ['c'], ['output'])
            else:
                c.out('c', t, shp, ev, declare=False)
            c.quick = tag == 'ident'
            cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# Control flow (EXT-CONTROLFLOW)
# ------------------------------------------------------------------------------------------------

def _sub_block(g, rname, bname, tensors, inputs, outputs):
    b = g.add_region(rname, bname)
    for n, t, s in tensors:
        b.tensor(n, t, s)
    b.inputs = list(inputs)
    b.outputs = list(outputs)
    return b


@gen('COND_IF')
def cond_if_cases(ctx):
    cases = []
    for cond in (True, False):
        for conv in ('regions', 'blocks'):
            if conv == 'blocks' and not cond:
                continue
            c = Case('COND_IF', 'i32', (2, 3), '%s_%s' % ('then' if cond else 'else', conv), ctx=ctx)
            a = rand_int(c.rng, 'i32', (2, 3), -1000, 1000)
            b = rand_int(c.rng, 'i32', (2, 3), -1000, 1000)
            c.inp('cond', 'bool', np.array([cond]))
            c.inp('a', 'i32', a)
            c.inp('b', 'i32', b)
            c.out('out', 'i32', (2, 3), a + b if cond else a - b)
            c.node('COND_IF', ['cond', 'a', 'b'], ['out'], {'then_graph': 'then_g', 'else_graph': 'else_g'})
            if conv == 'regions':
                tb = _sub_block(c.g, 'then_g', 'then_bb', [('ta', 'i32', (2, 3)), ('tb', 'i32', (2, 3)),
                                                           ('tr', 'i32', (2, 3))], ['ta', 'tb'], ['tr'])
                eb = _sub_block(c.g, 'else_g', 'else_bb', [('ea', 'i32', (2, 3)), ('eb', 'i32', (2, 3)),
                                                           ('er', 'i32', (2, 3))], ['ea', 'eb'], ['er'])
            else:
                from common import Block
                tb = Block('then_g')
                eb = Block('else_g')
                for blk, p in ((tb, 't'), (eb, 'e')):
                    for n in ('a', 'b', 'r'):
                        blk.tensor(p + n, 'i32', (2, 3))
                    blk.inputs = [p + 'a', p + 'b']
                    blk.outputs = [p + 'r']
                c.g.regions[0][1].extend([tb, eb])
            tb.op('ADD', ['ta', 'tb'], ['tr'])
            eb.op('SUB', ['ea', 'eb'], ['er'])
            c.exts = ['tosa-ext-controlflow']
            c.quick = conv == 'regions'
            cases.append(c)
    # condition computed in the graph (fp32 comparison), branches with different op chains, rank-0 cond
    for flip in (False, True):
        c = Case('COND_IF', 'fp32', (4,), 'computed_cond' + ('_b' if flip else '_a'), ctx=ctx)
        x = rand_fp(c.rng, 'fp32', (4,), -4, 4)
        y = rand_fp(c.rng, 'fp32', ())
        z = round_fp(rand_fp(c.rng, 'fp32', ()) + (10.0 if flip else -10.0), 'fp32')
        c.inp('x', 'fp32', x)
        c.inp('y', 'fp32', y)
        c.inp('z', 'fp32', z)
        c.tens('p', 'bool', ())
        c.node('GREATER', ['y', 'z'], ['p'])
        cond = bool(y > z)
        exp = np.abs(x) if cond else -x
        c.out('out', 'fp32', (4,), exp)
        c.node('COND_IF', ['p', 'x'], ['out'], {'then_graph': 'abs_g', 'else_graph': 'neg_g'})
        tb = _sub_block(c.g, 'abs_g', 'abs_bb', [('ti', 'fp32', (4,)), ('to', 'fp32', (4,))], ['ti'], ['to'])
        tb.op('ABS', ['ti'], ['to'])
        eb = _sub_block(c.g, 'neg_g', 'neg_bb', [('ei', 'fp32', (4,)), ('eo', 'fp32', (4,))], ['ei'], ['eo'])
        eb.const('ezp1', 'fp32', np.array([0.0]))
        eb.const('ezp2', 'fp32', np.array([0.0]))
        eb.op('NEGATE', ['ei', 'ezp1', 'ezp2'], ['eo'])
        c.exts = ['tosa-ext-controlflow']
        cases.append(c)
    return cases


def _while_graph(c, n_iter, start=0):
    """i (i32[1]) counts from `start` to n; acc (i32[3]) += x each iteration."""
    x = rand_int(c.rng, 'i32', (3,), -100, 100)
    acc0 = rand_int(c.rng, 'i32', (3,), -100, 100)
    c.inp('i', 'i32', np.array(start))
    c.inp('n', 'i32', np.array(n_iter))
    c.inp('acc', 'i32', acc0)
    c.inp('x', 'i32', x)
    iters = max(0, n_iter - start)
    c.out('i_out', 'i32', (), np.array(max(start, n_iter)))
    c.tens('n_out', 'i32', ())
    c.out('acc_out', 'i32', (3,), acc0 + iters * x)
    c.tens('x_out', 'i32', (3,))
    c.node('WHILE_LOOP', ['i', 'n', 'acc', 'x'], ['i_out', 'n_out', 'acc_out', 'x_out'],
           {'cond_graph': 'cond_g', 'body_graph': 'body_g'})
    cb = _sub_block(c.g, 'cond_g', 'cond_bb', [('ci', 'i32', ()), ('cn', 'i32', ()), ('cacc', 'i32', (3,)),
                                               ('cx', 'i32', (3,)), ('cres', 'bool', ())],
                    ['ci', 'cn', 'cacc', 'cx'], ['cres'])
    cb.op('GREATER', ['cn', 'ci'], ['cres'])
    bb = _sub_block(c.g, 'body_g', 'body_bb', [('bi', 'i32', ()), ('bn', 'i32', ()), ('bacc', 'i32', (3,)),
                                               ('bx', 'i32', (3,)), ('bi2', 'i32', ()), ('bacc2', 'i32', (3,)),
                                               ('bn2', 'i32', ()), ('bx2', 'i32', (3,))],
                    ['bi', 'bn', 'bacc', 'bx'], ['bi2', 'bn2', 'bacc2', 'bx2'])
    bb.const('one', 'i32', np.array(1))
    bb.op('ADD', ['bi', 'one'], ['bi2'])
    bb.op('ADD', ['bacc', 'bx'], ['bacc2'])
    bb.op('IDENTITY', ['bn'], ['bn2'])
    bb.op('IDENTITY', ['bx'], ['bx2'])


@gen('WHILE_LOOP')
def while_cases(ctx):
    cases = []
    for n_iter, start, tag in ((5, 0, 'n5'), (0, 0, 'n0'), (1, 0, 'n1'), (3, 7, 'start_past_end')):
        c = Case('WHILE_LOOP', 'i32', (3,), tag, ctx=ctx)
        _while_graph(c, n_iter, start)
        c.exts = ['tosa-ext-controlflow']
        c.quick = tag == 'n5'
        cases.append(c)
    # COND_IF nested in a WHILE_LOOP body: add x on even iterations, subtract on odd
    c = Case('WHILE_LOOP', 'i32', (2,), 'nested_cond_if', ctx=ctx)
    x = rand_int(c.rng, 'i32', (2,), -50, 50)
    c.inp('i', 'i32', np.array(0))
    c.inp('acc', 'i32', np.zeros(2, np.int64))
    c.inp('x', 'i32', x)
    n = 5
    acc = np.zeros(2, np.int64)
    for k in range(n):
        acc = acc + x if k % 2 == 0 else acc - x
    c.out('i_out', 'i32', (), np.array(n))
    c.out('acc_out', 'i32', (2,), acc)
    c.tens('x_out', 'i32', (2,))
    c.node('WHILE_LOOP', ['i', 'acc', 'x'], ['i_out', 'acc_out', 'x_out'], {'cond_graph': 'cg', 'body_graph': 'bg'})
    cb = _sub_block(c.g, 'cg', 'cg_bb', [('ci', 'i32', ()), ('cacc', 'i32', (2,)), ('cx', 'i32', (2,)),
                                         ('cres', 'bool', ())], ['ci', 'cacc', 'cx'], ['cres'])
    cb.const('climit', 'i32', np.array(n))
    cb.op('GREATER', ['climit', 'ci'], ['cres'])
    bb = _sub_block(c.g, 'bg', 'bg_bb', [('bi', 'i32', ()), ('bacc', 'i32', (2,)), ('bx', 'i32', (2,)),
                                         ('bi2', 'i32', ()), ('bacc2', 'i32', (2,)), ('bx2', 'i32', (2,)),
                                         ('bpar', 'i32', ()), ('beven', 'bool', ())],
                    ['bi', 'bacc', 'bx'], ['bi2', 'bacc2', 'bx2'])
    bb.const('bone', 'i32', np.array(1))
    bb.op('ADD', ['bi', 'bone'], ['bi2'])
    bb.op('BITWISE_AND', ['bi', 'bone'], ['bpar'])
    bb.const('bzero', 'i32', np.array(0))
    bb.op('EQUAL', ['bpar', 'bzero'], ['beven'])
    bb.op('COND_IF', ['beven', 'bacc', 'bx'], ['bacc2'], {'then_graph': 'add_g', 'else_graph': 'sub_g'})
    bb.op('IDENTITY', ['bx'], ['bx2'])
    ab = _sub_block(c.g, 'add_g', 'add_bb', [('aa', 'i32', (2,)), ('ab', 'i32', (2,)), ('ar', 'i32', (2,))],
                    ['aa', 'ab'], ['ar'])
    ab.op('ADD', ['aa', 'ab'], ['ar'])
    sb = _sub_block(c.g, 'sub_g', 'sub_bb', [('sa', 'i32', (2,)), ('sb', 'i32', (2,)), ('sr', 'i32', (2,))],
                    ['sa', 'sb'], ['sr'])
    sb.op('SUB', ['sa', 'sb'], ['sr'])
    c.exts = ['tosa-ext-controlflow']
    cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# Variables (EXT-VARIABLE)
# ------------------------------------------------------------------------------------------------

@gen('VARIABLE', 'VARIABLE_READ', 'VARIABLE_WRITE')
def variable_cases(ctx):
    cases = []
    for t in ('i8', 'fp16', 'fp32'):
        shp = (2, 3)
        # read the initial value, write input (i8) or initial + input (fp), read it back
        c = Case('VARIABLE', t, shp, 'read_write_read', ctx=ctx)
        init = rand_of(c.rng, t, shp) if t == 'i8' else rand_fp(c.rng, t, shp, -4, 4)
        x = rand_of(c.rng, t, shp) if t == 'i8' else rand_fp(c.rng, t, shp, -4, 4)
        c.b.tensor('state', t, shp, data=init, variable=True, variable_name='state')
        c.inp('x', t, x)
        c.node('VARIABLE', [], ['state'])
        c.out('r0', t, shp, np.asarray(init, np.float64) if is_fp(t) else init)
        c.node('VARIABLE_READ', ['state'], ['r0'])
        if t == 'i8':
            newv = x
            c.node('VARIABLE_WRITE', ['x'], ['state'])
        else:
            c.tens('s', t, shp)
            c.node('ADD', ['r0', 'x'], ['s'])
            newv = init + x  # float64 reference; the 0.5 ulp rule allows the rounding to t
            c.node('VARIABLE_WRITE', ['s'], ['state'])
        c.out('r1', t, shp, np.asarray(newv, np.float64) if is_fp(t) else newv,
              C.ulp(0.5) if is_fp(t) else None)
        c.node('VARIABLE_READ', ['state'], ['r1'])
        c.exts = ['tosa-ext-variable']
        c.quick = t == 'i8'
        cases.append(c)
        # variable without initial data: write first, then read
        c = Case('VARIABLE_WRITE', t, shp, 'write_then_read', ctx=ctx)
        x = rand_of(c.rng, t, shp) if t == 'i8' else rand_fp(c.rng, t, shp, -4, 4)
        c.b.tensor('v', t, shp, variable=True, variable_name='model.v')
        c.inp('x', t, x)
        c.node('VARIABLE', [], ['v'])
        c.node('VARIABLE_WRITE', ['x'], ['v'])
        c.out('y', t, shp, np.asarray(x, np.float64) if is_fp(t) else x)
        c.node('VARIABLE_READ', ['v'], ['y'])
        c.exts = ['tosa-ext-variable']
        cases.append(c)
    # two variables read into one computation (fp32)
    c = Case('VARIABLE_READ', 'fp32', (4,), 'two_vars', ctx=ctx)
    a = rand_fp(c.rng, 'fp32', (4,), -4, 4)
    b = rand_fp(c.rng, 'fp32', (4,), -4, 4)
    c.b.tensor('va', 'fp32', (4,), data=a, variable=True, variable_name='va')
    c.b.tensor('vb', 'fp32', (4,), data=b, variable=True, variable_name='vb')
    c.node('VARIABLE', [], ['va'])
    c.node('VARIABLE', [], ['vb'])
    c.tens('ra', 'fp32', (4,))
    c.tens('rb', 'fp32', (4,))
    c.node('VARIABLE_READ', ['va'], ['ra'])
    c.node('VARIABLE_READ', ['vb'], ['rb'])
    c.out('y', 'fp32', (4,), a * b, C.ulp(0.5))
    c.const('shift', 'i8', np.array([0]))
    c.node('MUL', ['ra', 'rb', 'shift'], ['y'])
    c.exts = ['tosa-ext-variable']
    cases.append(c)
    return cases
