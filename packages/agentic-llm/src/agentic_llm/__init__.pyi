from agentic_llm._anthropic import AnthropicChatClient as AnthropicChatClient
from agentic_llm._errors import AuthenticationError as AuthenticationError
from agentic_llm._errors import ContextLengthError as ContextLengthError
from agentic_llm._errors import InvalidRequestError as InvalidRequestError
from agentic_llm._errors import LLMConnectionError as LLMConnectionError
from agentic_llm._errors import LLMError as LLMError
from agentic_llm._errors import LLMTimeoutError as LLMTimeoutError
from agentic_llm._errors import PermissionDeniedError as PermissionDeniedError
from agentic_llm._errors import ProviderError as ProviderError
from agentic_llm._errors import RateLimitError as RateLimitError
from agentic_llm._factory import create_chat_client as create_chat_client
from agentic_llm._gemini import GeminiChatClient as GeminiChatClient
from agentic_llm._local import LocalChatClient as LocalChatClient
from agentic_llm._ollama import OllamaChatClient as OllamaChatClient
from agentic_llm._openai import OpenAIChatClient as OpenAIChatClient
from agentic_llm._openai._embedder import OpenAIEmbedder as OpenAIEmbedder

__version__: str
__all__: list[str]
