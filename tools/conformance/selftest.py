#!/usr/bin/python3
"""Self-test of the conformance tools: the numpy spec implementation against the spot checks of
TOSA.md B.4 (values confirmed on the reference model), the FP format helpers, the .npy writer and
the compare rules. Exit status 0 when everything holds."""
import os
import sys
import tempfile

sys.dont_write_bytecode = True  # keep the source tree clean (CTest may run from a read-only checkout)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import refimpl as R  # noqa: E402
from common import (FMT, fp_from_bits, fp_to_bits, npy_as_type, round_fp, ulp,  # noqa: E402
                    write_tensor_npy, encode_tensor_data)
from compare import compare_output  # noqa: E402

FAILS = []


def check(what, got, want):
    got = np.asarray(got)
    want = np.asarray(want)
    same = got.shape == want.shape and bool(np.all((got == want) | (np.isnan(got.astype(float)) &
                                                                    np.isnan(want.astype(float)))))
    if not same:
        FAILS.append('%s: got %s, want %s' % (what, got.tolist(), want.tolist()))


def spot_checks():
    # MUL i32
    check('MUL shift0', R.int_mul([65536, 3], [65536, 5], 0, 'i32'), [0, 15])
    check('MUL shift1', R.int_mul([15, -15, 21], [1, 1, 1], 1, 'i32'), [8, -7, 11])
    check('INTDIV', R.intdiv([-7, 7, -7, 1], [2, 2, -2, 3]), [-3, 3, 3, 0])
    check('ARS round', R.ars([-5, 5, -4, 7, -128], [1, 1, 1, 2, 7], 'i8', True), [-2, 3, -2, 2, -1])
    check('CAST fp32->i8', R.cast_fp_to_int([2.5, 3.5, -2.5, -0.5, 300, -1e9], 'i8'), [2, 4, -2, 0, 127, -128])
    tab = (np.arange(513) - 256) * 100
    check('TABLE i16', R.table_i16([-32768, -1, 0, 64, 32767], tab), [-3276800, -100, 0, 6400, 3276700])
    x = np.array([1, 2, 4, 8]).reshape(1, 2, 2, 1)
    check('AVG_POOL2D i8', R.avg_pool2d_int(x, 0, 0, (2, 2), (1, 1), (0, 1, 0, 1), 'i8').reshape(-1), [4, 5, 6, 8])
    x = np.array([0, 10, 20, 30]).reshape(1, 2, 2, 1)
    bl = R.resize(x, (4, 2, 4, 2), (-1, -1), (1, 1), 'BILINEAR', False)
    nn = R.resize(x, (4, 2, 4, 2), (-1, -1), (1, 1), 'NEAREST', False)
    check('RESIZE bilinear row0', bl[0, 0, :, 0], [0, 40, 120, 160])
    check('RESIZE nearest row0', nn[0, 0, :, 0], [0, 0, 10, 10])
    check('NEGATE i8 zp', R.negate_int([-128, 0, 5, 127], 5, -3, 'i8'), [127, 2, -3, -125])
    x = np.array([1, 2, 3, 4]).reshape(1, 2, 2, 1)
    out = R.conv2d(x, np.ones((1, 3, 3, 1), np.int64), [100], -2, 0, (1, 1, 1, 1), (1, 1), (1, 1), False)
    check('CONV2D zp + padding', out.reshape(-1), [118, 118, 118, 118])
    for rm, want in (('SINGLE_ROUND', [4, 6, 7, 9]), ('DOUBLE_ROUND', [3, 7, 8, 10])):
        got = R.rescale([-11, 5, 11, 22], [1518500250], [33], -3, 5, 'i8', 'i8', True, rm, False, False, False)
        check('RESCALE ' + rm, got, want)
    check('MAXIMUM propagate', R.fp_max([np.nan, 1, np.nan], [2, np.nan, np.nan], 'PROPAGATE'), [np.nan] * 3)
    check('MAXIMUM ignore', R.fp_max([np.nan, 1, np.nan], [2, np.nan, np.nan], 'IGNORE'), [2, 1, np.nan])
    check('reciprocal_scale', [R.reciprocal_scale(c) for c in (1, 3, 4)],
          [((1 << 30) + 1, 30), (1431655766, 32), ((1 << 30) + 1, 32)])
    check('CLZ', R.clz([0, -1, 1, 0x7fffffff]), [32, 0, 31, 1])
    check('LRS i8', R.lrs([-1, -128], [1, 7], 'i8'), [127, 1])
    check('LLS i8', R.lls([-1, 64], [7, 1], 'i8'), [-128, -128])
    check('RESCALE u16 zp 32768', R.rescale([-32768, 0, -1], [1 << 30], [30], -32768, 0, 'i16', 'i16', True,
                                            'SINGLE_ROUND', False, True, False), [0, -32768, 32767])
    check('RESCALE u8 out', R.rescale([-128, 127, 0], [1 << 30], [30], 0, -128, 'i8', 'i8', True, 'SINGLE_ROUND',
                                      False, False, True), [0, -1, -128])
    re, im, _, _ = R.fft2d(np.array([[[1.0, 0.0], [0.0, 0.0]]]), np.zeros((1, 2, 2)), False)
    check('FFT2D impulse', re.reshape(-1), [1.0, 1.0, 1.0, 1.0])
    check('FFT2D impulse imag', im.reshape(-1), [0.0, 0.0, 0.0, 0.0])


def fp_checks():
    rng = np.random.default_rng(5)
    x = rng.standard_normal(2000) * np.exp(rng.uniform(-30, 30, 2000))
    with np.errstate(over='ignore'):
        check('round fp16 = numpy float16', round_fp(x, 'fp16'), x.astype(np.float16).astype(np.float64))
    check('round fp32 = numpy float32', round_fp(x, 'fp32'), x.astype(np.float32).astype(np.float64))
    for t in FMT:
        v = round_fp(x, t)
        check('bits roundtrip ' + t, fp_from_bits(fp_to_bits(v, t), t), v)
    check('bf16 tie to even', round_fp([1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -8], 'bf16'), [1.0, 1.0 + 2.0 ** -6])
    check('e4m3 max / overflow', round_fp([448.0, 464.0, 480.0, -1e6], 'fp8e4m3'), [448.0, 448.0, np.nan, np.nan])
    check('e5m2 overflow', round_fp([57344.0, 61440.0, 1e6], 'fp8e5m2'), [57344.0, np.inf, np.inf])
    check('ulp fp16', ulp([1.0, 1024.0, 1e-7], 'fp16'), [2.0 ** -10, 1.0, 2.0 ** -24])
    check('i4 packing', encode_tensor_data('i4', np.array([1, -1, 7]))[:2], [0xf1, 0x07])
    check('i48 bytes', encode_tensor_data('i48', np.array([-2]))[:6], [0xfe, 0xff, 0xff, 0xff, 0xff, 0xff])
    with tempfile.TemporaryDirectory() as d:
        for t, v in (('bf16', [1.5, -2.0]), ('fp8e4m3', [0.5, -448.0]), ('fp8e5m2', [3.0, -np.inf]),
                     ('i8', [-128, 127]), ('bool', [True, False]), ('i48', [(1 << 47) - 1, -5])):
            p = os.path.join(d, t + '.npy')
            write_tensor_npy(p, t, np.array(v))
            check('npy roundtrip ' + t, npy_as_type(p, t), np.array(v))


def compare_checks():
    ok = lambda r: r[0]  # noqa: E731
    ref = np.array([1.0 + 3 * 2.0 ** -12, 3.0])
    if not ok(compare_output(round_fp(ref, 'fp16'), ref, {'mode': 'ulp', 'ulp': 0.5}, 'fp16')):
        FAILS.append('ulp: correctly rounded result rejected')
    if ok(compare_output(np.array([1.0, 3.0 + 2.0 ** -9]), ref, {'mode': 'ulp', 'ulp': 0.5}, 'fp16')):
        FAILS.append('ulp: 1-ulp error accepted')
    if not ok(compare_output(np.array([0.0]), np.array([1e-6]), {'mode': 'exact'}, 'fp16')):
        FAILS.append('exact: subnormal flush to zero rejected')
    if ok(compare_output(np.array([0.0]), np.array([2.0 ** -8]), {'mode': 'exact'}, 'fp8e4m3')):
        FAILS.append('exact: fp8 subnormal flush accepted')
    if ok(compare_output(np.array([1, 2]), np.array([1, 3]), {'mode': 'exact'}, 'i32')):
        FAILS.append('exact int: difference accepted')
    bnd = np.array([8.0])
    if ok(compare_output(np.array([1.0 + 2.0 ** -18]), np.array([1.0]), {'mode': 'dot_product', 'ksb': 4}, 'fp32',
                         bnd)):
        FAILS.append('dot_product: large error accepted')
    if not ok(compare_output(np.array([3]), np.array([2.7]), {'mode': 'rescale_inexact', 'ozp': 0}, 'i8')):
        FAILS.append('rescale_inexact: rounded value rejected')


def main():
    spot_checks()
    fp_checks()
    compare_checks()
    for f in FAILS:
        print('FAIL', f)
    print('selftest: %s' % ('%d failures' % len(FAILS) if FAILS else 'ok'))
    return 1 if FAILS else 0


if __name__ == '__main__':
    sys.exit(main())
