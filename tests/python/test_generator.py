"""kiln.Generator on llama.cpp's stories260K (tests/llm): llama.cpp's greedy continuation, text
streamed as produced, logits, bad input refused."""

import json
import os
import pathlib

import numpy as np
import pytest

import kiln

MODEL = pathlib.Path(__file__).resolve().parents[1] / "llm" / "stories260K.gguf"
REFERENCE = pathlib.Path(os.environ.get("KILN_LLM_DIR", pathlib.Path.home() / ".cache" / "kiln" / "llm")) / "refs" / "stories260K.greedy.json"


@pytest.fixture(scope="module")
def generator():
    return kiln.Generator(MODEL)


def test_greedy_continuation_is_llama_cpps(generator):
    if not REFERENCE.exists():
        pytest.skip("no %s (tests/llm/llm.sh records it; make test runs it)" % REFERENCE)
    want = json.loads(REFERENCE.read_text())
    assert generator.tokenize(want["prompt"]) == want["prompt_tokens"]
    pieces = list(generator.generate(want["prompt"], max_tokens=len(want["tokens"])))
    assert [token for token, _ in pieces] == want["tokens"]
    assert "".join(text for _, text in pieces) == want["text"]
    assert generator.stats["generated_tokens"] == len(want["tokens"])
    assert generator.stats["generation_tokens_per_second"] > 0


def test_logits_and_stopping_early(generator):
    tokens = generator.tokenize("Once upon a time")
    logits = generator.logits(tokens)
    assert logits.shape == (len(tokens), generator.vocab_size) and logits.dtype == np.float32
    first = next(iter(generator.generate(tokens, max_tokens=8)))
    assert first[0] == int(np.argmax(logits[-1]))
    assert len(list(zip(range(3), generator.generate(tokens, max_tokens=8)))) == 3  # a generator closed early


def test_bad_input_is_refused(generator):
    with pytest.raises(kiln.InvalidArgument):
        list(generator.generate([], max_tokens=4))
    with pytest.raises(kiln.InvalidArgument):
        list(generator.generate([1, 100000], max_tokens=4))
    with pytest.raises(kiln.InvalidArgument):
        generator.logits([1] * (generator.context + 1))
