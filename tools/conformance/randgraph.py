#!/usr/bin/python3
"""Random multi-operator TOSA graphs for the conformance suite.

usage: randgraph.py OUTDIR --count N [--seed S] [--profile int|fp|both] [--flatc PATH]

Writes N case directories in gen.py's layout (desc.json, graph.json, <case>.tosa, input_*.npy,
expected_*.npy, bounds_*.npy); run.py and diffref.py run them unchanged. Each graph is a random DAG
of 3..25 operators (CONST / CONST_SHAPE not counted) built value by value: every operator is
evaluated with refimpl.py (the numpy spec formulas) on the exact values of its operands as soon as it
is added, so the expected outputs never depend on tosac's C code. The builder prefers shapes of graph
that stress an implementation's memory planning: values with several consumers (fan-out), values
consumed again many operators later, the same value used twice by one operator, graph outputs that
are also consumed inside the graph, constants shared by several operators, chains of in-place
elementwise operators, RESHAPE / IDENTITY aliases and CONCATs of several branches.

Profiles
- int: i8/i16/i32/bool graphs (CONV2D / DEPTHWISE_CONV2D / MATMUL i8->i32 followed by RESCALE,
  RESCALE with zero points, per-channel, SINGLE/DOUBLE rounding and unsigned flags, integer
  elementwise, shifts, TABLE, CLAMP, pools, layout ops, GATHER, SELECT with comparisons, CAST,
  reductions, ARGMAX). Expected values are exact and compared exactly. An operator whose operands
  would make refimpl raise a REQUIRE violation is not added (the builder tries another), except in
  the few graphs deliberately made UNPREDICTABLE: their last operator violates a REQUIRE that the
  reference model reports (GATHER index >= K, ARITHMETIC_RIGHT_SHIFT amount out of range, RESCALE
  value outside the shift range), detected by refimpl; those cases have expected_result
  "unpredictable" (exit 1 or 2 accepted, nothing compared).
- fp: fp32 graphs (some fp16 and bf16 ones) of ADD/SUB/MUL, MAXIMUM/MINIMUM, CONV2D,
  DEPTHWISE_CONV2D, MATMUL, AVG/MAX_POOL2D, SIGMOID/TANH/EXP, CLAMP, ABS/NEGATE, layout ops,
  REDUCE_SUM/MAX/MIN, GATHER, SELECT (conditions from comparisons of exactly known values), CAST
  fp32<->fp16/bf16 round trips.

FP compare rule ("composite bound"): besides the float64 value of the graph evaluated exactly, the
builder propagates a per-element absolute error bound E through every operator (first-order
worst case, see _fp_* below): E_out = (propagation of the operands' E through the operator, using
|x|+E where the operator is not linear) + (the operator's own allowed error: for ADD/SUB/MUL/CAST
2^-frac*(|ref|+E), for dot products / pools / reductions (KS+1)*2^-frac*bound with bound the
operator on |operands|+E, for SIGMOID/TANH/EXP their TOSA.md D.5 ABS_ERROR bound evaluated on
|x|+E) + normal_min (an implementation may flush subnormal intermediates). Exact operators (layout,
MAXIMUM/MINIMUM, CLAMP, max pool, REDUCE_MAX/MIN, SELECT, GATHER) pass E through. Every FP output
is then checked with |imp - ref| <= max(E, 2^-frac*normal_min) per element, written as an
abs_error compare entry with bound_as_magnitude (bounds file = E*2^frac, base_bound 1). E is a
guaranteed bound for any implementation whose every operator meets the D.5 single-operator rules
(with at most twice their ulp allowances), so a failure means some operator was out of bounds.

Deterministic for a given --seed: graph i draws from a generator seeded with (seed, i, profile).
"""
import argparse
import json
import math
import os
import shutil
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import refimpl as R  # noqa: E402
from casebase import Case, write_case  # noqa: E402
from common import FMT, INT_BITS, imax, imin, is_fp, round_fp, scalar_bytes, wrap  # noqa: E402
from gen import run_flatc  # noqa: E402

RANDGRAPH_TAG = 'tosac-randgraph 1'
MAX_ELEMS = 3000
MAX_OPS = 25
FB_ACC = {'i32': 'INT32', 'fp16': 'FP16', 'fp32': 'FP32'}


class Reject(Exception):
    """The chosen operator does not fit the current values; the builder tries another one."""


class Val:
    __slots__ = ('name', 't', 'shape', 'v', 'e', 'uses', 'is_input')

    def __init__(self, name, t, shape, v, e=None, is_input=False):
        self.name, self.t, self.shape, self.v, self.e = name, t, tuple(int(s) for s in shape), v, e
        self.uses = 0
        self.is_input = is_input

    @property
    def size(self):
        return int(np.prod(self.shape)) if self.shape else 1

    def exact(self):
        return self.e is None or not np.any(self.e)


def _fit_pad(i, k, s, d, p_lo, p_hi):
    while (i - 1 + p_lo + p_hi - (k - 1) * d) % s:
        p_hi += 1
    return p_hi


class Builder:
    def __init__(self, case, rng, profile, ft):
        self.c, self.rng, self.profile, self.ft = case, rng, profile, ft
        self.pool = []
        self.nops = 0
        self.k = 0
        self.unpredictable = False
        self.ops_used = []
        self.shared_consts = {}
        self.building = True

    # --- random helpers -------------------------------------------------------------------------
    def ri(self, lo, hi):
        return int(self.rng.integers(lo, hi, endpoint=True))

    def p(self, prob):
        return bool(self.rng.random() < prob)

    def choice(self, seq):
        return seq[int(self.rng.integers(len(seq)))]

    def nm(self, prefix):
        self.k += 1
        return '%s%d' % (prefix, self.k)

    # --- graph construction ---------------------------------------------------------------------
    def input(self, t, shape, lo=None, hi=None):
        shape = tuple(shape)
        if t == 'bool':
            v = self.rng.integers(0, 2, size=shape).astype(bool)
        elif is_fp(t):
            lo = -1.0 if lo is None else lo
            hi = 1.0 if hi is None else hi
            v = round_fp(self.rng.uniform(lo, hi, size=shape), t)
            v = np.where(np.abs(v) < 2.0 ** -6, 0.0, v)  # no subnormals, no tiny values
        else:
            lo = imin(t) if lo is None else lo
            hi = imax(t) if hi is None else hi
            v = self.rng.integers(lo, hi, size=shape, endpoint=True, dtype=np.int64)
        n = self.nm('in')
        self.c.inp(n, t, v, shape)
        val = Val(n, t, shape, v, np.zeros(shape) if is_fp(t) else None, is_input=True)
        self.pool.append(val)
        return val

    def const(self, t, values, shape=None):
        values = np.asarray(values)
        n = self.nm('c')
        self.c.const(n, t, values, shape)
        return n

    def zp_const(self, t, zp):
        """Zero-point constants (shared by several operators when possible)."""
        key = ('zp', t, int(zp) if not is_fp(t) else float(zp))
        if key in self.shared_consts and self.p(0.7):
            return self.shared_consts[key]
        n = self.const(t, np.array([zp]))
        self.shared_consts[key] = n
        return n

    def cshape(self, values):
        key = ('shape',) + tuple(int(x) for x in values)
        if key in self.shared_consts and self.p(0.5):
            return self.shared_consts[key]
        n = self.nm('s')
        self.c.cshape(n, [int(x) for x in values])
        self.shared_consts[key] = n
        return n

    def emit(self, op, ins, t, shape, v, attr=None, e=None):
        shape = tuple(int(s) for s in shape)
        size = int(np.prod(shape)) if shape else 1
        if size > MAX_ELEMS or size == 0:
            raise Reject('size')
        v = np.asarray(v)
        if tuple(v.shape) != shape:
            raise AssertionError('%s: value shape %s != %s' % (op, v.shape, shape))
        if is_fp(t):
            if e is None:
                e = np.zeros(shape)
            e = np.asarray(np.broadcast_to(e, shape), np.float64).copy()
            lim = 1e4 if t in ('fp16', 'bf16') else 1e6
            if not np.all(np.isfinite(v)) or np.max(np.abs(v) + e, initial=0.0) > lim:
                raise Reject('fp range')
        elif t != 'bool':
            if v.size and (v.min() < imin(t) or v.max() > imax(t)):
                raise AssertionError('%s: values out of %s range' % (op, t))
        if self.building:
            unused = [v for v in self.pool if v.is_input and v.uses == 0 and not any(v is x for x in ins)]
            if self.nops + 1 + len(unused) > MAX_OPS:
                raise Reject('operator budget')
        n = self.nm('t')
        self.c.tens(n, t, shape)
        names = []
        for x in ins:
            if isinstance(x, Val):
                x.uses += 1
                names.append(x.name)
            else:
                names.append(x)
        self.c.node(op, names, [n], attr)
        self.nops += 1
        self.ops_used.append(op)
        val = Val(n, t, shape, v, e if is_fp(t) else None)
        self.pool.append(val)
        return val

    # --- picking operands -----------------------------------------------------------------------
    def pick(self, pred=None, prefer_sink=0.35):
        cands = [v for v in self.pool if pred is None or pred(v)]
        if not cands:
            raise Reject('no operand')
        r = self.rng.random()
        sinks = [v for v in cands if v.uses == 0]
        if r < prefer_sink and sinks:
            return self.choice(sinks)
        if r < 0.6:
            return cands[-1 - int(self.rng.integers(min(3, len(cands))))]
        return self.choice(cands)

    def operand_like(self, a, t=None, new_lo=None, new_hi=None, allow_same=True, allow_bcast=True):
        """A second operand of type t (default a.t) whose shape broadcasts with a.shape."""
        t = t or a.t
        r = self.rng.random()
        if allow_same and r < 0.12 and t == a.t:
            return a
        if r < 0.55:
            cands = [v for v in self.pool if v.t == t and v.shape == a.shape and v is not a]
            if cands:
                return self.choice(cands)
        shape = list(a.shape)
        if allow_bcast and shape and self.p(0.5):
            for i in range(len(shape)):
                if self.p(0.5):
                    shape[i] = 1
        if t == 'bool':
            if self.p(0.3):
                vals = self.rng.integers(0, 2, size=tuple(shape)).astype(bool)
                return Val(self.const('bool', vals, tuple(shape)), t, tuple(shape), vals)
            return self.input(t, shape)
        if self.p(0.3) and not is_fp(t):
            # a constant operand
            lo = imin(t) if new_lo is None else new_lo
            hi = imax(t) if new_hi is None else new_hi
            vals = self.rng.integers(lo, hi, size=tuple(shape), endpoint=True, dtype=np.int64)
            n = self.const(t, vals, tuple(shape))
            return Val(n, t, tuple(shape), vals)
        if self.p(0.3) and is_fp(t):
            vals = round_fp(self.rng.uniform(-1, 1, size=tuple(shape)), t)
            n = self.const(t, vals, tuple(shape))
            return Val(n, t, tuple(shape), vals, np.zeros(tuple(shape)))
        v = self.input(t, shape, new_lo, new_hi)
        return v

    def nhwc(self, t, pred=None):
        """A rank-4 value of type t (RESHAPEd or a new input when none fits)."""
        cands = [v for v in self.pool if v.t == t and len(v.shape) == 4 and (pred is None or pred(v))]
        if cands and self.p(0.85):
            return self.pick(lambda v: v in cands)
        others = [v for v in self.pool if v.t == t and 8 <= v.size <= 1024]
        if others and self.p(0.5):
            a = self.choice(others)
            shp = factor_nhwc(self.rng, a.size)
            if shp is not None and (pred is None or pred(Val('', t, shp, None))):
                return self.reshape(a, shp)
        shp = (self.ri(1, 2), self.ri(3, 8), self.ri(3, 8), self.ri(1, 6))
        v = self.input(t, shp, *( (-1.0, 1.0) if is_fp(t) else (None, None)))
        if pred is not None and not pred(v):
            raise Reject('nhwc')
        return v

    def reshape(self, a, shp):
        shp = tuple(int(s) for s in shp)
        e = None if a.e is None else a.e.reshape(shp)
        return self.emit('RESHAPE', [a, self.cshape(shp)], a.t, shp, a.v.reshape(shp), e=e)

    def int_val(self, types, pred=None):
        cands = [v for v in self.pool if v.t in types and (pred is None or pred(v))]
        if cands:
            return self.pick(lambda v: v in cands)
        raise Reject('no value of %s' % (types,))


def factor_nhwc(rng, n):
    """A rank-4 shape [N,H,W,C] with N*H*W*C == n and H, W >= 2 when possible."""
    opts = []
    for N in (1, 2):
        if n % N:
            continue
        m = n // N
        for C in range(1, 9):
            if m % C:
                continue
            hw = m // C
            for H in range(2, 17):
                if hw % H == 0 and 2 <= hw // H <= 16:
                    opts.append((N, H, hw // H, C))
    if not opts:
        return None
    return opts[int(rng.integers(len(opts)))]


# ================================================================================================
# Integer profile
# ================================================================================================

def choose_rescale(b, x, it, ot, per_channel, scale32, izp, iu):
    """Multiplier/shift arrays mapping the value range of x onto ot (sometimes saturating)."""
    bits = INT_BITS[it]
    v = (x & ((1 << bits) - 1)) if iu else x
    iz = (izp & ((1 << bits) - 1)) if iu else izp
    d = v - iz
    nc = x.shape[-1] if per_channel else 1
    dd = d.reshape(-1, nc) if per_channel else d.reshape(-1, 1)
    ohi = {'i8': 127, 'i16': 32767, 'i32': 1 << b.ri(12, 24)}[ot]
    mults, shifts = [], []
    for ch in range(nc):
        col = dd[:, ch]
        amax = max(1, int(np.max(np.abs(col))) if col.size else 1)
        s = ohi / amax * b.rng.uniform(0.25, 1.6)
        if b.p(0.1):
            s = 1.0
        base = 30 if scale32 else 14
        shift = base + int(math.ceil(-math.log2(s)))
        if scale32:
            hi = max(int(col.max(initial=0)), -int(col.min(initial=0)) - 1, 0)
            shift = max(shift, hi.bit_length() + 1)
        shift = min(max(shift, 2), 62)
        mmax = (1 << 31) - 1 if scale32 else 32767
        m = int(min(mmax, max(0, round(s * 2.0 ** shift))))
        mults.append(m)
        shifts.append(shift)
    return np.array(mults, np.int64), np.array(shifts, np.int64)


def t_rescale(b, x=None, ot=None, force_to=None):
    if x is None:
        x = b.int_val(('i8', 'i16', 'i32'), lambda v: len(v.shape) >= 1)
    it = x.t
    if ot is None:
        ot = force_to or b.choice(['i8', 'i8', 'i16', 'i32'])
    scale32 = b.p(0.8)
    rounding = 'DOUBLE_ROUND' if scale32 and b.p(0.4) else 'SINGLE_ROUND'
    per_channel = len(x.shape) >= 1 and b.p(0.5)
    iu = ou = False
    r = b.rng.random()
    if it in ('i8', 'i16') and ot != 'i32' and r < 0.1:
        iu = True
    elif ot in ('i8', 'i16') and it != 'i32' and r < 0.2:
        ou = True
    izp = 0
    if it == 'i8':
        izp = b.ri(-128, 127) if b.p(0.6) else 0
    elif it == 'i16' and iu:
        izp = b.choice([0, -32768])
    ozp = 0
    if ot == 'i8':
        ozp = b.ri(-128, 127) if b.p(0.6) else 0
    elif ot == 'i16' and ou:
        ozp = b.choice([0, -32768])
    mult, shift = choose_rescale(b, x.v, it, ot, per_channel, scale32, izp, iu)
    try:
        y = R.rescale(x.v, mult, shift, izp, ozp, it, ot, scale32, rounding, per_channel, iu, ou)
    except R.Unpredictable:
        raise Reject('rescale require')
    ins = [x, b.const('i32' if scale32 else 'i16', mult), b.const('i8', shift), b.zp_const(it, izp),
           b.zp_const(ot, ozp)]
    attr = {'scale32': scale32, 'rounding_mode': rounding, 'per_channel': per_channel, 'input_unsigned': iu,
            'output_unsigned': ou}
    return b.emit('RESCALE', ins, ot, x.shape, y, attr)


def conv_geometry(b, IH, IW, KH, KW):
    sy, sx = (b.ri(1, 2), b.ri(1, 2)) if b.p(0.4) else (1, 1)
    dy, dx = (b.ri(1, 2), b.ri(1, 2)) if b.p(0.2) else (1, 1)
    pt, pl = b.ri(0, KH - 1), b.ri(0, KW - 1)
    pb = _fit_pad(IH, KH, sy, dy, pt, b.ri(0, KH - 1))
    pr = _fit_pad(IW, KW, sx, dx, pl, b.ri(0, KW - 1))
    OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
    OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
    if OH < 1 or OW < 1:
        raise Reject('conv geometry')
    return (pt, pb, pl, pr), (sy, sx), (dy, dx), OH, OW


def t_conv(b, depthwise=False):
    x = b.nhwc('i8', lambda v: v.shape[1] <= 16 and v.shape[2] <= 16 and v.shape[3] <= 16)
    N, IH, IW, IC = x.shape
    KH, KW = b.ri(1, min(3, IH + 1)), b.ri(1, min(3, IW + 1))
    pad, stride, dil, OH, OW = conv_geometry(b, IH, IW, KH, KW)
    izp = b.ri(-128, 127) if b.p(0.4) else 0
    wzp = b.ri(-20, 20) if b.p(0.3) else 0
    if depthwise:
        M = b.ri(1, 2)
        OC = IC * M
        w = b.rng.integers(-128, 127, size=(KH, KW, IC, M), endpoint=True)
    else:
        OC = b.ri(1, 6)
        w = b.rng.integers(-128, 127, size=(OC, KH, KW, IC), endpoint=True)
    bc = 1 if b.p(0.2) else OC
    bias = b.rng.integers(-5000, 5000, size=(bc,), endpoint=True)
    fn = R.depthwise_conv2d if depthwise else R.conv2d
    y = fn(x.v, w, bias, izp, wzp, pad, stride, dil, False)
    if np.max(np.abs(y), initial=0) >= 1 << 31:
        raise Reject('acc')
    ins = [x, b.const('i8', w), b.const('i32', bias), b.zp_const('i8', izp), b.zp_const('i8', wzp)]
    attr = {'pad': list(pad), 'stride': list(stride), 'dilation': list(dil), 'local_bound': False,
            'acc_type': 'INT32'}
    acc = b.emit('DEPTHWISE_CONV2D' if depthwise else 'CONV2D', ins, 'i32', (N, OH, OW, OC), y, attr)
    if b.p(0.85):
        return t_rescale(b, acc, 'i8')
    return acc


def t_matmul(b):
    a = b.int_val(('i8',), lambda v: 4 <= v.size <= 512)
    if len(a.shape) == 3 and b.p(0.6):
        A = a
    else:
        opts = [(N, H, a.size // (N * H)) for N in (1, 2, 3) for H in range(1, 17)
                if a.size % (N * H) == 0 and 1 <= a.size // (N * H) <= 32]
        if not opts:
            raise Reject('matmul shape')
        A = b.reshape(a, b.choice(opts))
    N, H, C = A.shape
    r = b.rng.random()
    B = None
    if r < 0.4:
        cands = [v for v in b.pool if v.t == 'i8' and v.size % (N * C) == 0 and 1 <= v.size // (N * C) <= 16]
        if cands:
            s = b.choice(cands)
            Bshape = (N, C, s.size // (N * C))
            B = s if s.shape == Bshape else b.reshape(s, Bshape)
    if B is None:
        W = b.ri(1, 8)
        if r < 0.7:
            vals = b.rng.integers(-128, 127, size=(N, C, W), endpoint=True)
            B = Val(b.const('i8', vals), 'i8', (N, C, W), vals)
        else:
            B = b.input('i8', (N, C, W))
    azp = b.ri(-128, 127) if b.p(0.4) else 0
    bzp = b.ri(-128, 127) if b.p(0.3) else 0
    y = R.matmul(A.v, B.v, azp, bzp, False)
    out = b.emit('MATMUL', [A, B, b.zp_const('i8', azp), b.zp_const('i8', bzp)], 'i32', y.shape, y)
    if b.p(0.8):
        return t_rescale(b, out, 'i8')
    return out


def i32_val(b):
    cands = [v for v in b.pool if v.t == 'i32']
    if cands and b.p(0.85):
        return b.pick(lambda v: v.t == 'i32')
    x = b.int_val(('i8', 'i16'))
    if b.p(0.5):
        return b.emit('CAST', [x], 'i32', x.shape, x.v.copy())
    return t_rescale(b, x, 'i32')


def t_i32_binary(b):
    op = b.choice(['ADD', 'ADD', 'SUB', 'SUB', 'MUL', 'MAXIMUM', 'MINIMUM', 'INTDIV', 'BITWISE_AND',
                   'BITWISE_OR', 'BITWISE_XOR'])
    a = i32_val(b)
    if op == 'INTDIV':
        bb = b.operand_like(a, new_lo=-300, new_hi=300, allow_same=False)
        if np.any(bb.v == 0):
            bb.v = bb.v  # refimpl rejects below
    else:
        bb = b.operand_like(a, new_lo=-(1 << 20), new_hi=1 << 20)
    if b.p(0.5) and bb is not a:
        a, bb = bb, a
    try:
        shape = R.bcast_shape(a.shape, bb.shape)
    except ValueError:
        raise Reject('bcast')
    attr = None
    ins = [a, bb]
    try:
        if op == 'ADD':
            y = R.int_add(a.v, bb.v, 'i32')
        elif op == 'SUB':
            y = R.int_sub(a.v, bb.v, 'i32')
        elif op == 'MUL':
            sh = b.choice([0, 0, b.ri(1, 31)])
            y = R.int_mul(a.v, bb.v, sh, 'i32')
            ins.append(b.zp_const('i8', sh))
        elif op == 'INTDIV':
            y = R.intdiv(a.v, bb.v)
        elif op == 'MAXIMUM':
            y = np.maximum(a.v, bb.v)
            attr = {'nan_mode': 'PROPAGATE'}
        elif op == 'MINIMUM':
            y = np.minimum(a.v, bb.v)
            attr = {'nan_mode': 'PROPAGATE'}
        elif op == 'BITWISE_AND':
            y = np.bitwise_and(a.v, bb.v)
        elif op == 'BITWISE_OR':
            y = np.bitwise_or(a.v, bb.v)
        else:
            y = np.bitwise_xor(a.v, bb.v)
    except R.Unpredictable:
        raise Reject('require')
    y = np.broadcast_to(y, shape).astype(np.int64)
    return b.emit(op, ins, 'i32', shape, y, attr)


def t_mul_narrow(b):
    a = b.int_val(('i8', 'i16'))
    bb = b.operand_like(a)
    try:
        shape = R.bcast_shape(a.shape, bb.shape)
    except ValueError:
        raise Reject('bcast')
    y = np.broadcast_to(R.int_mul(a.v, bb.v, 0, a.t), shape).astype(np.int64)
    return b.emit('MUL', [a, bb, b.zp_const('i8', 0)], 'i32', shape, y)


def t_shift(b):
    op = b.choice(['ARITHMETIC_RIGHT_SHIFT', 'ARITHMETIC_RIGHT_SHIFT', 'LOGICAL_LEFT_SHIFT', 'LOGICAL_RIGHT_SHIFT'])
    a = b.int_val(('i8', 'i16', 'i32'))
    bits = INT_BITS[a.t]
    sh = b.operand_like(a, new_lo=0, new_hi=bits - 1, allow_same=False)
    if sh.v.size and (sh.v.min() < 0 or sh.v.max() > bits - 1):
        raise Reject('shift range')
    try:
        shape = R.bcast_shape(a.shape, sh.shape)
    except ValueError:
        raise Reject('bcast')
    attr = None
    if op == 'ARITHMETIC_RIGHT_SHIFT':
        rnd = b.p(0.5)
        y = R.ars(a.v, sh.v, a.t, rnd)
        attr = {'round': rnd}
    elif op == 'LOGICAL_LEFT_SHIFT':
        y = R.lls(a.v, sh.v, a.t)
    else:
        y = R.lrs(a.v, sh.v, a.t)
    return b.emit(op, [a, sh], a.t, shape, np.broadcast_to(y, shape).astype(np.int64), attr)


def t_unary_int(b):
    op = b.choice(['ABS', 'NEGATE', 'NEGATE', 'CLZ', 'BITWISE_NOT'])
    if op in ('ABS', 'CLZ'):
        a = i32_val(b)
    else:
        a = b.int_val(('i8', 'i16', 'i32'))
    if op == 'ABS':
        try:
            y = R.int_abs(a.v, 'i32')
        except R.Unpredictable:
            raise Reject('abs')
        return b.emit('ABS', [a], 'i32', a.shape, y)
    if op == 'CLZ':
        return b.emit('CLZ', [a], 'i32', a.shape, R.clz(a.v))
    if op == 'BITWISE_NOT':
        return b.emit('BITWISE_NOT', [a], a.t, a.shape, np.bitwise_not(a.v))
    izp, ozp = (b.ri(-128, 127), b.ri(-128, 127)) if a.t == 'i8' and b.p(0.5) else (0, 0)
    try:
        y = R.negate_int(a.v, izp, ozp, a.t)
    except R.Unpredictable:
        raise Reject('negate')
    return b.emit('NEGATE', [a, b.zp_const(a.t, izp), b.zp_const(a.t, ozp)], a.t, a.shape, y)


def t_clamp(b):
    a = b.int_val(('i8', 'i16'))
    lo = b.ri(imin(a.t), imax(a.t) // 2)
    hi = b.ri(lo, imax(a.t))
    y = R.clamp(a.v, lo, hi, 'PROPAGATE', False)
    attr = {'min_val': scalar_bytes(a.t, lo), 'max_val': scalar_bytes(a.t, hi), 'nan_mode': 'PROPAGATE'}
    return b.emit('CLAMP', [a], a.t, a.shape, y, attr)


def t_table(b):
    a = b.int_val(('i8',))
    key = ('table',)
    if key in b.shared_consts and b.p(0.5):
        tn, tab = b.shared_consts[key]
    else:
        if b.p(0.5):
            tab = np.clip(np.round(127 * np.tanh(np.arange(-128, 128) / b.rng.uniform(10, 60))), -128, 127)
            tab = tab.astype(np.int64)
        else:
            tab = b.rng.integers(-128, 127, size=256, endpoint=True)
        tn = b.const('i8', tab)
        b.shared_consts[key] = (tn, tab)
    return b.emit('TABLE', [a, tn], 'i8', a.shape, R.table_i8(a.v, tab))


def pool_geometry(b, IH, IW):
    ky, kx = b.ri(1, min(3, IH)), b.ri(1, min(3, IW))
    sy, sx = b.ri(1, 2), b.ri(1, 2)
    pt, pl = b.ri(0, ky - 1), b.ri(0, kx - 1)
    pb, pr = b.ri(0, ky - 1), b.ri(0, kx - 1)
    while (IH + pt + pb - ky) % sy:
        pb += 1
    while (IW + pl + pr - kx) % sx:
        pr += 1
    if pb >= ky or pr >= kx:
        raise Reject('pool pad')
    OH = (IH + pt + pb - ky) // sy + 1
    OW = (IW + pl + pr - kx) // sx + 1
    if OH < 1 or OW < 1:
        raise Reject('pool size')
    return (ky, kx), (sy, sx), (pt, pb, pl, pr), OH, OW


def t_pool(b):
    avg = b.p(0.5)
    t = 'i8' if avg or b.p(0.7) else 'i16'
    x = b.nhwc(t) if t == 'i8' else b.int_val(('i16',), lambda v: len(v.shape) == 4)
    N, IH, IW, C = x.shape
    kernel, stride, pad, OH, OW = pool_geometry(b, IH, IW)
    if avg:
        izp = b.ri(-128, 127) if b.p(0.4) else 0
        ozp = b.ri(-128, 127) if b.p(0.4) else 0
        y = R.avg_pool2d_int(x.v, izp, ozp, kernel, stride, pad, 'i8')
        attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'acc_type': 'INT32'}
        return b.emit('AVG_POOL2D', [x, b.zp_const('i8', izp), b.zp_const('i8', ozp)], 'i8', (N, OH, OW, C), y, attr)
    y = R.max_pool2d(x.v, kernel, stride, pad, False)
    attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'nan_mode': 'PROPAGATE'}
    return b.emit('MAX_POOL2D', [x], t, (N, OH, OW, C), y, attr)


# --- layout (all profiles) ----------------------------------------------------------------------

def _e(a):
    return a.e


def t_reshape(b, types):
    a = b.pick(lambda v: v.t in types and v.size > 1)
    n = a.size
    r = b.rng.random()
    if r < 0.3:
        shp = (n,)
    elif r < 0.6:
        shp = factor_nhwc(b.rng, n) or (n,)
    else:
        divs = [d for d in range(1, n + 1) if n % d == 0]
        d1 = b.choice(divs)
        shp = (d1, n // d1) if b.p(0.5) else (1, d1, n // d1)
    return b.reshape(a, shp)


def t_identity(b, types):
    a = b.pick(lambda v: v.t in types)
    return b.emit('IDENTITY', [a], a.t, a.shape, a.v.copy(), e=_e(a))


def t_transpose(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 2)
    perms = [int(p) for p in b.rng.permutation(len(a.shape))]
    e = None if a.e is None else np.transpose(a.e, perms)
    return b.emit('TRANSPOSE', [a], a.t, np.transpose(a.v, perms).shape, np.transpose(a.v, perms), {'perms': perms}, e)


def t_reverse(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 1)
    ax = b.ri(0, len(a.shape) - 1)
    e = None if a.e is None else np.flip(a.e, ax)
    return b.emit('REVERSE', [a], a.t, a.shape, np.flip(a.v, ax).copy(), {'axis': ax}, e)


def t_slice(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 1 and v.size >= 2)
    start, size = [], []
    for d in a.shape:
        s = b.ri(0, d - 1)
        z = b.ri(1, d - s)
        start.append(s)
        size.append(z)
    sl = tuple(slice(s, s + z) for s, z in zip(start, size))
    e = None if a.e is None else a.e[sl]
    return b.emit('SLICE', [a, b.cshape(start), b.cshape(size)], a.t, tuple(size), a.v[sl].copy(), e=e)


def t_tile(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 1 and v.size <= 300)
    mult = [b.choice([1, 1, 2, 3]) for _ in a.shape]
    e = None if a.e is None else np.tile(a.e, mult)
    y = np.tile(a.v, mult)
    return b.emit('TILE', [a, b.cshape(mult)], a.t, y.shape, y, e=e)


def t_pad(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 1)
    padding = []
    for _ in a.shape:
        padding += [b.choice([0, 0, 1, 2]), b.choice([0, 0, 1, 2])]
    t = a.t
    if t == 'bool':
        pc = b.p(0.5)
    elif is_fp(t):
        pc = round_fp(b.choice([0.0, 0.0, -1.5, 0.25]), t)
    else:
        pc = b.ri(imin(t), imax(t)) if b.p(0.6) else 0
    pw = [(padding[2 * i], padding[2 * i + 1]) for i in range(len(a.shape))]
    y = np.pad(a.v, pw, mode='constant', constant_values=pc)
    e = None if a.e is None else np.pad(a.e, pw, mode='constant', constant_values=0.0)
    pcn = b.zp_const(t, pc) if t != 'bool' else b.const('bool', np.array([pc]))
    return b.emit('PAD', [a, b.cshape(padding), pcn], t, y.shape, y, e=e)


def t_concat(b, types):
    a = b.pick(lambda v: v.t in types and len(v.shape) >= 1)
    ax = b.ri(0, len(a.shape) - 1)
    parts = [a]
    for _ in range(b.ri(1, 3)):
        r = b.rng.random()
        if r < 0.2:
            parts.append(a)  # the same value twice
            continue
        cands = [v for v in b.pool if v.t == a.t and len(v.shape) == len(a.shape) and
                 all(v.shape[i] == a.shape[i] for i in range(len(a.shape)) if i != ax)]
        if cands and r < 0.75:
            parts.append(b.choice(cands))
        else:
            shp = list(a.shape)
            shp[ax] = b.ri(1, 3)
            if is_fp(a.t):
                parts.append(b.input(a.t, shp))
            else:
                parts.append(b.input(a.t, shp))
    b.rng.shuffle(parts)
    y = np.concatenate([p.v for p in parts], axis=ax)
    e = None if a.e is None else np.concatenate([p.e for p in parts], axis=ax)
    return b.emit('CONCAT', parts, a.t, y.shape, y, {'axis': ax}, e)


def t_gather(b, types):
    a = b.pick(lambda v: v.t in types and v.t != 'bool' and v.size >= 2)
    if len(a.shape) == 3 and b.p(0.5):
        vals = a
    else:
        n = a.size
        opts = [(N, K, n // (N * K)) for N in (1, 2) for K in range(2, 33) if n % (N * K) == 0]
        if not opts:
            raise Reject('gather shape')
        vals = b.reshape(a, b.choice(opts))
    N, K, C = vals.shape
    W = b.ri(1, 8)
    r = b.rng.random()
    idx = None
    if r < 0.3 and b.profile == 'int':
        # indices computed in the graph: ARGMAX of an i8 value [N, W, K'] with K' <= K
        src = [v for v in b.pool if v.t == 'i8' and len(v.shape) == 3 and v.shape[0] == N and v.shape[2] <= K]
        if src:
            s = b.choice(src)
            am = R.argmax(s.v, 2, False)
            idx = b.emit('ARGMAX', [s], 'i32', am.shape, am, {'axis': 2, 'nan_mode': 'PROPAGATE'})
    if idx is None:
        iv = b.rng.integers(0, K, size=(N, W))
        if r < 0.65:
            idx = Val(b.const('i32', iv), 'i32', (N, W), iv)
        else:
            idx = b.input('i32', (N, W), 0, K - 1)
    Wd = idx.shape[1]
    y = np.stack([vals.v[n][idx.v[n]] for n in range(N)])
    e = None if vals.e is None else np.stack([vals.e[n][idx.v[n]] for n in range(N)])
    return b.emit('GATHER', [vals, idx], vals.t, (N, Wd, C), y, e=e)


def t_select(b, types):
    a = b.pick(lambda v: v.t in types)
    c2 = b.operand_like(a, allow_bcast=True)
    # the condition: a comparison of i32 (int) / exactly known FP values, or a bool value
    cond = None
    r = b.rng.random()
    if r < 0.7:
        if b.profile == 'int':
            x = i32_val(b)
            y = b.operand_like(x, new_lo=-1000, new_hi=1000)
        else:
            ex = [v for v in b.pool if v.t == b.ft and v.exact()]
            if not ex:
                raise Reject('no exact fp')
            x = b.choice(ex)
            y = b.operand_like(x)
            if not y.exact():
                raise Reject('inexact')
        try:
            cs = R.bcast_shape(x.shape, y.shape)
        except ValueError:
            raise Reject('bcast')
        op = b.choice(['EQUAL', 'GREATER', 'GREATER_EQUAL'])
        fn = {'EQUAL': np.equal, 'GREATER': np.greater, 'GREATER_EQUAL': np.greater_equal}[op]
        cv = np.broadcast_to(fn(x.v, y.v), cs).copy()
        cond = b.emit(op, [x, y], 'bool', cs, cv)
    else:
        cands = [v for v in b.pool if v.t == 'bool']
        cond = b.choice(cands) if cands and b.p(0.6) else b.input('bool', a.shape)
    try:
        shape = R.bcast_shape(cond.shape, a.shape, c2.shape)
    except ValueError:
        raise Reject('bcast')
    y = np.broadcast_to(np.where(cond.v, a.v, c2.v), shape).copy()
    e = None
    if a.e is not None:
        e = np.broadcast_to(np.where(cond.v, a.e, c2.e), shape).copy()
    return b.emit('SELECT', [cond, a, c2], a.t, shape, y, e=e)


def t_cast_int(b):
    a = b.pick(lambda v: v.t in ('i8', 'i16', 'i32', 'bool'))
    if a.t == 'bool':
        ot = b.choice(['i8', 'i16', 'i32'])
        return b.emit('CAST', [a], ot, a.shape, a.v.astype(np.int64))
    ot = b.choice([t for t in ('i8', 'i16', 'i32', 'bool') if t != a.t])
    if ot == 'bool':
        return b.emit('CAST', [a], 'bool', a.shape, a.v != 0)
    return b.emit('CAST', [a], ot, a.shape, wrap(a.v, INT_BITS[ot]))


def t_reduce_int(b):
    op = b.choice(['REDUCE_SUM', 'REDUCE_MAX', 'REDUCE_MIN', 'ARGMAX', 'REDUCE_ANY'])
    if op == 'REDUCE_SUM':
        a = i32_val(b)
    elif op == 'ARGMAX':
        a = b.int_val(('i8',), lambda v: len(v.shape) >= 1)
    elif op == 'REDUCE_ANY':
        a = b.int_val(('bool',), lambda v: len(v.shape) >= 1)
    else:
        a = b.int_val(('i8', 'i16', 'i32'), lambda v: len(v.shape) >= 1)
    if not a.shape:
        raise Reject('rank0')
    ax = b.ri(0, len(a.shape) - 1)
    if op == 'ARGMAX':
        y = R.argmax(a.v, ax, False)
        return b.emit('ARGMAX', [a], 'i32', y.shape, y, {'axis': ax, 'nan_mode': 'PROPAGATE'})
    if op == 'REDUCE_SUM':
        y = np.sum(a.v, axis=ax, keepdims=True)
        if y.size and (y.min() < imin('i32') or y.max() > imax('i32')):
            raise Reject('sum overflow')
        return b.emit(op, [a], 'i32', y.shape, y, {'axis': ax})
    if op == 'REDUCE_ANY':
        y = np.any(a.v, axis=ax, keepdims=True)
        return b.emit(op, [a], 'bool', y.shape, y, {'axis': ax})
    y = (np.max if op == 'REDUCE_MAX' else np.min)(a.v, axis=ax, keepdims=True)
    return b.emit(op, [a], a.t, y.shape, y, {'axis': ax, 'nan_mode': 'PROPAGATE'})


def t_logical(b):
    a = b.int_val(('bool',))
    op = b.choice(['LOGICAL_AND', 'LOGICAL_OR', 'LOGICAL_XOR', 'LOGICAL_NOT'])
    if op == 'LOGICAL_NOT':
        return b.emit(op, [a], 'bool', a.shape, np.logical_not(a.v))
    c2 = b.operand_like(a)
    try:
        shape = R.bcast_shape(a.shape, c2.shape)
    except ValueError:
        raise Reject('bcast')
    fn = {'LOGICAL_AND': np.logical_and, 'LOGICAL_OR': np.logical_or, 'LOGICAL_XOR': np.logical_xor}[op]
    return b.emit(op, [a, c2], 'bool', shape, np.broadcast_to(fn(a.v, c2.v), shape).copy())


INT_TYPES = ('i8', 'i16', 'i32', 'bool')
INT_TEMPLATES = [
    (10, lambda b: t_conv(b, False)), (5, lambda b: t_conv(b, True)), (6, t_matmul), (10, t_rescale),
    (10, t_i32_binary), (3, t_mul_narrow), (4, t_shift), (4, t_unary_int), (4, t_clamp), (4, t_table),
    (6, t_pool), (4, lambda b: t_reshape(b, INT_TYPES)), (2, lambda b: t_identity(b, INT_TYPES)),
    (4, lambda b: t_transpose(b, INT_TYPES)), (3, lambda b: t_reverse(b, INT_TYPES)),
    (4, lambda b: t_slice(b, INT_TYPES)), (2, lambda b: t_tile(b, INT_TYPES)), (3, lambda b: t_pad(b, INT_TYPES)),
    (6, lambda b: t_concat(b, INT_TYPES)), (3, lambda b: t_gather(b, ('i8', 'i16', 'i32'))),
    (4, lambda b: t_select(b, ('i8', 'i16', 'i32', 'bool'))), (4, t_cast_int), (5, t_reduce_int), (2, t_logical),
]


def require_fail(b):
    """Adds one operator that violates a REQUIRE the reference model reports; refimpl confirms it."""
    kind = b.choice(['gather', 'ars', 'rescale'])
    if kind == 'gather':
        a = b.int_val(('i8', 'i16', 'i32'), lambda v: len(v.shape) == 3)
        N, K, C = a.shape
        iv = b.rng.integers(0, K, size=(N, 3))
        iv[b.ri(0, N - 1), b.ri(0, 2)] = K + b.ri(0, 3)
        try:
            R.require(iv < K, 'GATHER index >= K')
            raise Reject('no violation')
        except R.Unpredictable:
            pass
        ins = [a, b.const('i32', iv)]
        return 'GATHER', ins, a.t, (N, 3, C)
    if kind == 'ars':
        a = b.int_val(('i8', 'i16', 'i32'))
        bits = INT_BITS[a.t]
        sh = np.full(a.shape, 1, np.int64)
        sh.reshape(-1)[b.ri(0, a.size - 1)] = bits + b.ri(0, 4)
        try:
            R.ars(a.v, sh, a.t, False)
            raise Reject('no violation')
        except R.Unpredictable:
            pass
        return 'ARITHMETIC_RIGHT_SHIFT', [a, b.const(a.t, sh, a.shape)], a.t, a.shape, {'round': False}
    a = b.int_val(('i32',), lambda v: v.size and np.max(np.abs(v.v)) >= 4)
    mult, shift = np.array([1 << 30]), np.array([2])
    try:
        R.rescale(a.v, mult, shift, 0, 0, 'i32', 'i8', True, 'SINGLE_ROUND', False, False, False)
        raise Reject('no violation')
    except R.Unpredictable:
        pass
    ins = [a, b.const('i32', mult), b.const('i8', shift), b.zp_const('i32', 0), b.zp_const('i8', 0)]
    attr = {'scale32': True, 'rounding_mode': 'SINGLE_ROUND', 'per_channel': False, 'input_unsigned': False,
            'output_unsigned': False}
    return 'RESCALE', ins, 'i8', a.shape, attr


# ================================================================================================
# FP profile
# ================================================================================================

def _rnd(b, mag):
    """Allowed rounding error of one FP operator result of magnitude <= mag (see the module doc)."""
    f = FMT[b.ft]
    return np.asarray(mag, np.float64) * 2.0 ** -f.frac + f.normal_min


def fp_val(b, pred=None):
    cands = [v for v in b.pool if v.t == b.ft and (pred is None or pred(v))]
    if cands and b.p(0.9):
        return b.pick(lambda v: v in cands)
    shp = b.choice([(b.ri(1, 2), b.ri(2, 6), b.ri(2, 6), b.ri(1, 5)), (b.ri(2, 30),), (b.ri(1, 5), b.ri(2, 9))])
    v = b.input(b.ft, shp, -2.0, 2.0)
    if pred is not None and not pred(v):
        raise Reject('fp_val')
    return v


def t_fp_binary(b):
    op = b.choice(['ADD', 'ADD', 'SUB', 'SUB', 'MUL', 'MUL', 'MAXIMUM', 'MINIMUM'])
    a = fp_val(b)
    c2 = b.operand_like(a)
    if b.p(0.5) and c2 is not a:
        a, c2 = c2, a
    try:
        shape = R.bcast_shape(a.shape, c2.shape)
    except ValueError:
        raise Reject('bcast')
    x, y, ex, ey = a.v, c2.v, a.e, c2.e
    attr = None
    ins = [a, c2]
    if op == 'ADD':
        r = x + y
        e = ex + ey
        e = e + _rnd(b, np.abs(r) + e)
    elif op == 'SUB':
        r = x - y
        e = ex + ey
        e = e + _rnd(b, np.abs(r) + e)
    elif op == 'MUL':
        r = x * y
        e = np.abs(x) * ey + np.abs(y) * ex + ex * ey
        e = e + _rnd(b, np.abs(r) + e)
        ins.append(b.zp_const('i8', 0))
    else:
        nm = b.choice(['PROPAGATE', 'IGNORE'])
        r = (R.fp_max if op == 'MAXIMUM' else R.fp_min)(x, y, nm)
        e = np.maximum(ex, ey)
        attr = {'nan_mode': nm}
    r = np.broadcast_to(r, shape).copy()
    return b.emit(op, ins, b.ft, shape, r, attr, np.broadcast_to(e, shape))


def t_fp_unary(b):
    op = b.choice(['SIGMOID', 'TANH', 'EXP', 'ABS', 'NEGATE', 'CLAMP', 'CLAMP'])
    a = fp_val(b)
    f = FMT[b.ft]
    x, ex = a.v, a.e
    ax = np.abs(x) + ex
    base3 = 3.0 if b.ft == 'fp32' else 1.0
    attr = None
    ins = [a]
    with np.errstate(all='ignore'):
        if op == 'SIGMOID':
            r = 1.0 / (1.0 + np.exp(-x))
            e = 0.25 * ex
            e = e + 2.0 ** -f.frac * np.maximum(r + e, f.normal_min) * 2.0 * (1.0 + ax) + f.normal_min
        elif op == 'TANH':
            r = np.tanh(x)
            bv = 8.0 * ax + (12.0 if b.ft == 'fp32' else 4.0)
            e = ex + 2.0 ** -f.frac * np.maximum(0.5, (np.abs(r) + ex) * bv) + f.normal_min
        elif op == 'EXP':
            if np.max(x + ex, initial=0) > 6.0:
                raise Reject('exp range')
            r = np.exp(x)
            e = np.exp(x) * np.expm1(ex)
            e = e + 2.0 ** -f.frac * np.maximum(np.exp(x + ex), f.normal_min) * (2.0 * ax + base3) + f.normal_min
        elif op == 'ABS':
            r, e = np.abs(x), ex
        elif op == 'NEGATE':
            r, e = -x, ex
            ins += [b.zp_const(b.ft, 0.0), b.zp_const(b.ft, 0.0)]
        else:
            lo = round_fp(b.rng.uniform(-1.5, 0.2), b.ft)
            hi = round_fp(b.rng.uniform(max(lo, 0.0), 1.5), b.ft)
            nm = b.choice(['PROPAGATE', 'IGNORE'])
            r = R.clamp(x, lo, hi, nm, True)
            e = ex
            attr = {'min_val': scalar_bytes(b.ft, lo), 'max_val': scalar_bytes(b.ft, hi), 'nan_mode': nm}
    return b.emit(op, ins, b.ft, a.shape, r, attr, e)


def fp_weights(b, shape, ks):
    return round_fp(b.rng.uniform(-1.0, 1.0, size=shape) / math.sqrt(ks), b.ft)


def _acc_type(b):
    if b.ft == 'fp16' and b.p(0.3):
        return 'fp16'
    return 'fp32'


def t_fp_conv(b, depthwise=False):
    x = b.nhwc(b.ft, lambda v: v.shape[1] <= 16 and v.shape[2] <= 16 and v.shape[3] <= 16)
    N, IH, IW, IC = x.shape
    KH, KW = b.ri(1, min(3, IH + 1)), b.ri(1, min(3, IW + 1))
    pad, stride, dil, OH, OW = conv_geometry(b, IH, IW, KH, KW)
    if depthwise:
        M = b.ri(1, 2)
        OC = IC * M
        w = fp_weights(b, (KH, KW, IC, M), KH * KW)
        ks = KH * KW
        fn = R.depthwise_conv2d
    else:
        OC = b.ri(1, 6)
        w = fp_weights(b, (OC, KH, KW, IC), KH * KW * IC)
        ks = KH * KW * IC
        fn = R.conv2d
    bc = 1 if b.p(0.2) else OC
    bias = round_fp(b.rng.uniform(-0.5, 0.5, size=(bc,)), b.ft)
    r = fn(x.v, w, bias, 0, 0, pad, stride, dil, True)
    prop = fn(x.e, np.abs(w), np.zeros(bc), 0, 0, pad, stride, dil, True)
    bnd = fn(np.abs(x.v) + x.e, np.abs(w), np.abs(bias), 0, 0, pad, stride, dil, True)
    e = prop + (ks + 1) * 2.0 ** -FMT[b.ft].frac * bnd + (ks + 1) * FMT[b.ft].normal_min
    ins = [x, b.const(b.ft, w), b.const(b.ft, bias), b.zp_const(b.ft, 0.0), b.zp_const(b.ft, 0.0)]
    attr = {'pad': list(pad), 'stride': list(stride), 'dilation': list(dil), 'local_bound': False,
            'acc_type': FB_ACC[_acc_type(b)]}
    return b.emit('DEPTHWISE_CONV2D' if depthwise else 'CONV2D', ins, b.ft, (N, OH, OW, OC), r, attr, e)


def t_fp_matmul(b):
    a = fp_val(b, lambda v: 2 <= v.size <= 512)
    if len(a.shape) == 3 and b.p(0.6):
        A = a
    else:
        opts = [(N, H, a.size // (N * H)) for N in (1, 2) for H in range(1, 17)
                if a.size % (N * H) == 0 and 1 <= a.size // (N * H) <= 32]
        if not opts:
            raise Reject('matmul shape')
        A = b.reshape(a, b.choice(opts))
    N, H, C = A.shape
    B = None
    r = b.rng.random()
    if r < 0.4:
        cands = [v for v in b.pool if v.t == b.ft and v.size % (N * C) == 0 and 1 <= v.size // (N * C) <= 16]
        if cands:
            s = b.choice(cands)
            Bshape = (N, C, s.size // (N * C))
            B = s if s.shape == Bshape else b.reshape(s, Bshape)
    if B is None:
        W = b.ri(1, 8)
        if r < 0.7:
            vals = fp_weights(b, (N, C, W), C)
            B = Val(b.const(b.ft, vals), b.ft, (N, C, W), vals, np.zeros((N, C, W)))
        else:
            B = b.input(b.ft, (N, C, W))
    res = R.matmul(A.v, B.v, 0, 0, True)
    aa, ab = np.abs(A.v), np.abs(B.v)
    prop = R.matmul(A.e, ab, 0, 0, True) + R.matmul(aa, B.e, 0, 0, True) + R.matmul(A.e, B.e, 0, 0, True)
    bnd = R.matmul(aa + A.e, ab + B.e, 0, 0, True)
    e = prop + (C + 1) * 2.0 ** -FMT[b.ft].frac * bnd + (C + 1) * FMT[b.ft].normal_min
    ins = [A, B, b.zp_const(b.ft, 0.0), b.zp_const(b.ft, 0.0)]
    if b.ft != 'bf16':
        return b.emit('MATMUL', ins, b.ft, res.shape, res, None, e)
    # bf16 x bf16 -> fp32, then CAST back to bf16
    m = b.emit('MATMUL', ins, 'fp32', res.shape, res, None, e)
    e2 = e + _rnd(b, np.abs(res) + e)
    return b.emit('CAST', [m], 'bf16', res.shape, res, None, e2)


def t_fp_pool(b):
    x = b.nhwc(b.ft)
    N, IH, IW, C = x.shape
    kernel, stride, pad, OH, OW = pool_geometry(b, IH, IW)
    if b.p(0.5):
        r = R.avg_pool2d_fp(x.v, kernel, stride, pad)
        ks = kernel[0] * kernel[1]
        e = R.avg_pool2d_fp(x.e, kernel, stride, pad) + \
            (ks + 2) * 2.0 ** -FMT[b.ft].frac * R.avg_pool2d_fp(np.abs(x.v) + x.e, kernel, stride, pad) + \
            FMT[b.ft].normal_min * (ks + 2)
        attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'acc_type': FB_ACC[_acc_type(b)]}
        return b.emit('AVG_POOL2D', [x, b.zp_const(b.ft, 0.0), b.zp_const(b.ft, 0.0)], b.ft, (N, OH, OW, C), r,
                      attr, e)
    nm = b.choice(['PROPAGATE', 'IGNORE'])
    r = R.max_pool2d(x.v, kernel, stride, pad, True, nm)
    e = R.max_pool2d(x.e, kernel, stride, pad, True, 'PROPAGATE')
    attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'nan_mode': nm}
    return b.emit('MAX_POOL2D', [x], b.ft, (N, OH, OW, C), r, attr, e)


def t_fp_reduce(b):
    op = b.choice(['REDUCE_SUM', 'REDUCE_SUM', 'REDUCE_MAX', 'REDUCE_MIN'])
    a = fp_val(b, lambda v: len(v.shape) >= 1)
    ax = b.ri(0, len(a.shape) - 1)
    n = a.shape[ax]
    if op == 'REDUCE_SUM':
        r = np.sum(a.v, axis=ax, keepdims=True)
        e = np.sum(a.e, axis=ax, keepdims=True) + \
            (n + 1) * 2.0 ** -FMT[b.ft].frac * np.sum(np.abs(a.v) + a.e, axis=ax, keepdims=True) + \
            (n + 1) * FMT[b.ft].normal_min
        return b.emit(op, [a], b.ft, r.shape, r, {'axis': ax}, e)
    nm = b.choice(['PROPAGATE', 'IGNORE'])
    r = R.reduce_fp_minmax(a.v, ax, op == 'REDUCE_MAX', nm)
    e = np.max(a.e, axis=ax, keepdims=True)
    return b.emit(op, [a], b.ft, r.shape, r, {'axis': ax, 'nan_mode': nm}, e)


def t_fp_cast(b):
    """CAST fp32 -> fp16/bf16 -> fp32 round trip (fp32 graphs only)."""
    if b.ft != 'fp32':
        raise Reject('cast')
    a = fp_val(b)
    mid = b.choice(['fp16', 'bf16'])
    f = FMT[mid]
    e1 = a.e + 2.0 ** -f.frac * (np.abs(a.v) + a.e) + f.normal_min
    if np.max(np.abs(a.v) + e1, initial=0) > 1e4:
        raise Reject('cast range')
    c1 = b.emit('CAST', [a], mid, a.shape, a.v, None, e1)
    # the exact value of c1 is unknown (rounded from an inexact value); carry a.v with the error e1
    c2 = b.emit('CAST', [c1], 'fp32', a.shape, a.v, None, e1 + FMT['fp32'].normal_min)
    return c2


FP_TYPES_L = ('fp32', 'fp16', 'bf16', 'bool')
FP_TEMPLATES = [
    (14, t_fp_binary), (8, t_fp_unary), (7, lambda b: t_fp_conv(b, False)), (4, lambda b: t_fp_conv(b, True)),
    (6, t_fp_matmul), (5, t_fp_pool), (5, t_fp_reduce), (3, t_fp_cast),
    (4, lambda b: t_reshape(b, (b.ft,))), (2, lambda b: t_identity(b, (b.ft,))),
    (3, lambda b: t_transpose(b, (b.ft,))), (2, lambda b: t_reverse(b, (b.ft,))), (3, lambda b: t_slice(b, (b.ft,))),
    (2, lambda b: t_tile(b, (b.ft,))), (2, lambda b: t_pad(b, (b.ft,))), (5, lambda b: t_concat(b, (b.ft,))),
    (2, lambda b: t_gather(b, (b.ft,))), (3, lambda b: t_select(b, (b.ft,))),
]


# ================================================================================================
# Graph assembly
# ================================================================================================

def pick_template(b, templates):
    w = np.array([t[0] for t in templates], np.float64)
    i = int(b.rng.choice(len(templates), p=w / w.sum()))
    return templates[i][1]


def build_graph(seed, index, profile, ft):
    name = 'rg_s%d_%04d_%s' % (seed, index, ft if profile == 'fp' else 'int')
    rng = np.random.default_rng([seed & 0xffffffff, index, 1 if profile == 'int' else 2])
    c = Case('RANDGRAPH_' + profile.upper(), ft if profile == 'fp' else 'int', (index,), '', ctx=None)
    c.name = name
    b = Builder(c, rng, profile, ft)
    target = b.ri(3, 25)
    # starting values
    for _ in range(b.ri(1, 3)):
        if profile == 'int':
            t = b.choice(['i8', 'i8', 'i8', 'i16', 'i32'])
            shp = b.choice([(b.ri(1, 2), b.ri(3, 8), b.ri(3, 8), b.ri(1, 6)), (b.ri(2, 40),), (b.ri(2, 6), b.ri(2, 9)),
                            (b.ri(1, 3), b.ri(2, 6), b.ri(2, 9))])
            if t == 'i32':
                b.input(t, shp, -(1 << 24), 1 << 24)
            else:
                b.input(t, shp)
        else:
            shp = b.choice([(b.ri(1, 2), b.ri(3, 8), b.ri(3, 8), b.ri(1, 5)), (b.ri(2, 40),), (b.ri(2, 6), b.ri(2, 9))])
            b.input(ft, shp, -2.0, 2.0)
    templates = INT_TEMPLATES if profile == 'int' else FP_TEMPLATES
    attempts = 0
    while b.nops < target and attempts < 400:
        attempts += 1
        fn = pick_template(b, templates)
        # the graph is built on a scratch copy of the state so that a rejected template leaves nothing
        snap = snapshot(b)
        try:
            fn(b)
        except Reject:
            restore(b, snap)
    if b.nops == 0:
        return None
    unpred = None
    spare = MAX_OPS - b.nops - sum(1 for v in b.pool if v.is_input and v.uses == 0)
    if profile == 'int' and rng.random() < 0.05 and spare >= 1:
        snap = snapshot(b)
        try:
            unpred = require_fail(b)
        except Reject:
            restore(b, snap)
            unpred = None
    finalize(b, unpred)
    return c


def snapshot(b):
    g = b.c.b
    return (len(g.operators), len(g.tensors), len(g.shapes), len(g.inputs), set(g._names), len(b.c.ifms),
            len(b.pool), [v.uses for v in b.pool], b.nops, b.k, len(b.ops_used), dict(b.shared_consts))


def restore(b, s):
    g = b.c.b
    (no, nt, ns, ni, names, nif, npool, uses, nops, k, nused, shared) = s
    del g.operators[no:]
    del g.tensors[nt:]
    del g.shapes[ns:]
    del g.inputs[ni:]
    g._names = names
    del b.c.ifms[nif:]
    del b.pool[npool:]
    for v, u in zip(b.pool, uses):
        v.uses = u
    b.nops, b.k = nops, k
    del b.ops_used[nused:]
    b.shared_consts = shared


def finalize(b, unpred):
    c = b.c
    b.building = False
    outs = []
    if unpred is not None:
        op, ins, t, shape = unpred[:4]
        attr = unpred[4] if len(unpred) > 4 else None
        n = b.nm('t')
        c.tens(n, t, shape)
        c.node(op, [x.name if isinstance(x, Val) else x for x in ins], [n], attr)
        for x in ins:
            if isinstance(x, Val):
                x.uses += 1
        b.nops += 1
        b.ops_used.append(op)
        c.expect = 'unpredictable'
        c.note = 'the last %s violates a REQUIRE (refimpl)' % op
        outs.append(Val(n, t, shape, None))
    # every unconsumed operator result is an output; some consumed ones too
    produced = [v for v in b.pool if not v.is_input]
    sinks = [v for v in produced if v.uses == 0]
    inner = [v for v in produced if v.uses > 0]
    outs += sinks
    if inner:
        for _ in range(b.ri(0, 2)):
            v = b.choice(inner)
            if v not in outs:
                outs.append(v)
    # an unconsumed graph input is passed through an IDENTITY output
    for v in [v for v in b.pool if v.is_input and v.uses == 0]:
        outs.append(b.emit('IDENTITY', [v], v.t, v.shape, v.v.copy(), e=v.e))
    order = list(range(len(outs)))
    b.rng.shuffle(order)
    for i in order:
        v = outs[i]
        if v.v is None:  # the REQUIRE-violating output
            c.out(v.name, v.t, v.shape, None, declare=False)
            continue
        if is_fp(v.t):
            f = FMT[v.t]
            bounds = np.asarray(v.e, np.float64) * 2.0 ** f.frac
            cmp_ = {'mode': 'abs_error', 'bound_as_magnitude': True, 'base_bound': 1.0, 'normal_divisor': 1,
                    'note': 'randgraph composite bound'}
            c.out(v.name, v.t, v.shape, v.v, cmp_, bounds, declare=False)
        else:
            c.out(v.name, v.t, v.shape, v.v, None, declare=False)
    c.variant = 'n%d' % b.nops
    c.note = (c.note + '; ' if c.note else '') + 'ops: ' + ' '.join(b.ops_used)


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
            if tag == RANDGRAPH_TAG:
                shutil.rmtree(d)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('outdir')
    ap.add_argument('--count', type=int, default=100)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--profile', choices=('int', 'fp', 'both'), default='both')
    ap.add_argument('--flatc', default=shutil.which('flatc') or 'flatc')
    a = ap.parse_args(argv)
    t0 = time.time()
    clean_outdir(a.outdir)
    cases = []
    for i in range(a.count):
        if a.profile == 'both':
            prof = 'int' if i % 2 == 0 else 'fp'
        else:
            prof = a.profile
        ft = None
        if prof == 'fp':
            r = np.random.default_rng([a.seed & 0xffffffff, i, 3]).random()
            ft = 'fp32' if r < 0.6 else ('fp16' if r < 0.8 else 'bf16')
        c = build_graph(a.seed, i, prof, ft)
        if c is None:
            continue
        d = write_case(c, a.outdir)
        dj = os.path.join(d, 'desc.json')
        desc = json.load(open(dj))
        desc['generator'] = RANDGRAPH_TAG
        with open(dj, 'w') as f:
            json.dump(desc, f, indent=1)
        cases.append(c)
    failed = run_flatc(a.flatc, a.outdir, [c.name for c in cases])
    for n, msg in failed:
        print('randgraph.py: flatc failed on %s: %s' % (n, msg), file=sys.stderr)
    nops = [int(c.variant[1:]) for c in cases]
    nu = sum(c.expect == 'unpredictable' for c in cases)
    print('randgraph.py: %d graphs (%d int, %d fp; %d unpredictable), %d..%d operators (mean %.1f), in %.1f s -> %s'
          % (len(cases), sum(c.op.endswith('INT') for c in cases), sum(c.op.endswith('FP') for c in cases), nu,
             min(nops) if nops else 0, max(nops) if nops else 0, float(np.mean(nops)) if nops else 0.0,
             time.time() - t0, a.outdir))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
