"""A Claude Code command hook per event: ``hookrails hook`` against a stdlib-only script.

Claude Code starts one process per hook event, so a command hook costs a
process start-up plus its answer. Every column answers the same PreToolUse
(``Bash`` running ``rm -rf build``) with the same deny JSON on stdout:

* ``stdlib hook``: a Python script importing only ``json`` and ``sys`` that
  reads the event and denies ``rm -rf`` commands: the floor, what any Python
  command hook pays.
* ``hookrails hook``: the installed ``hookrails`` script with a definition
  making the same deny (``matcher: "Bash(rm -rf *)"``, ``use: deny``), with
  ``--no-ledger``, and with ``--ledger FILE`` (the event recorded in a
  transaction, as by default).
* ``python -m guardrails hook``: the same, without the console script.
* for scale: ``python -c pass`` (the interpreter alone) and ``python -c "import
  json, guardrails.dispatch.guard"`` (the engine's imports alone, nothing decided).

Wall time around ``subprocess.run``, ``RUNS`` runs per column, the columns
alternating round-robin so drift hits them alike, after one warm-up run each
(it writes the bytecode cache, the compiled-definition cache and the ledger's
schema); medians in ms. Children get a bytecode cache in a temporary folder
(``PYTHONPYCACHEPREFIX``, ``PYTHONDONTWRITEBYTECODE`` dropped) and the
compiled-definition cache in another (``HOOKRAILS_CACHE_DIR``): an installed
package after its first event.

The import breakdown is ``-X importtime`` of the same hookrails processes
(median of ``IMPORTTIME_RUNS`` by total): each guardrails module's own time,
and each stdlib package it pulls in with everything below it, charged to the
first guardrails module that imported it.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import table

RUNS = 25
IMPORTTIME_RUNS = 5
TOP = 16
TARGET_RATIO = 1.5

STDLIB_HOOK = """\
import json
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if event.get("tool_name") == "Bash" and command.startswith("rm -rf "):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is not allowed",
    }}))
"""
DEFINITION = """\
name: bench
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks:
        - use: deny
          with: {reason: "rm -rf is not allowed"}
"""
EVENT = {
    "session_id": "c9703a6f-2b1e-4d6a-9f0e-5a1d3c7b8e21",
    "transcript_path": "/home/user/.claude/projects/-home-user-project/c9703a6f.jsonl",
    "cwd": "/home/user/project",
    "permission_mode": "default",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "rm -rf build", "description": "clean"},
    "tool_use_id": "toolu_01A2b3C4d5E6f7G8h9I0j1K2",
}
DENY = {
    "hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": "rm -rf is not allowed",
    }
}


def _hookrails() -> list[str]:
    script = Path(sys.executable).parent / ("hookrails.exe" if os.name == "nt" else "hookrails")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "guardrails"]


def _spawn(argv: list[str], stdin: bytes, env: dict[str, str], cwd: str) -> tuple[int, bytes]:
    t0 = time.perf_counter_ns()
    proc = subprocess.run(argv, input=stdin, capture_output=True, env=env, cwd=cwd, check=False)
    elapsed = time.perf_counter_ns() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{argv} exited {proc.returncode}: {proc.stderr.decode()}")
    return elapsed, proc.stdout


def _importtime(argv: list[str], stdin: bytes, env: dict[str, str], cwd: str) -> list[str]:
    """Lines of ``-X importtime`` for ``argv`` (a Python script and its arguments)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    return [ln for ln in proc.stderr.decode().splitlines() if ln.startswith("import time:")]


def _breakdown(lines: list[str]) -> tuple[float, dict[str, float]]:
    """(total ms after start-up, {label: ms}): guardrails modules by their self time, stdlib
    and third-party packages by their cumulative time, charged to their guardrails importer."""
    parsed = []  # (self us, cumulative us, depth, name), children before their parent
    for line in lines:
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue  # the header
        name = parts[2].rstrip()
        parsed.append((int(parts[0]), int(parts[1]), len(name) - len(name.lstrip()), name.strip()))
    top = min(p[2] for p in parsed)
    site = [i for i, p in enumerate(parsed) if p[2] == top and p[3] == "site"]
    mine = parsed[site[0] + 1 :] if site else parsed  # after the interpreter's start-up
    total = sum(cum for _, cum, depth, _ in mine if depth == top) / 1000
    out: dict[str, float] = {}
    ancestors: list[tuple[int, str]] = []  # walking backwards, parents come first
    for self_us, cum_us, depth, name in reversed(mine):
        while ancestors and ancestors[-1][0] >= depth:
            ancestors.pop()
        names = [n for _, n in ancestors]
        ancestors.append((depth, name))
        if name.startswith("guardrails"):
            out[name] = out.get(name, 0.0) + self_us / 1000
        elif all(n.startswith("guardrails") for n in names):  # a package's root: all of it
            label = f"{name} ({f'for {names[-1]}' if names else 'imported at run time'})"
            out[label] = out.get(label, 0.0) + cum_us / 1000
    return total, out


def hook_process_cost() -> None:
    """A Claude Code command hook process: hookrails hook vs a stdlib-only script."""
    print(__doc__.split("\n\n", 1)[1].rstrip() if __doc__ else "")
    print()
    work = tempfile.mkdtemp(prefix="hookrails-bench-hook-")
    try:
        _run(Path(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run(work: Path) -> None:
    (work / "stdlib_hook.py").write_text(STDLIB_HOOK)
    (work / "agent.yaml").write_text(DEFINITION)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env.pop("HOOKRAILS_LEDGER", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    env["HOOKRAILS_CACHE_DIR"] = str(work / "defcache")
    stdin = json.dumps(EVENT).encode()
    py = sys.executable
    hr = _hookrails()
    config = ["hook", "--config", str(work / "agent.yaml")]
    columns = {
        "stdlib hook (json + sys)": [py, str(work / "stdlib_hook.py")],
        "hookrails hook --no-ledger": [*hr, *config, "--no-ledger"],
        "hookrails hook --ledger FILE": [*hr, *config, "--ledger", str(work / "ledger.db")],
        "python -m guardrails hook --no-ledger": [py, "-m", "guardrails", *config, "--no-ledger"],
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import json, guardrails.dispatch.guard'": [
            py,
            "-c",
            "import json, guardrails.dispatch.guard",
        ],
    }
    cwd = str(work)
    for name, argv in columns.items():  # warm-up, and every hook answers the same deny
        _, out = _spawn(argv, stdin, env, cwd)
        if "hook" in name and json.loads(out) != DENY:
            raise RuntimeError(f"{name} answered {out!r}, not the deny")
    samples: dict[str, list[float]] = {name: [] for name in columns}
    for _ in range(RUNS):
        for name, argv in columns.items():
            samples[name].append(_spawn(argv, stdin, env, cwd)[0] / 1e6)
    med = {name: statistics.median(s) for name, s in samples.items()}
    floor = med["stdlib hook (json + sys)"]
    rows = [
        [name, f"{ms:.1f}", f"{ms / floor:.2f}x", f"{ms - floor:+.1f}"] for name, ms in med.items()
    ]
    print(table(["process (one PreToolUse, deny)", "median ms", "vs stdlib", "ms over"], rows))
    print(f"\n({RUNS} runs per row, alternating; {os.cpu_count()} CPUs)")
    if hr[0] == py:
        print("(no hookrails console script next to this Python: its rows use python -m)")

    def breakdown(argv: list[str]) -> tuple[float, dict[str, float]]:
        runs = [_breakdown(_importtime(argv, stdin, env, cwd)) for _ in range(IMPORTTIME_RUNS)]
        return sorted(runs, key=lambda r: r[0])[len(runs) // 2]

    floor_imports, _ = breakdown([str(work / "stdlib_hook.py")])
    print(
        f"\n-X importtime (median of {IMPORTTIME_RUNS}; importtime inflates it), imports after "
        f"start-up: the stdlib hook {floor_imports:.1f} ms (json, re and what they need)."
    )
    script = hr if hr[0] != py else ["-m", "guardrails"]
    ledger_args = ["--ledger", str(work / "ledger.db")]
    for label, args in (("--no-ledger", ["--no-ledger"]), ("--ledger FILE", ledger_args)):
        total, parts = breakdown([*script, *config, *args])
        print(f"\nhookrails hook {label}: {total:.1f} ms. Largest:")
        top = sorted(parts.items(), key=lambda kv: -kv[1])[:TOP]
        rows = [[name, f"{ms:.2f}"] for name, ms in top]
        print(table(["module (guardrails: own time; others: with their imports)", "ms"], rows))
    print(
        "(typing's share holds re, enum, functools and collections, which the stdlib hook"
        " loads too, through json)"
    )

    print(f"\nTarget: hookrails hook within {TARGET_RATIO:g}x the stdlib hook (not asserted):")
    for name in ("hookrails hook --no-ledger", "hookrails hook --ledger FILE"):
        ratio = med[name] / floor
        verdict = "MET" if ratio <= TARGET_RATIO else "NOT MET"
        print(f"  {name}: {verdict} ({ratio:.2f}x)")


if __name__ == "__main__":
    hook_process_cost()
