// Reads and writes NumPy .npy files (format 1.0-3.0, little-endian, C order) for the ONNX Runtime
// peer: float32, int64, int32 and bool, as onnxruntime-node tensor types and typed arrays.
'use strict';

const fs = require('fs');

const MAGIC = Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]); // "\x93NUMPY"

// .npy descr <-> onnxruntime tensor type and the typed array that holds its elements.
const TYPES = [
  { descr: '<f4', type: 'float32', Array: Float32Array },
  { descr: '<i8', type: 'int64', Array: BigInt64Array },
  { descr: '<i4', type: 'int32', Array: Int32Array },
  { descr: '|b1', type: 'bool', Array: Uint8Array },
];

function parseHeader(text) {
  const field = (name) => {
    const match = text.match(new RegExp(`'${name}'\\s*:\\s*('[^']*'|True|False|\\([^)]*\\))`));
    if (!match) throw new Error(`.npy header lacks '${name}': ${text}`);
    return match[1];
  };
  const descr = field('descr').slice(1, -1);
  const fortran = field('fortran_order') === 'True';
  const shape = field('shape').slice(1, -1).split(',').map((s) => s.trim()).filter((s) => s).map(Number);
  return { descr, fortran, shape };
}

/** Returns {type, data, dims} for an onnxruntime Tensor. */
function readNpy(path) {
  const bytes = fs.readFileSync(path);
  if (!bytes.subarray(0, 6).equals(MAGIC)) throw new Error(`${path}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const dataStart = (major === 1 ? 10 : 12) + headerLength;
  const header = parseHeader(bytes.subarray(major === 1 ? 10 : 12, dataStart).toString('latin1'));
  const kind = TYPES.find((t) => t.descr === header.descr);
  if (!kind) throw new Error(`${path}: unsupported dtype ${header.descr} (float32, int64, int32, bool only)`);
  if (header.fortran) throw new Error(`${path}: Fortran-order arrays are not supported`);
  const count = header.shape.reduce((a, b) => a * b, 1);
  // Copy into a fresh, aligned buffer: the file's data offset need not suit the element size.
  const raw = bytes.subarray(dataStart, dataStart + count * kind.Array.BYTES_PER_ELEMENT);
  const data = new kind.Array(count);
  Buffer.from(data.buffer).set(raw);
  return { type: kind.type, data, dims: header.shape };
}

/** Writes an onnxruntime Tensor-like {type, data, dims} as a version 1.0 .npy file. */
function writeNpy(path, { type, data, dims }) {
  const kind = TYPES.find((t) => t.type === type);
  if (!kind) throw new Error(`cannot write a ${type} tensor as .npy`);
  const shape = dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
  let header = `{'descr': '${kind.descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Pad with spaces so the data starts on a 64-byte boundary; the header ends with a newline.
  header += ' '.repeat(63 - ((10 + header.length) % 64)) + '\n';
  const prefix = Buffer.alloc(10);
  MAGIC.copy(prefix);
  prefix[6] = 1;
  prefix.writeUInt16LE(header.length, 8);
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(path, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

// ONNX Runtime feeds from {input name: .npy path}: one ort.Tensor per file.
function readFeeds(ort, inputs) {
  const feeds = {};
  for (const [name, file] of Object.entries(inputs)) {
    const { type, data, dims } = readNpy(file);
    feeds[name] = new ort.Tensor(type, data, dims);
  }
  return feeds;
}

module.exports = { readNpy, writeNpy, readFeeds };
