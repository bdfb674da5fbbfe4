// One cold start of ONNX Runtime (onnxruntime-node, CPU provider): create a session from MODEL
// and run it once on the given inputs, then exit; bench/harness/startup.py times the process.
// Usage: node ort_startup.js MODEL.onnx --input NAME=file.npy ... --threads N
//                            [--level all|disabled] [--save-optimized OUT.onnx]
'use strict';

const ort = require('onnxruntime-node');
const { readNpy } = require('./npy');

async function main() {
  const argv = process.argv.slice(2);
  const feeds = {};
  const options = { executionProviders: ['cpu'], graphOptimizationLevel: 'all', executionMode: 'sequential',
    intraOpNumThreads: 1, interOpNumThreads: 1 };
  let model = null;
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--input') {
      const [name, file] = argv[++i].split(/=(.*)/s);
      const { type, data, dims } = readNpy(file);
      feeds[name] = new ort.Tensor(type, data, dims);
    } else if (argv[i] === '--threads') options.intraOpNumThreads = Number(argv[++i]);
    else if (argv[i] === '--level') options.graphOptimizationLevel = argv[++i];
    else if (argv[i] === '--save-optimized') options.optimizedModelFilePath = argv[++i];
    else model = argv[i];
  }
  const session = await ort.InferenceSession.create(model, options);
  await session.run(feeds);
}

main().catch((error) => {
  console.error(`ort_startup: ${error.message}`);
  process.exit(1);
});
