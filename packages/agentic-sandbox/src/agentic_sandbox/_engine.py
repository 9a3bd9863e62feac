"""The Docker-API engine as we use it: a typed view of the SDK's ``APIClient`` and connecting.

The SDK is untyped where it matters (its stubs leave most results unknown), so the calls we
make are spelled out here as a protocol, the one boundary where the SDK's client is cast.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator
from typing import Any, Protocol, cast

from docker import APIClient
from docker.errors import DockerException, ImageNotFound
from docker.utils import kwargs_from_env

from agentic_sandbox._errors import SandboxNotReadyError

_CLIENT_TIMEOUT_S = 60
_DEFAULT_SOCKET = "unix:///var/run/docker.sock"
"""Where the SDK looks when neither base_url nor DOCKER_HOST says."""
_MAX_POOL_SIZE = 32
"""HTTP connections kept per sandbox: each running container holds one in its ``wait`` call."""


class HTTPResponse(Protocol):
    """What we read of a streamed ``requests`` response."""

    @property
    def status_code(self) -> int: ...
    @property
    def ok(self) -> bool: ...
    @property
    def text(self) -> str: ...
    def iter_content(self, chunk_size: int) -> Iterator[bytes]: ...
    def close(self) -> None: ...


class EngineAPI(Protocol):
    """The calls of ``docker.APIClient`` that DockerSandbox makes."""

    @property
    def base_url(self) -> str: ...
    @property
    def api_version(self) -> str: ...
    def ping(self) -> bool: ...
    def inspect_image(self, image: str) -> dict[str, Any]: ...
    def create_host_config(self, **options: Any) -> dict[str, Any]: ...
    def create_container(self, image: str, **options: Any) -> dict[str, Any]: ...
    def put_archive(self, container: str, path: str, data: bytes) -> bool: ...
    def start(self, container: str) -> None: ...
    def exec_create(self, container: str, cmd: list[str], **options: Any) -> dict[str, Any]: ...
    def exec_start(self, exec_id: str, *, socket: bool) -> object: ...
    def exec_inspect(self, exec_id: str) -> dict[str, Any]: ...
    def version(self) -> dict[str, Any]: ...
    def remove_container(self, container: str, v: bool = False, force: bool = False) -> None: ...
    def inspect_container(self, container: str) -> dict[str, Any]: ...
    def get(self, url: str, *, params: dict[str, str], stream: bool) -> HTTPResponse: ...
    def close(self) -> None: ...


def is_podman(api: EngineAPI) -> bool:
    """True when the engine is Podman (its Docker API differs in how it mounts tmpfs)."""
    version = api.version()
    # Podman names itself in Components ("Podman Engine") and in Platform.Name.
    return "podman" in json.dumps([version.get("Components"), version.get("Platform")]).lower()


def engine_location(base_url: str | None) -> str:
    """Where the engine is looked for, in words for error messages."""
    if base_url:
        return f"base_url={base_url!r}"
    if host := os.environ.get("DOCKER_HOST"):
        return f"DOCKER_HOST={host!r}"
    return "the default socket (DOCKER_HOST is not set)"


def _unix_socket_path(url: str) -> str | None:
    for scheme in ("unix://", "http+unix://"):
        if url.startswith(scheme):
            return url.removeprefix(scheme)
    return None


def _check_unix_socket(path: str) -> None:
    """Connect once to a unix socket: the SDK leaks the socket of a failed connection."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(_CLIENT_TIMEOUT_S)
        probe.connect(path)


def connect(base_url: str | None, image: str) -> EngineAPI:
    """A client of the engine at ``base_url`` (or ``DOCKER_HOST``) that holds ``image``.

    Blocking. SandboxNotReadyError when no engine answers there or the image is missing.
    """
    where = engine_location(base_url)
    try:
        options: dict[str, Any] = {"base_url": base_url} if base_url else {**kwargs_from_env()}
        socket_path = _unix_socket_path(str(options.get("base_url") or _DEFAULT_SOCKET))
        if socket_path is not None:
            _check_unix_socket(socket_path)
        client = APIClient(
            **options, version="auto", timeout=_CLIENT_TIMEOUT_S, max_pool_size=_MAX_POOL_SIZE
        )
    except (DockerException, OSError) as exc:
        raise SandboxNotReadyError(
            f"no Docker-API engine answers at {where} ({exc}): start Docker or Podman "
            "(`podman system service`) and point DOCKER_HOST or base_url= at its socket"
        ) from exc
    api = cast("EngineAPI", client)
    try:
        api.inspect_image(image)
    except ImageNotFound as exc:
        api.close()
        raise SandboxNotReadyError(
            f"image {image!r} is not on the engine at {where}: pull or build it first "
            "(DockerSandbox never pulls)"
        ) from exc
    except (DockerException, OSError) as exc:
        api.close()
        raise SandboxNotReadyError(
            f"the Docker-API engine at {where} failed ({exc}): check DOCKER_HOST or base_url="
        ) from exc
    return api
