#!/usr/bin/env bash
# The language-model tests' references (tests/llm/README.md), outside the clone in $KILN_LLM_DIR
# (default ~/.cache/kiln/llm), recorded once per machine like the zoo's:
#   vocab/      llama.cpp's tokenizer test vectors (ggml-vocab-*.gguf with .inp/.out), taken from the
#               llama.cpp source that npm's node-llama-cpp bundles
#   models/     test decoders with random weights written by tests/llm/make_models.py (llama in every
#               ggml type Kiln reads, qwen2, qwen3, phi3 in F32), written again when the script changes
#   refs/       for each model of tests/llm and models/: llama.cpp's greedy continuation (<model>.greedy.json)
#               and per-position log-probabilities of the prompt and that continuation
#               (<model>.logprobs.npy), with the model's sha256 they were recorded for
# llama.cpp is installed by bench/setup.sh llama. A step that fails is written to
# $KILN_LLM_DIR/STATUS (which the tests print when they skip) and the script exits 1.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
LLM="${KILN_LLM_DIR:-$HOME/.cache/kiln/llm}"
STATUS="$LLM/STATUS"
PEER="$ROOT/bench/peers/llama"
mkdir -p "$LLM/vocab" "$LLM/refs" "$LLM/models"
problems=()

if ! "$ROOT/bench/setup.sh" llama >/dev/null; then
  problems+=("bench/setup.sh llama failed: llama.cpp (npm node-llama-cpp) is not installed")
fi

# The tokenizer vectors: the bundle is a git bundle of llama.cpp's source; only models/ is read.
bundle="$PEER/node_modules/node-llama-cpp/llama/gitRelease.bundle"
if [ -f "$bundle" ] && [ ! -f "$LLM/vocab/.complete" ]; then
  scratch="$(mktemp -d)"
  if git clone -q --no-checkout "$bundle" "$scratch/src" 2>/dev/null && git -C "$scratch/src" checkout -q HEAD -- models 2>/dev/null; then
    cp "$scratch"/src/models/ggml-vocab-* "$LLM/vocab/" && touch "$LLM/vocab/.complete"
  else
    problems+=("could not read models/ from node-llama-cpp's llama.cpp bundle")
  fi
  rm -rf "$scratch"
fi

# References per model: recorded again when the model's sha256 changed.
record() {
  local model="$1" prompt="$2" count="$3"
  local name sha greedy
  name="$(basename "$model" .gguf)"
  sha="$(sha256sum "$model" | cut -d' ' -f1)"
  greedy="$LLM/refs/$name.greedy.json"
  if [ -f "$greedy" ] && grep -q "\"sha256\":\"$sha\"" "$greedy" && [ -f "$LLM/refs/$name.logprobs.npy" ]; then return 0; fi
  local out
  if ! out="$(cd "$PEER" && node greedy.js "$model" "$prompt" "$count" --threads 2 2>/dev/null)"; then
    problems+=("llama.cpp's greedy continuation of $name failed"); return 1
  fi
  local tokens
  tokens="$(node -e 'const r = JSON.parse(process.argv[1]); console.log([...r.prompt_tokens, ...r.tokens].join(","))' "$out")"
  if ! (cd "$PEER" && node logprobs.js "$model" "$tokens" "$LLM/refs/$name.logprobs.npy" --threads 2 2>/dev/null); then
    problems+=("llama.cpp's log-probabilities of $name failed"); return 1
  fi
  node -e 'const r = JSON.parse(process.argv[1]); r.sha256 = process.argv[2]; r.prompt = process.argv[3];
           console.log(JSON.stringify(r))' "$out" "$sha" "$prompt" > "$greedy"
  echo "llm: recorded llama.cpp's references for $name"
}

# The random-weight decoders: written from the vocab-only GGUFs, again when make_models.py changes.
writer="$ROOT/tests/llm/make_models.py"
writer_sha="$(sha256sum "$writer" | cut -d' ' -f1)"
if [ -f "$LLM/vocab/.complete" ] && ! grep -qx "$writer_sha" "$LLM/models/.complete" 2>/dev/null; then
  rm -f "$LLM/models/"*.gguf "$LLM/models/.complete"
  if /usr/bin/python3 "$writer" "$LLM/vocab" "$LLM/models" >/dev/null; then
    echo "$writer_sha" > "$LLM/models/.complete"
    echo "llm: wrote the test decoders in $LLM/models"
  else
    problems+=("tests/llm/make_models.py failed (python3 with numpy)")
  fi
fi

if [ -d "$PEER/node_modules/node-llama-cpp" ]; then
  record "$ROOT/tests/llm/stories260K.gguf" "Once upon a time" 64
  if [ -f "$LLM/models/.complete" ]; then
    for model in "$LLM/models/"*.gguf; do
      record "$model" "Once upon a time there was" 32
    done
  fi
fi

if [ "${#problems[@]}" -gt 0 ]; then
  { printf '%s; ' "${problems[@]}"; echo "$(date -u +%FT%TZ)"; } > "$STATUS"
  echo "llm: INCOMPLETE, the tests that need these will be skipped: $(cat "$STATUS")" >&2
  exit 1
fi
rm -f "$STATUS"
echo "llm: references ready in $LLM"
