"""Qdrant client exceptions as agentic errors, and a location that is safe to show."""

from __future__ import annotations

import json
from typing import cast

import httpx
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from agentic_core import StorageError, VectorStoreError, redact_url

__all__ = ["missing_collection", "public_location", "translate_error"]

_MAX_DETAIL_CHARS = 200


def public_location(location: str) -> str:
    """``location`` without a password or query string (a URL may carry credentials)."""
    if not location.startswith(("http://", "https://")):
        return location
    return redact_url(location, drop_query=True)


def missing_collection(name: str) -> VectorStoreError:
    """The error for a collection that does not exist."""
    return VectorStoreError(
        f"collection {name!r} does not exist; create it with create_collection first"
    )


def translate_error(
    exc: Exception, *, location: str, collection: str | None, lookup: bool = False
) -> Exception | None:
    """The agentic error for what a Qdrant call raised, or None when it is not Qdrant's.

    ``location`` must already be public (see ``public_location``). ``lookup`` marks a call that
    asks whether ``collection`` exists: a 404 there means a wrong URL, not a missing collection.
    Transport failures become ``StorageError``; a server's 404 about ``collection``, and local
    mode's ``ValueError`` ("not found", a bad name), become ``VectorStoreError`` naming it;
    other refusals are ``VectorStoreError`` for a bad request (400, 422), else ``StorageError``.
    """
    about = "" if collection is None else f" (collection {collection!r})"
    if isinstance(exc, ResponseHandlingException | httpx.HTTPError):
        source = exc.source if isinstance(exc, ResponseHandlingException) else exc
        return StorageError(
            f"cannot reach Qdrant at {location}{about}: {type(source).__name__}: {source}; "
            "is the server running and the URL right?"
        )
    if isinstance(exc, UnexpectedResponse):
        return _refused(exc, location, collection, lookup=lookup)
    if isinstance(exc, ValueError) and collection is not None:
        # Local mode refuses with a plain ValueError; our own checks ran before the call.
        if "not found" in str(exc):
            return missing_collection(collection)
        return VectorStoreError(f"Qdrant refused a request on collection {collection!r}: {exc}")
    return None


def _refused(
    exc: UnexpectedResponse, location: str, collection: str | None, *, lookup: bool
) -> Exception:
    detail = _server_detail(exc.content)
    if collection is not None and not lookup and exc.status_code == 404:
        return missing_collection(collection)
    if collection is not None and exc.status_code in (400, 422):
        return VectorStoreError(
            f"Qdrant at {location} refused a request on collection {collection!r}: {detail}"
        )
    about = "" if collection is None else f" (collection {collection!r})"
    hint = "; check the API key" if exc.status_code in (401, 403) else ""
    return StorageError(
        f"Qdrant at {location} refused a request{about}: HTTP {exc.status_code} "
        f"{exc.reason_phrase}{': ' + detail if detail else ''}{hint}"
    )


def _server_detail(content: bytes) -> str:
    """The error text of a Qdrant reply (``{"status": {"error": ...}}``), shortened."""
    try:
        body: object = json.loads(content)
    except ValueError:
        return ""
    if not isinstance(body, dict):
        return ""
    status = cast("dict[str, object]", body).get("status")
    if not isinstance(status, dict):
        return ""
    error = cast("dict[str, object]", status).get("error")
    return error[:_MAX_DETAIL_CHARS] if isinstance(error, str) else ""
