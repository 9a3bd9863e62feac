"""Server URLs as logs and errors may show them: credentials and tokens never appear."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

__all__ = ["redact_url", "redact_urls"]


def redact_url(url: str) -> str:
    """``url`` with its password (or a lone token user) and query string masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable url>"
    netloc = parts.netloc
    if "@" in netloc:
        user_info, _, host = netloc.rpartition("@")
        user, has_password, _ = user_info.partition(":")
        # nats://TOKEN@host carries a secret in the user position.
        netloc = f"{user}:***@{host}" if has_password else f"***@{host}"
    query = "***" if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def redact_urls(servers: str | list[str]) -> str:
    """One or more server URLs, redacted, for a message."""
    urls = [servers] if isinstance(servers, str) else servers
    return ", ".join(redact_url(url) for url in urls)
