"""The tool names models see: ``prefix + tool``, sanitized to ``^[A-Za-z0-9_-]{1,64}$``, unique."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
MAX_NAME = 64


def qualified_names(entries: Iterable[tuple[str, str, str]]) -> dict[tuple[str, str], str]:
    """``(server, prefix, tool)`` -> a unique model-facing name, in the order given.

    Characters outside ``[A-Za-z0-9_-]`` become ``_``; a name longer than 64 characters keeps
    its head and ends with a short hash of the full name; a clash gets ``_2``, ``_3``, ...
    """
    taken: set[str] = set()
    names: dict[tuple[str, str], str] = {}
    for server, prefix, tool in entries:
        full = f"{prefix}{tool}"
        name = _ALLOWED.sub("_", full) or "tool"
        if len(name) > MAX_NAME:
            digest = hashlib.blake2b(full.encode(), digest_size=4).hexdigest()
            name = f"{name[: MAX_NAME - 9]}_{digest}"
        candidate, counter = name, 2
        while candidate in taken:
            suffix = f"_{counter}"
            candidate = f"{name[: MAX_NAME - len(suffix)]}{suffix}"
            counter += 1
        taken.add(candidate)
        names[(server, tool)] = candidate
    return names
