"""Arbitrary user keys as NATS KV keys: an injective, reversible escaping into one KV token.

NATS KV keys allow only ``[-/_=.a-zA-Z0-9]``, and ``.`` separates subject tokens (no empty token,
no leading or trailing ``.``). User keys are any ``str``: ``tenant:1/session ✓``, ``a.b``,
``a*b``, ``>``, ``""``. The escaping here:

* keeps ``-``, ``_``, ``/``, ASCII letters and digits as they are (the common keys stay
  readable: ``sessions/42`` is stored as ``sessions/42``);
* writes every other character as its UTF-8 bytes, each ``=XX`` (two upper-case hex digits);
  ``.`` and ``=`` itself included, so an escaped key is always **one** KV token and a user key
  can never create extra tokens, collide with the store's own ``<key>.part.…`` keys, or act as
  a wildcard (``*``, ``>``);
* writes the empty key as a lone ``=`` (no escape is a lone ``=``, so this cannot collide).

It is injective because ``=`` starts every escape and only escapes, and escapes have a fixed
length: reading left to right, the input is recovered exactly (``decode_key``). Lone surrogates
are encoded with ``surrogatepass``, so every ``str`` round-trips. It also preserves prefixes:
``p`` is a prefix of ``k`` exactly when ``encode_key(p)`` is a prefix of ``encode_key(k)``
(for non-empty ``p``), because the escape code is prefix-free.

Example:
    ```python
    encode_key("tenant:1/a.b")  # 'tenant=3A1/a=2Eb'
    decode_key("tenant=3A1/a=2Eb")  # 'tenant:1/a.b'
    ```
"""

from __future__ import annotations

import string

__all__ = ["EMPTY_KEY_ESCAPED", "decode_key", "encode_key"]

EMPTY_KEY_ESCAPED = "="
"""The KV token of the empty key."""

_SAFE = frozenset(string.ascii_letters + string.digits + "-_/")
_HEX = frozenset("0123456789ABCDEF")


def encode_key(key: str) -> str:
    """``key`` as one NATS KV token (only ``[-/_=a-zA-Z0-9]``; never ``.``)."""
    if not key:
        return EMPTY_KEY_ESCAPED
    if all(char in _SAFE for char in key):
        return key
    out: list[str] = []
    for char in key:
        if char in _SAFE:
            out.append(char)
        else:
            out.extend(f"={byte:02X}" for byte in char.encode("utf-8", "surrogatepass"))
    return "".join(out)


def decode_key(token: str) -> str:
    """The user key ``encode_key`` turned into ``token``.

    Raises:
        ValueError: ``token`` is not the output of ``encode_key`` (another program's key).
    """
    if token == EMPTY_KEY_ESCAPED:
        return ""
    if not token:
        raise ValueError("an empty KV token is not an escaped key")
    if "=" not in token:
        if all(char in _SAFE for char in token):
            return token
        raise ValueError(f"{token!r} holds characters encode_key never leaves unescaped")
    raw = bytearray()
    i = 0
    while i < len(token):
        char = token[i]
        if char == "=":
            digits = token[i + 1 : i + 3]
            if len(digits) != 2 or not set(digits) <= _HEX:
                raise ValueError(f"{token!r} has a malformed escape at offset {i}")
            byte = int(digits, 16)
            if chr(byte) in _SAFE:
                raise ValueError(f"{token!r} escapes {chr(byte)!r}, which encode_key keeps")
            raw.append(byte)
            i += 3
        elif char in _SAFE:
            raw.extend(char.encode())
            i += 1
        else:
            raise ValueError(f"{token!r} holds {char!r}, which encode_key never leaves unescaped")
    try:
        key = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{token!r} does not escape valid UTF-8 ({exc.reason})") from None
    if encode_key(key) != token:  # e.g. an over-long or otherwise non-canonical form
        raise ValueError(f"{token!r} is not in the canonical escaped form")
    return key
