"""Import cost: what a Claude Code hook process pays before its first decision.

Wall times: median of 15 fresh interpreters (after one warm-up run), timed
around ``subprocess.run``, so process start-up is in every row alike.
``-X importtime``: the ``cumulative`` column of the top-level ``guardrails``
line, median of 5 runs. The breakdown of a minimal hook process is timed
inside the child with ``perf_counter_ns`` (median of 15 children).
Children run with a bytecode cache (``PYTHONPYCACHEPREFIX`` in a temporary
directory, ``PYTHONDONTWRITEBYTECODE`` dropped), so the numbers are the steady
state of an installed package, not source compilation.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _timing import table, wall_ms

ROOT = str(Path(__file__).resolve().parent.parent)
RUNS = 15
IMPORTTIME_RUNS = 5
TOP = 10
#: must not be loaded by ``import guardrails`` (tests/processes/test_import_cost.py asserts it)
HEAVY = ("pydantic", "jsonschema", "sqlite_utils", "yaml", "click", "asyncio", "wcmatch")

#: a minimal Python-defined hook process; prints its phases (ns) and sys.modules
HOOK_PROCESS = """\
import json, sys, time
t = [time.perf_counter_ns()]
import guardrails
t.append(time.perf_counter_ns())
from guardrails import AgentDefinition, Guard, HookMatcher, PreToolUse
t.append(time.perf_counter_ns())
def noop(event, ctx):
    return None
guard = Guard(AgentDefinition(hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[noop])]}))
t.append(time.perf_counter_ns())
d = guard.emit_sync(PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, cwd="/tmp"))
t.append(time.perf_counter_ns())
print(json.dumps({"t": t, "modules": sorted(sys.modules)}))
"""
PHASES = [
    "import guardrails",
    "from guardrails import AgentDefinition, Guard, HookMatcher, PreToolUse",
    "AgentDefinition(...) + Guard(...), one matcher 'Bash'",
    "first guard.emit_sync(PreToolUse(...))",
]

_ENV: dict[str, str] | None = None


def _run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, check=True, cwd=ROOT, env=_ENV
    )


def _depth(name: str) -> int:
    return len(name) - len(name.lstrip(" "))


def _importtime(code: str) -> tuple[float, list[tuple[int, str]]]:
    """``-X importtime`` of ``code``: (cumulative us of ``guardrails``, [(self us, module)]).

    The list covers everything imported after start-up (after the ``site``
    line). Modules loaded through ``importlib.import_module`` (the lazy names
    of ``guardrails/__init__``) get no line of their own, and what they import
    shows up at the top level: their own self time is in no line.
    """
    runs = []
    for _ in range(IMPORTTIME_RUNS):
        lines: list[tuple[int, int, str]] = []  # (self us, cumulative us, indented name)
        for line in _run(["-X", "importtime", "-c", code]).stderr.splitlines():
            parts = line.removeprefix("import time:").split("|")
            if len(parts) != 3 or not parts[0].strip().isdigit():
                continue  # the header, or not an importtime line
            lines.append((int(parts[0]), int(parts[1]), parts[2]))
        top = min(_depth(name) for _, _, name in lines)
        site = [i for i, (_, _, n) in enumerate(lines) if n.strip() == "site" and _depth(n) == top]
        mine = lines[site[0] + 1 :] if site else lines
        total = next(cum for _, cum, name in mine if name.strip() == "guardrails")
        runs.append((total, [(us, name.strip()) for us, _, name in mine]))
    runs.sort(key=lambda r: r[0])
    total, selfs = runs[len(runs) // 2]
    return float(total), selfs


def _hook_process() -> tuple[list[float], list[str]]:
    """Median ms of each phase of ``HOOK_PROCESS``, and its sys.modules (last run)."""
    _run(["-c", HOOK_PROCESS])  # warm the bytecode cache
    phases: list[list[float]] = [[] for _ in PHASES]
    modules: list[str] = []
    for _ in range(RUNS):
        out = json.loads(_run(["-c", HOOK_PROCESS]).stdout)
        t = out["t"]
        for i in range(len(PHASES)):
            phases[i].append((t[i + 1] - t[i]) / 1e6)
        modules = out["modules"]
    return [statistics.median(p) for p in phases], modules


def import_cost() -> None:
    """Import cost of ``import guardrails`` and of a minimal hook process."""
    global _ENV
    cache = tempfile.mkdtemp(prefix="hookrails-bench-pyc-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    _ENV = {**env, "PYTHONPYCACHEPREFIX": cache}
    try:
        _import_cost()
    finally:
        _ENV = None
        shutil.rmtree(cache, ignore_errors=True)


def _import_cost() -> None:
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    py = sys.executable
    bare = wall_ms([py, "-c", "pass"], RUNS, ROOT, _ENV)
    imp = wall_ms([py, "-c", "import guardrails"], RUNS, ROOT, _ENV)
    hook = wall_ms([py, "-c", HOOK_PROCESS], RUNS, ROOT, _ENV)
    imp_us, imp_selfs = _importtime("import guardrails")
    rows = [
        ["python -c pass (wall)", f"{bare:.1f}", ""],
        ["python -c 'import guardrails' (wall)", f"{imp:.1f}", f"+{imp - bare:.1f}"],
        ["minimal hook process, below (wall)", f"{hook:.1f}", f"+{hook - bare:.1f}"],
        ["-X importtime: 'guardrails' cumulative", f"{imp_us / 1000:.1f}", ""],
    ]
    print(table(["measure", "ms", "over bare python"], rows))

    phases, modules = _hook_process()
    print("\nminimal hook process, phase by phase (in-process, median ms):")
    rows = [[name, f"{ms:.2f}"] for name, ms in zip(PHASES, phases, strict=True)]
    rows.append(["total", f"{sum(phases):.2f}"])
    print(table(["phase", "ms"], rows))

    _, proc_selfs = _importtime(HOOK_PROCESS)
    for label, selfs in (("import guardrails", imp_selfs), ("the hook process", proc_selfs)):
        print(f"\nlargest self times under {label} (-X importtime, us):")
        for us, name in sorted(selfs, reverse=True)[:TOP]:
            print(f"  {us:>6}  {name}")
    print(
        "  (guardrails.definition.model and guardrails.dispatch.guard load via importlib:"
        " no line of their own)"
    )

    code = "import guardrails, sys, json; print(json.dumps(sorted(sys.modules)))"
    after_import = json.loads(_run(["-c", code]).stdout)
    heavy_import = [m for m in HEAVY if m in after_import]
    heavy_emit = [m for m in HEAVY if m in modules]
    print(f"\nheavy modules after `import guardrails`: {', '.join(heavy_import) or 'none'}")
    print(f"heavy modules after the hook process:    {', '.join(heavy_emit) or 'none'}")
    print(f"  (checked: {', '.join(HEAVY)})")
