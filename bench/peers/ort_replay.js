// ONNX Runtime's side of bench/dynamic.sh: create one session (CPU provider, graph optimisation
// all) and run a sequence of calls with varying input shapes, in order; prints total, p50/p99 and
// peak RSS as JSON. Inputs are filled with values in [0, 10) (int64 inputs named with --int64,
// float32 otherwise), as kiln replay's seeded ones are.
// Usage: node ort_replay.js MODEL.onnx --calls calls.json --threads N [--int64 a,b] [--json OUT]
'use strict';

const fs = require('fs');
const ort = require('onnxruntime-node');

function tensorFor(shape, int64, seed) {
  const count = shape.reduce((a, b) => a * b, 1);
  if (int64) {
    const data = new BigInt64Array(count);
    for (let i = 0; i < count; ++i) data[i] = BigInt((i * 7 + seed) % 10);
    return new ort.Tensor('int64', data, shape);
  }
  const data = new Float32Array(count);
  for (let i = 0; i < count; ++i) data[i] = ((i * 7 + seed) % 10) / 10 - 0.5;
  return new ort.Tensor('float32', data, shape);
}

function percentile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function main() {
  const argv = process.argv.slice(2);
  let model = null, callsPath = null, json = null, threads = 1, int64 = new Set();
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--calls') callsPath = argv[++i];
    else if (argv[i] === '--threads') threads = Number(argv[++i]);
    else if (argv[i] === '--int64') int64 = new Set(argv[++i].split(','));
    else if (argv[i] === '--json') json = argv[++i];
    else model = argv[i];
  }
  const calls = JSON.parse(fs.readFileSync(callsPath, 'utf8'));
  const loadStart = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, { executionProviders: ['cpu'], graphOptimizationLevel: 'all',
    executionMode: 'sequential', intraOpNumThreads: threads, interOpNumThreads: 1 });
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6;
  const latencies = [];
  for (let c = 0; c < calls.length; ++c) {
    const feeds = {};
    for (const [name, shape] of Object.entries(calls[c])) feeds[name] = tensorFor(shape, int64.has(name), c);
    const start = process.hrtime.bigint();
    await session.run(feeds);
    latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  const result = { runner: 'ort', calls: latencies.length, load_ms: loadMs, total_ms: latencies.reduce((a, b) => a + b, 0),
    p50_ms: percentile(latencies, 0.5), p99_ms: percentile(latencies, 0.99),
    peak_rss_bytes: process.resourceUsage().maxRSS * 1024, latencies_ms: latencies };
  const text = JSON.stringify(result, null, 1);
  if (json) fs.writeFileSync(json, text + '\n');
  else console.log(text);
}

main().catch((error) => {
  console.error(`ort_replay: ${error.message}`);
  process.exit(1);
});
