"""Language models: a GGUF decoder package generating text token by token (kiln.Generator).

    gen = kiln.Generator("stories260K.gguf")
    for token, text in gen.generate("Once upon a time", max_tokens=64):   # greedy by default
        print(text, end="", flush=True)
    print(gen.stats)                        # time to first token, prompt and generation tokens/s
    logits = gen.logits(gen.tokenize("Once upon a time"))                 # [tokens, vocab] float32

docs/PYTHON.md, "Language models"."""

import os
import queue
import threading

from . import _kiln
from .options import SessionOptions

_DONE = object()


class Generator:
    """A GGUF decoder (llama, qwen2, qwen3, phi3) with its tokenizer and KV cache.

    `context`: positions the cache holds (0: the model's context length, at most 4096);
    `batch`: prompt tokens per call; `sess_options`: SessionOptions (threads, isa, ...)."""

    def __init__(self, path, sess_options=None, context=0, batch=512):
        options = (sess_options if sess_options is not None else SessionOptions())._native_options(["cpu"])
        self._native = _kiln.Generator.load(os.fspath(path), options, int(context), int(batch))
        self.stats = None

    @property
    def vocab_size(self):
        return self._native.vocab_size

    @property
    def context(self):
        return self._native.context

    def tokenize(self, text, add_special=True):
        """Token ids of `text`; BOS (and EOS) as the package says when `add_special`."""
        return self._native.tokenize(text, add_special)

    def detokenize(self, tokens):
        """The text of `tokens` (bytes that are not UTF-8 replaced by U+FFFD)."""
        return self._native.detokenize(list(tokens)).decode("utf-8", errors="replace")

    def generate(self, prompt, max_tokens=64, temperature=0.0, top_k=0, top_p=1.0, seed=0, stop_at_eos=True):
        """Yields (token id, text) for each generated token as it is produced; `prompt` is text or
        a list of token ids. Greedy at temperature 0. Afterwards `stats` holds the figures."""
        tokens = self.tokenize(prompt) if isinstance(prompt, str) else [int(t) for t in prompt]
        sampling = _kiln.SamplingOptions()
        sampling.temperature, sampling.top_k, sampling.top_p = float(temperature), int(top_k), float(top_p)
        sampling.seed, sampling.stop_at_end_of_generation = int(seed), bool(stop_at_eos)
        produced = queue.Queue()
        stop = threading.Event()

        def on_token(token, text):
            produced.put((token, text))
            return not stop.is_set()

        def run():
            try:
                produced.put(("stats", self._native.generate(tokens, int(max_tokens), sampling, on_token, False)[0]))
            except BaseException as error:  # handed to the consumer
                produced.put(("error", error))
            produced.put(_DONE)

        worker = threading.Thread(target=run, daemon=True)
        worker.start()
        try:
            pending = b""
            while (item := produced.get()) is not _DONE:
                if item[0] == "stats":
                    self.stats = item[1]
                elif item[0] == "error":
                    raise item[1]
                else:
                    token, text = item
                    pending += text
                    yield token, pending.decode("utf-8", errors="replace")
                    pending = b""
        finally:
            stop.set()
            worker.join()

    def logits(self, tokens):
        """The float32 logits of every position of `tokens` from an empty cache: [tokens, vocab]."""
        return self._native.logits([int(t) for t in tokens])

    def report_json(self):
        return self._native.report_json()
