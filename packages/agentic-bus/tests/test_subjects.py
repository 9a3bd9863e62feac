"""Subjects and subject_token: every subject name in one place, ids escaped so a user id can
never inject a subject token (``.``, ``*``, ``>``, spaces); property tests for the escaping, the
layout of every method, prefix and kind validation, and a real nats-server proving that hostile
ids neither reach other subscribers nor act as wildcards."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from agentic_bus import NatsBus, NatsSubscription, Subjects, subject_token
from agentic_core import BusMessage
from agentic_core.stores import check_subject

pytestmark = pytest.mark.timeout(60)

ONE_TOKEN = re.compile(r"[A-Za-z0-9_=-]+")
KEPT_ID = r"[A-Za-z0-9_-]{1,64}"
ESCAPED = re.compile(r"=[a-z2-7]{26}")  # "=" and 26 lowercase base32 characters of a SHA-256

HOSTILE_IDS = [
    "a.b",
    "*",
    ">",
    "x y",
    "a.>",
    "a.*.b",
    "",
    ".",
    "..",
    "a.",
    ".a",
    "tab\there",
    "new\nline",
    "nul\x00",
    "=",
    "=abc",
    "x" * 65,
    "héllo",
    "日本語",
    "emoji🙂",
    "\u00a0",  # a no-break space
]

# Ids rich in the characters that matter, so hypothesis finds near-collisions quickly.
TRICKY_TEXT = st.text(alphabet=st.sampled_from("ab_-=.*> \t\n\x00é"), max_size=8)
ANY_ID = st.one_of(st.text(), TRICKY_TEXT, st.from_regex(KEPT_ID, fullmatch=True))


def assert_one_token(token: str) -> None:
    assert token
    assert len(token) <= 64
    assert ONE_TOKEN.fullmatch(token), token
    assert token.isascii()
    for forbidden in (".", "*", ">"):
        assert forbidden not in token
    assert not any(char.isspace() or not char.isprintable() for char in token)


# -- subject_token -------------------------------------------------------------------------------


@settings(max_examples=500)
@given(ANY_ID)
def test_any_id_becomes_exactly_one_safe_token(value: str) -> None:
    token = subject_token(value)
    assert_one_token(token)
    assert subject_token(value) == token  # deterministic
    if re.fullmatch(KEPT_ID, value):
        assert token == value
        assert not token.startswith("=")
    else:
        assert ESCAPED.fullmatch(token), token


@settings(max_examples=300)
@given(st.from_regex(KEPT_ID, fullmatch=True))
def test_safe_ids_are_kept_unchanged(value: str) -> None:
    assert subject_token(value) == value
    assert not subject_token(value).startswith("=")


@settings(max_examples=500)
@given(ANY_ID, ANY_ID)
def test_two_different_ids_never_share_a_token(one: str, two: str) -> None:
    assume(one != two)
    assert subject_token(one) != subject_token(two)


@pytest.mark.parametrize(
    ("one", "two"),
    [
        ("a.b", "a_b"),
        ("a b", "a-b"),
        ("a.b", "a-b"),
        ("a*", "a"),
        ("a>", "a"),
        ("x" * 64, "x" * 65),
        ("x" * 65, "x" * 66),
        ("", " "),
        ("", "="),
        ("a", "a "),
        ("a", "a\n"),
        ("e", "é"),
    ],
)
def test_near_ids_get_different_tokens(one: str, two: str) -> None:
    assert subject_token(one) != subject_token(two)
    assert_one_token(subject_token(one))
    assert_one_token(subject_token(two))


def test_the_64_character_boundary() -> None:
    assert subject_token("x" * 64) == "x" * 64
    escaped = subject_token("x" * 65)
    assert ESCAPED.fullmatch(escaped)
    assert len(escaped) == 27


@pytest.mark.parametrize("value", HOSTILE_IDS)
def test_hostile_ids_are_escaped(value: str) -> None:
    token = subject_token(value)
    assert ESCAPED.fullmatch(token), token
    assert_one_token(token)


def test_an_empty_id_is_escaped_to_a_non_empty_token() -> None:
    token = subject_token("")
    assert ESCAPED.fullmatch(token)
    assert Subjects().agent("", "run").split(".") == ["agentic", "agent", token, "run"]


def test_an_id_spelled_like_an_escaped_token_cannot_impersonate_it() -> None:
    escaped = subject_token("a.b")
    assert subject_token(escaped) != escaped  # "=" is never kept, so it is escaped again
    assert ESCAPED.fullmatch(subject_token(escaped))


# -- Subjects: the layout of every method ------------------------------------------------------

PLAIN = "the-id"  # a kept id; none of the fixed words of any layout contains it

# name, build(subjects, id): the subject with `id` in every id position, layout for PLAIN.
Build = Callable[[Subjects, str], str]
LAYOUTS: list[tuple[str, Build, str]] = [
    ("agent", lambda s, i: s.agent(i, "run"), "agentic.agent.the-id.run"),
    ("agent", lambda s, i: s.agent(i, "tool_call"), "agentic.agent.the-id.tool_call"),
    ("agent_all", lambda s, i: s.agent_all(i), "agentic.agent.the-id.>"),
    ("workflow", lambda s, i: s.workflow(i, "completed"), "agentic.workflow.the-id.completed"),
    (
        "workflow",
        lambda s, i: s.workflow(i, "superstep.completed"),
        "agentic.workflow.the-id.superstep.completed",
    ),
    ("workflow_all", lambda s, i: s.workflow_all(i), "agentic.workflow.the-id.>"),
    ("workflows", lambda s, _i: s.workflows(), "agentic.workflow.>"),
    ("executor", lambda s, i: s.executor(i, "started"), "agentic.executor.the-id.started"),
    (
        "executor_event",
        lambda s, i: s.executor_event(i, i),
        "agentic.executor.the-id.event.the-id",
    ),
    ("edge_activated", lambda s, i: s.edge_activated(i), "agentic.edge.the-id.activated"),
    ("request", lambda s, i: s.request(i, i), "agentic.workflow.the-id.request.the-id"),
    ("requests", lambda s, i: s.requests(i), "agentic.workflow.the-id.request.*"),
    ("requests", lambda s, _i: s.requests(), "agentic.workflow.*.request.*"),
    ("tasks", lambda s, _i: s.tasks(), "agentic.task.>"),
    ("pool_tasks", lambda s, i: s.pool_tasks(i), "agentic.task.the-id.>"),
    ("run_tasks", lambda s, i: s.run_tasks(i), "agentic.task.*.the-id.>"),
    ("superstep_tasks", lambda s, i: s.superstep_tasks(i, 3), "agentic.task.*.the-id.3.*"),
    ("task", lambda s, i: s.task(i, i, 3, i), "agentic.task.the-id.the-id.3.the-id"),
    ("results", lambda s, _i: s.results(), "agentic.result.>"),
    ("run_results", lambda s, i: s.run_results(i), "agentic.result.the-id.>"),
    (
        "superstep_results",
        lambda s, i: s.superstep_results(i, 2),
        "agentic.result.the-id.2.>",
    ),
    ("result", lambda s, i: s.result(i, 2, i, 1), "agentic.result.the-id.2.the-id.1"),
    ("committed", lambda s, i: s.committed(i), "agentic.workflow.the-id.committed"),
    ("live", lambda s, i: s.live(i, i), "agentic.live.the-id.the-id"),
    ("live_all", lambda s, i: s.live_all(i), "agentic.live.the-id.>"),
    ("response", lambda s, i: s.response(i, i), "agentic.response.the-id.the-id"),
    ("responses", lambda s, i: s.responses(i), "agentic.response.the-id.*"),
    ("audit", lambda s, i: s.audit(i, "decision"), "agentic.audit.the-id.decision"),
    ("audit", lambda s, i: s.audit(i, i), "agentic.audit.the-id.the-id"),
    ("audits", lambda s, _i: s.audits(), "agentic.audit.>"),
]
LAYOUT_IDS = [f"{name}:{layout}" for name, _, layout in LAYOUTS]


def test_every_subjects_method_has_a_layout_test() -> None:
    methods = {
        name
        for name in dir(Subjects)
        if not name.startswith("_") and callable(getattr(Subjects, name))
    }
    assert methods == {name for name, _, _ in LAYOUTS}


@pytest.mark.parametrize(("name", "build", "layout"), LAYOUTS, ids=LAYOUT_IDS)
def test_plain_ids_give_the_documented_layout(name: str, build: Build, layout: str) -> None:
    del name
    subject = build(Subjects(), PLAIN)
    assert subject == layout
    check_subject(subject, wildcards=True)


@pytest.mark.parametrize(("name", "build", "layout"), LAYOUTS, ids=LAYOUT_IDS)
@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_hostile_ids_keep_the_layout_and_token_count(
    name: str, build: Build, layout: str, hostile: str
) -> None:
    del name
    subject = build(Subjects(), hostile)
    assert subject == layout.replace(PLAIN, subject_token(hostile))
    tokens = subject.split(".")
    assert len(tokens) == len(layout.split("."))
    # wildcards only where the layout itself has them
    wildcards = [i for i, t in enumerate(tokens) if t in ("*", ">")]
    assert wildcards == [i for i, t in enumerate(layout.split(".")) if t in ("*", ">")]
    check_subject(subject, wildcards=True)
    if not wildcards:
        check_subject(subject, wildcards=False)  # publishable


@pytest.mark.parametrize("hostile", HOSTILE_IDS)
def test_agent_with_a_hostile_id_has_four_tokens(hostile: str) -> None:
    tokens = Subjects().agent(hostile, "run").split(".")
    assert len(tokens) == 4
    assert tokens == ["agentic", "agent", subject_token(hostile), "run"]


@settings(max_examples=300)
@given(ANY_ID)
def test_any_id_keeps_the_token_count_of_every_layout(value: str) -> None:
    for _, build, layout in LAYOUTS:
        subject = build(Subjects(), value)
        assert len(subject.split(".")) == len(layout.split("."))
        assert subject == layout.replace(PLAIN, subject_token(value))


def test_methods_with_several_ids_put_each_in_its_place() -> None:
    s = Subjects()
    t = subject_token
    assert s.executor_event("ex", "tick.*") == f"agentic.executor.ex.event.{t('tick.*')}"
    assert s.request("wf.1", "r-1") == f"agentic.workflow.{t('wf.1')}.request.r-1"
    assert s.task("gpu", "run 1", 7, "ex>") == f"agentic.task.gpu.{t('run 1')}.7.{t('ex>')}"
    assert s.result("run", 0, "a.b", 2) == f"agentic.result.run.0.{t('a.b')}.2"
    assert s.live("r", "*") == f"agentic.live.r.{t('*')}"
    assert s.response(">", "q") == f"agentic.response.{t('>')}.q"
    assert s.audit("r", "x.*") == f"agentic.audit.r.{t('x.*')}"
    assert s.requests("*") == f"agentic.workflow.{t('*')}.request.*"  # an id, not a wildcard


# -- Subjects: prefix and kind validation ------------------------------------------------------


@pytest.mark.parametrize(
    "prefix",
    ["", "a..b", "a.*", "a b", "a.>", "*", ">", ".a", "a.", "a\n", "=a", "a.=b", "x" * 65],
)
def test_a_bad_prefix_is_a_value_error(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix") as caught:
        Subjects(prefix=prefix)
    assert repr(prefix) in str(caught.value)


@pytest.mark.parametrize(("name", "build", "layout"), LAYOUTS, ids=LAYOUT_IDS)
def test_a_custom_prefix_is_used_by_every_method(name: str, build: Build, layout: str) -> None:
    del name
    expected = "acme.prod." + layout.removeprefix("agentic.")
    assert build(Subjects(prefix="acme.prod"), PLAIN) == expected
    hostile = build(Subjects(prefix="acme.prod"), "a.>")
    assert hostile.startswith("acme.prod.")
    assert len(hostile.split(".")) == len(expected.split("."))


def test_good_prefixes_are_accepted() -> None:
    assert Subjects(prefix="a-b_c.d1").edge_activated("e") == "a-b_c.d1.edge.e.activated"
    assert Subjects().prefix == "agentic"


KIND_METHODS: list[tuple[str, Callable[[Subjects, str], str]]] = [
    ("agent", lambda s, kind: s.agent("a", kind)),
    ("workflow", lambda s, kind: s.workflow("w", kind)),
    ("executor", lambda s, kind: s.executor("e", kind)),
]


@pytest.mark.parametrize(("method", "build"), KIND_METHODS, ids=[m for m, _ in KIND_METHODS])
@pytest.mark.parametrize(
    "kind", ["x.*", "a b", ">", "*", "", "a..b", "a.", ".a", "run\n", "x" * 65, "a=b", "=="]
)
def test_an_unsafe_kind_is_a_value_error_naming_it(
    method: str, build: Callable[[Subjects, str], str], kind: str
) -> None:
    del method
    with pytest.raises(ValueError, match="kind") as caught:
        build(Subjects(), kind)
    assert repr(kind) in str(caught.value)


@pytest.mark.parametrize(("method", "build"), KIND_METHODS, ids=[m for m, _ in KIND_METHODS])
def test_an_escaped_token_is_accepted_inside_a_kind(
    method: str, build: Callable[[Subjects, str], str]
) -> None:
    del method
    escaped = subject_token("x.y *")
    subject = build(Subjects(), escaped)
    assert subject.split(".")[-1] == escaped
    subject = build(Subjects(), f"event.{escaped}")
    assert subject.split(".")[-2:] == ["event", escaped]
    assert len(subject.split(".")) == 5


def test_kinds_escaped_by_the_method_itself_are_never_rejected() -> None:
    # audit's kind and executor_event's type are ids: escaped, not validated
    assert len(Subjects().audit("r", "x.*").split(".")) == 4
    assert len(Subjects().executor_event("e", "a b").split(".")) == 5


# -- a real nats-server: hostile ids neither reach other subscribers nor act as wildcards -------


@pytest.fixture
async def buses(nats_server: str) -> AsyncIterator[tuple[NatsBus, NatsBus]]:
    """A subscriber's bus and a publisher's bus (two connections)."""
    async with NatsBus(nats_server) as subscriber, NatsBus(nats_server) as publisher:
        yield subscriber, publisher


async def next_message(sub: NatsSubscription, timeout_s: float = 2.0) -> BusMessage:
    return await asyncio.wait_for(anext(sub), timeout_s)


async def assert_nothing_more(sub: NatsSubscription) -> None:
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(sub), 0.05)


SENTINEL = "agentic.agent.sentinel.run"  # matches agentic.agent.*.run and agentic.>, not victim


@pytest.mark.parametrize(
    "hostile", ["victim.x", "victim.>", "victim.*", "*", ">", "victim x", "victim.x.run", ""]
)
async def test_a_hostile_agent_id_reaches_no_other_subscriber(
    buses: tuple[NatsBus, NatsBus], hostile: str
) -> None:
    subscriber, publisher = buses
    victim = await subscriber.subscribe("agentic.agent.victim.>")
    any_run = await subscriber.subscribe("agentic.agent.*.run")
    everything = await subscriber.subscribe("agentic.>")
    subject = Subjects().agent(hostile, "run")

    await publisher.publish(subject, b"hostile")
    await publisher.publish(SENTINEL, b"sentinel")
    await publisher.flush()

    # the message was published (on its escaped subject) ...
    seen = await next_message(everything)
    assert (seen.subject, seen.data) == (subject, b"hostile")
    assert (await next_message(everything)).data == b"sentinel"
    # ... yet the subscriber of another run subject sees only the sentinel: messages from one
    # connection arrive in order, so the hostile one would have come first. Its escaped token
    # is one token, so agentic.agent.*.run does match it -- that is the hostile id's own
    # subject, never another agent's.
    first = await next_message(any_run)
    assert (first.subject, first.data) == (subject, b"hostile")
    assert (await next_message(any_run)).data == b"sentinel"
    await assert_nothing_more(any_run)
    # and the victim's subscription receives nothing at all
    await assert_nothing_more(victim)
    await assert_nothing_more(everything)


async def test_a_hostile_agent_id_is_never_the_victim(buses: tuple[NatsBus, NatsBus]) -> None:
    subscriber, publisher = buses
    victim = await subscriber.subscribe("agentic.agent.victim.>")
    victim_run = await subscriber.subscribe("agentic.agent.victim.run")
    for hostile in ["victim.x", "victim.>", "victim.*", "*", ">", "victim x", "victim.x.run"]:
        await publisher.publish(Subjects().agent(hostile, "run"), hostile)
    await publisher.flush()
    await subscriber.flush()
    await assert_nothing_more(victim)
    await assert_nothing_more(victim_run)


async def test_the_victims_own_id_is_delivered_exactly_once(
    buses: tuple[NatsBus, NatsBus],
) -> None:
    subscriber, publisher = buses
    victim = await subscriber.subscribe("agentic.agent.victim.>")
    any_run = await subscriber.subscribe("agentic.agent.*.run")
    subject = Subjects().agent("victim", "run")
    assert subject == "agentic.agent.victim.run"

    await publisher.publish(subject, b"for-victim")
    await publisher.flush()

    for sub in (victim, any_run):
        message = await next_message(sub)
        assert (message.subject, message.data) == (subject, b"for-victim")
        await assert_nothing_more(sub)


async def test_an_escaped_id_in_agent_all_is_not_a_wildcard(
    buses: tuple[NatsBus, NatsBus],
) -> None:
    subscriber, publisher = buses
    pattern = Subjects().agent_all("victim.>")
    assert pattern == f"agentic.agent.{subject_token('victim.>')}.>"
    escaped_all = await subscriber.subscribe(pattern)

    for kind in ("run", "message", "response"):
        await publisher.publish(Subjects().agent("victim", kind), b"victim")
    await publisher.publish(Subjects().agent("victim.x", "run"), b"victim.x")
    # the agent literally named "victim.>" is the only one it follows
    own = Subjects().agent("victim.>", "run")
    await publisher.publish(own, b"own")
    await publisher.flush()

    message = await next_message(escaped_all)
    assert (message.subject, message.data) == (own, b"own")
    await assert_nothing_more(escaped_all)


async def test_an_escaped_wildcard_workflow_id_is_not_a_wildcard(
    buses: tuple[NatsBus, NatsBus],
) -> None:
    subscriber, publisher = buses
    requests = await subscriber.subscribe(Subjects().requests("*"))
    await publisher.publish(Subjects().request("wf-1", "r1"), b"other workflow")
    await publisher.publish(Subjects().request("*", "r1"), b"own")
    await publisher.flush()
    message = await next_message(requests)
    assert message.data == b"own"
    await assert_nothing_more(requests)
