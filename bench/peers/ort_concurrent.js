// Throughput of one ONNX Runtime session (onnxruntime-node, CPU provider, 1 intra-op thread) with
// CALLERS runs in flight at once, as bench/harness/concurrency.py measures Kiln: each caller loops
// session.run (onnxruntime-node runs it off the JS thread) for SECONDS; prints JSON.
//   node ort_concurrent.js MODEL.onnx --input NAME=file.npy ... --callers N --seconds S
'use strict';

const ort = require('onnxruntime-node');
const { readFeeds } = require('./npy');

function parseArgs(argv) {
  const args = { inputs: {}, callers: 1, seconds: 2, model: null };
  for (let i = 0; i < argv.length; ++i) {
    const flag = argv[i];
    if (flag === '--input') {
      const [name, file] = argv[++i].split(/=(.*)/s);
      args.inputs[name] = file;
    } else if (flag === '--callers') args.callers = Number(argv[++i]);
    else if (flag === '--seconds') args.seconds = Number(argv[++i]);
    else if (flag.startsWith('--')) throw new Error(`unknown option ${flag}`);
    else args.model = flag;
  }
  if (!args.model) throw new Error('usage: ort_concurrent.js MODEL.onnx --input NAME=file.npy ... --callers N --seconds S');
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const feeds = readFeeds(ort, args.inputs);
  const session = await ort.InferenceSession.create(args.model, {
    executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
    intraOpNumThreads: 1, interOpNumThreads: 1,
  });
  for (let i = 0; i < 10; ++i) await session.run(feeds);  // warm-up
  let done = 0;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(args.seconds * 1e9));
  const caller = async () => {
    while (process.hrtime.bigint() < deadline) {
      await session.run(feeds);
      ++done;
    }
  };
  await Promise.all(Array.from({ length: args.callers }, caller));
  const elapsed = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(JSON.stringify({ runner: 'ort', callers: args.callers, runs: done, seconds: elapsed, per_second: done / elapsed }));
}

main().catch((error) => {
  console.error(`ort_concurrent: ${error.message}`);
  process.exit(1);
});
