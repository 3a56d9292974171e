"""The entries `hookrails claude install` and `hookrails claude plugin` write, under the real
Claude Code CLI (offline): narrow matchers start hookrails only where it can match, every
call's ledger row is closed, a blocked stop shows the model "hookrails", not a command line,
and a plugin's denied Bash call never runs."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from guardrails.testing import MessagesRequest, tool_use
from tests._claude_cli import run_claude
from tests._db import catch_up

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCRIPT = Path(sys.executable).parent / "hookrails"
#: a stand-in for the hookrails script that notes each start, then runs the real one
COUNTER = """\
#!{python}
import os, sys
with open({log!r}, "a") as fh:
    fh.write(" ".join(sys.argv[1:]) + "\\n")
os.execv({script!r}, [{script!r}, *sys.argv[1:]])
"""


def install(project: Path, definition: str, *extra: str) -> dict[str, Any]:
    (project / "agent.yaml").write_text(definition)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "-c", "agent.yaml", *extra],
        cwd=project,
        env={**os.environ, "HOOKRAILS_CACHE_DIR": str(project.parent / "cache")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings: dict[str, Any] = json.loads((project / ".claude" / "settings.json").read_text())
    return settings


def count_starts(settings: dict[str, Any], folder: Path) -> Path:
    """Point every hookrails handler at COUNTER; returns the file it writes."""
    log = folder / "starts.log"
    counter = folder / "hookrails-counter"
    counter.write_text(COUNTER.format(python=sys.executable, log=str(log), script=str(SCRIPT)))
    counter.chmod(0o755)
    for groups in settings["hooks"].values():
        for group in groups:
            for handler in group["hooks"]:
                handler["command"] = str(counter)
    return log


def calls(db: Path) -> list[tuple[Any, ...]]:
    catch_up(db)  # what the hook processes journaled, as every hookrails reader does
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT tool_call_id, tool_name, decision, status FROM tool_calls ORDER BY id"
        ).fetchall()


def settled(db: Path, count: int, wait: float = 30.0) -> dict[str, tuple[Any, ...]]:
    """The rows once ``count`` calls are closed (the record-only writers are detached: they
    may finish after the CLI), or as they are after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        rows = {r[0]: r[1:] for r in calls(db)}
        done = [r for r in rows.values() if r[-1] != "pending"]
        if len(done) >= count or time.monotonic() > deadline:
            return rows
        time.sleep(0.1)


ASK = """\
name: e2e
ledger: ledger.db
hooks:
  PreToolUse:
    - matcher: "Bash(touch asked*)"
      hooks: [{use: ask, with: {reason: "needs a human"}}]
"""


def test_only_matching_calls_start_hookrails_and_every_row_is_closed(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("hello\n")
    settings = install(project, ASK)
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "Bash"
    assert settings["hooks"]["PreToolUse"][0]["hooks"][0]["if"] == "Bash(touch asked*)"
    log = count_starts(settings, tmp_path)
    plan = [
        [tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_ask"),
         tool_use("Bash", {"command": "touch ok.txt"}, id="toolu_ok")],
        tool_use("Read", {"file_path": str(project / "notes.txt")}, id="toolu_read"),
        tool_use("Glob", {"pattern": "*.txt"}, id="toolu_glob"),
    ]  # fmt: skip

    def model(request: MessagesRequest) -> Any:
        if request.turn < len(plan):
            return plan[request.turn]
        # a model takes a moment to answer: the async record-only hooks of the last call
        # run meanwhile (a headless session that ends at once ends them too)
        time.sleep(1.0)
        return "Done."

    run = run_claude(
        model,
        tmp_path,
        settings=settings,
        allowed_tools=("Bash", "Read", "Glob"),
        env={"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert not (run.cwd / "asked.txt").exists() and (run.cwd / "ok.txt").exists()
    starts = log.read_text().splitlines()
    deciding = [s for s in starts if "--record-only" not in s]
    assert len(deciding) == 1 and "--event PreToolUse" in deciding[0]  # only `touch asked*`
    rows = settled(project / "ledger.db", 4)
    assert rows == {
        "toolu_ask": ("Bash", "ask", "interrupted"),  # claude -p had nobody to ask
        "toolu_ok": ("Bash", "allow", "ok"),
        "toolu_read": ("Read", "allow", "ok"),
        "toolu_glob": ("Glob", "allow", "ok"),
    }


STOP = """\
name: e2e
ledger: ledger.db
hooks:
  Stop:
    - hooks: [{use: completion_promise, with: {promise: DONE, max_iterations: 2}}]
"""


def test_a_blocked_stop_shows_the_model_hookrails_not_a_command_line(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = install(project, STOP)
    run = run_claude(
        ["Finished, I think.", "All checked. <promise>DONE</promise>"],
        tmp_path,
        settings=settings,
        env={"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")},
    )
    shown = run.shown()
    assert "<promise>DONE</promise>" in shown
    assert 'from command: "hookrails"' in shown
    assert str(SCRIPT) not in shown and "--config" not in shown


PLUGIN = """\
name: team-policy
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [deny_commands]
    - matcher: "Bash(touch denied*)"
      hooks: [{use: deny, with: {reason: "not in this repo"}}]
"""


def test_a_plugin_carries_the_guardrails_and_a_denied_call_never_runs(tmp_path: Path) -> None:
    source = tmp_path / "policy"
    source.mkdir()
    (source / "agent.yaml").write_text(PLUGIN)
    plugin = tmp_path / "plugin"
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "plugin", "-c", str(source / "agent.yaml"),
         "-o", str(plugin)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "team-policy"
    hooks = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["args"][2] == (
        "${CLAUDE_PLUGIN_ROOT}/hookrails/agent.yaml"
    )
    run = run_claude(
        [tool_use("Bash", {"command": "touch denied.txt"}, id="toolu_denied"),
         tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_ok"), "Done."],
        tmp_path,
        plugins=[{"type": "local", "path": str(plugin)}],
        env={
            "PATH": f"{SCRIPT.parent}{os.pathsep}{os.environ.get('PATH', '')}",
            "HOOKRAILS_CACHE_DIR": str(tmp_path / "cache"),
            "HOOKRAILS_LEDGER": str(tmp_path / "ledger.db"),
        },
    )  # fmt: skip
    assert not (run.cwd / "denied.txt").exists()
    assert (run.cwd / "allowed.txt").exists()
    assert "not in this repo" in run.result_text("toolu_denied")
    assert [r[0] for r in calls(tmp_path / "ledger.db")] == ["toolu_denied", "toolu_ok"]
