"""Shared pieces of the tosac conformance generator and runner.

- TOSA element types, their value ranges and their encodings: flatbuffer TosaTensor.data bytes
  (TOSA.md A.6) and .npy files (TOSA.md D.3).
- Floating-point formats (fp32, fp16, bf16, fp8e4m3, fp8e5m2): round-to-nearest-even from float64,
  bit patterns in both directions, ulp and normal_min (TOSA.md D.5).
- A small .npy reader/writer that writes exactly the descrs the reference model expects
  ('<V2' for bf16, '<V1' for fp8e4m3, '|u1' for fp8e5m2) and reads any of them back.
- The graph builder that produces flatc JSON for the final TOSA 1.0 schema.

Only numpy and the standard library are used.
"""
import ast
import os
import re
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, '..', '..'))
SCHEMA = os.path.join(REPO, 'schema', 'tosa.fbs')

# ------------------------------------------------------------------------------------------------
# Element types
# ------------------------------------------------------------------------------------------------

# our short type name -> DType enum name of the schema
FB_DTYPE = {
    'bool': 'BOOL', 'i4': 'INT4', 'i8': 'INT8', 'i16': 'INT16', 'i32': 'INT32', 'i48': 'INT48',
    'fp32': 'FP32', 'fp16': 'FP16', 'bf16': 'BF16', 'shape': 'SHAPE',
    'fp8e4m3': 'FP8E4M3', 'fp8e5m2': 'FP8E5M2',
}
INT_BITS = {'i4': 4, 'i8': 8, 'i16': 16, 'i32': 32, 'i48': 48, 'shape': 64}
FP_TYPES = ('fp32', 'fp16', 'bf16', 'fp8e4m3', 'fp8e5m2')


def is_int(t):
    return t in INT_BITS


def is_fp(t):
    return t in FP_TYPES


def imin(t):
    return -(1 << (INT_BITS[t] - 1))


def imax(t):
    return (1 << (INT_BITS[t] - 1)) - 1


def wrap(x, bits):
    """Two's complement wrap of an int64 array (or int) to `bits` bits."""
    x = np.asarray(x, dtype=np.int64)
    if bits >= 64:
        return x
    m = np.int64(1) << np.int64(bits)
    h = np.int64(1) << np.int64(bits - 1)
    return ((x + h) & (m - 1)) - h


# ------------------------------------------------------------------------------------------------
# Floating-point formats
# ------------------------------------------------------------------------------------------------

class FpFormat:
    def __init__(self, name, frac, emin, emax, has_inf, bias, maxval=None):
        self.name, self.frac, self.emin, self.emax = name, frac, emin, emax
        self.has_inf, self.bias = has_inf, bias
        self.max = maxval if maxval is not None else (2.0 - 2.0 ** -frac) * 2.0 ** emax
        self.normal_min = 2.0 ** emin


FMT = {
    'fp32': FpFormat('fp32', 23, -126, 127, True, 127),
    'fp16': FpFormat('fp16', 10, -14, 15, True, 15),
    'bf16': FpFormat('bf16', 7, -126, 127, True, 127),
    'fp8e4m3': FpFormat('fp8e4m3', 3, -6, 8, False, 7, 448.0),
    'fp8e5m2': FpFormat('fp8e5m2', 2, -14, 15, True, 15),
}


def round_fp(x, t, flush=False):
    """Rounds float64 values to format `t` (round to nearest, ties to even, subnormals kept unless
    `flush`). Overflow gives +-inf (fp8e4m3: NaN, the OCP non-saturating conversion). Returns
    float64 values that are exactly representable in `t`."""
    f = FMT[t]
    x = np.array(x, dtype=np.float64, copy=True)
    scalar = x.ndim == 0
    x = np.atleast_1d(x)
    fin = np.isfinite(x) & (x != 0)
    xf = x[fin]
    _, e = np.frexp(xf)  # |xf| = m * 2^e with 0.5 <= m < 1, so floor(log2|xf|) = e - 1
    ex = np.maximum(e - 1, f.emin)
    q = np.ldexp(1.0, ex - f.frac)
    r = np.round(xf / q) * q
    if flush:
        r = np.where(np.abs(r) < f.normal_min, 0.0 * np.sign(r), r)
    big = np.abs(r) > f.max
    if np.any(big):
        r[big] = np.copysign(np.inf, r[big]) if f.has_inf else np.nan
    x[fin] = r
    if not f.has_inf:
        x[np.isinf(x)] = np.nan
    return x[0] if scalar else x


def fp_to_bits(v, t):
    """Bit patterns (uint array) of float64 values that are representable in `t`."""
    v = np.asarray(v, dtype=np.float64)
    if t == 'fp32':
        return v.astype('<f4').view('<u4')
    if t == 'fp16':
        return v.astype('<f2').view('<u2')
    if t == 'bf16':
        return (v.astype('<f4').view('<u4') >> 16).astype('<u2')
    f = FMT[t]
    flat = v.reshape(-1)
    out = np.zeros(flat.shape, dtype=np.uint8)
    for i, x in enumerate(flat):
        s = 0x80 if np.signbit(x) else 0
        a = abs(x)
        if np.isnan(x):
            b = 0x7f
        elif np.isinf(x):
            b = 0x7c if t == 'fp8e5m2' else 0x7f
        elif a == 0:
            b = 0
        elif a < f.normal_min:
            b = int(round(a / 2.0 ** (f.emin - f.frac)))
        else:
            e = int(np.floor(np.log2(a)))
            if 2.0 ** e > a:
                e -= 1
            m = int(round(a / 2.0 ** (e - f.frac))) - (1 << f.frac)
            b = ((e + f.bias) << f.frac) | m
        out[i] = s | b
    return out.reshape(v.shape)


def fp_from_bits(b, t):
    """float64 values of bit patterns of format `t`."""
    b = np.asarray(b)
    shp = b.shape
    b = b.reshape(-1)
    if t == 'fp32':
        return b.astype('<u4').view('<f4').astype(np.float64).reshape(shp)
    if t == 'fp16':
        return b.astype('<u2').view('<f2').astype(np.float64).reshape(shp)
    if t == 'bf16':
        return (b.astype('<u4') << 16).view('<f4').astype(np.float64).reshape(shp)
    f = FMT[t]
    b = b.astype(np.int64)
    s = np.where(b & 0x80, -1.0, 1.0)
    e = (b >> f.frac) & ((0x7f >> f.frac))
    m = b & ((1 << f.frac) - 1)
    val = np.where(e == 0, m * 2.0 ** (f.emin - f.frac),
                   (1.0 + m / float(1 << f.frac)) * np.ldexp(1.0, (e - f.bias).astype(np.int64)))
    val = (s * val).reshape(shp)
    b = b.reshape(shp)
    m = m.reshape(shp)
    e = e.reshape(shp)
    s = s.reshape(shp)
    if t == 'fp8e4m3':
        val = np.where((b & 0x7f) == 0x7f, np.nan, val)
    else:
        emax_field = (0x7f >> f.frac)
        val = np.where((e == emax_field) & (m != 0), np.nan, val)
        val = np.where((e == emax_field) & (m == 0), s * np.inf, val)
    return val


def ulp(ref, t):
    """ulp(ref) of D.5: max(2^floor(log2|ref|), normal_min) * 2^-normal_frac; 0 for 0/non-finite."""
    f = FMT[t]
    ref = np.asarray(ref, dtype=np.float64)
    a = np.abs(ref)
    ok = np.isfinite(a) & (a != 0)
    _, e = np.frexp(np.where(ok, a, 1.0))
    p2 = np.maximum(np.ldexp(1.0, e - 1), f.normal_min)
    return np.where(ok, p2 * 2.0 ** -f.frac, 0.0)


# ------------------------------------------------------------------------------------------------
# TosaTensor.data encoding (TOSA.md A.6)
# ------------------------------------------------------------------------------------------------

def encode_tensor_data(t, values):
    """Bytes (list of ints) of TosaTensor.data for element type `t`; `values` are ints for integer
    types, bools, or float64 values representable in the FP type. Zero-padded to a multiple of 8."""
    a = np.asarray(values)
    flat = a.reshape(-1)
    if t == 'bool':
        raw = flat.astype(bool).astype(np.uint8).tobytes()
    elif t == 'i4':
        v = (flat.astype(np.int64) & 0xF).astype(np.uint8)
        if len(v) % 2:
            v = np.concatenate([v, np.zeros(1, np.uint8)])
        raw = (v[0::2] | (v[1::2] << 4)).astype(np.uint8).tobytes()
    elif t == 'i8':
        raw = wrap(flat, 8).astype('<i1').tobytes()
    elif t == 'i16':
        raw = wrap(flat, 16).astype('<i2').tobytes()
    elif t == 'i32':
        raw = wrap(flat, 32).astype('<i4').tobytes()
    elif t == 'i48':
        b = wrap(flat, 48).astype('<i8').tobytes()
        raw = b''.join(b[i * 8:i * 8 + 6] for i in range(len(flat)))
    elif t == 'shape':
        raw = flat.astype('<i8').tobytes()
    elif t == 'fp32':
        raw = flat.astype('<f4').tobytes()
    elif t == 'fp16':
        raw = flat.astype('<f2').tobytes()
    elif t == 'bf16':
        raw = fp_to_bits(flat, 'bf16').astype('<u2').tobytes()
    elif t in ('fp8e4m3', 'fp8e5m2'):
        raw = fp_to_bits(flat, t).astype(np.uint8).tobytes()
    else:
        raise ValueError('no encoding for ' + t)
    raw = raw + b'\0' * ((-len(raw)) % 8)
    return list(raw)


def scalar_bytes(t, value):
    """Raw bytes of ONE value of type t (ClampAttribute.min_val/max_val), no padding."""
    b = encode_tensor_data(t, np.array([value]))
    n = {'i8': 1, 'i16': 2, 'i32': 4, 'fp16': 2, 'bf16': 2, 'fp32': 4, 'fp8e4m3': 1, 'fp8e5m2': 1}[t]
    return b[:n]


# ------------------------------------------------------------------------------------------------
# .npy files (TOSA.md D.3)
# ------------------------------------------------------------------------------------------------

NPY_IN_DESCR = {
    'bool': '|b1', 'i4': '|i1', 'i8': '|i1', 'i16': '<i2', 'i32': '<i4', 'i48': '<i8', 'shape': '<i8',
    'fp32': '<f4', 'fp16': '<f2', 'bf16': '<V2', 'fp8e4m3': '<V1', 'fp8e5m2': '|u1',
}


def npy_bytes(descr, shape, raw):
    if len(shape) == 0:
        shp = '()'
    elif len(shape) == 1:
        shp = '(%d,)' % shape[0]
    else:
        shp = '(' + ', '.join('%d' % d for d in shape) + ')'
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shp)
    pad = (64 - (10 + len(hdr) + 1) % 64) % 64
    hdr = hdr + ' ' * pad + '\n'
    return b'\x93NUMPY\x01\x00' + struct.pack('<H', len(hdr)) + hdr.encode('latin1') + raw


def write_npy_raw(path, descr, shape, raw):
    with open(path, 'wb') as f:
        f.write(npy_bytes(descr, shape, raw))


def tensor_npy_raw(t, values):
    """(descr, raw bytes) of a tensor of type t in the D.3 convention."""
    a = np.asarray(values)
    flat = a.reshape(-1)
    d = NPY_IN_DESCR[t]
    if t == 'bool':
        raw = flat.astype(bool).astype(np.uint8).tobytes()
    elif t in ('i4', 'i8'):
        raw = wrap(flat, 8).astype('<i1').tobytes()
    elif t == 'i16':
        raw = wrap(flat, 16).astype('<i2').tobytes()
    elif t == 'i32':
        raw = wrap(flat, 32).astype('<i4').tobytes()
    elif t in ('i48', 'shape'):
        raw = np.asarray(flat, dtype=np.int64).astype('<i8').tobytes()
    elif t == 'fp32':
        raw = flat.astype('<f4').tobytes()
    elif t == 'fp16':
        raw = flat.astype('<f2').tobytes()
    elif t == 'bf16':
        raw = fp_to_bits(flat, 'bf16').astype('<u2').tobytes()
    elif t in ('fp8e4m3', 'fp8e5m2'):
        raw = fp_to_bits(flat, t).astype(np.uint8).tobytes()
    else:
        raise ValueError(t)
    return d, raw


def write_tensor_npy(path, t, values):
    a = np.asarray(values)
    d, raw = tensor_npy_raw(t, a)
    write_npy_raw(path, d, a.shape, raw)


def write_f64_npy(path, values):
    a = np.asarray(values, dtype=np.float64)
    write_npy_raw(path, '<f8', a.shape, a.astype('<f8').tobytes())


def read_npy(path):
    """Returns (descr, shape, raw bytes) of a .npy file (format 1.x/2.x/3.x, C order only)."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:6] != b'\x93NUMPY':
        raise ValueError('%s: not a .npy file' % path)
    major = data[6]
    if major == 1:
        hl = struct.unpack('<H', data[8:10])[0]
        off = 10
    else:
        hl = struct.unpack('<I', data[8:12])[0]
        off = 12
    hdr = ast.literal_eval(data[off:off + hl].decode('latin1'))
    if hdr.get('fortran_order'):
        raise ValueError('%s: fortran order' % path)
    descr = hdr['descr']
    if descr[0] in '|=' and descr[1:] not in ('b1', 'i1', 'u1', 'V1'):
        descr = '<' + descr[1:]
    if descr == '|V2':
        descr = '<V2'
    return descr, tuple(hdr['shape']), data[off + hl:]


def npy_values(path):
    """Loads a .npy as (descr, values): int64 for integer descrs, bool for |b1, float64 for
    <f2/<f4/<f8, and raw uint bit patterns for void descrs (<V2 bf16, <V1/|V1 fp8)."""
    descr, shape, raw = read_npy(path)
    kind = descr[1:]
    np_d = {'b1': '|b1', 'i1': '|i1', 'u1': '|u1', 'i2': '<i2', 'u2': '<u2', 'i4': '<i4', 'u4': '<u4',
            'i8': '<i8', 'u8': '<u8', 'f2': '<f2', 'f4': '<f4', 'f8': '<f8', 'V2': '<u2', 'V1': '|u1'}
    if kind not in np_d:
        raise ValueError('%s: unsupported descr %s' % (path, descr))
    dt = np.dtype(np_d[kind])
    n = int(np.prod(shape)) if shape else 1
    if len(raw) < n * dt.itemsize:
        raise ValueError('%s: truncated data' % path)
    a = np.frombuffer(raw[:n * dt.itemsize], dtype=dt).reshape(shape)
    if kind == 'b1':
        return descr, a.astype(bool)
    if kind[0] in 'iu' and kind != 'V1':
        return descr, a.astype(np.int64)
    if kind[0] == 'f':
        return descr, a.astype(np.float64)
    return descr, a.astype(np.int64)


def npy_as_type(path, t):
    """Loads an implementation output of TOSA type t and returns its values (int64 / bool /
    float64); raises ValueError if the descr does not fit the type."""
    descr, a = npy_values(path)
    kind = descr[1:]
    if t == 'bool':
        if kind not in ('b1', 'u1', 'i1'):
            raise ValueError('descr %s for a BOOL output' % descr)
        return a.astype(bool)
    if is_int(t):
        if kind[0] not in 'iu':
            raise ValueError('descr %s for an %s output' % (descr, t))
        return a.astype(np.int64)
    if t in ('fp32', 'fp16'):
        if kind not in ('f2', 'f4', 'f8'):
            raise ValueError('descr %s for an %s output' % (descr, t))
        return a.astype(np.float64)
    if t == 'bf16':
        if kind == 'V2' or kind == 'u2':
            return fp_from_bits(a, 'bf16')
        if kind in ('f4', 'f8'):
            return a.astype(np.float64)
        raise ValueError('descr %s for a bf16 output' % descr)
    if t in ('fp8e4m3', 'fp8e5m2'):
        if kind in ('V1', 'u1', 'i1'):
            return fp_from_bits(a.astype(np.int64) & 0xff, t)
        if kind in ('f2', 'f4', 'f8'):
            return a.astype(np.float64)
        raise ValueError('descr %s for a %s output' % (descr, t))
    raise ValueError(t)


# ------------------------------------------------------------------------------------------------
# Schema: op and attribute names
# ------------------------------------------------------------------------------------------------

def _schema_lists():
    txt = open(SCHEMA).read()
    txt = re.sub(r'//[^\n]*', '', txt)

    def block(kind, name):
        m = re.search(r'\b%s\s+%s\b[^{]*\{([^}]*)\}' % (kind, name), txt)
        return [x.strip() for x in m.group(1).split(',') if x.strip()]
    ops = {}
    for item in block('enum', 'Op'):
        n, v = [s.strip() for s in item.split('=')]
        ops[n] = int(v)
    attrs = block('union', 'Attribute')
    return ops, attrs


OPS, ATTR_TABLES = _schema_lists()
OP_ATTR = {}
for _name, _num in OPS.items():
    if _num >= 1:
        OP_ATTR[_name] = ATTR_TABLES[_num - 1]


# ------------------------------------------------------------------------------------------------
# Graph builder -> flatc JSON
# ------------------------------------------------------------------------------------------------

class Block:
    def __init__(self, name):
        self.name = name
        self.operators = []
        self.tensors = []
        self.shapes = []
        self.inputs = []
        self.outputs = []
        self._names = set()

    def tensor(self, name, t, shape, data=None, variable=False, variable_name=None):
        assert name not in self._names, name
        self._names.add(name)
        d = {'name': name, 'shape': [int(s) for s in shape], 'type': FB_DTYPE[t]}
        if data is not None:
            d['data'] = encode_tensor_data(t, np.asarray(data).reshape(tuple(shape)))
        if variable:
            d['variable'] = True
        if variable_name is not None:
            d['variable_name'] = variable_name
        self.tensors.append(d)
        return name

    def shape_value(self, name, values):
        assert name not in self._names, name
        self._names.add(name)
        vals = [int(v) for v in values]
        d = {'name': name, 'rank': len(vals), 'data': encode_tensor_data('shape', np.array(vals, np.int64))
             if vals else []}
        self.shapes.append(d)
        return name

    def op(self, op, inputs, outputs, attr=None):
        d = {'op': op, 'attribute_type': OP_ATTR[op], 'attribute': attr or {},
             'inputs': list(inputs), 'outputs': list(outputs)}
        self.operators.append(d)
        return d

    def const(self, name, t, values, shape=None):
        values = np.asarray(values)
        shape = values.shape if shape is None else shape
        self.tensor(name, t, shape, data=values)
        self.op('CONST', [], [name])
        return name

    def const_shape(self, name, values):
        self.shape_value(name, values)
        self.op('CONST_SHAPE', [], [name])
        return name

    def to_json(self):
        return {'name': self.name, 'operators': self.operators, 'tensors': self.tensors,
                'inputs': self.inputs, 'outputs': self.outputs, 'shapes': self.shapes}


class Graph:
    def __init__(self, version=(1, 0, 0, False)):
        self.version = version
        self.regions = []  # (region name, [blocks])
        self.main = self.add_region('main', 'main')

    def add_region(self, rname, bname):
        b = Block(bname)
        self.regions.append((rname, [b]))
        return b

    def to_json(self):
        ma, mi, pa, dr = self.version
        return {'version': {'_major': ma, '_minor': mi, '_patch': pa, '_draft': dr},
                'regions': [{'name': rn, 'blocks': [b.to_json() for b in bl]} for rn, bl in self.regions]}
