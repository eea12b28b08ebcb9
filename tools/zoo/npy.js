'use strict';
/*
 * Minimal .npy (NumPy format 1.0/2.0/3.0) reader and writer for the zoo tools: little-endian
 * float32, float64, int64, int32, int16, int8, uint8, uint16 and bool arrays in C order. Plain
 * node, no dependencies. Written headers use format 1.0 padded to a multiple of 64 bytes, as
 * numpy does.
 */
const fs = require('fs');

/* descr -> [TypedArray constructor, onnxruntime tensor type, bytes per element] */
const DTYPES = {
  '<f4': [Float32Array, 'float32', 4],
  '<f8': [Float64Array, 'float64', 8],
  '<i8': [BigInt64Array, 'int64', 8],
  '<i4': [Int32Array, 'int32', 4],
  '<i2': [Int16Array, 'int16', 2],
  '|i1': [Int8Array, 'int8', 1],
  '|u1': [Uint8Array, 'uint8', 1],
  '<u2': [Uint16Array, 'uint16', 2],
  '|b1': [Uint8Array, 'bool', 1],
};
const BY_ORT_TYPE = {};
for (const [descr, [, ortType]] of Object.entries(DTYPES)) BY_ORT_TYPE[ortType] = descr;

function fail(msg) {
  throw new Error(msg);
}

/* Parses the Python-literal header dict numpy writes: {'descr': '<f4', 'fortran_order': False,
 * 'shape': (1, 3), } */
function parseHeader(text, file) {
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(text);
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(text);
  const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(text);
  if (!descr || !fortran || !shape) fail(`${file}: malformed .npy header: ${text.trim()}`);
  if (fortran[1] === 'True') fail(`${file}: Fortran-order arrays are not supported`);
  let d = descr[1];
  if (d === '<b1' || d === '=b1') d = '|b1';
  if (d === '<u1' || d === '=u1') d = '|u1';
  if (d === '<i1' || d === '=i1') d = '|i1';
  if (!DTYPES[d]) fail(`${file}: dtype ${descr[1]} is not supported (supported: ${Object.keys(DTYPES).join(' ')})`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s.length).map((s) => {
    const n = Number(s.replace(/L$/, ''));
    if (!Number.isInteger(n) || n < 0) fail(`${file}: bad shape ${shape[1]}`);
    return n;
  });
  return { descr: d, dims };
}

/* Returns {descr, type (onnxruntime name), dims, data (a TypedArray over a private copy)}. */
function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.length < 10 || buf[0] !== 0x93 || buf.toString('latin1', 1, 6) !== 'NUMPY') fail(`${file}: not a .npy file`);
  const major = buf[6];
  let hlen, off;
  if (major === 1) { hlen = buf.readUInt16LE(8); off = 10; }
  else if (major === 2 || major === 3) { hlen = buf.readUInt32LE(8); off = 12; }
  else fail(`${file}: .npy format version ${major} is not supported`);
  if (off + hlen > buf.length) fail(`${file}: truncated header`);
  const h = parseHeader(buf.toString(major === 3 ? 'utf8' : 'latin1', off, off + hlen), file);
  const [Ctor, type, size] = DTYPES[h.descr];
  const count = h.dims.reduce((a, b) => a * b, 1);
  const start = off + hlen;
  if (buf.length - start < count * size) fail(`${file}: expected ${count * size} data bytes, found ${buf.length - start}`);
  /* copy into a fresh, aligned ArrayBuffer (the file buffer's offset need not be aligned) */
  const ab = new ArrayBuffer(count * size);
  new Uint8Array(ab).set(buf.subarray(start, start + count * size));
  const data = new Ctor(ab);
  if (type === 'bool') for (let i = 0; i < data.length; i++) data[i] = data[i] ? 1 : 0;
  return { descr: h.descr, type, dims: h.dims, data };
}

/* Writes a TypedArray with the given onnxruntime type name and dims. */
function writeNpy(file, type, dims, data) {
  const descr = BY_ORT_TYPE[type];
  if (!descr) fail(`${file}: cannot write element type ${type}`);
  const [Ctor, , size] = DTYPES[descr];
  const count = dims.reduce((a, b) => a * b, 1);
  if (data.length !== count) fail(`${file}: ${data.length} elements for shape [${dims}]`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre[0] = 0x93;
  pre.write('NUMPY', 1, 'latin1');
  pre[6] = 1;
  pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  let typed = data;
  if (type === 'bool') typed = Uint8Array.from(data, (v) => (v ? 1 : 0));
  else if (!(data instanceof Ctor)) typed = Ctor.from(data);
  const body = Buffer.from(typed.buffer, typed.byteOffset, count * size);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

module.exports = { readNpy, writeNpy, DTYPES };
