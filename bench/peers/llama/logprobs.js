// llama.cpp (node-llama-cpp) as the peer for Kiln's GGUF models: the log-probability of every
// vocabulary token after each position of a token sequence (softmax at temperature 1 over all
// tokens, no top-k/top-p/min-p), with an F32 KV cache and without flash attention (llama.cpp's CPU
// flash attention rounds Q and K to half precision: 1e-2 in log-probability on stories260K).
// Usage: node logprobs.js MODEL.gguf 1,403,407 OUT.npy [--threads T]
//   -> OUT.npy float32 [tokens, vocab] (a probability of 0 is written as -inf).
import {writeFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const [modelPath, tokenList, outPath, ...rest] = process.argv.slice(2);
if (!modelPath || !tokenList || !outPath) {
  console.error("usage: node logprobs.js MODEL.gguf 1,2,3 OUT.npy [--threads T]");
  process.exit(2);
}
const threadsAt = rest.indexOf("--threads");
const threads = threadsAt >= 0 ? Number(rest[threadsAt + 1]) : 2;
const tokens = tokenList.split(",").map(Number);

const llama = await getLlama({gpu: false, build: "never", logLevel: process.env.LLAMA_LOG ?? "warn"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({
  contextSize: Math.max(256, tokens.length + 1), threads, flashAttention: false, batchSize: Math.max(tokens.length, 1),
  experimentalKvCacheKeyType: "F32", experimentalKvCacheValueType: "F32"});
const sequence = context.getSequence();
const options = {temperature: 1, topK: 0, topP: 1, minP: 0};
const results = await sequence.controlledEvaluate(tokens.map((t) => [t, {generateNext: {probabilities: true, options}}]));
const vocab = model.tokens.vocabSize ?? model.fileInfo.metadata.tokenizer.ggml.tokens.length;
const values = new Float32Array(tokens.length * vocab).fill(-Infinity);
results.forEach((result, row) => {
  for (const [token, p] of result.next.probabilities) values[row * vocab + token] = Math.log(p);
});
const header = `{'descr': '<f4', 'fortran_order': False, 'shape': (${tokens.length}, ${vocab}), }`;
const padded = header + " ".repeat(63 - ((10 + header.length) % 64)) + "\n";
const prefix = Buffer.alloc(10);
prefix.write("\x93NUMPY", 0, "latin1");
prefix[6] = 1;
prefix[7] = 0;
prefix.writeUInt16LE(padded.length, 8);
writeFileSync(outPath, Buffer.concat([prefix, Buffer.from(padded, "latin1"), Buffer.from(values.buffer)]));
await context.dispose();
await model.dispose();
