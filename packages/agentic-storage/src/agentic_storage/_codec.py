"""How the Redis stores frame the JSON they write: a two-byte tag, then the text or its zstd form.

The tag tells our values from anyone else's under the same prefix (a foreign value fails with an
error naming its key instead of being misread), and says whether the body is compressed.
"""

from __future__ import annotations

import zstandard

__all__ = ["ForeignValueError", "decode_text", "encode_text"]

_PLAIN = b"\x00J"
_ZSTD = b"\x00S"
# Level 1: a 1 MB checkpoint's JSON shrinks ~70x in ~0.4 ms here (zlib's level 1: ~18x, 1.6 ms).
_ZSTD_LEVEL = 1


class ForeignValueError(ValueError):
    """Bytes that were not written by these stores (no tag, or a body that does not decode)."""


def encode_text(text: str, *, compress_above: int | None = None) -> bytes:
    """``text`` as tagged bytes, zstd-compressed when its UTF-8 form is over ``compress_above``."""
    body = text.encode()
    if compress_above is not None and len(body) > compress_above:
        # A compressor per call: they are not safe to share between threads, and cost ~1 µs.
        return _ZSTD + zstandard.ZstdCompressor(level=_ZSTD_LEVEL).compress(body)
    return _PLAIN + body


def decode_text(data: bytes) -> str:
    """The text inside tagged bytes.

    Raises:
        ForeignValueError: ``data`` has no tag of ours or its body is corrupt.
    """
    tag, body = data[:2], data[2:]
    try:
        if tag == _PLAIN:
            return body.decode()
        if tag == _ZSTD:
            return zstandard.ZstdDecompressor().decompress(body).decode()
    except (UnicodeDecodeError, zstandard.ZstdError) as exc:
        raise ForeignValueError(f"a tagged value whose body is corrupt ({exc})") from None
    preview = data[:24]
    raise ForeignValueError(f"not a value written by agentic (it starts with {preview!r})")
