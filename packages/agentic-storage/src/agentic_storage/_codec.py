"""How the Redis stores frame the JSON they write: core's stored-value framing
(``agentic_core.stores.frame_value``), kind ``J`` for the text and ``S`` for its zstd form.

The tag tells our values from anyone else's under the same prefix (a foreign value fails with an
error naming its key instead of being misread), and says whether the body is compressed. The
bytes are those these stores always wrote (``\\x00J`` + text, ``\\x00S`` + zstd frame).
"""

from __future__ import annotations

import zstandard

from agentic_core.stores import ForeignValueError, frame_value, unframe_value

__all__ = ["decode_text", "encode_text"]

_PLAIN = b"J"
_ZSTD = b"S"
_KINDS = frozenset({_PLAIN, _ZSTD})
"""What these stores read back: not the bus's parts manifests (``P``), nor anything else."""
# Level 1: a 1 MB checkpoint's JSON shrinks ~70x in ~0.4 ms here (zlib's level 1: ~18x, 1.6 ms).
_ZSTD_LEVEL = 1


def encode_text(text: str, *, compress_above: int | None = None) -> bytes:
    """``text`` as framed bytes, zstd-compressed when its UTF-8 form is over ``compress_above``."""
    body = text.encode()
    if compress_above is not None and len(body) > compress_above:
        # A compressor per call: they are not safe to share between threads, and cost ~1 µs.
        return frame_value(zstandard.ZstdCompressor(level=_ZSTD_LEVEL).compress(body), _ZSTD)
    return frame_value(body, _PLAIN)


def decode_text(data: bytes) -> str:
    """The text inside framed bytes.

    Raises:
        ForeignValueError: ``data`` has no tag of ours (or one of another kind), or its body is
            corrupt.
    """
    kind, body = unframe_value(data, kinds=_KINDS)
    try:
        if kind == _ZSTD:
            body = zstandard.ZstdDecompressor().decompress(body)
        return body.decode()
    except (UnicodeDecodeError, zstandard.ZstdError) as exc:
        raise ForeignValueError(f"a tagged value whose body is corrupt ({exc})") from None
