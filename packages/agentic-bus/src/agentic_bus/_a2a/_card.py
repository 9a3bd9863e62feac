"""The agent card of a served target: its name, description and tools as skills, streaming
on, and one JSON-RPC interface.

The interface URL is ``url=`` when given; else the URL the card was asked for at (the
request's scheme and its ``Host``, which the guard has checked), so a client finds the
endpoint wherever the server is reached. A card never holds a secret: with a token it only
says that a bearer token is needed (an HTTP ``Bearer`` security scheme).
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    HTTPAuthSecurityScheme,
    SecurityRequirement,
    SecurityScheme,
    StringList,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT, TransportProtocol

from agentic_core import Workflow

__all__ = ["RPC_PATH", "base_url", "card_for", "card_with_url"]

RPC_PATH = "/"
"""Where the JSON-RPC endpoint is served."""

base_url: ContextVar[str | None] = ContextVar("a2a_request_base_url", default=None)
"""The ``scheme://host`` the current request was sent to (set by ``A2AApp``)."""

_MODES = ["text/plain", "application/json"]


def card_for(target: Any, *, url: str | None, token_required: bool, version: str) -> AgentCard:
    """The card of ``target`` (a core ``Agent`` or ``Workflow``)."""
    name: str = target.name
    kind = "workflow" if isinstance(target, Workflow) else "agent"
    description = getattr(target, "description", None) or f"The {kind} {name!r}, served by agentic."
    card = AgentCard(
        name=name,
        description=str(description),
        version=version,
        supported_interfaces=[_interface(url or f"http://127.0.0.1{RPC_PATH}")],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=_MODES,
        default_output_modes=_MODES,
        skills=_skills(target, name, kind),
    )
    if token_required:
        card.security_schemes["bearer"].CopyFrom(
            SecurityScheme(http_auth_security_scheme=HTTPAuthSecurityScheme(scheme="Bearer"))
        )
        card.security_requirements.append(SecurityRequirement(schemes={"bearer": StringList()}))
    return card


def card_with_url(card: AgentCard) -> AgentCard:
    """``card`` with its first interface at the URL the current request reached (unchanged
    outside a request)."""
    base = base_url.get()
    if base is None or not card.supported_interfaces:
        return card
    served = AgentCard()
    served.CopyFrom(card)
    served.supported_interfaces[0].url = base + RPC_PATH
    return served


def _interface(url: str) -> AgentInterface:
    return AgentInterface(
        url=url,
        protocol_binding=TransportProtocol.JSONRPC.value,
        protocol_version=PROTOCOL_VERSION_CURRENT,
    )


def _skills(target: Any, name: str, kind: str) -> list[AgentSkill]:
    tools: list[Any] = list(getattr(target, "tools", None) or [])
    skills = [
        AgentSkill(
            id=str(tool.name),
            name=str(tool.name),
            description=str(getattr(tool, "description", "") or tool.name),
            tags=["tool"],
        )
        for tool in tools
    ]
    if not skills:
        description = getattr(target, "description", None) or f"Talk to the {kind} {name!r}."
        skills.append(AgentSkill(id=name, name=name, description=str(description), tags=[kind]))
    return skills
