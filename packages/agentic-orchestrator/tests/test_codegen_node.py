"""Reading node --test TAP output and the TypeScript programs' inputs (no node needed)."""

from __future__ import annotations

import json

from agentic_orchestrator._codegen._node import (
    SHIMS_FILE,
    node_test_program,
    parse_tap,
    tsc_program,
)

# Node 20's TAP for: a failing strictEqual, a passing test, a suite with a failing deepEqual.
TAP = """TAP version 13
# Subtest: adds
not ok 1 - adds
  ---
  duration_ms: 4.039615
  location: '/tmp/run/t.test.js:3:1'
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:

    2 !== 3

  code: 'ERR_ASSERTION'
  name: 'AssertionError'
  expected: 3
  actual: 2
  operator: 'strictEqual'
  stack: |-
  ...
# Subtest: ok
ok 2 - ok
  ---
  duration_ms: 0.472967
  ...
# Subtest: suite
    # Subtest: inner
    not ok 1 - inner
      ---
      duration_ms: 2.964198
      location: '/tmp/run/t.test.js:5:27'
      failureType: 'testCodeFailure'
      error: |-
        Expected values to be strictly deep-equal:
        + actual - expected

          {
        +   a: 1
        -   a: 2
          }
      code: 'ERR_ASSERTION'
      name: 'AssertionError'
      expected:
        a: 2
      actual:
        a: 1
      operator: 'deepStrictEqual'
      stack: |-
        TestContext.<anonymous> (/tmp/run/t.test.js:5:56)
      ...
    1..1
not ok 3 - suite
  ---
  duration_ms: 3.593128
  type: 'suite'
  location: '/tmp/run/t.test.js:5:1'
  failureType: 'subtestsFailed'
  error: '1 subtest failed'
  code: 'ERR_TEST_FAILURE'
  ...
1..3
# tests 3
# suites 1
# pass 1
# fail 2
# cancelled 0
# skipped 0
"""


def test_counts_come_from_the_summary() -> None:
    summary = parse_tap(TAP)
    assert summary.found
    assert (summary.passed, summary.failed) == (1, 2)


def test_each_failing_test_is_named_with_its_error_expected_actual_and_place() -> None:
    adds, inner = parse_tap(TAP).errors  # the failing suite itself is not an error of its own
    assert adds == (
        "adds: Expected values to be strictly equal: 2 !== 3; expected 3; actual 2; "
        "at t.test.js:3:1"
    )
    assert inner.startswith("inner: Expected values to be strictly deep-equal:")
    assert "expected a: 2; actual a: 1" in inner


def test_output_without_a_summary_is_not_found() -> None:
    summary = parse_tap("node: bad option: --test-reporter\n")
    assert not summary.found
    assert summary.errors == []


def test_cancelled_tests_count_as_failed() -> None:
    assert parse_tap("# pass 2\n# fail 1\n# cancelled 1\n").failed == 2


def test_programs_name_the_compiler_and_the_files() -> None:
    program = tsc_program("/opt/ts/node_modules/typescript", ["solution.ts", SHIMS_FILE])
    assert json.dumps("/opt/ts/node_modules/typescript/lib/typescript.js") in program
    assert json.dumps(["solution.ts", SHIMS_FILE]) in program
    transpiled = node_test_program("solution.ts", "solution.test.ts", "/opt/ts")
    assert "transpileModule" in transpiled
    stripped = node_test_program("solution.ts", "solution.test.ts", None)
    assert "--experimental-strip-types" in stripped
    assert "transpileModule" not in stripped
