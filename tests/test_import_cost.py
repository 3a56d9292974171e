"""``import guardrails`` stays light: Claude Code starts a process per hook.

Each test runs a fresh interpreter and inspects ``sys.modules``; nothing here
measures time (``make bench`` prints the timings). On failure the message
names the line that first imported each unwanted module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: not loaded by ``import guardrails`` (asyncio alone costs ~40 ms)
NOT_ON_IMPORT = ("pydantic", "jsonschema", "sqlite_utils", "yaml", "click", "asyncio", "wcmatch")
#: not loaded by a Python-defined Guard emitting on the sync path with sync hooks
NOT_ON_SYNC_EMIT = ("pydantic", "jsonschema", "sqlite_utils", "asyncio")

IMPORT_ONLY = "import guardrails"

SYNC_EMIT = """\
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


def _unwanted(code: str, forbidden: tuple[str, ...]) -> list[str]:
    modules = set(_run(code)["modules"])
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
