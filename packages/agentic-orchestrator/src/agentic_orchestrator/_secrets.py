"""Secrets a run file must not hold: named rules, each error saying what to write instead.

A run file is committed, shared and copied into bug reports: keys belong in the
environment. The rules read key names (``api_key``, ``X-Auth-Token``, ``GITHUB_TOKEN``, a
``--password`` in an argument list) and URLs (``https://user:pass@host``). An error names the key
and the rule, never the value (quoting it would leak it again).

The fix depends on the place. A model names the variable holding its key: ``api_key_env =
"NAME"``. In the ``env``, ``headers``, ``url`` and ``args`` of an ``[mcp.servers.*]`` table,
``${NAME}`` stands for the environment variable ``NAME``, read when the server starts
(:func:`expand_references`): that is how a secret reaches an MCP server without sitting in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, cast

__all__ = [
    "REFERENCE_FIELDS",
    "SECRET_RULES",
    "SecretFound",
    "SecretRule",
    "UnsetVariableError",
    "expand_references",
    "find_secret",
    "secret_rule_for",
]

Path_ = tuple[str | int, ...]
"""Where a value sits in a run file's data: table keys and list indices."""

REFERENCE_FIELDS: Final = frozenset({"env", "headers", "url", "args"})
"""The fields of an ``[mcp.servers.*]`` table where ``${NAME}`` is replaced when it starts."""

_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SCHEME = re.compile(r"(?:Bearer|Basic|Token|Digest)\s+", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*:(?P<password>[^/\s@]+)@")
_WORDS = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")


@dataclass(frozen=True)
class SecretRule:
    """One kind of secret: its name (errors quote it), what it is, and its test on
    ``(key, value)``, ``key`` being the name the value is given under (``""`` for none)."""

    name: str
    what: str
    matches: Callable[[str, str], bool]


def _named(
    *, words: tuple[str, ...] = (), fragments: tuple[str, ...] = ()
) -> Callable[[str, str], bool]:
    """A key-name test: one of ``words`` is a word of the key (``max_tokens`` is no ``token``),
    or one of ``fragments`` is in it, case and separators aside (``PGPASSWORD``)."""

    def matches(key: str, value: str) -> bool:
        del value
        flat = re.sub(r"[^a-z0-9]", "", key.lower())
        return any(w in words for w in _words(key)) or any(f in flat for f in fragments)

    return matches


def _url_credentials(key: str, value: str) -> bool:
    del key
    return _URL_CREDENTIALS.search(value) is not None


SECRET_RULES: Final[tuple[SecretRule, ...]] = (
    SecretRule("api-key", "an inline API key", _named(words=("key",), fragments=("apikey",))),
    SecretRule(
        "token", "an inline token", _named(words=("token",), fragments=("accesstoken", "authtoken"))
    ),
    SecretRule(
        "password", "an inline password", _named(fragments=("password", "passwd", "passphrase"))
    ),
    SecretRule(
        "secret", "an inline secret", _named(fragments=("secret", "credential", "privatekey"))
    ),
    SecretRule(
        "authorization",
        "an inline authorization header",
        _named(words=("auth",), fragments=("authoriz",)),
    ),
    SecretRule("cookie", "an inline cookie", _named(fragments=("cookie",))),
    SecretRule("url-credentials", "a password in a URL", _url_credentials),
)
"""Checked in this order; the first rule a value breaks is the one reported."""


@dataclass(frozen=True)
class SecretFound:
    """A secret in the data: where, which rule, and what to write instead."""

    path: Path_
    rule: SecretRule
    fix: str

    @property
    def message(self) -> str:
        """The error's text: the rule and the fix, no value."""
        rule = f"{self.rule.what} (secret rule {self.rule.name!r})"
        return f"{rule}: a run file holds no secrets; {self.fix}"


class UnsetVariableError(LookupError):
    """``${NAME}`` refers to an environment variable that is not set."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def find_secret(data: Mapping[str, Any]) -> SecretFound | None:
    """The first value of ``data`` (a run file's, in file order) that a rule refuses."""
    for path, key, value in _named_strings(data):
        if not value or _names_a_variable(key):
            continue
        references = _takes_references(path)
        for rule in SECRET_RULES:
            if rule.matches(key, value) and not (references and _only_references(rule, value)):
                return SecretFound(path, rule, _fix(path, key, rule, value))
    return None


def secret_rule_for(key: str, value: str) -> SecretRule | None:
    """The first rule that refuses ``value`` given under the name ``key`` (None: no secret)."""
    if not value or _names_a_variable(key):
        return None
    return next((rule for rule in SECRET_RULES if rule.matches(key, value)), None)


def expand_references(text: str, environ: Mapping[str, str]) -> str:
    """``text`` with each ``${NAME}`` replaced by the variable's value (``UnsetVariableError``)."""

    def value(found: re.Match[str]) -> str:
        name = found.group(1)
        if name not in environ:
            raise UnsetVariableError(name)
        return environ[name]

    return _REFERENCE.sub(value, text)


def _named_strings(data: Mapping[str, Any]) -> Iterator[tuple[Path_, str, str]]:
    """Every string with the name it is given under: a table's key, or in an argument list the
    option before it (``["--token", "x"]``, ``["--token=x"]``); ``""`` for other list items."""
    stack: list[tuple[Path_, Any]] = [((), data)]
    while stack:
        path, value = stack.pop()
        children: list[tuple[Path_, Any]] = []
        if isinstance(value, Mapping):
            table = cast("Mapping[str, Any]", value)
            for key, child in table.items():
                if isinstance(child, str):
                    yield (*path, key), key, child
                else:
                    children.append(((*path, key), child))
        elif isinstance(value, list):
            items = cast("list[Any]", value)
            for index, item in enumerate(items):
                if isinstance(item, str):
                    yield from _option_values(path, index, items)
                else:
                    children.append(((*path, index), item))
        stack.extend(reversed(children))  # popped in file order


def _option_values(path: Path_, index: int, items: list[Any]) -> Iterator[tuple[Path_, str, str]]:
    item = cast("str", items[index])
    option, equals, attached = item.lstrip("-").partition("=")
    if item.startswith("-") and equals:
        yield (*path, index), option, attached
        return
    yield (*path, index), "", item
    following = items[index + 1] if index + 1 < len(items) else None
    if item.startswith("-") and isinstance(following, str) and not following.startswith("-"):
        yield (*path, index + 1), option, following


def _words(key: str) -> list[str]:
    return [word.lower() for word in _WORDS.findall(key)]


def _names_a_variable(key: str) -> bool:
    # api_key_env = "OPENAI_API_KEY" names where the key is: the very thing asked for.
    return _words(key)[-1:] == ["env"]


def _takes_references(path: Path_) -> bool:
    return len(path) >= 4 and path[:2] == ("mcp", "servers") and path[3] in REFERENCE_FIELDS


def _only_references(rule: SecretRule, value: str) -> bool:
    if rule.name == "url-credentials":
        passwords = [m.group("password") for m in _URL_CREDENTIALS.finditer(value)]
        return all(_REFERENCE.fullmatch(password) for password in passwords)
    rest = _REFERENCE.sub("", value)
    if rest == value:
        return False
    return not _SCHEME.sub("", rest, count=1).strip()


def _fix(path: Path_, key: str, rule: SecretRule, value: str) -> str:
    if path[:1] == ("models",):
        if rule.name == "url-credentials":
            return (
                "take them out of the URL and name the environment variable holding the key "
                'instead: api_key_env = "NAME"'
            )
        return 'name the environment variable holding it instead: api_key_env = "NAME"'
    if _takes_references(path):
        if rule.name == "url-credentials":
            return (
                "refer to an environment variable instead: scheme://user:${NAME}@host "
                "(read when the server starts)"
            )
        if isinstance(path[-1], int):  # an argument
            shown = "${NAME} in place of the value"
        else:
            scheme = _SCHEME.match(value)
            shown = f'{key} = "{scheme.group() if scheme else ""}${{NAME}}"'
        return f"refer to an environment variable instead: {shown} (read when the server starts)"
    return (
        'keep it in an environment variable: a model names it with api_key_env = "NAME" in '
        "[models], an MCP server refers to it as ${NAME} in its env, headers, url or args"
    )
