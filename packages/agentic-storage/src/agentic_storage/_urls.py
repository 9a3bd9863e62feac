"""Showing a server's URL safely: credentials masked, for messages, reprs and logs."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["redact_url"]

_MASK = "***"
_SECRET_QUERY_KEYS = frozenset({"password", "username", "token"})


def redact_url(url: str, *, drop_query: bool = False) -> str:
    """``url`` with its password (userinfo or ``?password=``) masked: safe for messages and logs.

    ``drop_query`` leaves the query string out altogether.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}:{_MASK}@{hostport}" if userinfo else hostport
    query = "" if drop_query else parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, _MASK if k.lower() in _SECRET_QUERY_KEYS else v) for k, v in pairs])
    return urlunsplit(
        (parts.scheme, netloc, parts.path, query, "" if drop_query else parts.fragment)
    )
