"""URLs as messages, reprs and logs may show them: credentials and tokens never appear.

One rule for every package: a server URL reaches an error, a repr, a log line or a web page only
through :func:`redact_url`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from urllib.parse import unquote_plus, urlsplit, urlunsplit

__all__ = ["UNPARSABLE_URL", "URL_MASK", "is_secret_name", "redact_url", "redact_urls"]

URL_MASK = "***"
"""What stands in a redacted URL where a secret was."""
UNPARSABLE_URL = "<unparsable url>"
"""What :func:`redact_url` gives for text that does not parse as a URL."""

# A name is secret when, lower-cased and without "_"/"-", it ends with one of these: "api_key",
# "X-Api-Key", "client_secret", "csrf_token", "Set-Cookie"... but not "max_tokens".
_SECRET_ENDINGS = (
    "apikey",
    "secretkey",
    "accesskey",
    "privatekey",
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "authorization",
    "credential",
    "credentials",
    "cookie",
    "cookies",
)
_SECRET_NAMES = frozenset({"auth", "pwd"})
"""Secret only as the whole name (``monkey`` is no key)."""
# Query parameters that carry secrets under short names: signed URLs (``sig``, ``signature``,
# ``X-Amz-Signature``), OAuth codes, NATS nkeys and seeds, plain ``key``/``apikey``.
_SECRET_QUERY_NAMES = frozenset(
    {"key", "sig", "signature", "xamzsignature", "xamzcredential", "code", "nkey", "seed", "jwt"}
)


@lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether a key, header or parameter named ``name`` holds a secret (``api_key``: yes;
    ``max_tokens``, ``monkey``: no)."""
    flat = name.lower().replace("_", "").replace("-", "")
    return flat in _SECRET_NAMES or flat.endswith(_SECRET_ENDINGS)


def _secret_parameter(name: str) -> bool:
    return is_secret_name(name) or name.lower().replace("_", "").replace("-", "") in (
        _SECRET_QUERY_NAMES
    )


def _redact_pairs(text: str, mask: str) -> str:
    """A query or fragment with the values of secret-named parameters masked; the rest is kept
    byte for byte (nothing re-encoded)."""
    segments: list[str] = []
    for segment in text.split("&"):
        name, eq, _ = segment.partition("=")
        secret = eq and _secret_parameter(unquote_plus(name))
        segments.append(f"{name}={mask}" if secret else segment)
    return "&".join(segments)


def redact_url(
    url: str, *, keep_user: bool = False, drop_query: bool = False, mask: str = URL_MASK
) -> str:
    """``url`` with its secrets masked (as ``mask``): safe for messages, reprs, logs and pages.

    - A password: ``redis://u:pw@h`` -> ``redis://u:***@h``.
    - A lone user is a token (``nats://TOKEN@h`` -> ``nats://***@h``, as NATS and GitHub read
      it) unless ``keep_user`` says user names are not secret there (Redis ACL users).
    - Query and fragment: values of secret-named parameters (``api_key``, ``token``, ``key``,
      ``sig``, ``password``...) are masked, others kept (``?db=0``); ``drop_query`` leaves both
      out.
    - A URL that does not parse gives ``"<unparsable url>"``, never the text itself.
    """
    if "," in url and url.count("://") > 1:  # a server list: "nats://a:4222,nats://b:4222"
        return ",".join(
            redact_url(part, keep_user=keep_user, drop_query=drop_query, mask=mask)
            for part in url.split(",")
        )
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a malformed port
    except ValueError:
        return UNPARSABLE_URL
    netloc = parts.netloc
    if "@" in netloc:
        user_info, _, host = netloc.rpartition("@")
        user, has_password, _ = user_info.partition(":")
        if has_password:
            netloc = f"{user}:{mask}@{host}"
        elif keep_user or not user:
            netloc = f"{user}@{host}" if user else host
        else:
            netloc = f"{mask}@{host}"
    if drop_query:
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    redacted = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    if parts.query or url.endswith("?") or "?#" in url:
        redacted += "?" + _redact_pairs(parts.query, mask)
    if parts.fragment or url.endswith("#"):
        redacted += "#" + _redact_pairs(parts.fragment, mask)
    return redacted


def redact_urls(urls: str | Sequence[str]) -> str:
    """One or more URLs, each redacted by :func:`redact_url`, joined with ``", "``."""
    items = [urls] if isinstance(urls, str) else urls
    return ", ".join(redact_url(url) for url in items)
