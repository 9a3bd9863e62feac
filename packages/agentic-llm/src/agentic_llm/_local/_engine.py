"""The llama.cpp side of LocalChatClient. Importing this module imports ``llama_cpp`` (and loads
its shared libraries), so ``_client`` imports it only when a model is first loaded."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from pathlib import Path
from typing import Any

import llama_cpp


class CountingLlama(llama_cpp.Llama):
    """A ``Llama`` that counts the tokens of the current request, streamed ones included.

    llama.cpp reports usage only for complete (non-streamed) replies. Every completion goes
    through ``generate(prompt_tokens, ...)``, which yields each sampled token: counting there
    gives the numbers llama.cpp itself reports (the prompt, and the sampled tokens less the
    end-of-generation one), summed over the completions a chat handler makes for one request.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0

    def reset_usage(self) -> None:
        """Start counting a new request."""
        self.prompt_tokens = 0
        self.completion_tokens = 0

    def generate(
        self, tokens: Sequence[int], *args: Any, **kwargs: Any
    ) -> Generator[int, Any, None]:
        self.prompt_tokens += len(tokens)
        vocab = self._model.vocab
        sampled = super().generate(tokens, *args, **kwargs)
        reply: Any = None  # what the caller sends back (llama.cpp's protocol), passed through
        try:
            while True:
                try:
                    token = sampled.send(reply)
                except StopIteration:
                    return
                if not llama_cpp.llama_vocab_is_eog(vocab, token):
                    self.completion_tokens += 1
                reply = yield token
        finally:
            sampled.close()


def load_model(
    path: Path, *, n_ctx: int, n_threads: int | None, chat_format: str | None, seed: int | None
) -> CountingLlama:
    """The model at ``path``, quiet (no llama.cpp logs on stderr). Raises what llama.cpp raises
    (``ValueError`` for a file it cannot load)."""
    options: dict[str, Any] = {"n_ctx": n_ctx, "chat_format": chat_format, "verbose": False}
    if n_threads is not None:
        options["n_threads"] = n_threads
    if seed is not None:
        options["seed"] = seed
    return CountingLlama(model_path=str(path), **options)
