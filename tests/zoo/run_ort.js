// Run one ONNX model with onnxruntime-node on .npy inputs; write each output as .npy.
// usage: node run_ort.js MODEL OUTDIR name=path.npy ...   (split at the LAST '=')
// ZOO_ORT_RUNS: timed runs (default 3; the first run's outputs are written)
// prints one JSON line: {ok, outputs:{name:{file,dims,type}}, ms_runs:[...], ms_median, error}
'use strict';
const fs = require('fs');
const path = require('path');
const ortPath = process.env.ORT_NODE_PATH || path.join(__dirname, '..', '..', 'bench', 'peers', 'node_modules', 'onnxruntime-node');
const ort = require(ortPath);

const DESCR2TYPE = { '<f4': 'float32', '<f8': 'float64', '<f2': 'float16', '<i8': 'int64', '<i4': 'int32',
  '<i2': 'int16', '|i1': 'int8', '|u1': 'uint8', '<u2': 'uint16', '<u4': 'uint32', '<u8': 'uint64', '|b1': 'bool' };
const TYPE2DESCR = Object.fromEntries(Object.entries(DESCR2TYPE).map(([k, v]) => [v, k]));
const TYPE2ARR = { float32: Float32Array, float64: Float64Array, float16: Uint16Array, int64: BigInt64Array,
  int32: Int32Array, int16: Int16Array, int8: Int8Array, uint8: Uint8Array, uint16: Uint16Array,
  uint32: Uint32Array, uint64: BigUint64Array, bool: Uint8Array };

// numpy's fixed-width unicode ('<U<width>'): UTF-32LE code points, NUL-padded, per element.
function readUnicode(buf, off, count, width) {
  const out = [];
  for (let e = 0; e < count; e++) {
    let s = '';
    for (let k = 0; k < width; k++) {
      const cp = buf.readUInt32LE(off + 4 * (e * width + k));
      if (cp === 0) break;
      s += String.fromCodePoint(cp);
    }
    out.push(s);
  }
  return out;
}

function unicodeBody(strings) {
  const points = strings.map(s => Array.from(s, c => c.codePointAt(0)));
  const width = Math.max(1, ...points.map(p => p.length));
  const body = Buffer.alloc(4 * width * strings.length);
  points.forEach((p, e) => p.forEach((cp, k) => body.writeUInt32LE(cp, 4 * (e * width + k))));
  return { descr: '<U' + width, body };
}

function readNpy(file) {
  const buf = fs.readFileSync(file);
  if (buf.readUInt32BE(0) !== 0x934e554d || buf.toString('latin1', 1, 6) !== 'NUMPY') throw new Error('not npy: ' + file);
  const major = buf[6];
  const hlen = major === 1 ? buf.readUInt16LE(8) : buf.readUInt32LE(8);
  const hstart = major === 1 ? 10 : 12;
  const header = buf.toString('latin1', hstart, hstart + hlen);
  const descr = /'descr':\s*'([^']+)'/.exec(header)[1];
  if (/'fortran_order':\s*True/.test(header)) throw new Error('fortran order unsupported');
  const shapeStr = /'shape':\s*\(([^)]*)\)/.exec(header)[1];
  const dims = shapeStr.split(',').map(s => s.trim()).filter(s => s.length).map(Number);
  const off0 = hstart + hlen;
  const unicode = /^<U(\d+)$/.exec(descr);
  if (unicode) return new ort.Tensor('string', readUnicode(buf, off0, dims.reduce((a, b) => a * b, 1), +unicode[1]), dims);
  const type = DESCR2TYPE[descr];
  if (!type) throw new Error('dtype unsupported: ' + descr);
  const Arr = TYPE2ARR[type];
  const off = hstart + hlen;
  const n = dims.reduce((a, b) => a * b, 1);
  const ab = buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + n * Arr.BYTES_PER_ELEMENT);
  let data = new Arr(ab);
  if (type === 'bool') data = new Uint8Array(ab);
  return new ort.Tensor(type, type === 'bool' ? Array.from(data, v => !!v) : data, dims);
}

function writeNpy(file, tensor) {
  const type = tensor.type;
  const unicode = type === 'string' ? unicodeBody(tensor.data) : null;
  const descr = unicode ? unicode.descr : TYPE2DESCR[type];
  if (!descr) throw new Error('cannot write type ' + type);
  const shape = tensor.dims.length === 0 ? '()' : tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  const total = 10 + header.length + 1;
  header += ' '.repeat((64 - (total % 64)) % 64) + '\n';
  const pre = Buffer.alloc(10);
  pre.writeUInt32BE(0x934e554d, 0); pre.write('PY', 4, 'latin1'); pre[6] = 1; pre[7] = 0;
  pre.writeUInt16LE(header.length, 8);
  let data = tensor.data;
  if (type === 'bool') data = Uint8Array.from(data, v => (v ? 1 : 0));
  const body = unicode ? unicode.body : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([pre, Buffer.from(header, 'latin1'), body]));
}

function safe(name) { return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 60); }

async function main() {
  const [model, outdir, ...args] = process.argv.slice(2);
  const res = { model, ok: false };
  try {
    const feeds = {};
    for (const a of args) { const i = a.lastIndexOf('='); feeds[a.slice(0, i)] = readNpy(a.slice(i + 1)); }
    const t0 = process.hrtime.bigint();
    const sess = await ort.InferenceSession.create(model, { intraOpNumThreads: 2, interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3 });
    res.load_ms = Number(process.hrtime.bigint() - t0) / 1e6;
    res.inputNames = sess.inputNames; res.outputNames = sess.outputNames;
    const runs = []; let first = null;
    const nruns = Math.max(1, parseInt(process.env.ZOO_ORT_RUNS || '3', 10));
    for (let r = 0; r < nruns; r++) {
      const t = process.hrtime.bigint();
      const out = await sess.run(feeds);
      runs.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (!first) first = out;
    }
    res.ms_runs = runs.map(x => +x.toFixed(3));
    res.ms_median = +[...runs].sort((a, b) => a - b)[Math.floor(runs.length / 2)].toFixed(3);
    res.onnxruntime = require(path.join(ortPath, 'package.json')).version;
    fs.mkdirSync(outdir, { recursive: true });
    res.outputs = {};
    const used = new Set(); const index = [];
    for (const name of sess.outputNames) {
      const t = first[name];
      let f = safe(name); let k = 1;
      while (used.has(f)) f = safe(name) + '_' + (k++);
      used.add(f);
      writeNpy(path.join(outdir, f + '.npy'), t);
      res.outputs[name] = { file: f + '.npy', dims: t.dims, type: t.type };
      index.push(`${f}.npy\t${name}`);
    }
    fs.writeFileSync(path.join(outdir, 'outputs.tsv'), index.join('\n') + '\n');
    res.ok = true;
  } catch (e) {
    res.error = String(e && e.message || e).slice(0, 2000);
  }
  console.log(JSON.stringify(res));
}
main();
