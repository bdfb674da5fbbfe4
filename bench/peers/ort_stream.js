// The streaming loop of bench/streaming.sh in ONNX Runtime (onnxruntime-node, CPU provider, 1
// intra-op thread): CALLS calls of one session, each on the next chunk of a signal, the state
// outputs fed back as the next call's state inputs. Prints JSON: every call's wall time (ms), and
// from a second, profiled loop, the kernels' time per call (ONNX Runtime's own node events), so
// that the time beyond the kernels can be told apart.
//   node ort_stream.js MODEL.onnx --signal signal.npy --state h=h_out --state c=c_out
//        --initial h=h.npy --initial c=c.npy --calls 10000 [--profile-calls 2000]
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');
const { readNpy } = require('./npy');

function parseArgs(argv) {
  const args = { model: null, signal: null, states: {}, initial: {}, calls: 10000, profileCalls: 2000 };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const pair = () => argv[++i].split(/=(.*)/s);
    if (flag === '--signal') args.signal = argv[++i];
    else if (flag === '--state') { const [input, output] = pair(); args.states[input] = output; }
    else if (flag === '--initial') { const [input, file] = pair(); args.initial[input] = file; }
    else if (flag === '--calls') args.calls = Number(argv[++i]);
    else if (flag === '--profile-calls') args.profileCalls = Number(argv[++i]);
    else if (flag.startsWith('--')) throw new Error(`unknown option ${flag}`);
    else args.model = flag;
  }
  if (!args.model || !args.signal) throw new Error('usage: ort_stream.js MODEL.onnx --signal signal.npy --state IN=OUT ... --initial IN=f.npy ...');
  return args;
}

// The chunks of the signal ([chunks, batch, samples]) as tensors of [batch, samples].
function chunksOf(file) {
  const { data, dims } = readNpy(file);
  const size = dims[1] * dims[2];
  return Array.from({ length: dims[0] }, (_, k) => new ort.Tensor('float32', data.subarray(k * size, (k + 1) * size), dims.slice(1)));
}

// `calls` calls, state carried; returns each call's wall time in ms.
async function loop(session, chunks, args, calls) {
  const feeds = {};
  for (const [input, file] of Object.entries(args.initial)) {
    const { type, data, dims } = readNpy(file);
    feeds[input] = new ort.Tensor(type, data, dims);
  }
  const times = new Float64Array(calls);
  for (let k = 0; k < calls; ++k) {
    feeds.x = chunks[k % chunks.length];
    const start = process.hrtime.bigint();
    const results = await session.run(feeds);
    times[k] = Number(process.hrtime.bigint() - start) / 1e6;
    for (const [input, output] of Object.entries(args.states)) feeds[input] = results[output];
  }
  return Array.from(times);
}

const options = (extra) => ({
  executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
  intraOpNumThreads: 1, interOpNumThreads: 1, ...extra,
});

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const chunks = chunksOf(args.signal);
  const session = await ort.InferenceSession.create(args.model, options({}));
  await loop(session, chunks, args, 200);  // warm-up
  const times = await loop(session, chunks, args, args.calls);

  // Kernel time per call: a profiled session's node events ("Node" category, "_kernel_time").
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'ort-stream-'));
  const profiled = await ort.InferenceSession.create(args.model, options({ enableProfiling: true, profileFilePrefix: path.join(folder, 'profile') }));
  await loop(profiled, chunks, args, 200);
  await loop(profiled, chunks, args, args.profileCalls);
  profiled.endProfiling();
  const file = fs.readdirSync(folder).map((f) => path.join(folder, f)).find((f) => f.endsWith('.json'));
  const events = JSON.parse(fs.readFileSync(file, 'utf8'));
  const runs = events.filter((e) => e.name === 'model_run');
  const kernels = events.filter((e) => e.cat === 'Node' && e.name.endsWith('_kernel_time'));
  fs.rmSync(folder, { recursive: true, force: true });
  // model_run and kernel events are in µs; the profiled runs are the last profileCalls ones.
  const counted = runs.slice(-args.profileCalls);
  const first = counted[0].ts;
  const kernelUs = kernels.filter((e) => e.ts >= first).reduce((sum, e) => sum + e.dur, 0);
  const runUs = counted.reduce((sum, e) => sum + e.dur, 0);
  console.log(JSON.stringify({
    runner: 'ort', version: require('onnxruntime-node/package.json').version, calls: args.calls, times_ms: times,
    kernel_ms_per_call: kernelUs / 1000 / counted.length, run_ms_per_call: runUs / 1000 / counted.length,
  }));
}

main().catch((error) => {
  console.error(`ort_stream: ${error.message}`);
  process.exit(1);
});
