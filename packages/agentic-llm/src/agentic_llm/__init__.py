"""agentic-llm.

LLM chat clients for agentic: OpenAI-compatible, Anthropic, Gemini, Ollama and offline llama.cpp.

Public names load lazily, on first use: ``import agentic_llm`` stays cheap (httpx is imported
only when a client or error class is first touched). ``__init__.pyi`` is the one list of them.
"""

from agentic_core import lazy_exports as _lazy_exports

__getattr__, __dir__, __all__ = _lazy_exports(  # pyright: ignore[reportUnsupportedDunderAll]
    __name__, __file__, distribution="agentic-llm"
)
