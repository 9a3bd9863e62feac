"""The programs the validators run in the sandbox for TypeScript, and reading node's TAP.

Type checking uses the TypeScript compiler API of an installed npm ``typescript`` package
(the caller's sandbox must mount it: ``read_only_paths=[typescript dir]``); the checked files
get minimal declarations of ``node:test``, ``node:assert`` and ``console`` so tests type-check
without ``@types/node``. Tests run with ``node --test`` and the TAP reporter: on Node >= 22.6
straight from the ``.ts`` files (type stripping), else transpiled by the same compiler.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from agentic_orchestrator._codegen._python import RESULT_MARKER

SHIMS_FILE = "agentic_node_shims.d.ts"

SHIMS = """
declare var console: {
  log(...data: unknown[]): void; error(...data: unknown[]): void;
  warn(...data: unknown[]): void; info(...data: unknown[]): void;
};
declare module "node:test" {
  type TestFn = (t: any) => void | Promise<void>;
  export function test(name: string, fn: TestFn): Promise<void>;
  export function test(name: string, options: object, fn: TestFn): Promise<void>;
  export function it(name: string, fn: TestFn): Promise<void>;
  export function describe(name: string, fn: () => void | Promise<void>): Promise<void>;
  export function before(fn: () => unknown): void;
  export function after(fn: () => unknown): void;
  export function beforeEach(fn: () => unknown): void;
  export function afterEach(fn: () => unknown): void;
  export default test;
}
declare module "node:assert" {
  function assert(value: unknown, message?: string): asserts value;
  namespace assert {
    function ok(value: unknown, message?: string): asserts value;
    function equal(actual: unknown, expected: unknown, message?: string): void;
    function notEqual(actual: unknown, expected: unknown, message?: string): void;
    function strictEqual<T>(actual: unknown, expected: T, message?: string): asserts actual is T;
    function notStrictEqual(actual: unknown, expected: unknown, message?: string): void;
    function deepEqual(actual: unknown, expected: unknown, message?: string): void;
    function deepStrictEqual<T>(
      actual: unknown, expected: T, message?: string
    ): asserts actual is T;
    function notDeepStrictEqual(actual: unknown, expected: unknown, message?: string): void;
    function throws(fn: () => unknown, expected?: unknown, message?: string): void;
    function doesNotThrow(fn: () => unknown, message?: string): void;
    function rejects(
      block: Promise<unknown> | (() => Promise<unknown>), expected?: unknown, message?: string
    ): Promise<void>;
    function match(value: string, pattern: RegExp, message?: string): void;
    function fail(message?: string): never;
    const strict: typeof assert;
  }
  export = assert;
}
declare module "node:assert/strict" {
  import assert = require("node:assert");
  export = assert;
}
"""

_TSC = r"""
const ts = require(__TS__);
const FILES = __FILES__;
const options = {
  noEmit: true, strict: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.CommonJS,
  lib: ["lib.es2022.d.ts"], types: [], skipLibCheck: true, esModuleInterop: true,
  allowImportingTsExtensions: true, noUnusedLocals: false,
};
const program = ts.createProgram(FILES, options);
const errors = [];
for (const d of ts.getPreEmitDiagnostics(program)) {
  if (d.category !== ts.DiagnosticCategory.Error) continue;
  const text = ts.flattenDiagnosticMessageText(d.messageText, "\n");
  let where = "";
  if (d.file && d.start !== undefined) {
    const pos = d.file.getLineAndCharacterOfPosition(d.start);
    where = `${d.file.fileName}(${pos.line + 1},${pos.character + 1}): `;
  }
  errors.push(`${where}error TS${d.code}: ${text}`);
}
console.log(__MARKER__ + " " + JSON.stringify({errors, notes: ["typescript " + ts.version]}));
"""

# Runs in the sandbox as JavaScript: transpiles the .ts files, then node --test on the result.
_TEST_TRANSPILED = r"""
const fs = require("node:fs");
const cp = require("node:child_process");
const ts = require(__TS__);
const [CODE, TESTS] = __FILES__;
for (const name of [CODE, TESTS]) {
  const out = ts.transpileModule(fs.readFileSync(name, "utf8"), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022,
                       esModuleInterop: true },
    fileName: name,
  });
  const js = out.outputText.replace(/require\("(\.\.?\/[^"]+)\.ts"\)/g, 'require("$1.js")');
  fs.writeFileSync(name.replace(/\.ts$/, ".js"), js);
}
const run = cp.spawnSync(process.execPath, ["--test", "--test-reporter=tap",
  TESTS.replace(/\.ts$/, ".js")], { encoding: "utf8" });
process.stdout.write(run.stdout || "");
process.stderr.write(run.stderr || "");
"""

# Runs in the sandbox as TypeScript (Node >= 22.6 strips the types of the test files too).
_TEST_STRIPPED = r"""
const cp = require("node:child_process");
const run = cp.spawnSync(process.execPath, ["--experimental-strip-types",
  "--disable-warning=ExperimentalWarning", "--test", "--test-reporter=tap", __TESTS__],
  { encoding: "utf8" });
process.stdout.write(run.stdout || "");
process.stderr.write(run.stderr || "");
"""


def tsc_program(typescript_dir: str, files: list[str]) -> str:
    """JavaScript that type-checks ``files`` with the compiler in ``typescript_dir``."""
    return (
        _TSC.replace("__TS__", json.dumps(f"{typescript_dir}/lib/typescript.js"))
        .replace("__FILES__", json.dumps(files))
        .replace("__MARKER__", json.dumps(RESULT_MARKER))
    )


def node_test_program(code_file: str, test_file: str, typescript_dir: str | None) -> str:
    """The program running ``test_file`` with ``node --test`` (its output is TAP)."""
    if typescript_dir is None:
        return _TEST_STRIPPED.replace("__TESTS__", json.dumps(test_file))
    return _TEST_TRANSPILED.replace(
        "__TS__", json.dumps(f"{typescript_dir}/lib/typescript.js")
    ).replace("__FILES__", json.dumps([code_file, test_file]))


@dataclass
class TapSummary:
    """Counts and failure messages read from node's TAP output."""

    passed: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list[str])
    found: bool = False


_NOT_OK = re.compile(r"^(\s*)not ok \d+ - (.*?)(?:\s+#.*)?$")
_YAML_KEY = re.compile(r"^\s*(error|expected|actual|location|failureType|code):\s*(.*)$")
_SUMMARY = re.compile(r"^# (pass|fail|cancelled) (\d+)\s*$")
_MAX_DETAIL_CHARS = 500


def parse_tap(output: str) -> TapSummary:
    """``# pass N`` / ``# fail N`` and, per failing test, its error, expected and actual."""
    summary = TapSummary()
    lines = output.splitlines()
    for index, line in enumerate(lines):
        counted = _SUMMARY.match(line)
        if counted is not None:
            summary.found = True
            if counted.group(1) == "pass":
                summary.passed = int(counted.group(2))
            else:  # a cancelled test (timed out, its file crashed) did not pass either
                summary.failed += int(counted.group(2))
            continue
        failing = _NOT_OK.match(line)
        if failing is None:
            continue
        details = _failure_details(lines, index + 1)
        if _unquote(details.get("failureType", "")) == "subtestsFailed":
            continue  # a suite: its failing tests are reported themselves
        parts = [f"{failing.group(2)}: {_unquote(details.get('error', 'failed'))}"]
        parts += [
            f"{key} {_unquote(details[key])}" for key in ("expected", "actual") if key in details
        ]
        if "location" in details:
            parts.append(f"at {_unquote(details['location']).rsplit('/', 1)[-1]}")
        summary.errors.append("; ".join(parts))
    return summary


def _failure_details(lines: list[str], start: int) -> dict[str, str]:
    details: dict[str, str] = {}
    if start >= len(lines) or lines[start].strip() != "---":
        return details
    block = lines[start + 1 :]
    for offset, line in enumerate(block):
        if line.strip() == "...":
            break
        key = _YAML_KEY.match(line)
        if key is None or key.group(1) in details:
            continue
        value = key.group(2).strip()
        if value in {"", "|", "|-", ">", ">-"}:  # a block scalar or a mapping: the lines below
            indent = len(line) - len(line.lstrip())
            nested: list[str] = []
            for following in block[offset + 1 :]:
                if following.strip() and len(following) - len(following.lstrip()) <= indent:
                    break
                if following.strip():
                    nested.append(following.strip())
            value = " ".join(nested)[:_MAX_DETAIL_CHARS]
        details[key.group(1)] = value
    return details


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1].replace("''", "'")
    return value
