// Times one ONNX model in ONNX Runtime (onnxruntime-node, CPU provider) the way `kiln bench` does:
// load, first run, warm-up runs, timed runs; writes the timings as JSON and, if asked, the outputs
// as .npy. Usage (bench/run.sh calls it):
//   node ort_bench.js MODEL.onnx --input NAME=file.npy ... --threads N --warmup W --runs R
//                     [--free-dim DIM=SIZE ...] [--json OUT.json] [--output-dir DIR]
// --free-dim fixes a symbolic input dim (sessionOptions.freeDimensionOverrides).
'use strict';

const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const { readFeeds, writeNpy } = require('./npy');

function parseArgs(argv) {
  const args = { inputs: {}, freeDims: {}, threads: 1, warmup: 2, runs: 10, json: null, outputDir: null, model: null };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--input') {
      const [name, file] = value().split(/=(.*)/s);
      args.inputs[name] = file;
    } else if (flag === '--free-dim') {
      const [dim, size] = value().split(/=(.*)/s);
      args.freeDims[dim] = Number(size);
    } else if (flag === '--threads') args.threads = Number(value());
    else if (flag === '--warmup') args.warmup = Number(value());
    else if (flag === '--runs') args.runs = Number(value());
    else if (flag === '--json') args.json = value();
    else if (flag === '--output-dir') args.outputDir = value();
    else if (flag.startsWith('--')) throw new Error(`unknown option ${flag}`);
    else args.model = flag;
  }
  if (!args.model) throw new Error('usage: ort_bench.js MODEL.onnx --input NAME=file.npy ... [options]');
  return args;
}

function milliseconds(startNs) {
  return Number(process.hrtime.bigint() - startNs) / 1e6;
}

// min / median / p90 / max / mean; percentiles interpolate linearly between ranks (as NumPy does).
function summarize(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const percentile = (q) => {
    const rank = (sorted.length - 1) * q;
    const low = Math.floor(rank), high = Math.ceil(rank);
    return sorted[low] + (sorted[high] - sorted[low]) * (rank - low);
  };
  return {
    min: sorted[0], median: percentile(0.5), p90: percentile(0.9), max: sorted[sorted.length - 1],
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
  };
}

// Output file names follow `kiln bench --output-dir`: characters outside [A-Za-z0-9_.-] become '_'.
function writeOutputs(dir, outputs) {
  fs.mkdirSync(dir, { recursive: true });
  for (const [name, tensor] of Object.entries(outputs)) {
    writeNpy(path.join(dir, `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}.npy`), tensor);
  }
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const feeds = readFeeds(ort, args.inputs);
  const options = {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
    intraOpNumThreads: args.threads, interOpNumThreads: 1,
  };
  if (Object.keys(args.freeDims).length > 0) options.freeDimensionOverrides = args.freeDims;

  let start = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(args.model, options);
  const loadMs = milliseconds(start);
  start = process.hrtime.bigint();
  let outputs = await session.run(feeds);
  const firstRunMs = milliseconds(start);
  for (let i = 0; i < args.warmup; ++i) outputs = await session.run(feeds);
  const samples = [];
  for (let i = 0; i < args.runs; ++i) {
    start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    samples.push(milliseconds(start));
  }
  if (args.outputDir) writeOutputs(args.outputDir, outputs);

  const result = {
    runner: 'ort', version: ort.env.versions.node, model: args.model, threads: args.threads,
    options, load_ms: loadMs, first_run_ms: firstRunMs, warmup: args.warmup, runs: args.runs,
    samples_ms: samples, latency_ms: summarize(samples),
  };
  const text = JSON.stringify(result, null, 2);
  if (args.json) fs.writeFileSync(args.json, text + '\n');
  else console.log(text);
}

main().catch((error) => {
  console.error(`ort_bench: ${error.message}`);
  process.exit(1);
});
