"""An agent with MCP tools: the reference servers mcp-server-time and mcp-server-git, offline.

Run: `uv run python examples/mcp_agent.py [--model openai:gpt-4o-mini]`. The two MCP servers are
the real ones from PyPI, spawned over stdio; the git server reads a small repository made here.
By default a scripted model stands in (it asks for both tools, then answers from their results);
`--model` takes any `agentic_llm.create_chat_client` spec to let a real model choose the calls.

Model: `--model` needs a model that picks two calls among eight tools and quotes what they
return, such as openai:gpt-4o-mini or ollama:llama3.2; the embedded SmolLM2-135M (--model
local) cannot, so it is refused.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentic_core import (
    ChatAgent,
    ChatClient,
    ChatMessage,
    ChatOptions,
    FunctionCallContent,
    configure_logging,
)
from agentic_core.testing import FunctionChatClient
from agentic_mcp import MCPClient, MCPServerConfig

EMBEDDED_MODEL_REFUSED = (
    "--model needs a model that picks two calls among eight tools and quotes what they return, "
    "such as openai:gpt-4o-mini or ollama:llama3.2; the embedded SmolLM2-135M (--model local) "
    "cannot, so it is refused."
)
QUESTION = "What time is it in Tokyo, and what are the last three commits of {repo}?"


def server_command(name: str) -> str:
    """The console script of a reference server, next to this interpreter or on PATH."""
    beside = Path(sys.executable).parent / name
    found = str(beside) if beside.exists() else shutil.which(name)
    if found is None:
        sys.exit(f"{name} is not installed: pip install {name}")
    return found


def make_repository(root: Path) -> Path:
    """A git repository with three commits (the git server refuses anything else)."""
    repo = root / "demo-repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.invalid",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.invalid",
    }

    def git(*args: str) -> None:
        subprocess.run(  # noqa: S603 - our own arguments
            ["git", "-C", str(repo), *args],  # noqa: S607 - git from PATH, as a user runs it
            check=True,
            env=env,
            capture_output=True,
        )

    git("init", "-q", "-b", "main")
    for number, subject in enumerate(["feat: first page", "fix: typo", "docs: usage"], 1):
        (repo / "notes.md").write_text(f"revision {number}\n")
        git("add", "notes.md")
        git("commit", "-q", "-m", subject)
    return repo


def scripted_model(repo: Path) -> FunctionChatClient:
    """A stand-in model: calls both tools once, then answers from what they returned."""

    def reply(messages: Sequence[ChatMessage], options: ChatOptions | None) -> ChatMessage | str:
        results = [r for message in messages for r in message.function_results]
        if not results:
            offered = {tool.name for tool in (options.tools if options else None) or []}
            if not {"time__get_current_time", "git__git_log"} <= offered:
                raise RuntimeError(f"the MCP tools were not offered: {sorted(offered)}")
            return ChatMessage.assistant(
                contents=[
                    FunctionCallContent(
                        call_id="t",
                        name="time__get_current_time",
                        arguments={"timezone": "Asia/Tokyo"},
                    ),
                    FunctionCallContent(
                        call_id="g",
                        name="git__git_log",
                        arguments={"repo_path": str(repo), "max_count": 3},
                    ),
                ]
            )
        by_id: dict[str, Any] = {r.call_id: r.result for r in results}
        subjects = [
            line.split(":", 1)[1].strip()
            for line in str(by_id["g"]).splitlines()
            if line.strip().lower().startswith("message:")
        ]
        return f"Tokyo time: {by_id['t']}\nLast commits: {'; '.join(subjects)}"

    return FunctionChatClient(reply)


async def main(model: str | None) -> None:
    live: ChatClient | None = None
    if model is not None:
        from agentic_llm import create_chat_client

        live = create_chat_client(model)
        if "SmolLM2-135M" in str(getattr(live, "model", "")):
            sys.exit(f"mcp_agent.py: {EMBEDDED_MODEL_REFUSED}")
    with tempfile.TemporaryDirectory() as temp:
        repo = make_repository(Path(temp))
        servers = [
            MCPServerConfig.stdio("time", server_command("mcp-server-time"), stderr="devnull"),
            MCPServerConfig.stdio(
                "git",
                server_command("mcp-server-git"),
                "--repository",
                str(repo),
                allowed_tools=["git_log", "git_status", "git_show", "git_diff*"],
                stderr="devnull",
            ),
        ]
        async with MCPClient(servers) as mcp:
            print("MCP tools offered to the agent:")
            print(mcp.describe_tools_for_llm(detail="names"))
            agent = ChatAgent(
                live if live is not None else scripted_model(repo),
                "Answer with the tools; quote times and commit subjects exactly.",
                name="mcp-assistant",
                tools=mcp.get_tools(),
            )
            response = await agent.run(QUESTION.format(repo=repo))
            print("\nAnswer:")
            print(response.text)


if __name__ == "__main__":
    configure_logging(level="WARNING")
    parser = argparse.ArgumentParser(description="An agent with MCP tools.")
    parser.add_argument("--model", help="a create_chat_client spec; default: a scripted model")
    asyncio.run(main(parser.parse_args().model))
