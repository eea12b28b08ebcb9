"""Negative cases: one graph per ERROR_IF family (expected_failure: true, the implementation must
report ERROR, exit 2) and REQUIRE violations the reference model reports as UNPREDICTABLE
(expected_result "unpredictable": exit 1 or 2 accepted, no output comparison, no crash)."""
import numpy as np

from casebase import Case, rand_fp, rand_int
from common import imax, imin, is_fp, scalar_bytes
from registry import gen


def _data(c, t, shape):
    if t == 'bool':
        return c.rng.integers(0, 2, size=shape).astype(bool)
    if is_fp(t):
        return rand_fp(c.rng, t, shape, -4, 4)
    return rand_int(c.rng, t, shape, -20, 20) if t != 'i4' else rand_int(c.rng, t, shape, -7, 7)


def neg(op, row, variant, expect='error'):
    c = Case(op, row, 'neg' if expect == 'error' else 'req', variant, expect=expect)
    c.quick = True
    return c


def unary(op, t_in, s_in, t_out, s_out, variant, attr=None, expect='error', x=None, extra=None):
    c = neg(op, t_in if t_in == t_out else '%s_%s' % (t_in, t_out), variant, expect)
    c.inp('input1', t_in, _data(c, t_in, s_in) if x is None else x, s_in)
    ins = ['input1']
    for name, t, v in (extra or []):
        c.const(name, t, np.asarray(v))
        ins.append(name)
    c.out('output', t_out, s_out)
    c.node(op, ins, ['output'], attr)
    return c


def binary(op, t, s1, s2, so, variant, t_out=None, attr=None, expect='error', a=None, b=None, shift=None):
    t_out = t_out or t
    c = neg(op, t if t == t_out else '%s_%s' % (t, t_out), variant, expect)
    c.inp('input1', t, _data(c, t, s1) if a is None else a, s1)
    c.inp('input2', t, _data(c, t, s2) if b is None else b, s2)
    ins = ['input1', 'input2']
    if shift is not None:
        c.const('shift', 'i8', np.array([shift]))
        ins.append('shift')
    c.out('output', t_out, so)
    c.node(op, ins, ['output'], attr)
    return c


def rescale(variant, it='i8', ot='i8', shape=(2, 4), scale32=True, rounding='SINGLE_ROUND', per_channel=False,
            iu=False, ou=False, izp=0, ozp=0, mult=(1 << 30,), shift=(30,), mult_t=None, out_shape=None,
            expect='error', x=None):
    c = neg('RESCALE', '%s_%s' % (it, ot), variant, expect)
    c.inp('input', it, _data(c, it, shape) if x is None else x, shape)
    c.const('multiplier', mult_t or ('i32' if scale32 else 'i16'), np.array(mult))
    c.const('shift', 'i8', np.array(shift))
    c.const('input_zp', it, np.array([izp]))
    c.const('output_zp', ot, np.array([ozp]))
    c.out('output', ot, out_shape or shape)
    c.node('RESCALE', ['input', 'multiplier', 'shift', 'input_zp', 'output_zp'], ['output'],
           {'scale32': scale32, 'rounding_mode': rounding, 'per_channel': per_channel, 'input_unsigned': iu,
            'output_unsigned': ou})
    return c


def conv2d(variant, in_t='i8', w_t='i8', out_t='i32', acc='INT32', xs=(1, 5, 5, 2), ws=(3, 3, 3, 2), bc=3,
           pad=(1, 1, 1, 1), stride=(1, 1), dil=(1, 1), os=(1, 5, 5, 3), izp=0, wzp=0):
    c = neg('CONV2D', '%sx%s_%s' % (in_t, w_t, out_t), variant)
    c.inp('input', in_t, _data(c, in_t, xs))
    c.const('weight', w_t, _data(c, w_t, ws))
    c.const('bias', out_t, np.zeros(bc, np.int64) if not is_fp(out_t) else np.zeros(bc))
    c.const('input_zp', in_t, np.array([izp]))
    c.const('weight_zp', w_t, np.array([wzp]))
    c.out('output', out_t, os)
    c.node('CONV2D', ['input', 'weight', 'bias', 'input_zp', 'weight_zp'], ['output'],
           {'pad': list(pad), 'stride': list(stride), 'dilation': list(dil), 'local_bound': False, 'acc_type': acc})
    return c


def pool(op, variant, t='i8', acc='INT32', xs=(1, 4, 4, 2), kernel=(2, 2), stride=(2, 2), pad=(0, 0, 0, 0),
         os=(1, 2, 2, 2), izp=0, ozp=0):
    c = neg(op, t, variant)
    c.inp('input', t, _data(c, t, xs))
    ins = ['input']
    attr = {'kernel': list(kernel), 'stride': list(stride), 'pad': list(pad)}
    if op == 'AVG_POOL2D':
        c.const('input_zp', t, np.array([izp]))
        c.const('output_zp', t, np.array([ozp]))
        ins += ['input_zp', 'output_zp']
        attr['acc_type'] = acc
    else:
        attr['nan_mode'] = 'PROPAGATE'
    c.out('output', t, os)
    c.node(op, ins, ['output'], attr)
    return c


def shape_op(op, t, xs, os, variant, shapes, extra=None, attr=None, expect='error'):
    c = neg(op, t, variant, expect)
    c.inp('input1', t, _data(c, t, xs))
    ins = ['input1']
    for name, vals in shapes:
        c.cshape(name, vals)
        ins.append(name)
    for name, tt, v in (extra or []):
        c.const(name, tt, np.asarray(v))
        ins.append(name)
    c.out('output', t, os)
    c.node(op, ins, ['output'], attr)
    return c


@gen('ADD', 'MUL', 'CAST', 'SELECT', 'ABS', 'INTDIV', 'RESCALE', 'CONV2D', 'DEPTHWISE_CONV2D', 'TRANSPOSE_CONV2D',
     'CONV3D', 'MATMUL', 'AVG_POOL2D', 'MAX_POOL2D', 'CLAMP', 'NEGATE', 'TABLE', 'CONCAT', 'PAD', 'RESHAPE',
     'REVERSE', 'SLICE', 'TILE', 'TRANSPOSE', 'GATHER', 'SCATTER', 'REDUCE_SUM', 'REDUCE_MAX', 'ARGMAX', 'RESIZE',
     'FFT2D', 'RFFT2D', 'COND_IF', 'WHILE_LOOP', 'LOGICAL_AND', 'EQUAL')
def error_if_cases(ctx):
    L = []
    # --- generic: shapes, broadcasting, type rows ------------------------------------------------
    L.append(binary('ADD', 'i32', (2, 4), (2, 4), (2, 3), 'output_shape'))
    L.append(binary('ADD', 'i32', (2, 3), (3, 2), (2, 3), 'bcast_mismatch'))
    L.append(binary('ADD', 'i32', (2, 3), (3,), (2, 3), 'rank_mismatch'))
    L.append(binary('ADD', 'i8', (4,), (4,), (4,), 'unsupported_type'))
    L.append(binary('ADD', 'fp32', (2, 1), (1, 3), (2, 1), 'bcast_output_too_small'))
    L.append(binary('MUL', 'i8', (4,), (4,), (4,), 'out_i8', t_out='i8', shift=0))
    L.append(binary('INTDIV', 'i8', (4,), (4,), (4,), 'unsupported_type'))
    L.append(binary('LOGICAL_AND', 'i32', (4,), (4,), (4,), 'not_bool'))
    L.append(binary('EQUAL', 'i32', (4,), (4,), (4,), 'out_i32', t_out='i32'))
    L.append(unary('CAST', 'bool', (4,), 'fp32', (4,), 'bool_to_fp32'))
    L.append(unary('CAST', 'i32', (2, 3), 'i8', (3, 2), 'output_shape'))
    L.append(unary('ABS', 'i32', (4,), 'fp32', (4,), 'output_type'))
    c = neg('SELECT', 'i32', 'cond_not_bool')
    c.inp('input1', 'i32', np.array([1, 0, 1]))
    c.inp('input2', 'i32', np.array([1, 2, 3]))
    c.inp('input3', 'i32', np.array([4, 5, 6]))
    c.out('output', 'i32', (3,))
    c.node('SELECT', ['input1', 'input2', 'input3'], ['output'])
    c.note = 'reference model bug: it crashes (SIGSEGV) on this graph instead of reporting ERROR'
    L.append(c)
    # --- RESCALE -----------------------------------------------------------------------------------
    L.append(rescale('double_round_scale16', scale32=False, rounding='DOUBLE_ROUND', mult=(1 << 14,), shift=(14,)))
    L.append(rescale('unsigned_in_and_out', iu=True, ou=True))
    L.append(rescale('unsigned_in_i32_out', ot='i32', iu=True))
    L.append(rescale('i32_in_unsigned_out', it='i32', ou=True, shift=(32,)))
    L.append(rescale('i16_input_zp', it='i16', ot='i16', izp=5))
    L.append(rescale('u16_input_zp_100', it='i16', ot='i16', iu=True, izp=100))
    L.append(rescale('i32_output_zp', it='i8', ot='i32', ozp=3))
    L.append(rescale('per_channel_len', per_channel=True, mult=(1 << 30, 1 << 30, 1 << 30),
                     shift=(30, 30, 30)))
    L.append(rescale('per_tensor_len2', mult=(1 << 30, 1 << 30), shift=(30, 30)))
    L.append(rescale('rounding_unknown', rounding='UNKNOWN'))
    L.append(rescale('i48_scale32', it='i48', ot='i16', scale32=True, mult=(1 << 30,), shift=(40,)))
    L.append(rescale('output_shape', out_shape=(4, 2)))
    L.append(rescale('mult_type', mult_t='i16', scale32=True))
    L[-1].note = 'reference model deviation: it accepts an i16 multiplier with scale32=true (exit 0)'
    L.append(rescale('per_channel_rank0', shape=(), per_channel=True))
    # --- convolutions ------------------------------------------------------------------------------
    L.append(conv2d('pad_negative', pad=(-1, 1, 1, 1), os=(1, 4, 5, 3)))
    L.append(conv2d('stride0', stride=(0, 1)))
    L.append(conv2d('dilation0', dil=(1, 0)))
    L.append(conv2d('inexact_division', stride=(2, 2), pad=(1, 0, 1, 0), os=(1, 2, 2, 3)))
    L.append(conv2d('output_shape', os=(1, 6, 5, 3)))
    L.append(conv2d('acc_type', acc='INT48'))
    L.append(conv2d('i16_input_zp', in_t='i16', out_t='i48', acc='INT48', izp=3))
    L.append(conv2d('i4_weight_zp', w_t='i4', wzp=1))
    L.append(conv2d('bias_size', bc=2))
    L.append(conv2d('ic_mismatch', ws=(3, 3, 3, 4)))
    L.append(conv2d('fp32_acc_fp16', in_t='fp32', w_t='fp32', out_t='fp32', acc='FP16'))
    c = neg('DEPTHWISE_CONV2D', 'i8xi8_i32', 'output_channels')
    c.inp('input', 'i8', _data(c, 'i8', (1, 4, 4, 2)))
    c.const('weight', 'i8', _data(c, 'i8', (3, 3, 2, 2)))
    c.const('bias', 'i32', np.zeros(4, np.int64))
    c.const('input_zp', 'i8', np.array([0]))
    c.const('weight_zp', 'i8', np.array([0]))
    c.out('output', 'i32', (1, 4, 4, 2))
    c.node('DEPTHWISE_CONV2D', ['input', 'weight', 'bias', 'input_zp', 'weight_zp'], ['output'],
           {'pad': [1, 1, 1, 1], 'stride': [1, 1], 'dilation': [1, 1], 'local_bound': False, 'acc_type': 'INT32'})
    L.append(c)
    for variant, opad, stride, os in (('out_pad_too_negative', (-3, 0, 0, 0), (1, 1), (1, 3, 6, 2)),
                                      ('stride0', (0, 0, 0, 0), (0, 1), (1, 6, 6, 2)),
                                      ('output_shape', (0, 0, 0, 0), (2, 2), (1, 8, 8, 2))):
        c = neg('TRANSPOSE_CONV2D', 'i8xi8_i32', variant)
        c.inp('input', 'i8', _data(c, 'i8', (1, 4, 4, 2)))
        c.const('weight', 'i8', _data(c, 'i8', (2, 3, 3, 2)))
        c.const('bias', 'i32', np.zeros(2, np.int64))
        c.const('input_zp', 'i8', np.array([0]))
        c.const('weight_zp', 'i8', np.array([0]))
        c.out('output', 'i32', os)
        c.node('TRANSPOSE_CONV2D', ['input', 'weight', 'bias', 'input_zp', 'weight_zp'], ['output'],
               {'out_pad': list(opad), 'stride': list(stride), 'local_bound': False, 'acc_type': 'INT32'})
        L.append(c)
    c = neg('CONV3D', 'i8xi8_i32', 'pad_negative')
    c.inp('input', 'i8', _data(c, 'i8', (1, 3, 3, 3, 1)))
    c.const('weight', 'i8', _data(c, 'i8', (1, 1, 1, 1, 1)))
    c.const('bias', 'i32', np.zeros(1, np.int64))
    c.const('input_zp', 'i8', np.array([0]))
    c.const('weight_zp', 'i8', np.array([0]))
    c.out('output', 'i32', (1, 2, 3, 3, 1))
    c.node('CONV3D', ['input', 'weight', 'bias', 'input_zp', 'weight_zp'], ['output'],
           {'pad': [0, -1, 0, 0, 0, 0], 'stride': [1, 1, 1], 'dilation': [1, 1, 1], 'local_bound': False,
            'acc_type': 'INT32'})
    L.append(c)
    for variant, t, ot, ash, bsh, osh, zps in (('i16_a_zp', 'i16', 'i48', (1, 2, 3), (1, 3, 2), (1, 2, 2), (1, 0)),
                                               ('c_mismatch', 'i8', 'i32', (1, 2, 3), (1, 4, 2), (1, 2, 2), (0, 0)),
                                               ('batch_mismatch', 'i8', 'i32', (2, 2, 3), (3, 3, 2), (2, 2, 2),
                                                (0, 0))):
        c = neg('MATMUL', '%s_%s' % (t, ot), variant)
        c.inp('A', t, _data(c, t, ash))
        c.inp('B', t, _data(c, t, bsh))
        c.const('A_zp', t, np.array([zps[0]]))
        c.const('B_zp', t, np.array([zps[1]]))
        c.out('output', ot, osh)
        c.node('MATMUL', ['A', 'B', 'A_zp', 'B_zp'], ['output'])
        L.append(c)
    # --- pooling -----------------------------------------------------------------------------------
    L.append(pool('AVG_POOL2D', 'pad_ge_kernel', pad=(2, 0, 0, 0), os=(1, 3, 2, 2)))
    L.append(pool('AVG_POOL2D', 'kernel0', kernel=(0, 2), os=(1, 3, 2, 2)))
    L.append(pool('AVG_POOL2D', 'output_shape', os=(1, 3, 3, 2)))
    L.append(pool('AVG_POOL2D', 'inexact_division', stride=(3, 3), os=(1, 1, 1, 2)))
    L.append(pool('AVG_POOL2D', 'i16_input_zp', t='i16', izp=1))
    L.append(pool('AVG_POOL2D', 'acc_type', acc='FP32'))
    L.append(pool('MAX_POOL2D', 'stride0', stride=(0, 2)))
    L.append(pool('MAX_POOL2D', 'pad_ge_kernel', pad=(0, 0, 0, 2), os=(1, 2, 3, 2)))
    # --- activation / elementwise with attributes -------------------------------------------------
    L.append(unary('CLAMP', 'i8', (5,), 'i8', (5,), 'min_gt_max',
                   {'min_val': scalar_bytes('i8', 10), 'max_val': scalar_bytes('i8', -10), 'nan_mode': 'PROPAGATE'}))
    L.append(unary('CLAMP', 'fp32', (5,), 'fp32', (5,), 'nan_min',
                   {'min_val': scalar_bytes('fp32', np.nan), 'max_val': scalar_bytes('fp32', 1.0),
                    'nan_mode': 'PROPAGATE'}))
    L.append(unary('NEGATE', 'i16', (5,), 'i16', (5,), 'i16_zp', extra=[('input1_zp', 'i16', [3]),
                                                                       ('output_zp', 'i16', [0])]))
    L.append(unary('TABLE', 'i8', (5,), 'i8', (5,), 'table_size_513',
                   extra=[('table', 'i8', np.zeros(513, np.int64))]))
    L.append(unary('TABLE', 'i16', (5,), 'i32', (5,), 'table_size_256',
                   extra=[('table', 'i16', np.zeros(256, np.int64))]))
    # --- data layout -------------------------------------------------------------------------------
    for variant, shapes, axis, os in (('axis_out_of_range', [(2, 3), (2, 3)], 2, (2, 6)),
                                      ('dim_mismatch', [(2, 3), (3, 3)], 1, (2, 6)),
                                      ('output_shape', [(2, 3), (2, 3)], 0, (4, 4))):
        c = neg('CONCAT', 'i32', variant)
        names = [c.inp('input%d' % i, 'i32', _data(c, 'i32', s)) for i, s in enumerate(shapes)]
        c.out('output', 'i32', os)
        c.node('CONCAT', names, ['output'], {'axis': axis})
        L.append(c)
    L.append(shape_op('PAD', 'i8', (2, 3), (2, 4), 'negative_padding', [('padding', [0, 0, -1, 2])],
                      extra=[('pad_const', 'i8', [0])]))
    L.append(shape_op('PAD', 'i8', (2, 3), (3, 5), 'output_shape', [('padding', [0, 0, 1, 1])],
                      extra=[('pad_const', 'i8', [0])]))
    L.append(shape_op('PAD', 'i8', (2, 3), (2, 5), 'padding_length', [('padding', [1, 1])],
                      extra=[('pad_const', 'i8', [0])]))
    L.append(shape_op('RESHAPE', 'i32', (2, 3), (4, 2), 'element_count', [('shape', [4, 2])]))
    L.append(shape_op('RESHAPE', 'i32', (2, 3), (3, 2), 'output_vs_shape', [('shape', [6, 1])]))
    L[-1].note = 'reference model deviation: it does not compare the output shape with the shape input (exit 0)'
    L.append(unary('REVERSE', 'i32', (2, 3), 'i32', (2, 3), 'axis_out_of_range', {'axis': 2}))
    L.append(shape_op('SLICE', 'i8', (4, 4), (2, 3), 'start_plus_size', [('start', [1, 2]), ('size', [2, 3])]))
    L.append(shape_op('SLICE', 'i8', (4, 4), (2, 2), 'negative_start', [('start', [-1, 0]), ('size', [2, 2])]))
    L.append(shape_op('SLICE', 'i8', (4, 4), (2, 2), 'output_vs_size', [('start', [0, 0]), ('size', [2, 3])]))
    L.append(shape_op('TILE', 'i16', (2, 3), (4, 3), 'output_shape', [('multiples', [2, 2])]))
    L.append(unary('TRANSPOSE', 'i32', (2, 3, 4), 'i32', (2, 3, 4), 'duplicate_perm', {'perms': [0, 0, 1]}))
    L.append(unary('TRANSPOSE', 'i32', (2, 3, 4), 'i32', (4, 3, 2), 'output_shape', {'perms': [2, 0, 1]}))
    c = neg('GATHER', 'i32_i8', 'output_shape')
    c.inp('values', 'i8', _data(c, 'i8', (1, 5, 3)))
    c.inp('indices', 'i32', np.array([[0, 1]]))
    c.out('output', 'i8', (1, 3, 3))
    c.node('GATHER', ['values', 'indices'], ['output'])
    L.append(c)
    c = neg('SCATTER', 'i32_i8', 'input_shape')
    c.inp('values_in', 'i8', _data(c, 'i8', (1, 5, 3)))
    c.inp('indices', 'i32', np.array([[0, 1]]))
    c.inp('input', 'i8', _data(c, 'i8', (1, 2, 2)))
    c.out('values_out', 'i8', (1, 5, 3))
    c.node('SCATTER', ['values_in', 'indices', 'input'], ['values_out'])
    L.append(c)
    L.append(unary('REDUCE_SUM', 'i32', (2, 3), 'i32', (2, 1), 'axis_out_of_range', {'axis': 2}))
    L.append(unary('REDUCE_MAX', 'i8', (2, 3), 'i8', (2, 3), 'reduced_dim_not_1',
                   {'axis': 1, 'nan_mode': 'PROPAGATE'}))
    L.append(unary('ARGMAX', 'i8', (2, 3), 'i32', (2, 1), 'output_rank', {'axis': 1, 'nan_mode': 'PROPAGATE'}))
    L.append(unary('ARGMAX', 'i8', (2, 3), 'i32', (2,), 'axis_out_of_range', {'axis': 3, 'nan_mode': 'PROPAGATE'}))
    # --- RESIZE -----------------------------------------------------------------------------------
    for variant, scale, offset, border, os in (('scale_zero', [0, 1, 2, 1], [0, 0], [0, 0], (1, 3, 3, 1)),
                                               ('offset_range', [2, 1, 2, 1], [-3, 0], [0, 0], (1, 6, 5, 1)),
                                               ('output_shape', [2, 1, 2, 1], [0, 0], [0, 0], (1, 6, 6, 1)),
                                               ('downscale_16', [1, 16, 1, 1], [0, 0], [0, 0], (1, 1, 3, 1))):
        c = neg('RESIZE', 'i8_i8', variant)
        c.inp('input', 'i8', _data(c, 'i8', (1, 3, 3, 1)))
        c.cshape('scale', scale)
        c.cshape('offset', offset)
        c.cshape('border', border)
        c.out('output', 'i8', os)
        c.node('RESIZE', ['input', 'scale', 'offset', 'border'], ['output'], {'mode': 'NEAREST'})
        L.append(c)
    # --- FFT ----------------------------------------------------------------------------------------
    c = neg('FFT2D', 'fp32', 'height_not_pow2')
    c.inp('input_real', 'fp32', _data(c, 'fp32', (1, 3, 4)))
    c.inp('input_imag', 'fp32', _data(c, 'fp32', (1, 3, 4)))
    c.out('output_real', 'fp32', (1, 3, 4))
    c.out('output_imag', 'fp32', (1, 3, 4))
    c.node('FFT2D', ['input_real', 'input_imag'], ['output_real', 'output_imag'], {'inverse': False})
    L.append(c)
    c = neg('RFFT2D', 'fp32', 'output_width')
    c.inp('input_real', 'fp32', _data(c, 'fp32', (1, 4, 8)))
    c.out('output_real', 'fp32', (1, 4, 8))
    c.out('output_imag', 'fp32', (1, 4, 8))
    c.node('RFFT2D', ['input_real'], ['output_real', 'output_imag'])
    L.append(c)
    # --- control flow --------------------------------------------------------------------------------
    for variant in ('cond_two_elements', 'branch_output_type'):
        c = neg('COND_IF', 'i32', variant)
        c.inp('cond', 'bool', np.array([True, False]) if variant == 'cond_two_elements' else np.array([True]))
        c.inp('a', 'i32', np.array([1, 2]))
        c.out('out', 'i32', (2,))
        c.node('COND_IF', ['cond', 'a'], ['out'], {'then_graph': 'tg', 'else_graph': 'eg'})
        tb = c.g.add_region('tg', 'tg_bb')
        tb.tensor('ta', 'i32', (2,))
        rt = 'fp32' if variant == 'branch_output_type' else 'i32'
        tb.tensor('tr', rt, (2,))
        tb.inputs, tb.outputs = ['ta'], ['tr']
        if rt == 'fp32':
            tb.op('CAST', ['ta'], ['tr'])
        else:
            tb.op('IDENTITY', ['ta'], ['tr'])
        eb = c.g.add_region('eg', 'eg_bb')
        eb.tensor('ea', 'i32', (2,))
        eb.tensor('er', 'i32', (2,))
        eb.inputs, eb.outputs = ['ea'], ['er']
        eb.op('IDENTITY', ['ea'], ['er'])
        c.exts = ['tosa-ext-controlflow']
        L.append(c)
    c = neg('WHILE_LOOP', 'i32', 'body_output_shape')
    c.inp('i', 'i32', np.array(0))
    c.out('i_out', 'i32', ())
    c.node('WHILE_LOOP', ['i'], ['i_out'], {'cond_graph': 'cg', 'body_graph': 'bg'})
    cb = c.g.add_region('cg', 'cg_bb')
    cb.tensor('ci', 'i32', ())
    cb.tensor('cr', 'bool', ())
    cb.inputs, cb.outputs = ['ci'], ['cr']
    cb.const('cl', 'i32', np.array(3))
    cb.op('GREATER', ['cl', 'ci'], ['cr'])
    bb = c.g.add_region('bg', 'bg_bb')
    bb.tensor('bi', 'i32', ())
    bb.tensor('bo', 'i32', (2,))
    bb.inputs, bb.outputs = ['bi'], ['bo']
    bb.const('bc', 'i32', np.array([1, 1]))
    bb.op('ADD', ['bi', 'bc'], ['bo'])
    c.exts = ['tosa-ext-controlflow']
    L.append(c)
    return L


@gen('INTDIV', 'GATHER', 'SCATTER', 'ARITHMETIC_RIGHT_SHIFT', 'LOGICAL_LEFT_SHIFT', 'LOGICAL_RIGHT_SHIFT', 'ABS',
     'NEGATE', 'MUL', 'RESCALE', 'TABLE', 'REDUCE_SUM', 'POW', 'CAST')
def require_cases(ctx):
    U = 'unpredictable'
    L = []
    L.append(binary('INTDIV', 'i32', (4,), (4,), (4,), 'div_by_zero', expect=U, a=np.array([7, -7, 0, 1]),
                    b=np.array([2, 0, 3, 1])))
    L[-1].note = 'reference model bug: it reports the REQUIRE failure and then divides by zero (SIGFPE)'
    L.append(binary('INTDIV', 'i32', (3,), (3,), (3,), 'min_by_minus1', expect=U,
                    a=np.array([imin('i32'), 4, 5]), b=np.array([-1, 2, 5])))
    for variant, idx in (('index_ge_k', [[0, 5]]), ('index_negative', [[-1, 2]])):
        c = neg('GATHER', 'i32_i16', variant, U)
        c.inp('values', 'i16', _data(c, 'i16', (1, 5, 2)))
        c.inp('indices', 'i32', np.array(idx))
        c.out('output', 'i16', (1, 2, 2))
        c.node('GATHER', ['values', 'indices'], ['output'])
        L.append(c)
    for variant, idx in (('index_ge_k', [[1, 4]]), ('duplicate_index', [[2, 2]])):
        c = neg('SCATTER', 'i32_i32', variant, U)
        c.inp('values_in', 'i32', _data(c, 'i32', (1, 4, 2)))
        c.inp('indices', 'i32', np.array(idx))
        c.inp('input', 'i32', _data(c, 'i32', (1, 2, 2)))
        c.out('values_out', 'i32', (1, 4, 2))
        c.node('SCATTER', ['values_in', 'indices', 'input'], ['values_out'])
        L.append(c)
    L.append(binary('ARITHMETIC_RIGHT_SHIFT', 'i8', (3,), (3,), (3,), 'shift_8', expect=U,
                    a=np.array([1, 2, 3]), b=np.array([1, 8, 0]), attr={'round': False}))
    L.append(binary('LOGICAL_LEFT_SHIFT', 'i32', (3,), (3,), (3,), 'shift_32', expect=U,
                    a=np.array([1, 2, 3]), b=np.array([1, 32, 0])))
    L.append(binary('LOGICAL_RIGHT_SHIFT', 'i16', (3,), (3,), (3,), 'shift_negative', expect=U,
                    a=np.array([1, 2, 3]), b=np.array([1, -1, 0])))
    L.append(unary('ABS', 'i32', (3,), 'i32', (3,), 'int_min', expect=U, x=np.array([1, imin('i32'), -3])))
    L.append(unary('NEGATE', 'i32', (3,), 'i32', (3,), 'int_min', expect=U, x=np.array([1, imin('i32'), -3]),
                   extra=[('input1_zp', 'i32', [0]), ('output_zp', 'i32', [0])]))
    L.append(binary('MUL', 'i32', (2,), (2,), (2,), 'shift1_overflow', expect=U,
                    a=np.array([imax('i32'), 3]), b=np.array([imax('i32'), 2]), shift=1))
    L.append(rescale('shift_1', shift=(1,), mult=(1,), expect=U))
    L.append(rescale('shift_63', it='i32', ot='i32', shift=(63,), expect=U))
    L.append(rescale('value_out_of_shift_range', it='i32', ot='i32', shift=(20,), mult=(1,), expect=U,
                     x=np.array([[1, 2, 3, 1 << 20], [0, 0, 0, 0]])))
    L.append(rescale('negative_multiplier', mult=(-(1 << 30),), expect=U))
    c = neg('TABLE', 'i16_i32', 'slope_overflow', U)
    tab = np.zeros(513, np.int64)
    tab[257] = 32767
    tab[258] = -32768
    c.inp('input1', 'i16', np.array([0, 128, 200, -5]))
    c.const('table', 'i16', tab)
    c.out('output', 'i32', (4,))
    c.node('TABLE', ['input1', 'table'], ['output'])
    L.append(c)
    L.append(unary('REDUCE_SUM', 'i32', (3,), 'i32', (1,), 'overflow', {'axis': 0}, expect=U,
                   x=np.array([imax('i32'), 1, 0])))
    L.append(binary('POW', 'fp32', (3,), (3,), (3,), 'negative_base', expect=U, a=np.array([-2.0, 2.0, 1.0]),
                    b=np.array([2.0, 1.0, 1.0])))
    return L


@gen('VARIABLE_WRITE', 'VARIABLE_READ')
def variable_error_cases(ctx):
    L = []
    c = neg('VARIABLE_WRITE', 'i8', 'value_type')
    c.b.tensor('v', 'i8', (2, 2), data=np.zeros((2, 2), np.int64), variable=True, variable_name='v')
    c.inp('x', 'fp32', rand_fp(c.rng, 'fp32', (2, 2)))
    c.node('VARIABLE', [], ['v'])
    c.node('VARIABLE_WRITE', ['x'], ['v'])
    c.out('y', 'i8', (2, 2))
    c.node('VARIABLE_READ', ['v'], ['y'])
    L.append(c)
    c = neg('VARIABLE_READ', 'fp32', 'output_shape')
    c.b.tensor('v', 'fp32', (2, 2), data=np.zeros((2, 2)), variable=True, variable_name='v')
    c.inp('x', 'fp32', rand_fp(c.rng, 'fp32', (2, 2)))
    c.node('VARIABLE', [], ['v'])
    c.node('VARIABLE_WRITE', ['x'], ['v'])
    c.out('y', 'fp32', (4,))
    c.node('VARIABLE_READ', ['v'], ['y'])
    L.append(c)
    for c in L:
        c.exts = ['tosa-ext-variable']
        c.note = 'EXT-VARIABLE: the reference model has no VARIABLE operators (it reports ERROR for any such graph)'
    return L
