"""How ``A2AAgent`` reaches a remote A2A agent: its card, the ``a2a-sdk`` clients, the errors.

The card is resolved (``/.well-known/agent-card.json`` under the base URL) on first use, over
one ``httpx.AsyncClient`` that carries the caller's headers and that ``aclose()`` closes. Two
SDK clients share it: a non-streaming one (``SendMessage``) for ``run`` and a streaming one
(``SendStreamingMessage``) for ``run_stream``. Every SDK or transport failure leaves here as an
``A2AError`` whose message names the URL with credentials masked and never a header value.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Generator, Mapping
from typing import NoReturn

import httpx
from a2a.client import (
    A2ACardResolver,
    A2AClientError,
    A2AClientTimeoutError,
    AgentCardResolutionError,
    Client,
    ClientConfig,
    ClientFactory,
)
from a2a.types import AgentCard, CancelTaskRequest, SendMessageRequest, StreamResponse
from a2a.utils.errors import A2AError as SdkError
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import ParseError

from agentic_bus._a2a._errors import A2AConnectionError, A2ATaskError, A2ATimeoutError
from agentic_core import redact_secrets, redact_url

__all__ = ["A2ALink"]

_CARD_PATH = "/.well-known/agent-card.json"
_CANCEL_WAIT_S = 2.0


class A2ALink:
    """One remote A2A agent: where it is, how to talk to it, and what each failure means."""

    def __init__(
        self, url_or_card: str | AgentCard, headers: Mapping[str, str], timeout_s: float, name: str
    ) -> None:
        self.name = name
        self.card: AgentCard | None = None
        if isinstance(url_or_card, AgentCard):
            self.card = url_or_card
            interfaces = list(url_or_card.supported_interfaces)
            self.url = interfaces[0].url if interfaces else ""
        else:
            self.url = url_or_card
        self.timeout_s = timeout_s
        self._headers = dict(headers)
        self._http: httpx.AsyncClient | None = None
        self._clients: tuple[Client, Client] | None = None
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def where(self) -> str:
        """Who answers, for messages: ``A2A agent 'name' at URL`` (credentials masked)."""
        return f"A2A agent {self.name!r} at {self.shown_url}"

    @property
    def shown_url(self) -> str:
        """The URL as messages show it (credentials masked)."""
        return redact_url(self.url) if self.url else "<agent card without an interface>"

    async def send(
        self, request: SendMessageRequest, *, stream: bool
    ) -> AsyncGenerator[StreamResponse]:
        """The events answering ``request`` (one, a task or a message, unless ``stream``)."""
        clients = await self.ready()
        client = clients[1] if stream else clients[0]
        with self.translated(request.message.task_id or None):
            async for event in client.send_message(request):
                yield event

    async def cancel(self, task_id: str) -> None:
        """Ask the server to cancel ``task_id``; best effort, bounded, errors ignored."""
        if self._clients is None or self._closed:
            return
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_CANCEL_WAIT_S):
                await self._clients[0].cancel_task(CancelTaskRequest(id=task_id))

    async def aclose(self) -> None:
        """Close the HTTP client (the SDK clients share it); later calls raise."""
        self._closed = True
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        self._clients = None

    @contextlib.contextmanager
    def translated(self, task_id: str | None) -> Generator[None]:
        """Turn the SDK's and the transport's exceptions into ``A2AError``s."""
        try:
            yield
        except (A2ATaskError, A2AConnectionError):
            raise
        except A2AClientTimeoutError:
            self._timed_out(task_id)
        except AgentCardResolutionError as exc:
            self._unreachable(f"its agent card could not be read ({self._safe(exc)})")
        except A2AClientError as exc:
            self._unreachable(self._safe(exc))
        except TaskNotFoundError as exc:
            raise A2ATaskError(f"{self.where}: {self._safe(exc)}", task_id=task_id) from None
        except SdkError as exc:
            raise A2ATaskError(
                f"{self.where} answered an error: {type(exc).__name__}: {self._safe(exc)}",
                task_id=task_id,
            ) from None
        except (ParseError, ValueError, KeyError, TypeError) as exc:
            self._unreachable(f"it answered something that is not A2A ({self._safe(exc)})")
        except httpx.HTTPError as exc:
            self._unreachable(self._safe(exc))

    def _timed_out(self, task_id: str | None) -> NoReturn:
        raise A2ATimeoutError(
            f"{self.where} did not answer within {self.timeout_s:g} s "
            "(raise A2AAgent's timeout_s for longer tasks)",
            task_id=task_id,
        ) from None

    def _unreachable(self, why: str) -> NoReturn:
        raise A2AConnectionError(f"{self.where} cannot be used: {why}") from None

    def _safe(self, exc: BaseException) -> str:
        """``exc``'s first line without secrets: URLs redacted, header values masked."""
        text = (str(exc) or type(exc).__name__).strip().splitlines()[0]
        for value in self._headers.values():
            if value:
                text = text.replace(value, "***")
        redacted = redact_secrets(None, "", {"text": text})["text"]
        return str(redacted)

    async def ready(self) -> tuple[Client, Client]:
        """The SDK clients (non-streaming, streaming), made on first use."""
        if self._closed:
            raise A2AConnectionError(f"{self.where}: the A2AAgent is closed")
        if self._clients is not None:
            return self._clients
        async with self._lock:
            if self._clients is None:
                self._clients = await self._connect()
        return self._clients

    async def _connect(self) -> tuple[Client, Client]:
        http = self._http or httpx.AsyncClient(
            headers=self._headers, timeout=httpx.Timeout(self.timeout_s)
        )
        self._http = http
        with self.translated(None):
            card = self.card
            if card is None:
                base, path = _split_card_url(self.url)
                card = await A2ACardResolver(http, base, path).get_agent_card()
                self.card = card
            plain = ClientFactory(ClientConfig(httpx_client=http, streaming=False)).create(card)
            streaming = ClientFactory(ClientConfig(httpx_client=http, streaming=True)).create(card)
            return plain, streaming


def _split_card_url(url: str) -> tuple[str, str]:
    """A base URL and the card's path under it (a URL to a ``.json`` card is taken as is)."""
    head, _, query = url.partition("?")
    if head.endswith(".json"):
        base, _, name = head.rpartition("/")
        return base, "/" + name + (f"?{query}" if query else "")
    return url.rstrip("/"), _CARD_PATH
