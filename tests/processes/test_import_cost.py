"""``import guardrails`` stays light: Claude Code starts a process per hook.

Each test runs a fresh interpreter and inspects ``sys.modules``; nothing here
measures time (``make bench`` prints the timings). On failure the message
names the line that first imported each unwanted module.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests._paths import REPO

pytestmark = pytest.mark.slow  # each test starts Python processes

ROOT = REPO

#: not loaded by ``import guardrails`` (asyncio alone costs ~40 ms)
NOT_ON_IMPORT = (
    "pydantic",
    "jsonschema",
    "sqlite_utils",
    "yaml",
    "click",
    "asyncio",
    "wcmatch",
    "typing",
    "dataclasses",
)
#: not loaded by a Python-defined Guard emitting on the sync path with sync hooks
NOT_ON_SYNC_EMIT = ("pydantic", "jsonschema", "sqlite_utils", "asyncio")
#: not loaded by a ``hookrails hook`` process answering from the compiled-definition
#: cache with a built-in hook, ledger on or off: each costs it from 0.3 to 9 ms
NOT_IN_HOOK = (
    *NOT_ON_IMPORT,
    "inspect",
    "logging",
    "threading",
    "contextlib",
    "pathlib",
    "hashlib",
    "importlib",
    "zlib",
    "collections.abc",
    "errno",
    # the approver's, the async driver's and the untimed chain's: a hook process has none
    "guardrails.dispatch.approval",
    "guardrails.dispatch.threads",
    "guardrails.dispatch.untimed",
    "guardrails.dispatch.toolrun",  # run_tool's, and PostToolUse's class built with it
)

IMPORT_ONLY = "import guardrails"

SYNC_EMIT = """\
from tests._paths import REPO
from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, PreToolUse

def noop(event, ctx):
    return None

def no_rm(event, ctx):
    return HookResult.deny("no rm")

guard = Guard(
    AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="Bash", hooks=[noop]),
                HookMatcher(matcher="Bash(rm *)", hooks=[no_rm]),
            ],
            "PostToolUse": [HookMatcher(hooks=[noop])],
        }
    )
)
ok = guard.emit_sync(PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, cwd="/tmp"))
no = guard.emit_sync(PreToolUse(tool_name="Bash", tool_input={"command": "rm -rf x"}, cwd="/tmp"))
run = guard.sync.run_tool("Bash", {"command": "echo hi"}, lambda command: command)
assert (ok.decision, no.decision, run.status) == ("allow", "deny", "ok"), (ok, no, run)
"""

#: prepended to the code to find who imports a module: records the first import's stack
PROBE = """\
import sys, traceback
_WATCH, _SEEN = {watch!r}, {{}}
class _Probe:
    def find_spec(self, name, path=None, target=None):
        if name in _WATCH and name not in _SEEN:
            _SEEN[name] = [
                f"{{f.filename}}:{{f.lineno}} {{f.line}}"
                for f in traceback.extract_stack()[:-1]
                if "importlib._bootstrap" not in f.filename
            ]
        return None
sys.meta_path.insert(0, _Probe())
"""


#: appended to the code: prints sys.modules (and the probe's findings) as JSON
DUMP = """
import json as _json, sys as _sys
print(_json.dumps({"modules": sorted(_sys.modules), **globals().get("_REPORT", {})}))
"""


def _run(code: str) -> dict[str, Any]:
    code += DUMP
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


@functools.cache
def _at_start_up() -> frozenset[str]:
    """What the interpreter loads before any code runs (site, .pth files): not ours."""
    return frozenset(_run("")["modules"])


def _unwanted(code: str, forbidden: tuple[str, ...]) -> list[str]:
    modules = set(_run(code)["modules"]) - _at_start_up()
    return [m for m in forbidden if m in modules]


def _who_imports(code: str, names: list[str]) -> str:
    """The stack (outermost first) at the first import of each of ``names``."""
    report = _run(PROBE.format(watch=set(names)) + code + "\n_REPORT = {'seen': _SEEN}")
    seen: dict[str, list[str]] = report.get("seen", {})
    parts = []
    for name in names:
        stack = seen.get(name)
        if not stack:
            parts.append(f"{name}: imported before the probe could see it")
            continue
        ours = [f for f in stack if "guardrails" in f or f.startswith("<string>")]
        parts.append(f"{name} first imported via:\n    " + "\n    ".join(ours or stack))
    return "\n".join(parts)


def test_import_guardrails_loads_no_heavy_dependency() -> None:
    loaded = _unwanted(IMPORT_ONLY, NOT_ON_IMPORT)
    assert not loaded, f"`import guardrails` loaded {loaded}\n" + _who_imports(IMPORT_ONLY, loaded)


def test_sync_emit_with_python_guard_loads_no_heavy_dependency() -> None:
    loaded = _unwanted(SYNC_EMIT, NOT_ON_SYNC_EMIT)
    assert not loaded, f"a sync emit loaded {loaded}\n" + _who_imports(SYNC_EMIT, loaded)


def test_opening_a_ledger_with_nothing_journaled_loads_no_import_machinery(
    tmp_path: Path,
) -> None:
    """A writer (a hook process that settles state, a Guard) opening a file whose markers
    exist and whose journal is empty needs neither the journal's import nor the spool's."""
    path = str(tmp_path / "ledger.db")
    from guardrails.ledger.sqlite import Ledger

    Ledger(path).close()  # the file, its markers folder
    code = f"from guardrails.ledger.sqlite import Ledger\nLedger({path!r}).close()\n"
    loaded = _unwanted(
        code, ("guardrails.ledger.journal_import", "guardrails.ledger.sqlite_recover")
    )
    assert not loaded, f"an open loaded {loaded}\n" + _who_imports(code, loaded)


# --- a hookrails hook process ------------------------------------------------------------

HOOK_DEFINITION = """\
name: light
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks:
        - use: deny
          with: {reason: "rm -rf is not allowed"}
"""
HOOK_EVENT = {
    "session_id": "s1",
    "cwd": "/project",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build"},
    "tool_use_id": "toolu_1",
}
#: the console script's entry, run in-process so sys.modules can be read afterwards (the
#: hook process ends with os._exit once its answer is out: here that ending raises instead)
HOOK_CODE = """\
import os, sys
def _end(code):
    raise SystemExit(code)
os._exit = _end
sys.argv = ["hookrails", "hook", *{args!r}]
from guardrails.cli.entry import main
try:
    main()
except SystemExit as exc:
    assert exc.code == 0, exc.code
"""


def _hook(tmp_path: Path, args: list[str], probe: list[str] | None = None) -> dict[str, Any]:
    """Run ``hookrails hook --config agent.yaml ARGS`` on ``HOOK_EVENT`` in a fresh
    interpreter: its answer and its modules (and, with ``probe``, who imported them)."""
    config = tmp_path / "agent.yaml"
    config.write_text(HOOK_DEFINITION, encoding="utf-8")
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HOOKRAILS_LEDGER", None)
    code = HOOK_CODE.format(args=["--config", str(config), *args])
    if probe:
        code = PROBE.format(watch=set(probe)) + code + "\n_REPORT = {'seen': _SEEN}"
    proc = subprocess.run(
        [sys.executable, "-c", code + DUMP],
        input=json.dumps(HOOK_EVENT),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    result: dict[str, Any] = json.loads(lines[-1])
    result["answer"] = json.loads(lines[0])
    return result


@pytest.mark.parametrize(
    ("args", "forbidden"),
    # with a ledger, the second event is journaled: no sqlite3 either (ledger.journal)
    [
        (["--no-ledger"], (*NOT_IN_HOOK, "sqlite3")),
        (["--ledger", "ledger.db"], (*NOT_IN_HOOK, "sqlite3")),
    ],
    ids=["no-ledger", "ledger"],
)
def test_hook_process_from_the_cache_loads_only_what_it_needs(
    tmp_path: Path, args: list[str], forbidden: tuple[str, ...]
) -> None:
    _hook(tmp_path, args)  # the first event fills the cache (and creates the ledger)
    result = _hook(tmp_path, args)
    decision = result["answer"]["hookSpecificOutput"]["permissionDecision"]
    assert decision == "deny"  # still decided by the definition
    loaded = [m for m in forbidden if m in set(result["modules"]) - _at_start_up()]
    if loaded:
        seen = _hook(tmp_path, args, probe=loaded).get("seen", {})
        where = {m: [f for f in seen.get(m, []) if "guardrails" in f] for m in loaded}
        raise AssertionError(f"a hook process loaded {loaded}: {json.dumps(where, indent=2)}")


def test_hook_process_with_a_ledger_still_records_every_event(tmp_path: Path) -> None:
    from tests._db import rows as read  # imports what hook processes journaled first

    for _ in range(2):
        _hook(tmp_path, ["--ledger", "ledger.db"])
    rows = read(tmp_path / "ledger.db", "SELECT tool_name, decision, status FROM tool_calls")
    runs = read(tmp_path / "ledger.db", "SELECT hook, outcome FROM hook_runs")
    assert [tuple(r.values()) for r in rows] == [("Bash", "deny", "denied")]  # upserted
    assert [tuple(r.values()) for r in runs] == [("deny", "deny")] * 2


LAZY_EVENTS = """\
import json, guardrails._event_base as base
from guardrails.events import Event
Event.from_claude({"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {}})
before = sorted(base._CLASSES)
Event.from_claude({"hook_event_name": "Notification", "message": "hi"})
_REPORT = {"before": before, "after": sorted(base._CLASSES)}
"""


def test_a_process_builds_only_the_event_classes_it_sees() -> None:
    """The 25 table events cost a hook process nothing until one of them arrives, and
    then that one class (docs/design.md §3)."""
    from guardrails._event_table import HAND_WRITTEN

    report = _run(LAZY_EVENTS + "\n")
    assert report["before"] == sorted(HAND_WRITTEN)
    assert report["after"] == sorted([*HAND_WRITTEN, "Notification"])
