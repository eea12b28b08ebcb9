"""Output comparison rules of the conformance checker (TOSA.md D.5).

Every rule takes the implementation's values (int64 / bool / float64 arrays), the expected values
(for FP outputs: the float64 "precise" reference of the spec formula) and the compare entry of
desc.json, and returns (ok, message).
"""
import math

import numpy as np

from common import FMT, INT_BITS, is_fp, round_fp, ulp


def _where_first(bad):
    idx = np.argwhere(bad)
    if idx.size == 0:
        return None
    return tuple(int(i) for i in idx[0])


def fp_check(imp, ref, err_lo, err_hi, t):
    """Vectorised tosaCheckFloatBound (D.5). Returns a boolean array (True = within bounds)."""
    f = FMT[t]
    imp = np.asarray(imp, np.float64)
    ref = np.asarray(ref, np.float64)
    err_lo = np.broadcast_to(np.asarray(err_lo, np.float64), ref.shape)
    err_hi = np.broadcast_to(np.asarray(err_hi, np.float64), ref.shape)
    with np.errstate(invalid='ignore', over='ignore'):
        refnan = np.isnan(ref)
        both_inf = np.isinf(err_lo) & np.isinf(err_hi)
        neg = ref < 0
        r = np.where(neg, -ref, ref)
        x = np.where(neg, -imp, imp)
        rmax = r + err_hi
        rmin = r - err_lo
        rmax = np.where(rmax > f.max, np.inf, rmax)
        rmin = np.where(rmin > f.max, np.inf, np.where(rmin < -f.max, -np.inf, rmin))
        xnan = np.isnan(x)
        in_range = (x >= rmin) & (x <= rmax)
        flush_ok = (rmin < f.normal_min) & (x == 0) if t not in ('fp8e4m3', 'fp8e5m2') else np.zeros(ref.shape, bool)
        nan_ok = xnan & (not f.has_inf) & (rmax == np.inf)
        ok = np.where(refnan, np.isnan(imp), np.where(both_inf, True, flush_ok | nan_ok | (~xnan & in_range)))
    return ok


def _fmt_fail(what, imp, ref, ok, extra=None):
    pos = _where_first(~ok)
    nbad = int(np.sum(~ok))
    msg = '%s: %d of %d elements out of bounds; first at %s: got %r, reference %r' % (
        what, nbad, ok.size, pos, float(imp[pos]) if imp.ndim else float(imp),
        float(ref[pos]) if ref.ndim else float(ref))
    if extra is not None:
        msg += ', bound %r' % float(np.broadcast_to(extra, ref.shape)[pos])
    return msg


def compare_output(imp, exp, cmp_, t, bounds=None):
    mode = cmp_.get('mode', 'exact')
    if imp.shape != exp.shape:
        return False, 'shape %s, expected %s' % (imp.shape, exp.shape)
    if imp.size == 0:
        return True, ''
    if mode == 'exact' and not is_fp(t):
        ok = np.asarray(imp == exp)
        if ok.all():
            return True, ''
        pos = _where_first(~ok)
        return False, 'exact: %d of %d elements differ; first at %s: got %s, expected %s' % (
            int(np.sum(~ok)), ok.size, pos, imp[pos], exp[pos])
    if not is_fp(t):
        if mode == 'rescale_inexact':
            return _rescale_inexact(imp, exp, cmp_, t)
        return False, 'compare mode %s is not defined for %s outputs' % (mode, t)
    f = FMT[t]
    imp = np.asarray(imp, np.float64)
    ref = np.asarray(exp, np.float64)
    if mode == 'exact':
        ok = fp_check(imp, ref, 0.0, 0.0, t)
        return (True, '') if ok.all() else (False, _fmt_fail('exact', imp, ref, ok))
    if mode == 'ulp':
        u = ulp(ref, t)
        hi = cmp_.get('ulp', 0.5) * u
        lo = cmp_.get('ulp_lower', cmp_.get('ulp', 0.5)) * u
        ok = fp_check(imp, ref, lo, hi, t)
        return (True, '') if ok.all() else (False, _fmt_fail('ulp %g/%g' % (cmp_.get('ulp', 0.5),
                                                               cmp_.get('ulp_lower', cmp_.get('ulp', 0.5))),
                                                              imp, ref, ok, hi))
    if mode == 'abs_error':
        err = abs_error_bound(ref, bounds, cmp_, t)
        ok = fp_check(imp, ref, err, err, t)
        return (True, '') if ok.all() else (False, _fmt_fail('abs_error', imp, ref, ok, err))
    if mode == 'relative':
        u = ulp(ref, t)
        err = np.maximum(cmp_['max'] * cmp_.get('scale', 0.006), cmp_.get('ulp_bound', 20.0) * u)
        ok = fp_check(imp, ref, err, err, t)
        return (True, '') if ok.all() else (False, _fmt_fail('relative', imp, ref, ok, err))
    if mode == 'reduce_product':
        n = cmp_['n']
        mag = np.maximum(np.abs(ref), f.normal_min)
        err = mag * ((1.0 + 2.0 ** (-f.frac - 1)) ** n - 1.0)
        ok = fp_check(imp, ref, err, err, t)
        return (True, '') if ok.all() else (False, _fmt_fail('reduce_product', imp, ref, ok, err))
    if mode == 'dot_product':
        return _dot_product(imp, ref, bounds, cmp_, t)
    return False, 'unknown compare mode %s' % mode


def abs_error_bound(ref, bnd, cmp_, t):
    f = FMT[t]
    ref = np.asarray(ref, np.float64)
    bnd = np.zeros(ref.shape) if bnd is None else np.asarray(bnd, np.float64)
    if cmp_.get('bound_as_magnitude'):
        mag = bnd
        bv = np.zeros(ref.shape)
    else:
        mag = ref
        bv = bnd.copy()
    bv = bv + cmp_.get('base_bound', 0.0)
    lower = cmp_.get('lower_bound', 0.0)
    div = cmp_.get('normal_divisor', 1.0)
    with np.errstate(invalid='ignore', divide='ignore', over='ignore'):
        vb = np.maximum(np.abs(mag), f.normal_min)
        if lower > 0:
            vb = np.maximum(lower / bv, vb)
        err = math.ldexp(1.0, int(-f.frac / div)) * vb * bv
        err = np.where(np.isfinite(bv) | (np.abs(mag) != 0), err, 0.0)
    mc = cmp_.get('max_compare', 0.0)
    if mc > 0:
        err = np.maximum(err, mc)
    return err


def _dot_product(imp, ref, bnd, cmp_, t):
    f = FMT[t]
    if bnd is None:
        return False, 'dot_product rule needs a bounds file'
    bnd = np.asarray(bnd, np.float64)
    ksb = cmp_['ksb']
    absb = cmp_.get('abs_bound', 2 * ksb)
    varb = cmp_.get('variance_bound', 4.0 * 0.4 * ksb)
    scale = 2.0 ** (-1 - f.frac)
    with np.errstate(invalid='ignore', over='ignore', divide='ignore'):
        refnan = np.isnan(ref)
        bndnan = np.isnan(bnd)
        ovf_v = round_fp(np.where(np.isfinite(bnd), bnd, 0.0) * (1 + absb * scale), t)
        ovf = ~np.isfinite(ovf_v) | np.isinf(bnd)
        zero = bnd == 0
        denom = np.maximum(bnd * scale, f.normal_min)
        e = (imp - ref) / denom
        ok = np.where(refnan, np.isnan(imp),
                      np.where(bndnan | ovf, True,
                               np.where(zero, (ref == 0) & (imp == 0), np.abs(e) <= absb)))
        e = np.where(refnan | bndnan | ovf | zero, 0.0, e)
    if not ok.all():
        pos = _where_first(~ok)
        return False, 'dot_product: %d of %d elements out of bounds (|err| > %d ulp-of-bound); first at %s: got %r, ' \
            'reference %r, bound value %r' % (int(np.sum(~ok)), ok.size, absb, pos, float(imp[pos]),
                                             float(ref[pos]), float(bnd[pos]))
    ssq = float(np.sum(e * e))
    if ssq > varb * ok.size:
        return False, 'dot_product: error variance %g exceeds %g' % (ssq, varb * ok.size)
    return True, ''


def _rescale_inexact(imp, exp, cmp_, t):
    bits = INT_BITS[t]
    ozp = cmp_.get('ozp', 0)
    uns = cmp_.get('output_unsigned', False)
    lo_t, hi_t = (0, (1 << bits) - 1) if uns else (-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    imp = np.asarray(imp, np.int64)
    if uns:
        imp = imp & ((1 << bits) - 1)
    ref = np.asarray(exp, np.float64)
    err = 0.5 + (3 * np.abs(ref) + np.abs(ref + ozp)) * 2.0 ** -24
    lo = np.clip(np.ceil(ref - err + ozp), lo_t, hi_t)
    hi = np.clip(np.floor(ref + err + ozp), lo_t, hi_t)
    ok = (imp >= lo) & (imp <= hi)
    if ok.all():
        return True, ''
    pos = _where_first(~ok)
    return False, 'rescale_inexact: %d of %d out of bounds; first at %s: got %d, allowed [%d, %d]' % (
        int(np.sum(~ok)), ok.size, pos, int(imp[pos]), int(lo[pos]), int(hi[pos]))
