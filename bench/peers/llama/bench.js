// llama.cpp (node-llama-cpp) as the peer in bench/llm.sh: llama-bench's two figures for a GGUF
// model, prompt processing of P tokens in one batch (pp) and generation of G tokens one call each
// (tg, greedy), after a context of D tokens (the depth), with its default F16 KV cache and T threads.
// Usage: node bench.js MODEL.gguf --threads T --prompt P --generate G [--depth D] [--repeat R]
//   -> one JSON line: load_ms, pp_tokens_per_s, tg_tokens_per_s, first_token_ms (a one-token prompt's
//      first generated token from an empty cache) as medians over R repetitions, and the process's
//      peak resident bytes (node's own included).
import {readFileSync} from "node:fs";
import {getLlama} from "node-llama-cpp";

const args = process.argv.slice(2);
const option = (name, fallback) => {
  const at = args.indexOf(name);
  return at >= 0 ? Number(args[at + 1]) : fallback;
};
const modelPath = args[0];
const threads = option("--threads", 2), prompt = option("--prompt", 512), generate = option("--generate", 128);
const depth = option("--depth", 0), repeat = option("--repeat", 3);
const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
// The process's peak resident set (VmHWM), as Kiln reports its own (getrusage's maximum).
const peakResident = () => {
  const line = readFileSync("/proc/self/status", "utf8").split("\n").find((l) => l.startsWith("VmHWM:"));
  return line ? Number(line.split(/\s+/)[1]) * 1024 : 0;
};

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const loadStart = performance.now();
const model = await llama.loadModel({modelPath});
const loadMs = performance.now() - loadStart;
const context = await model.createContext({contextSize: depth + prompt + generate + 8, threads, batchSize: Math.max(prompt, depth, 1)});
const sequence = context.getSequence();
// Token ids spread over the vocabulary, the same every run.
const vocab = model.fileInfo.metadata.tokenizer.ggml.tokens.length;
const tokens = (n, seed) => Array.from({length: n}, (_, i) => 100 + ((i * 7919 + seed * 104729) % (vocab - 200)));
const pp = [], tg = [], first = [];
for (let r = 0; r < repeat; ++r) {
  await sequence.clearHistory();
  if (depth > 0) await sequence.evaluateWithoutGeneratingNewTokens(tokens(depth, 1));
  let start = performance.now();
  await sequence.evaluateWithoutGeneratingNewTokens(tokens(prompt, 2));
  pp.push(prompt / ((performance.now() - start) / 1000));
  let count = 0;
  if (depth === 0) await sequence.clearHistory();  // the first token from an empty cache, as Kiln's
  start = performance.now();
  for await (const token of sequence.evaluate(tokens(1, 3), {temperature: 0})) {
    if (count === 0) first.push(performance.now() - start);
    if (++count >= generate) break;
  }
  tg.push(generate / ((performance.now() - start) / 1000));
}
console.log(JSON.stringify({load_ms: loadMs, pp_tokens_per_s: median(pp), tg_tokens_per_s: median(tg), first_token_ms: median(first),
                            peak_resident_bytes: peakResident()}));
await context.dispose();
await model.dispose();
