"""numpy implementation of the TOSA 1.0 operator semantics (TOSA.md B.3), written from the
specification pseudocode, independent of tosac's C kernels.

Conventions:
- Integer tensors are int64 arrays holding the signed value of the element type; every formula is
  evaluated in int64 (all TOSA intermediate values fit; RESCALE/MUL products are < 2^62).
- FP tensors are float64 arrays holding values exactly representable in the element type; the
  functions return the float64 ("precise mode") result of the spec formula, which the checker
  compares with the per-op tolerance of TOSA.md D.5.
- A REQUIRE violation raises Unpredictable (the generator uses that to assert that its "valid"
  cases are valid, and to build the REQUIRE cases deliberately).
"""
import math

import numpy as np

from common import INT_BITS, imin, imax, wrap


class Unpredictable(Exception):
    pass


def require(cond, what):
    if not np.all(cond):
        raise Unpredictable(what)


def i64(x):
    return np.asarray(x, dtype=np.int64)


def asr(x, s):
    """Arithmetic (floor) shift right of int64 values."""
    return np.right_shift(i64(x), i64(s))


def bcast_shape(*shapes):
    rank = len(shapes[0])
    for s in shapes:
        if len(s) != rank:
            raise ValueError('rank mismatch')
    out = []
    for d in range(rank):
        ds = set(s[d] for s in shapes)
        nz = [v for v in ds if v != 1]
        if len(set(nz)) > 1:
            raise ValueError('broadcast mismatch')
        out.append(nz[0] if nz else 1)
    return tuple(out)


# ------------------------------------------------------------------------------------------------
# Scaling helpers
# ------------------------------------------------------------------------------------------------

def apply_scale_32(value, multiplier, shift, double_round):
    v, m, s = np.broadcast_arrays(i64(value), i64(multiplier), i64(shift))
    require(m >= 0, 'apply_scale_32: multiplier < 0')
    require((s >= 2) & (s <= 62), 'apply_scale_32: shift out of [2,62]')
    lo = -(np.int64(1) << (s - 1))
    require((v >= lo) & (v < -lo), 'apply_scale_32: value out of range for shift')
    rnd = np.int64(1) << (s - 1)
    if double_round:
        adj = np.where(v >= 0, np.int64(1) << 30, -(np.int64(1) << 30))
        rnd = np.where(s > 31, rnd + adj, rnd)
    r = asr(v * m + rnd, s)
    require((r >= -(1 << 31)) & (r < (1 << 31)), 'apply_scale_32: result exceeds i32')
    return r


def apply_scale_16(value, multiplier, shift):
    v, m, s = np.broadcast_arrays(i64(value), i64(multiplier), i64(shift))
    require(m >= 0, 'apply_scale_16: multiplier < 0')
    require((s >= 2) & (s <= 62), 'apply_scale_16: shift out of [2,62]')
    r = asr(v * m + (np.int64(1) << (s - 1)), s)
    require((r >= -(1 << 31)) & (r < (1 << 31)), 'apply_scale_16: result exceeds i32')
    return r


def clz32(x):
    x = int(x) & 0xffffffff
    n = 0
    while n < 32 and not (x & (0x80000000 >> n)):
        n += 1
    return n


def reciprocal_scale(count):
    k = 32 - clz32(count - 1)
    mult = (((1 << 30) + 1) << k) // count
    return mult, 30 + k


# ------------------------------------------------------------------------------------------------
# Elementwise
# ------------------------------------------------------------------------------------------------

def int_add(a, b, t):
    r = i64(a) + i64(b)
    require((r >= imin(t)) & (r <= imax(t)), 'ADD overflow')
    return r


def int_sub(a, b, t):
    r = i64(a) - i64(b)
    require((r >= imin(t)) & (r <= imax(t)), 'SUB overflow')
    return r


def int_mul(a, b, shift, in_t):
    a, b = i64(a), i64(b)
    p = a * b
    if in_t == 'i32':
        if shift > 0:
            r = asr(p + (np.int64(1) << np.int64(shift - 1)), shift)
            require((r >= imin('i32')) & (r <= imax('i32')), 'MUL result exceeds i32')
            return r
        return wrap(p, 32)
    require(shift == 0, 'MUL shift must be 0 for non-i32')
    return p


def intdiv(a, b):
    a, b = i64(a), i64(b)
    require(b != 0, 'INTDIV by zero')
    bb = np.where(b == 0, 1, b)
    q = np.abs(a) // np.abs(bb)
    q = np.where((a < 0) != (bb < 0), -q, q)
    require((q >= imin('i32')) & (q <= imax('i32')), 'INTDIV overflow')
    return q


def ars(a, b, t, rnd):
    a, b = np.broadcast_arrays(i64(a), i64(b))
    bits = INT_BITS[t]
    require((b >= 0) & (b <= bits - 1), 'ARITHMETIC_RIGHT_SHIFT shift out of range')
    r = asr(a, b)
    if rnd:
        bm1 = np.maximum(b - 1, 0)
        r = r + np.where((b > 0) & ((asr(a, bm1) & 1) != 0), 1, 0)
    return r


def lls(a, b, t):
    a, b = np.broadcast_arrays(i64(a), i64(b))
    bits = INT_BITS[t]
    require((b >= 0) & (b <= bits - 1), 'LOGICAL_LEFT_SHIFT shift out of range')
    mask = (np.int64(1) << bits) - 1
    return wrap(np.left_shift(a & mask, b), bits)


def lrs(a, b, t):
    a, b = np.broadcast_arrays(i64(a), i64(b))
    bits = INT_BITS[t]
    require((b >= 0) & (b <= bits - 1), 'LOGICAL_RIGHT_SHIFT shift out of range')
    mask = (np.int64(1) << bits) - 1
    return wrap(np.right_shift(a & mask, b), bits)


def clz(a):
    a = i64(a) & 0xffffffff
    out = np.zeros(a.shape, np.int64)
    flat = a.reshape(-1)
    o = out.reshape(-1)
    for i, v in enumerate(flat):
        o[i] = clz32(v)
    return out


def int_abs(a, t):
    a = i64(a)
    require(a != imin(t), 'ABS of the type minimum')
    return np.abs(a)


def negate_int(a, izp, ozp, t):
    a = i64(a)
    acc = -(a - izp) + ozp
    require((acc >= imin('i32')) & (acc <= imax('i32')), 'NEGATE overflow')
    return np.clip(acc, imin(t), imax(t))


def fp_max(a, b, nan_mode):
    """MAXIMUM (ties return input1)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    r = np.where(a >= b, a, b)
    an, bn = np.isnan(a), np.isnan(b)
    if nan_mode == 'PROPAGATE':
        r = np.where(an | bn, np.nan, r)
    else:
        r = np.where(an & ~bn, b, r)
        r = np.where(bn & ~an, a, r)
        r = np.where(an & bn, np.nan, r)
    return r


def fp_min(a, b, nan_mode):
    """MINIMUM (ties return input2)."""
    a, b = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
    r = np.where(a < b, a, b)
    an, bn = np.isnan(a), np.isnan(b)
    if nan_mode == 'PROPAGATE':
        r = np.where(an | bn, np.nan, r)
    else:
        r = np.where(an & ~bn, b, r)
        r = np.where(bn & ~an, a, r)
        r = np.where(an & bn, np.nan, r)
    return r


def clamp(x, lo, hi, nan_mode, fp):
    if not fp:
        return np.clip(i64(x), lo, hi)
    x = np.asarray(x, np.float64)
    r = np.minimum(np.maximum(x, lo), hi)
    if nan_mode == 'PROPAGATE':
        return np.where(np.isnan(x), np.nan, r)
    return np.where(np.isnan(x), lo, r)


def table_i8(x, table):
    return i64(table)[i64(x) + 128]


def table_i16(x, table):
    x = i64(x)
    tab = i64(table)
    idx = asr(x + 32768, 7)
    frac = (x + 32768) & 0x7f
    base = tab[idx]
    nxt = tab[np.minimum(idx + 1, 512)]
    slope = nxt - base
    require((slope >= -32768) & (slope <= 32767), 'TABLE slope out of i16 range')
    return (base << 7) + slope * frac


def erf(x):
    f = np.vectorize(math.erf, otypes=[np.float64])
    return f(np.asarray(x, np.float64))


# ------------------------------------------------------------------------------------------------
# Tensor operators
# ------------------------------------------------------------------------------------------------

def _dot(xs, w, axes):
    """tensordot that works for int64 and float64."""
    return np.tensordot(xs, w, axes=axes)


def conv2d(x, w, b, izp, wzp, pad, stride, dil, fp):
    """x [N,IH,IW,IC], w [OC,KH,KW,IC], b [BC]; returns acc + bias ([N,OH,OW,OC])."""
    dt = np.float64 if fp else np.int64
    x = np.asarray(x, dt) - izp
    w = np.asarray(w, dt) - wzp
    N, IH, IW, IC = x.shape
    OC, KH, KW, _ = w.shape
    pt, pb, pl, pr = pad
    sy, sx = stride
    dy, dx = dil
    OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
    OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
    xp = np.zeros((N, IH + pt + pb, IW + pl + pr, IC), dt)
    xp[:, pt:pt + IH, pl:pl + IW, :] = x
    out = np.zeros((N, OH, OW, OC), dt)
    for ky in range(KH):
        for kx in range(KW):
            y0, x0 = ky * dy, kx * dx
            xs = xp[:, y0:y0 + (OH - 1) * sy + 1:sy, x0:x0 + (OW - 1) * sx + 1:sx, :]
            out += _dot(xs, w[:, ky, kx, :], ([3], [1]))
    return out + np.asarray(b, dt).reshape(1, 1, 1, -1)


def conv3d(x, w, b, izp, wzp, pad, stride, dil, fp):
    """x [N,ID,IH,IW,IC], w [OC,KD,KH,KW,IC]; pad [d0,d1,top,bottom,left,right]."""
    dt = np.float64 if fp else np.int64
    x = np.asarray(x, dt) - izp
    w = np.asarray(w, dt) - wzp
    N, ID, IH, IW, IC = x.shape
    OC, KD, KH, KW, _ = w.shape
    p0, p1, pt, pb, pl, pr = pad
    sd, sy, sx = stride
    dd, dy, dx = dil
    OD = (ID - 1 + p0 + p1 - (KD - 1) * dd) // sd + 1
    OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
    OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
    xp = np.zeros((N, ID + p0 + p1, IH + pt + pb, IW + pl + pr, IC), dt)
    xp[:, p0:p0 + ID, pt:pt + IH, pl:pl + IW, :] = x
    out = np.zeros((N, OD, OH, OW, OC), dt)
    for kd in range(KD):
        for ky in range(KH):
            for kx in range(KW):
                z0, y0, x0 = kd * dd, ky * dy, kx * dx
                xs = xp[:, z0:z0 + (OD - 1) * sd + 1:sd, y0:y0 + (OH - 1) * sy + 1:sy,
                        x0:x0 + (OW - 1) * sx + 1:sx, :]
                out += _dot(xs, w[:, kd, ky, kx, :], ([4], [1]))
    return out + np.asarray(b, dt).reshape(1, 1, 1, 1, -1)


def depthwise_conv2d(x, w, b, izp, wzp, pad, stride, dil, fp):
    """x [N,IH,IW,C], w [KH,KW,C,M]; output channel c*M+m."""
    dt = np.float64 if fp else np.int64
    x = np.asarray(x, dt) - izp
    w = np.asarray(w, dt) - wzp
    N, IH, IW, C = x.shape
    KH, KW, _, M = w.shape
    pt, pb, pl, pr = pad
    sy, sx = stride
    dy, dx = dil
    OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
    OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
    xp = np.zeros((N, IH + pt + pb, IW + pl + pr, C), dt)
    xp[:, pt:pt + IH, pl:pl + IW, :] = x
    out = np.zeros((N, OH, OW, C, M), dt)
    for ky in range(KH):
        for kx in range(KW):
            y0, x0 = ky * dy, kx * dx
            xs = xp[:, y0:y0 + (OH - 1) * sy + 1:sy, x0:x0 + (OW - 1) * sx + 1:sx, :]
            out += xs[..., None] * w[ky, kx][None, None, None, :, :]
    return out.reshape(N, OH, OW, C * M) + np.asarray(b, dt).reshape(1, 1, 1, -1)


def transpose_conv2d(x, w, b, izp, wzp, out_pad, stride, fp):
    """x [N,IH,IW,IC], w [OC,KH,KW,IC]; out_pad [top,bottom,left,right]."""
    dt = np.float64 if fp else np.int64
    x = np.asarray(x, dt) - izp
    w = np.asarray(w, dt) - wzp
    N, IH, IW, IC = x.shape
    OC, KH, KW, _ = w.shape
    pt, pb, pl, pr = out_pad
    sy, sx = stride
    OH = (IH - 1) * sy + pt + pb + KH
    OW = (IW - 1) * sx + pl + pr + KW
    out = np.zeros((N, OH, OW, OC), dt)
    iy = np.arange(IH)
    ix = np.arange(IW)
    for ky in range(KH):
        for kx in range(KW):
            oy = iy * sy + pt + ky
            ox = ix * sx + pl + kx
            vy = (oy >= 0) & (oy < OH)
            vx = (ox >= 0) & (ox < OW)
            if not vy.any() or not vx.any():
                continue
            contrib = _dot(x, w[:, ky, kx, :], ([3], [1]))  # N,IH,IW,OC
            contrib = contrib[:, vy][:, :, vx]
            out[:, oy[vy][:, None], ox[vx][None, :], :] += contrib
    return out + np.asarray(b, dt).reshape(1, 1, 1, -1)


def matmul(a, b, azp, bzp, fp):
    dt = np.float64 if fp else np.int64
    return np.matmul(np.asarray(a, dt) - azp, np.asarray(b, dt) - bzp)


def _pool_windows(x, kernel, stride, pad, fill):
    """Returns (windows [N,OH,OW,C,KH*KW], valid mask [OH,OW,KH*KW])."""
    N, IH, IW, C = x.shape
    ky, kx = kernel
    sy, sx = stride
    pt, pb, pl, pr = pad
    OH = (IH + pt + pb - ky) // sy + 1
    OW = (IW + pl + pr - kx) // sx + 1
    xp = np.full((N, IH + pt + pb, IW + pl + pr, C), fill, dtype=x.dtype)
    xp[:, pt:pt + IH, pl:pl + IW, :] = x
    vm = np.zeros((IH + pt + pb, IW + pl + pr), bool)
    vm[pt:pt + IH, pl:pl + IW] = True
    wins, valid = [], []
    for a in range(ky):
        for c in range(kx):
            wins.append(xp[:, a:a + (OH - 1) * sy + 1:sy, c:c + (OW - 1) * sx + 1:sx, :])
            valid.append(vm[a:a + (OH - 1) * sy + 1:sy, c:c + (OW - 1) * sx + 1:sx])
    return np.stack(wins, axis=-1), np.stack(valid, axis=-1)


def avg_pool2d_int(x, izp, ozp, kernel, stride, pad, t):
    x = i64(x) - izp
    w, v = _pool_windows(x, kernel, stride, pad, 0)
    s = np.sum(np.where(v[None, :, :, None, :], w, 0), axis=-1)
    cnt = np.sum(v, axis=-1)  # OH,OW
    out = np.zeros(s.shape, np.int64)
    for oy in range(s.shape[1]):
        for ox in range(s.shape[2]):
            m, sh = reciprocal_scale(int(cnt[oy, ox]))
            out[:, oy, ox, :] = apply_scale_32(s[:, oy, ox, :], m, sh, False)
    return np.clip(out + ozp, imin(t), imax(t))


def avg_pool2d_fp(x, kernel, stride, pad):
    x = np.asarray(x, np.float64)
    w, v = _pool_windows(x, kernel, stride, pad, 0.0)
    s = np.sum(np.where(v[None, :, :, None, :], w, 0.0), axis=-1)
    cnt = np.sum(v, axis=-1)
    return s / cnt[None, :, :, None]


def max_pool2d(x, kernel, stride, pad, fp, nan_mode='PROPAGATE'):
    if not fp:
        x = i64(x)
        w, v = _pool_windows(x, kernel, stride, pad, np.iinfo(np.int64).min)
        return np.max(np.where(v[None, :, :, None, :], w, np.iinfo(np.int64).min), axis=-1)
    x = np.asarray(x, np.float64)
    w, v = _pool_windows(x, kernel, stride, pad, np.nan)
    w = np.moveaxis(w, -1, 0)
    v = np.moveaxis(v, -1, 0)
    acc = np.full(w.shape[1:], -np.inf if nan_mode == 'PROPAGATE' else np.nan)
    for k in range(w.shape[0]):
        vk = v[k][None, :, :, None]
        acc = np.where(vk, fp_max(acc, w[k], nan_mode), acc)
    return acc


def fft2d(re, im, inverse):
    re = np.asarray(re, np.float64)
    im = np.asarray(im, np.float64)
    N, H, W = re.shape
    sign = 1.0 if inverse else -1.0
    ky = np.arange(H)
    kx = np.arange(W)
    # angle = 2*pi*(iy*oy/H + ix*ox/W) = 2*pi*p/(H*W) with the integer phase p reduced mod H*W;
    # multiples of a quarter turn get their exact cos/sin (0, +-1), like exact arithmetic
    M = H * W
    py = ((ky[:, None] * ky[None, :]) % H) * W  # [oy, iy]
    px = ((kx[:, None] * kx[None, :]) % W) * H  # [ox, ix]
    p = (py[:, None, :, None] + px[None, :, None, :]) % M  # oy, ox, iy, ix
    ang = 2 * np.pi * p / M
    c = np.cos(ang)
    s = np.sin(ang)
    quarter = (4 * p) % M == 0
    q = (4 * p) // M
    c = np.where(quarter, np.choose(q % 4, [1.0, 0.0, -1.0, 0.0]), c)
    s = np.where(quarter, np.choose(q % 4, [0.0, 1.0, 0.0, -1.0]), s)
    s = sign * s
    # out_re = sum re*cos - im*sin ; out_im = sum re*sin + im*cos   (with e^{sign i a})
    ore = np.einsum('nij,abij->nab', re, c) - np.einsum('nij,abij->nab', im, s)
    oim = np.einsum('nij,abij->nab', re, s) + np.einsum('nij,abij->nab', im, c)
    bre = np.einsum('nij,abij->nab', np.abs(re), np.abs(c)) + np.einsum('nij,abij->nab', np.abs(im), np.abs(s))
    bim = np.einsum('nij,abij->nab', np.abs(re), np.abs(s)) + np.einsum('nij,abij->nab', np.abs(im), np.abs(c))
    return ore, oim, bre, bim


def rfft2d(re):
    re = np.asarray(re, np.float64)
    N, H, W = re.shape
    ore, oim, bre, bim = fft2d(re, np.zeros_like(re), False)
    k = W // 2 + 1
    return ore[:, :, :k], oim[:, :, :k], bre[:, :, :k], bim[:, :, :k]


# ------------------------------------------------------------------------------------------------
# Type conversion
# ------------------------------------------------------------------------------------------------

def rescale(x, mult, shift, izp, ozp, in_t, out_t, scale32, rounding, per_channel,
            input_unsigned, output_unsigned):
    """Integer RESCALE (SINGLE_ROUND / DOUBLE_ROUND). x holds the signed bit values of in_t."""
    x = i64(x)
    ibits = INT_BITS[in_t]
    obits = INT_BITS[out_t]

    def ext(v, bits, uns):
        v = i64(v)
        return v & ((1 << bits) - 1) if uns else v
    v = ext(x, ibits, input_unsigned)
    iz = int(ext(izp, ibits, input_unsigned))
    oz = int(ext(ozp, obits, output_unsigned))
    mult = i64(mult).reshape(-1)
    shift = i64(shift).reshape(-1)
    if per_channel:
        m = mult.reshape((1,) * (x.ndim - 1) + (-1,))
        s = shift.reshape((1,) * (x.ndim - 1) + (-1,))
    else:
        m, s = mult[0], shift[0]
    d = v - iz
    if scale32:
        r = apply_scale_32(d, m, s, rounding == 'DOUBLE_ROUND')
    else:
        r = apply_scale_16(d, m, s)
    r = r + oz
    require((r >= imin('i32')) & (r <= imax('i32')), 'RESCALE result + output_zp exceeds i32')
    if output_unsigned:
        r = np.clip(r, 0, (1 << obits) - 1)
        return wrap(r, obits)
    return np.clip(r, imin(out_t), imax(out_t))


def rescale_inexact_ref(x, mult, shift, izp, in_t, per_channel, input_unsigned):
    """fp64 value (x - izp) * m * 2^-shift used by the RESCALE_INEXACT rule."""
    x = i64(x)
    ibits = INT_BITS[in_t]
    v = x & ((1 << ibits) - 1) if input_unsigned else x
    iz = (int(izp) & ((1 << ibits) - 1)) if input_unsigned else int(izp)
    mult = np.asarray(mult, np.float64).reshape(-1)
    shift = np.asarray(shift, np.float64).reshape(-1)
    if per_channel:
        m = mult.reshape((1,) * (x.ndim - 1) + (-1,))
        s = shift.reshape((1,) * (x.ndim - 1) + (-1,))
    else:
        m, s = mult[0], shift[0]
    return (v - iz).astype(np.float64) * m * np.exp2(-s)


def cast_fp_to_int(x, out_t):
    x = np.asarray(x, np.float64)
    require(~np.isnan(x), 'CAST of NaN to integer')
    r = np.clip(np.round(np.clip(x, -2.0 ** 62, 2.0 ** 62)), imin(out_t), imax(out_t))
    return r.astype(np.int64)


# ------------------------------------------------------------------------------------------------
# Image
# ------------------------------------------------------------------------------------------------

def resize(x, scale, offset, border, mode, fp, out_hw=None):
    """RESIZE per spec pseudocode. Integer: i8->i8/i32, i16->i16/i48 (BILINEAR scaled by
    scale_y_n*scale_x_n). Returns int64 or float64 [N,OH,OW,C]."""
    syn, syd, sxn, sxd = scale
    oy_, ox_ = offset
    by, bx = border
    N, IH, IW, C = x.shape
    OH = ((IH - 1) * syn - oy_ + by) // syd + 1
    OW = ((IW - 1) * sxn - ox_ + bx) // sxd + 1
    if fp:
        x = np.asarray(x, np.float64)
        out = np.zeros((N, OH, OW, C), np.float64)
    else:
        x = i64(x)
        out = np.zeros((N, OH, OW, C), np.int64)
    for oy in range(OH):
        y = oy * syd + oy_
        iy = y // syn  # floor division (idiv_floor)
        dy = y - iy * syn
        iy0 = max(iy, 0)
        iy1 = min(iy + 1, IH - 1)
        iy0 = min(iy0, IH - 1)
        for ox in range(OW):
            xx = ox * sxd + ox_
            ix = xx // sxn
            dx = xx - ix * sxn
            ix0 = max(ix, 0)
            ix1 = min(ix + 1, IW - 1)
            ix0 = min(ix0, IW - 1)
            if mode == 'NEAREST':
                if fp:
                    ny = iy1 if (dy / syn) >= 0.5 else iy0
                    nx = ix1 if (dx / sxn) >= 0.5 else ix0
                else:
                    ny = iy1 if 2 * dy >= syn else iy0
                    nx = ix1 if 2 * dx >= sxn else ix0
                out[:, oy, ox, :] = x[:, ny, nx, :]
            else:
                v00 = x[:, iy0, ix0, :]
                v01 = x[:, iy0, ix1, :]
                v10 = x[:, iy1, ix0, :]
                v11 = x[:, iy1, ix1, :]
                if fp:
                    fy = dy / syn
                    fx = dx / sxn
                    acc = v00 * (1 - fy) * (1 - fx) + v01 * (1 - fy) * fx + v10 * fy * (1 - fx) + v11 * fy * fx
                else:
                    acc = (v00 * (syn - dy) * (sxn - dx) + v01 * (syn - dy) * dx + v10 * dy * (sxn - dx) +
                           v11 * dy * dx)
                out[:, oy, ox, :] = acc
    return out


# ------------------------------------------------------------------------------------------------
# Reductions / layout
# ------------------------------------------------------------------------------------------------

def argmax(x, axis, fp, nan_mode='PROPAGATE'):
    x = np.asarray(x)
    xm = np.moveaxis(x, axis, -1)
    K = xm.shape[-1]
    if not fp:
        return np.argmax(xm, axis=-1).astype(np.int64)
    xm = xm.astype(np.float64)
    flat = xm.reshape(-1, K)
    out = np.zeros(flat.shape[0], np.int64)
    for r in range(flat.shape[0]):
        row = flat[r]
        best_i, best = 0, (np.nan if nan_mode == 'IGNORE' else -np.inf)
        for i, v in enumerate(row):
            if nan_mode == 'PROPAGATE':
                if np.isnan(v):
                    if not np.isnan(best):
                        best_i, best = i, v
                elif not np.isnan(best) and v > best:
                    best_i, best = i, v
            else:
                if np.isnan(v):
                    continue
                if np.isnan(best) or v > best:
                    best_i, best = i, v
        out[r] = best_i
    return out.reshape(xm.shape[:-1])


def reduce_fp_minmax(x, axis, is_max, nan_mode):
    x = np.moveaxis(np.asarray(x, np.float64), axis, 0)
    acc = np.full(x.shape[1:], (-np.inf if is_max else np.inf) if nan_mode == 'PROPAGATE' else np.nan)
    for k in range(x.shape[0]):
        acc = fp_max(acc, x[k], nan_mode) if is_max else fp_min(acc, x[k], nan_mode)
    return np.expand_dims(acc, axis)
