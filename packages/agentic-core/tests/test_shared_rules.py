"""The rules every package shares, in their one home: URL redaction, ``MODULE:NAME`` loading,
checkpoint-store rules, stored-value framing, the bounded memo and backoff."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentic_core import (
    Backoff,
    BoundedMemo,
    ChatMessage,
    ObjectReferenceError,
    load_object,
    redact_url,
    redact_urls,
    to_messages,
)
from agentic_core.stores import (
    Checkpoint,
    ForeignValueError,
    InMemoryCheckpointStore,
    checkpoints_beyond,
    frame_value,
    latest_listed_checkpoint,
    select_checkpoints,
    unframe_value,
)
from agentic_core.testing.conformance import make_checkpoint

SECRET = "s3cr3t-T0ken"  # noqa: S105 - a made-up secret to look for

# -- URLs ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        # A lone user is a token: NATS reads nats://TOKEN@host so.
        (f"nats://{SECRET}@nats.local:4222", "nats://***@nats.local:4222"),
        (f"tls://{SECRET}@nats.local:4222", "tls://***@nats.local:4222"),
        (f"nats://alice:{SECRET}@h:4222", "nats://alice:***@h:4222"),
        (f"redis://:{SECRET}@cache:6379/0", "redis://:***@cache:6379/0"),
        (f"redis://default:{SECRET}@cache:6379/0", "redis://default:***@cache:6379/0"),
        # Secret query parameters (an MCP server's ?api_key=), others kept as written.
        (f"https://host/mcp?api_key={SECRET}&page=2", "https://host/mcp?api_key=***&page=2"),
        (f"https://host/mcp?token={SECRET}", "https://host/mcp?token=***"),
        (f"https://host/x?key={SECRET}&sig={SECRET}", "https://host/x?key=***&sig=***"),
        (
            f"redis://cache:6379/0?password={SECRET}&protocol=3",
            "redis://cache:6379/0?password=***&protocol=3",
        ),
        (
            f"https://app/cb#access_token={SECRET}&state=1",
            "https://app/cb#access_token=***&state=1",
        ),
        ("https://example.com/path?page=2#top", "https://example.com/path?page=2#top"),
        ("http://127.0.0.1:4222", "http://127.0.0.1:4222"),
        # A server list in one string, as nats-py and the CLI take it.
        (
            f"nats://a:{SECRET}@h1:4222,nats://{SECRET}@h2:4222",
            "nats://a:***@h1:4222,nats://***@h2:4222",
        ),
        # What does not parse is never echoed.
        (f"http://{SECRET}@h:99999", "<unparsable url>"),
        (f"http://[{SECRET}", "<unparsable url>"),
    ],
)
def test_redact_url_masks_every_secret_of_the_issue_cases(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_a_redis_user_name_is_kept_where_user_names_are_not_secret() -> None:
    assert redact_url("redis://app@cache:6379", keep_user=True) == "redis://app@cache:6379"
    assert redact_url(f"redis://app:{SECRET}@c", keep_user=True) == "redis://app:***@c"


def test_drop_query_leaves_query_and_fragment_out() -> None:
    assert redact_url("https://h/p?a=1#b", drop_query=True) == "https://h/p"


def test_redact_urls_joins_a_list() -> None:
    urls = [f"nats://{SECRET}@a:4222", "nats://b:4222"]
    assert redact_urls(urls) == "nats://***@a:4222, nats://b:4222"
    assert redact_urls(urls[0]) == "nats://***@a:4222"


@given(
    user=st.text(st.characters(categories=["L", "N"]), min_size=1, max_size=12),
    password=st.text(st.characters(categories=["L", "N"]), min_size=6, max_size=24),
    host=st.sampled_from(["h", "nats.local", "127.0.0.1", "[::1]"]),
)
def test_no_password_or_token_survives_redaction(user: str, password: str, host: str) -> None:
    token = f"Z{password}Z"  # never a substring of the scheme or host by chance
    for url in (
        f"nats://{user}:{token}@{host}:4222",
        f"nats://{token}@{host}",
        f"https://{host}/m?api_key={token}",
    ):
        assert token not in redact_url(url)


# -- MODULE:NAME ----------------------------------------------------------------------------------


def test_load_object_finds_a_module_in_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared_rules_flows.py").write_text(
        "class Factory:\n    def build(self): ...\nANSWER = 42\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    monkeypatch.delitem(sys.modules, "shared_rules_flows", raising=False)

    assert load_object("shared_rules_flows:ANSWER") == 42
    assert callable(load_object("shared_rules_flows:Factory.build"))


@pytest.mark.parametrize(
    ("reference", "fragment"),
    [
        ("no_colon", "expected MODULE:NAME for the factory"),
        ("mod:", "expected MODULE:NAME"),
        (
            "surely_not_a_module_xyz:f",
            "cannot import module 'surely_not_a_module_xyz' for the factory",
        ),
        (
            "json:no_such_name",
            "module 'json' has no attribute 'no_such_name' (factory 'json:no_such_name')",
        ),
    ],
)
def test_load_object_errors_name_the_reference(reference: str, fragment: str) -> None:
    with pytest.raises(ObjectReferenceError, match=None) as caught:
        load_object(reference, what="factory")
    assert fragment in str(caught.value)
    assert isinstance(caught.value, ValueError)


# -- checkpoint-store rules -----------------------------------------------------------------------


def _checkpoint(run_id: str, superstep: int, workflow_id: str = "wf") -> Checkpoint:
    return make_checkpoint(run_id=run_id, superstep=superstep, workflow_id=workflow_id)


async def test_select_checkpoints_filters_and_orders() -> None:
    found = [
        _checkpoint("r1", 2).to_metadata(),
        _checkpoint("r2", 0).to_metadata(),
        _checkpoint("r1", 1, "other").to_metadata(),
    ]

    assert [m.superstep for m in select_checkpoints(found, run_id="r1")] == [1, 2]
    assert [m.run_id for m in select_checkpoints(found, workflow_id="wf")] == ["r2", "r1"]


async def test_latest_listed_checkpoint_is_the_highest_superstep_of_the_run() -> None:
    store = InMemoryCheckpointStore()
    for checkpoint in (_checkpoint("r1", 0), _checkpoint("r1", 3), _checkpoint("r2", 9)):
        await store.save(checkpoint)

    latest = await latest_listed_checkpoint(store, "r1")

    assert latest is not None
    assert latest.superstep == 3
    assert await latest_listed_checkpoint(store, "nobody") is None


async def test_checkpoints_beyond_are_all_but_the_n_newest() -> None:
    store = InMemoryCheckpointStore()
    for superstep in range(4):
        await store.save(_checkpoint("r1", superstep))

    assert [m.superstep for m in await checkpoints_beyond(store, "r1", 1)] == [0, 1, 2]
    assert await checkpoints_beyond(store, "r1", 9) == []
    with pytest.raises(ValueError, match="n >= 0"):
        await checkpoints_beyond(store, "r1", -1)


# -- stored-value framing -------------------------------------------------------------------------


def test_framing_round_trips_each_kind() -> None:
    for kind in (b"J", b"S", b"P"):
        assert unframe_value(frame_value(b"body", kind)) == (kind, b"body")
    assert frame_value(b'{"a":1}') == b'\x00J{"a":1}'  # the bytes stores wrote before


def test_foreign_bytes_are_refused_with_what_they_start_with() -> None:
    with pytest.raises(ForeignValueError, match=r"starts with b'hello'"):
        unframe_value(b"hello")
    with pytest.raises(ForeignValueError):
        unframe_value(frame_value(b"x", b"P"), kinds={b"J"})
    with pytest.raises(ValueError, match="unknown frame kind"):
        frame_value(b"x", b"Q")


# -- memo -----------------------------------------------------------------------------------------


def test_bounded_memo_forgets_the_oldest_and_clear_all_empties_every_memo() -> None:
    memo: BoundedMemo[str, int] = BoundedMemo(2)
    other: BoundedMemo[str, int] = BoundedMemo(5)
    memo.remember("a", 1)
    memo.remember("b", 2)
    memo.remember("c", 3)
    other.remember("x", 9)

    assert (memo.get("a"), memo.get("b"), memo.get("c"), len(memo)) == (None, 2, 3, 2)
    BoundedMemo.clear_all()
    assert len(memo) == 0
    assert len(other) == 0
    with pytest.raises(ValueError, match="at least 1"):
        BoundedMemo[str, int](0)


# -- backoff --------------------------------------------------------------------------------------


@given(attempt=st.integers(min_value=0, max_value=2000))
def test_backoff_delays_stay_within_jitter_and_cap(attempt: int) -> None:
    backoff = Backoff(initial_s=0.1, max_s=2.0, jitter=0.5)
    ceiling = min(2.0, 0.1 * 2.0**attempt) if attempt < 100 else 2.0
    assert ceiling * 0.5 <= backoff.delay(attempt) <= ceiling
    assert Backoff(initial_s=0.1, max_s=2.0, jitter=0.0).delay(attempt) == ceiling


async def test_a_schedule_stops_at_its_deadline() -> None:
    schedule = Backoff(initial_s=0.01, max_s=0.02, jitter=0.0).schedule(timeout_s=0.1)
    started = time.monotonic()
    waits = 0
    while await schedule.wait():
        waits += 1
    assert schedule.expired
    assert schedule.next_delay() is None
    assert waits == schedule.attempts >= 3
    assert time.monotonic() - started >= 0.1


async def test_a_schedule_without_deadline_never_ends_and_reset_starts_again() -> None:
    schedule = Backoff(initial_s=0.001, max_s=1.0, jitter=0.0).schedule()
    delays = [schedule.next_delay() for _ in range(4)]
    assert delays == [0.001, 0.002, 0.004, 0.008]
    schedule.reset()
    assert schedule.next_delay() == 0.001
    assert schedule.time_left_s is None
    await asyncio.sleep(0)


def test_backoff_refuses_nonsense() -> None:
    for bad in ({"initial_s": -1}, {"factor": 0.5}, {"jitter": 2.0}):
        with pytest.raises(ValueError, match="backoff"):
            Backoff(**bad)  # pyright: ignore[reportArgumentType]


# -- messages -------------------------------------------------------------------------------------


def test_to_messages_normalizes_agent_input() -> None:
    message = ChatMessage.user("hi")
    assert to_messages(None) == []
    assert to_messages(message) == [message]
    assert to_messages([message]) == [message]
    assert to_messages("hi")[0].text == "hi"


@pytest.mark.parametrize(
    ("given", "named"),
    [
        ({"role": "user"}, "got dict"),
        (["hi"], "a sequence holding str"),
        (42, "got int"),
        (b"x", "got bytes"),
    ],
)
def test_to_messages_refuses_anything_else_naming_it(given: object, named: str) -> None:
    with pytest.raises(TypeError, match="agent input must be a str, a ChatMessage") as caught:
        to_messages(given)  # pyright: ignore[reportArgumentType]
    assert named in str(caught.value)
