"""Compare-rule entries (desc.json "compare") for FP outputs, per operator (TOSA.md D.5)."""
import math

from common import FMT

ULP_OPS = {'ADD': 0.5, 'SUB': 0.5, 'MUL': 0.5, 'CEIL': 0.5, 'FLOOR': 0.5, 'RECIPROCAL': 1.0, 'RSQRT': 2.0,
           'ERF': 5.0}


def exact():
    return {'mode': 'exact'}


def ulp(u, lower=None):
    d = {'mode': 'ulp', 'ulp': u}
    d['ulp_lower'] = u if lower is None else lower
    return d


def cast_fp():
    return ulp(0.5, 1.0)


def abs_error(op, t):
    """ABS_ERROR settings of the conformance generator for transcendental ops."""
    base3 = 3.0 if t == 'fp32' else 1.0
    if op == 'EXP':
        return {'mode': 'abs_error', 'base_bound': base3}
    if op == 'POW':
        return {'mode': 'abs_error', 'base_bound': base3}
    if op == 'LOG':
        return {'mode': 'abs_error', 'lower_bound': 0.5}
    if op == 'SIGMOID':
        return {'mode': 'abs_error'}
    if op == 'TANH':
        return {'mode': 'abs_error', 'lower_bound': 0.5, 'base_bound': 12.0 if t == 'fp32' else 4.0}
    if op == 'SIN':
        return {'mode': 'abs_error', 'bound_as_magnitude': True, 'normal_divisor': 2, 'base_bound': 2.0,
                'max_compare': math.pi * FMT[t].normal_min}
    if op == 'COS':
        return {'mode': 'abs_error', 'bound_as_magnitude': True, 'normal_divisor': 2, 'base_bound': 1.0}
    raise KeyError(op)


def dot_product(ks, acc_t, out_t, bias_nonzero=False, in_t=None):
    ksb = int(math.ceil(ks / 2.0 ** ((FMT[acc_t].frac - FMT[out_t].frac) / 2.0)))
    if bias_nonzero:
        ksb += 1
    if in_t in ('fp8e4m3', 'fp8e5m2') and acc_t == 'fp32':
        absb = 2 * max(ksb, min(ksb, 64) * (1 << 10))
        varb = 4 * 0.4 * max(ksb, min(ksb, 64) * (1 << 20))
    else:
        absb = 2 * ksb
        varb = 4 * 0.4 * ksb
    return {'mode': 'dot_product', 'ksb': ksb, 'abs_bound': absb, 'variance_bound': varb}


def relative(maxval):
    return {'mode': 'relative', 'max': float(maxval), 'scale': 0.006, 'ulp_bound': 20.0}


def reduce_product(n):
    return {'mode': 'reduce_product', 'n': int(n)}
