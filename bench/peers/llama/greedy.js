// llama.cpp (node-llama-cpp) as the peer for Kiln's GGUF models: greedy continuation of a prompt.
// Usage: node greedy.js MODEL.gguf PROMPT N [--threads T] -> one JSON line: the prompt's tokens
// (BOS first when the model adds it), the generated tokens and their text.
import {getLlama} from "node-llama-cpp";

const [modelPath, prompt, count, ...rest] = process.argv.slice(2);
if (!modelPath || prompt === undefined || !count) {
  console.error("usage: node greedy.js MODEL.gguf PROMPT N [--threads T]");
  process.exit(2);
}
const threadsAt = rest.indexOf("--threads");
const threads = threadsAt >= 0 ? Number(rest[threadsAt + 1]) : 2;

const llama = await getLlama({gpu: false, build: "never"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 256, threads});
const sequence = context.getSequence();
const promptTokens = [...(model.tokens.bos != null && model.tokens.shouldPrependBosToken ? [model.tokens.bos] : []),
                      ...model.tokenize(prompt)];
const generated = [];
for await (const token of sequence.evaluate(promptTokens, {temperature: 0})) {
  generated.push(token);
  if (generated.length >= Number(count)) break;
}
console.log(JSON.stringify({prompt_tokens: promptTokens, tokens: generated, text: model.detokenize(generated)}));
await context.dispose();
await model.dispose();
