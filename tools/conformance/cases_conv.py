"""Cases: convolutions, MATMUL, pooling, FFT, reductions, ARGMAX, RESIZE."""
import numpy as np

import cmpmodes as C
import refimpl as R
from casebase import Case, put_edges, rand_fp, rand_int
from common import imax, imin, is_fp, round_fp
from registry import gen

FB_ACC = {'i32': 'INT32', 'i48': 'INT48', 'fp16': 'FP16', 'fp32': 'FP32'}

# (in_t, weight_t, out_t, acc_t)
CONV_ROWS = [
    ('i8', 'i8', 'i32', 'i32'), ('i8', 'i4', 'i32', 'i32'), ('i16', 'i8', 'i48', 'i48'),
    ('fp16', 'fp16', 'fp16', 'fp16'), ('fp16', 'fp16', 'fp16', 'fp32'), ('fp32', 'fp32', 'fp32', 'fp32'),
    ('bf16', 'bf16', 'bf16', 'fp32'), ('fp8e4m3', 'fp8e4m3', 'fp16', 'fp16'), ('fp8e5m2', 'fp8e5m2', 'fp16', 'fp16'),
]


def row_name(in_t, w_t, out_t, acc_t):
    return '%sx%s_%s_acc%s' % (in_t, w_t, out_t, acc_t)


def fit_pad(i, k, s, d, p_lo, p_hi):
    """Smallest pad_hi >= p_hi that makes (i - 1 + p_lo + pad_hi - (k - 1) * d) divisible by s."""
    while (i - 1 + p_lo + p_hi - (k - 1) * d) % s:
        p_hi += 1
    return p_hi


def data_for(rng, t, shape, lo=None, hi=None, fp_range=1.0):
    if is_fp(t):
        return rand_fp(rng, t, shape, -fp_range, fp_range)
    return rand_int(rng, t, shape, lo, hi)


def _conv_inputs(c, in_t, w_t, out_t, xshape, wshape, bc, izp, wzp, fp_scale=1.0):
    rng = c.rng
    fp = is_fp(in_t)
    x = data_for(rng, in_t, xshape, fp_range=fp_scale)
    w = data_for(rng, w_t, wshape, fp_range=fp_scale)
    if fp:
        b = rand_fp(rng, out_t, (bc,), -1.0, 1.0)
    elif out_t == 'i32':
        b = rand_int(rng, 'i32', (bc,), -100000, 100000)
    else:
        b = rand_int(rng, 'i48', (bc,), -(1 << 40), 1 << 40)
    return x, w, b


def _add_conv_operands(c, in_t, w_t, out_t, x, w, b, izp, wzp, weights_const=True):
    c.inp('input', in_t, x)
    if weights_const:
        c.const('weight', w_t, w)
    else:
        c.inp('weight', w_t, w)
    c.const('bias', out_t, b)
    c.const('input_zp', in_t, np.array([izp]))
    c.const('weight_zp', w_t, np.array([wzp]))
    return ['input', 'weight', 'bias', 'input_zp', 'weight_zp']


def _fp_conv_compare(c, fn, ks, in_t, out_t, acc_t, x, w, b, local_bound):
    ref = fn(x, w, b)
    ax, aw, ab = np.abs(x), np.abs(w), np.abs(b)
    if not local_bound:
        ax = np.full_like(ax, ax.max() if ax.size else 0.0)
        aw = np.full_like(aw, aw.max() if aw.size else 0.0)
    bnd = fn(ax, aw, ab)
    return ref, C.dot_product(ks, acc_t, out_t, bool(np.any(b != 0)), in_t), bnd


CONV2D_PARAMS = [
    # tag, N, IH, IW, IC, OC, KH, KW, pad(top,left), stride, dilation, bias_bc1
    ('k3p1', 1, 5, 6, 3, 4, 3, 3, (1, 1), (1, 1), (1, 1), False),
    ('k2x3s23', 2, 7, 8, 2, 3, 2, 3, (0, 2), (2, 3), (1, 1), False),
    ('dil2', 1, 9, 9, 2, 2, 3, 3, (2, 2), (1, 1), (2, 2), True),
    ('k1', 1, 3, 5, 7, 5, 1, 1, (0, 0), (1, 1), (1, 1), False),
    ('odd', 1, 6, 4, 5, 3, 3, 2, (1, 0), (2, 1), (1, 2), False),
]


@gen('CONV2D')
def conv2d_cases(ctx):
    cases = []
    for row in CONV_ROWS:
        in_t, w_t, out_t, acc_t = row
        fp = is_fp(in_t)
        for pi, (tag, N, IH, IW, IC, OC, KH, KW, (pt, pl), (sy, sx), (dy, dx), bc1) in enumerate(CONV2D_PARAMS):
            if fp and in_t.startswith('fp8') and pi > 1:
                continue
            zps = [(0, 0)]
            if in_t == 'i8':
                zps = [(0, 0), (-128 if w_t == 'i8' else 17, 0)] + ([(5, -3)] if w_t == 'i8' else [])
            for izp, wzp in zps:
                if pi > 1 and (izp, wzp) != (0, 0) and zps.index((izp, wzp)) > 1:
                    continue
                pb = fit_pad(IH, KH, sy, dy, pt, pt)
                pr = fit_pad(IW, KW, sx, dx, pl, pl)
                pad = (pt, pb, pl, pr)
                OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
                OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
                vt = tag + ('_zp%d_%d' % (izp, wzp) if (izp, wzp) != (0, 0) else '')
                c = Case('CONV2D', row_name(*row), (N, IH, IW, IC), vt, ctx=ctx)
                bc = 1 if bc1 else OC
                x, w, b = _conv_inputs(c, in_t, w_t, out_t, (N, IH, IW, IC), (OC, KH, KW, IC), bc, izp, wzp)
                if not fp and tag == 'k3p1' and izp == 0:
                    x = put_edges(x, [imin(in_t)] * 20 + [imax(in_t)] * 10)
                    w = put_edges(w, [imin(w_t) if w_t != 'i4' else -7] * 12 + [imax(w_t)] * 6)
                ins = _add_conv_operands(c, in_t, w_t, out_t, x, w, b, izp, wzp, weights_const=(pi != 3))
                local_bound = pi != 4
                attr = {'pad': list(pad), 'stride': [sy, sx], 'dilation': [dy, dx], 'local_bound': local_bound,
                        'acc_type': FB_ACC[acc_t]}
                fn = lambda x_, w_, b_, fp=fp: R.conv2d(x_, w_, b_, izp, wzp, pad, (sy, sx), (dy, dx), fp)
                if fp:
                    ref, cmp_, bnd = _fp_conv_compare(c, fn, KH * KW * IC, in_t, out_t, acc_t, x, w, b, local_bound)
                    c.out('output', out_t, (N, OH, OW, OC), ref, cmp_, bnd)
                else:
                    c.out('output', out_t, (N, OH, OW, OC), fn(x, w, b))
                c.node('CONV2D', ins, ['output'], attr)
                c.quick = pi == 0
                cases.append(c)
    return cases


@gen('CONV3D')
def conv3d_cases(ctx):
    cases = []
    params = [
        # tag, N, ID, IH, IW, IC, OC, KD, KH, KW, pad(d0,top,left), stride(d,y,x), dil(d,y,x)
        ('k3p1', 1, 3, 4, 5, 2, 3, 2, 3, 3, (1, 1, 1), (1, 1, 1), (1, 1, 1)),
        ('s2d2', 2, 5, 6, 4, 3, 2, 2, 2, 1, (0, 1, 0), (2, 2, 1), (2, 1, 1)),
    ]
    for row in CONV_ROWS:
        in_t, w_t, out_t, acc_t = row
        fp = is_fp(in_t)
        for pi, (tag, N, ID, IH, IW, IC, OC, KD, KH, KW, (p0, pt, pl), (sd, sy, sx), (dd, dy, dx)) in \
                enumerate(params):
            if in_t.startswith('fp8') and pi > 0:
                continue
            izp, wzp = ((-7, 3) if w_t == 'i8' else (9, 0)) if (in_t == 'i8' and pi == 1) else (0, 0)
            p1 = fit_pad(ID, KD, sd, dd, p0, p0)
            pb = fit_pad(IH, KH, sy, dy, pt, pt)
            pr = fit_pad(IW, KW, sx, dx, pl, pl)
            pad = (p0, p1, pt, pb, pl, pr)
            OD = (ID - 1 + p0 + p1 - (KD - 1) * dd) // sd + 1
            OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
            OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
            c = Case('CONV3D', row_name(*row), (N, ID, IH, IW, IC), tag, ctx=ctx)
            x, w, b = _conv_inputs(c, in_t, w_t, out_t, (N, ID, IH, IW, IC), (OC, KD, KH, KW, IC), OC, izp, wzp)
            ins = _add_conv_operands(c, in_t, w_t, out_t, x, w, b, izp, wzp)
            attr = {'pad': list(pad), 'stride': [sd, sy, sx], 'dilation': [dd, dy, dx], 'local_bound': True,
                    'acc_type': FB_ACC[acc_t]}
            fn = lambda x_, w_, b_, fp=fp: R.conv3d(x_, w_, b_, izp, wzp, pad, (sd, sy, sx), (dd, dy, dx), fp)
            oshape = (N, OD, OH, OW, OC)
            if fp:
                ref, cmp_, bnd = _fp_conv_compare(c, fn, KD * KH * KW * IC, in_t, out_t, acc_t, x, w, b, True)
                c.out('output', out_t, oshape, ref, cmp_, bnd)
            else:
                c.out('output', out_t, oshape, fn(x, w, b))
            c.node('CONV3D', ins, ['output'], attr)
            c.quick = pi == 0
            cases.append(c)
    return cases


@gen('DEPTHWISE_CONV2D')
def depthwise_cases(ctx):
    cases = []
    params = [
        # tag, N, IH, IW, C, M, KH, KW, pad(top,left), stride, dilation
        ('k3p1m2', 1, 5, 5, 3, 2, 3, 3, (1, 1), (1, 1), (1, 1)),
        ('s2m1', 2, 7, 6, 4, 1, 2, 3, (0, 1), (2, 2), (1, 1)),
        ('dil2m3', 1, 8, 7, 2, 3, 3, 2, (2, 0), (1, 2), (2, 1)),
    ]
    for row in CONV_ROWS:
        in_t, w_t, out_t, acc_t = row
        fp = is_fp(in_t)
        for pi, (tag, N, IH, IW, Cc, M, KH, KW, (pt, pl), (sy, sx), (dy, dx)) in enumerate(params):
            if in_t.startswith('fp8') and pi > 0:
                continue
            izp, wzp = ((-100, 50) if w_t == 'i8' else (3, 0)) if (in_t == 'i8' and pi == 1) else (0, 0)
            pb = fit_pad(IH, KH, sy, dy, pt, pt)
            pr = fit_pad(IW, KW, sx, dx, pl, pl)
            pad = (pt, pb, pl, pr)
            OH = (IH - 1 + pt + pb - (KH - 1) * dy) // sy + 1
            OW = (IW - 1 + pl + pr - (KW - 1) * dx) // sx + 1
            c = Case('DEPTHWISE_CONV2D', row_name(*row), (N, IH, IW, Cc), tag, ctx=ctx)
            bc = 1 if pi == 2 else Cc * M
            x, w, b = _conv_inputs(c, in_t, w_t, out_t, (N, IH, IW, Cc), (KH, KW, Cc, M), bc, izp, wzp)
            ins = _add_conv_operands(c, in_t, w_t, out_t, x, w, b, izp, wzp)
            attr = {'pad': list(pad), 'stride': [sy, sx], 'dilation': [dy, dx], 'local_bound': True,
                    'acc_type': FB_ACC[acc_t]}
            fn = lambda x_, w_, b_, fp=fp: R.depthwise_conv2d(x_, w_, b_, izp, wzp, pad, (sy, sx), (dy, dx), fp)
            oshape = (N, OH, OW, Cc * M)
            if fp:
                ref, cmp_, bnd = _fp_conv_compare(c, fn, KH * KW, in_t, out_t, acc_t, x, w, b, True)
                c.out('output', out_t, oshape, ref, cmp_, bnd)
            else:
                c.out('output', out_t, oshape, fn(x, w, b))
            c.node('DEPTHWISE_CONV2D', ins, ['output'], attr)
            c.quick = pi == 0
            cases.append(c)
    return cases


@gen('TRANSPOSE_CONV2D')
def transpose_conv_cases(ctx):
    cases = []
    params = [
        # tag, N, IH, IW, IC, OC, KH, KW, out_pad, stride
        ('k3s1', 1, 4, 5, 3, 2, 3, 3, (0, 0, 0, 0), (1, 1)),
        ('k3s2', 2, 3, 4, 2, 3, 3, 3, (0, 1, 1, 0), (2, 2)),
        ('negpad', 1, 5, 4, 2, 2, 4, 3, (-1, -2, -2, 1), (2, 3)),
        ('k1s3', 1, 3, 3, 4, 5, 1, 1, (1, 2, 0, 2), (3, 1)),
    ]
    for row in CONV_ROWS:
        in_t, w_t, out_t, acc_t = row
        fp = is_fp(in_t)
        for pi, (tag, N, IH, IW, IC, OC, KH, KW, opad, (sy, sx)) in enumerate(params):
            if in_t.startswith('fp8') and pi > 1:
                continue
            izp, wzp = ((-20, 11) if w_t == 'i8' else (-1, 0)) if (in_t == 'i8' and pi == 1) else (0, 0)
            OH = (IH - 1) * sy + opad[0] + opad[1] + KH
            OW = (IW - 1) * sx + opad[2] + opad[3] + KW
            c = Case('TRANSPOSE_CONV2D', row_name(*row), (N, IH, IW, IC), tag, ctx=ctx)
            x, w, b = _conv_inputs(c, in_t, w_t, out_t, (N, IH, IW, IC), (OC, KH, KW, IC), OC, izp, wzp)
            ins = _add_conv_operands(c, in_t, w_t, out_t, x, w, b, izp, wzp)
            attr = {'out_pad': list(opad), 'stride': [sy, sx], 'local_bound': True, 'acc_type': FB_ACC[acc_t]}
            fn = lambda x_, w_, b_, fp=fp: R.transpose_conv2d(x_, w_, b_, izp, wzp, opad, (sy, sx), fp)
            oshape = (N, OH, OW, OC)
            if fp:
                ref, cmp_, bnd = _fp_conv_compare(c, fn, KH * KW * IC, in_t, out_t, acc_t, x, w, b, True)
                c.out('output', out_t, oshape, ref, cmp_, bnd)
            else:
                c.out('output', out_t, oshape, fn(x, w, b))
            c.node('TRANSPOSE_CONV2D', ins, ['output'], attr)
            c.quick = pi == 1
            cases.append(c)
    return cases


MATMUL_ROWS = [('i8', 'i32'), ('i16', 'i48'), ('fp16', 'fp16'), ('fp16', 'fp32'), ('fp32', 'fp32'),
               ('bf16', 'fp32'), ('fp8e4m3', 'fp16'), ('fp8e5m2', 'fp16')]


@gen('MATMUL')
def matmul_cases(ctx):
    cases = []
    for in_t, out_t in MATMUL_ROWS:
        fp = is_fp(in_t)
        for pi, (N, H, Cc, W) in enumerate([(1, 4, 5, 6), (2, 3, 17, 2), (3, 1, 1, 1)]):
            zplist = [(0, 0)] + ([(-128, 127), (7, -3)] if in_t == 'i8' and pi == 0 else [])
            for azp, bzp in zplist:
                vt = 'zp%d_%d' % (azp, bzp) if (azp, bzp) != (0, 0) else ''
                c = Case('MATMUL', '%s_%s' % (in_t, out_t), (N, H, Cc, W), vt, ctx=ctx)
                a = data_for(c.rng, in_t, (N, H, Cc))
                b = data_for(c.rng, in_t, (N, Cc, W))
                if not fp and pi == 0 and (azp, bzp) == (0, 0):
                    a = put_edges(a, [imin(in_t)] * 5 + [imax(in_t)] * 5)
                    b = put_edges(b, [imin(in_t)] * 6 + [imax(in_t)] * 6)
                c.inp('A', in_t, a)
                if pi == 1:
                    c.const('B', in_t, b)
                else:
                    c.inp('B', in_t, b)
                c.const('A_zp', in_t, np.array([azp]))
                c.const('B_zp', in_t, np.array([bzp]))
                if fp:
                    ref = R.matmul(a, b, 0, 0, True)
                    bnd = R.matmul(np.abs(a), np.abs(b), 0, 0, True)
                    acc = 'fp16' if in_t.startswith('fp8') else out_t
                    c.out('output', out_t, (N, H, W), ref, C.dot_product(Cc, acc, out_t, False, in_t), bnd)
                else:
                    c.out('output', out_t, (N, H, W), R.matmul(a, b, azp, bzp, False))
                c.node('MATMUL', ['A', 'B', 'A_zp', 'B_zp'], ['output'])
                c.quick = pi == 0
                cases.append(c)
    return cases


POOL_PARAMS = [
    # tag, N, IH, IW, C, kernel, stride, pad(top,left) ; bottom/right fitted (must stay < kernel)
    ('k2s1p01', 1, 2, 2, 1, (2, 2), (1, 1), (0, 0), (1, 1)),
    ('k3s2p1', 2, 7, 6, 3, (3, 3), (2, 2), (1, 1), None),
    ('k1', 1, 3, 4, 5, (1, 1), (1, 1), (0, 0), None),
    ('global', 1, 5, 7, 2, (5, 7), (1, 1), (0, 0), None),
    ('k4x2s3', 1, 9, 6, 4, (4, 2), (3, 2), (2, 1), None),
]


def _pool_geometry(IH, IW, kernel, stride, ptl, pbr):
    ky, kx = kernel
    sy, sx = stride
    pt, pl = ptl
    if pbr is None:
        pb = pt
        while (IH + pt + pb - ky) % sy:
            pb += 1
        pr = pl
        while (IW + pl + pr - kx) % sx:
            pr += 1
    else:
        pb, pr = pbr
    assert max(pt, pb) < ky and max(pl, pr) < kx, 'pool padding must be smaller than the kernel'
    OH = (IH + pt + pb - ky) // sy + 1
    OW = (IW + pl + pr - kx) // sx + 1
    return (pt, pb, pl, pr), OH, OW


@gen('AVG_POOL2D')
def avg_pool_cases(ctx):
    cases = []
    rows = [('i8', 'i32'), ('i16', 'i32'), ('fp16', 'fp16'), ('fp16', 'fp32'), ('fp32', 'fp32'), ('bf16', 'fp32'),
            ('fp8e4m3', 'fp16'), ('fp8e5m2', 'fp16')]
    for t, acc in rows:
        fp = is_fp(t)
        for pi, (tag, N, IH, IW, Cc, kernel, stride, ptl, pbr) in enumerate(POOL_PARAMS):
            if t.startswith('fp8') and pi > 1:
                continue
            zps = [(0, 0)] + ([(-128, 127), (10, -5)] if t == 'i8' and pi in (1, 4) else [])
            for izp, ozp in zps:
                pad, OH, OW = _pool_geometry(IH, IW, kernel, stride, ptl, pbr)
                if pad[1] >= kernel[0] or pad[3] >= kernel[1]:
                    continue
                vt = tag + ('_zp%d_%d' % (izp, ozp) if (izp, ozp) != (0, 0) else '')
                c = Case('AVG_POOL2D', '%s_acc%s' % (t, acc), (N, IH, IW, Cc), vt, ctx=ctx)
                if tag == 'k2s1p01' and not fp:
                    x = np.array([1, 2, 4, 8], np.int64).reshape(1, 2, 2, 1)
                else:
                    x = data_for(c.rng, t, (N, IH, IW, Cc), fp_range=4.0)
                if not fp and tag == 'k3s2p1' and izp == 0:
                    x = put_edges(x, [imax(t)] * 20 + [imin(t)] * 3)
                c.inp('input', t, x)
                c.const('input_zp', t, np.array([izp]))
                c.const('output_zp', t, np.array([ozp]))
                attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'acc_type': FB_ACC[acc]}
                if fp:
                    ref = R.avg_pool2d_fp(x, kernel, stride, pad)
                    bnd = R.avg_pool2d_fp(np.abs(x), kernel, stride, pad)
                    c.out('output', t, (N, OH, OW, Cc), ref, C.dot_product(kernel[0] * kernel[1], acc, t), bnd)
                else:
                    c.out('output', t, (N, OH, OW, Cc), R.avg_pool2d_int(x, izp, ozp, kernel, stride, pad, t))
                c.node('AVG_POOL2D', ['input', 'input_zp', 'output_zp'], ['output'], attr)
                c.quick = pi in (0, 1)
                cases.append(c)
    return cases


@gen('MAX_POOL2D')
def max_pool_cases(ctx):
    cases = []
    for t in ('i8', 'i16', 'fp16', 'fp32', 'bf16', 'fp8e4m3', 'fp8e5m2'):
        fp = is_fp(t)
        for pi, (tag, N, IH, IW, Cc, kernel, stride, ptl, pbr) in enumerate(POOL_PARAMS):
            if t.startswith('fp8') and pi > 1:
                continue
            modes = ['PROPAGATE', 'IGNORE'] if fp and pi == 1 and not t.startswith('fp8') else ['PROPAGATE']
            for nm in modes:
                pad, OH, OW = _pool_geometry(IH, IW, kernel, stride, ptl, pbr)
                c = Case('MAX_POOL2D', t, (N, IH, IW, Cc), tag + ('_' + nm.lower() if fp else ''), ctx=ctx)
                x = data_for(c.rng, t, (N, IH, IW, Cc), fp_range=50.0)
                if not fp:
                    x = put_edges(x, [imin(t)] * 9)
                elif pi == 1:
                    x = put_edges(x, [np.nan, -np.inf, 3.0, np.nan, np.nan, np.nan, np.nan, np.nan, np.nan])
                c.inp('input', t, x)
                attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad), 'nan_mode': nm}
                c.out('output', t, (N, OH, OW, Cc), R.max_pool2d(x, kernel, stride, pad, fp, nm))
                c.node('MAX_POOL2D', ['input'], ['output'], attr)
                c.quick = pi in (0, 1)
                cases.append(c)
    return cases


@gen('FFT2D', 'RFFT2D')
def fft_cases(ctx):
    cases = []
    for pi, (N, H, W) in enumerate([(1, 4, 8), (2, 8, 4), (1, 1, 2), (1, 16, 16)]):
        for inverse in (False, True):
            c = Case('FFT2D', 'fp32', (N, H, W), 'inv' if inverse else 'fwd', ctx=ctx)
            re = rand_fp(c.rng, 'fp32', (N, H, W), -2, 2)
            im = rand_fp(c.rng, 'fp32', (N, H, W), -2, 2)
            c.inp('input_real', 'fp32', re)
            c.inp('input_imag', 'fp32', im)
            ore, oim, bre, bim = R.fft2d(re, im, inverse)
            cmp_ = C.dot_product(2 * H * W, 'fp32', 'fp32')
            c.out('output_real', 'fp32', (N, H, W), ore, cmp_, bre)
            c.out('output_imag', 'fp32', (N, H, W), oim, cmp_, bim)
            c.node('FFT2D', ['input_real', 'input_imag'], ['output_real', 'output_imag'],
                   {'inverse': inverse, 'local_bound': True})
            c.quick = pi == 0
            cases.append(c)
        c = Case('RFFT2D', 'fp32', (N, H, W), ctx=ctx)
        re = rand_fp(c.rng, 'fp32', (N, H, W), -2, 2)
        c.inp('input_real', 'fp32', re)
        ore, oim, bre, bim = R.rfft2d(re)
        cmp_ = C.dot_product(2 * H * W, 'fp32', 'fp32')
        oshape = (N, H, W // 2 + 1)
        c.out('output_real', 'fp32', oshape, ore, cmp_, bre)
        c.out('output_imag', 'fp32', oshape, oim, cmp_, bim)
        c.node('RFFT2D', ['input_real'], ['output_real', 'output_imag'], {'local_bound': True})
        c.quick = pi == 0
        cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# Reductions and ARGMAX
# ------------------------------------------------------------------------------------------------

RED_SHAPES = [((23,), 0), ((3, 4, 5), 1), ((2, 3, 4, 5), 3), ((2, 2, 1, 3, 2, 3), 0), ((4, 1), 1)]


@gen('REDUCE_ALL', 'REDUCE_ANY', 'REDUCE_MAX', 'REDUCE_MIN', 'REDUCE_SUM', 'REDUCE_PRODUCT')
def reduce_cases(ctx):
    cases = []
    rows = [('REDUCE_ALL', 'bool'), ('REDUCE_ANY', 'bool')]
    rows += [(op, t) for op in ('REDUCE_MAX', 'REDUCE_MIN') for t in ('i8', 'i16', 'i32', 'fp16', 'fp32', 'bf16')]
    rows += [('REDUCE_SUM', t) for t in ('i32', 'fp16', 'fp32', 'bf16')]
    rows += [('REDUCE_PRODUCT', t) for t in ('fp16', 'fp32', 'bf16')]
    for op, t in rows:
        fp = is_fp(t)
        for si, (shp, axis) in enumerate(RED_SHAPES):
            if t not in ('i32', 'fp32', 'bool') and si >= 3:
                continue
            modes = ['PROPAGATE', 'IGNORE'] if fp and op in ('REDUCE_MAX', 'REDUCE_MIN') and si == 1 else [None]
            for nm in modes:
                vt = 'axis%d' % axis + ('_' + nm.lower() if nm else '')
                c = Case(op, t, shp, vt, ctx=ctx)
                oshape = tuple(1 if i == axis else d for i, d in enumerate(shp))
                cmp_, bnd = None, None
                if t == 'bool':
                    p = 0.85 if op == 'REDUCE_ALL' else 0.15
                    x = c.rng.random(shp) < p
                    exp = np.all(x, axis=axis, keepdims=True) if op == 'REDUCE_ALL' else \
                        np.any(x, axis=axis, keepdims=True)
                elif op in ('REDUCE_MAX', 'REDUCE_MIN'):
                    if fp:
                        x = rand_fp(c.rng, t, shp, -100, 100)
                        if nm:
                            x = put_edges(x, [np.nan, 1.0, np.nan, np.nan, np.nan, np.nan, 2.0, -np.inf])
                        exp = R.reduce_fp_minmax(x, axis, op == 'REDUCE_MAX', nm or 'PROPAGATE')
                    else:
                        x = rand_int(c.rng, t, shp)
                        x = put_edges(x, [imin(t), imax(t)])
                        exp = (np.max if op == 'REDUCE_MAX' else np.min)(x, axis=axis, keepdims=True)
                elif op == 'REDUCE_SUM':
                    if fp:
                        x = rand_fp(c.rng, t, shp, -10, 10)
                        exp = np.sum(x, axis=axis, keepdims=True)
                        bnd = np.sum(np.abs(x), axis=axis, keepdims=True)
                        acc = 'fp32' if t == 'bf16' else t
                        cmp_ = C.dot_product(shp[axis], acc, t)
                    else:
                        lim = (1 << 31) // shp[axis] - 1
                        x = rand_int(c.rng, t, shp, -lim, lim)
                        exp = np.sum(x, axis=axis, keepdims=True)
                else:  # REDUCE_PRODUCT
                    x = rand_fp(c.rng, t, shp, 0.5, 1.9)
                    x = np.where(c.rng.random(shp) < 0.4, -x, x)
                    exp = np.prod(x, axis=axis, keepdims=True)
                    cmp_ = C.reduce_product(shp[axis])
                c.inp('input', t, x)
                c.out('output', t, oshape, exp, cmp_, bnd)
                attr = {'axis': axis}
                if op in ('REDUCE_MAX', 'REDUCE_MIN'):
                    attr['nan_mode'] = nm or 'PROPAGATE'
                c.node(op, ['input'], ['output'], attr)
                c.quick = si == 1
                cases.append(c)
    return cases


@gen('ARGMAX')
def argmax_cases(ctx):
    cases = []
    shapes = [((13,), 0), ((3, 4, 5), 1), ((2, 3, 4, 5), 3), ((2, 1, 3, 2, 2, 3), 5), ((5, 3), 0)]
    for t in ('i8', 'i16', 'fp16', 'fp32', 'bf16', 'fp8e4m3', 'fp8e5m2'):
        fp = is_fp(t)
        for si, (shp, axis) in enumerate(shapes):
            if t not in ('i8', 'fp32') and si >= 3:
                continue
            modes = ['PROPAGATE', 'IGNORE'] if fp and si == 0 and not t.startswith('fp8') else ['PROPAGATE']
            for nm in modes:
                c = Case('ARGMAX', '%s_i32' % t, shp, 'axis%d' % axis + ('_' + nm.lower() if fp else ''), ctx=ctx)
                if fp:
                    x = rand_fp(c.rng, t, shp, -4, 4)
                    x = round_fp(np.round(x * 2) / 2, t)  # many ties
                    if si == 0:
                        x = put_edges(x, [1.0, np.nan, 3.0, 3.0, np.nan, -np.inf])
                else:
                    x = rand_int(c.rng, t, shp, -5, 5)  # many ties: first index wins
                    x = put_edges(x, [imin(t), imax(t), imax(t)])
                oshape = tuple(d for i, d in enumerate(shp) if i != axis)
                c.inp('input', t, x)
                c.out('output', 'i32', oshape, R.argmax(x, axis, fp, nm))
                c.node('ARGMAX', ['input'], ['output'], {'axis': axis, 'nan_mode': nm})
                c.quick = si in (0, 1)
                cases.append(c)
    return cases


# ------------------------------------------------------------------------------------------------
# RESIZE
# ------------------------------------------------------------------------------------------------

def _fit_border(I, n, d, off, border):
    """Smallest border' >= border with ((I-1)*n - off + border') % d == 0 (and < n)."""
    b = border
    while ((I - 1) * n - off + b) % d:
        b += 1
    if b >= n:
        b = border
        while ((I - 1) * n - off + b) % d:
            b -= 1
    return b


RESIZE_PARAMS = [
    # tag, N, IH, IW, C, scale(yn,yd,xn,xd), offset(y,x), border(y,x)
    ('up2', 1, 2, 2, 1, (4, 2, 4, 2), (-1, -1), (1, 1)),
    ('up3x2', 2, 3, 4, 2, (6, 2, 4, 2), (0, 1), (0, 0)),
    ('down2', 1, 8, 6, 3, (1, 2, 1, 2), (0, 0), (0, 0)),
    ('frac', 1, 5, 7, 2, (5, 3, 7, 4), (2, -3), (0, 0)),
    ('same', 1, 3, 3, 4, (2, 2, 2, 2), (0, 0), (0, 0)),
]


@gen('RESIZE')
def resize_cases(ctx):
    cases = []
    rows = [('i8', 'i32', 'BILINEAR'), ('i8', 'i8', 'NEAREST'), ('i16', 'i48', 'BILINEAR'), ('i16', 'i16', 'NEAREST'),
            ('fp16', 'fp16', 'BILINEAR'), ('fp16', 'fp16', 'NEAREST'), ('fp32', 'fp32', 'BILINEAR'),
            ('fp32', 'fp32', 'NEAREST'), ('bf16', 'bf16', 'BILINEAR'), ('bf16', 'bf16', 'NEAREST')]
    for in_t, out_t, mode in rows:
        fp = is_fp(in_t)
        for pi, (tag, N, IH, IW, Cc, scale, offset, border) in enumerate(RESIZE_PARAMS):
            syn, syd, sxn, sxd = scale
            by = _fit_border(IH, syn, syd, offset[0], border[0])
            bx = _fit_border(IW, sxn, sxd, offset[1], border[1])
            OH = ((IH - 1) * syn - offset[0] + by) // syd + 1
            OW = ((IW - 1) * sxn - offset[1] + bx) // sxd + 1
            row = in_t if in_t == out_t else '%s_%s' % (in_t, out_t)
            c = Case('RESIZE', row, (N, IH, IW, Cc), '%s_%s' % (mode.lower(), tag), ctx=ctx)
            if tag == 'up2' and in_t == 'i8':
                x = np.array([0, 10, 20, 30], np.int64).reshape(1, 2, 2, 1)
            elif fp:
                x = rand_fp(c.rng, in_t, (N, IH, IW, Cc), -10, 10)
            else:
                x = rand_int(c.rng, in_t, (N, IH, IW, Cc))
                x = put_edges(x, [imin(in_t), imax(in_t), imax(in_t), imin(in_t)])
            c.inp('input', in_t, x)
            c.cshape('scale', list(scale))
            c.cshape('offset', list(offset))
            c.cshape('border', [by, bx])
            ref = R.resize(x, scale, offset, (by, bx), mode, fp)
            cmp_ = C.relative(np.max(np.abs(x))) if fp else None
            c.out('output', out_t, (N, OH, OW, Cc), ref, cmp_)
            c.node('RESIZE', ['input', 'scale', 'offset', 'border'], ['output'], {'mode': mode})
            c.quick = pi in (0, 3)
            cases.append(c)
    return cases
