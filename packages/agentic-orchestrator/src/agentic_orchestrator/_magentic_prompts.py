"""The Magentic-One manager's prompts: facts, plan, progress ledger, revisions, final answer."""

__all__ = [
    "FACTS",
    "FACTS_REVISION",
    "FACTS_UPDATE",
    "FINAL",
    "LEDGER",
    "PLAN",
    "PLAN_REVISION",
    "PLAN_UPDATE",
    "PROGRESS",
    "PROGRESS_CORRECTION",
]

FACTS = """Here is a request:

{task}

Before anyone works on it, write a short fact sheet with these headings:
1. GIVEN OR VERIFIED FACTS
2. FACTS TO LOOK UP
3. FACTS TO DERIVE
4. EDUCATED GUESSES"""

PLAN = """To address the request we have this team:

{team}

Using the facts below, write a short bullet-point plan. Not every member must take part.

{facts}"""

LEDGER = """We are working on this request:

{task}

The team:
{team}

Fact sheet:
{facts}

Plan:
{plan}"""

FACTS_UPDATE = """We are working on this request:

{task}

We are not making enough progress. Rewrite the fact sheet below with anything we have learned
(add or update at least one educated guess).

{facts}

The conversation so far:
{transcript}"""

PLAN_UPDATE = """Explain briefly what went wrong, then write a new short bullet-point plan that
avoids it, for this team:

{team}

The conversation so far:
{transcript}"""

FACTS_REVISION = """We are working on this request:

{task}

A reviewer read our plan and asked for changes:

{feedback}

Rewrite the fact sheet below with anything the feedback tells us.

{facts}"""

PLAN_REVISION = """A reviewer read this plan:

{plan}

and asked for changes:

{feedback}

Write a new short bullet-point plan that follows the feedback, for this team:

{team}"""

PROGRESS = """We are working on this request:

{task}

The team:
{team}

The conversation so far:
{transcript}

Answer with only a JSON object, exactly this shape:
{{"is_request_satisfied": {{"reason": str, "answer": bool}},
 "is_in_loop": {{"reason": str, "answer": bool}},
 "is_progress_being_made": {{"reason": str, "answer": bool}},
 "next_speaker": {{"reason": str, "answer": one of {names}}},
 "instruction_or_question": {{"reason": str, "answer": str}}}}"""

PROGRESS_CORRECTION = (
    "That reply is not a valid progress ledger ({problem}). Answer with only the JSON object; "
    "next_speaker must be one of: {names}."
)

FINAL = """We were working on this request:

{task}

The conversation:
{transcript}

{why}Give the final answer to the request, speaking to the user."""
