"""Child process of test_tool_approval_processes.py: one process asks, another answers.

Usage::

    python tool_approval_child.py ask <store_dir>
    python tool_approval_child.py answer <store_dir> <checkpoint_id> <request_id> <answer_json>

``ask`` runs the release workflow until its deploy call waits for approval and prints the run's
pending request as JSON; ``answer`` builds the workflow again (a new process, a new ``Workflow``),
resumes from the checkpoint with the answer and prints the status, the outputs' text and what
the tool ran with.
"""

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from _approval_flows import RAN, reporting_release  # this folder is on sys.path: a script

from agentic_core import AgentResponse, FileCheckpointStore, ToolApprovalRequest


async def ask(store: FileCheckpointStore) -> dict[str, Any]:
    result = await reporting_release(store).run("ship api 2.0")
    [pending] = result.pending_requests
    assert isinstance(pending.data, ToolApprovalRequest)
    return {
        "status": result.status.value,
        "checkpoint_id": result.last_checkpoint_id,
        "request_id": pending.request_id,
        "request": pending.data.model_dump(mode="json"),
        "ran": RAN,
    }


async def answer(
    store: FileCheckpointStore, checkpoint_id: str, request_id: str, answer_json: str
) -> dict[str, Any]:
    result = await reporting_release(store).run(
        checkpoint_id=checkpoint_id, responses={request_id: json.loads(answer_json)}
    )
    texts = [o.text for o in result.outputs if isinstance(o, AgentResponse)]
    return {"status": result.status.value, "outputs": texts, "ran": RAN}


def main(argv: list[str]) -> None:
    store = FileCheckpointStore(Path(argv[2]))
    if argv[1] == "ask":
        report = asyncio.run(ask(store))
    else:
        report = asyncio.run(answer(store, argv[3], argv[4], argv[5]))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main(sys.argv)
