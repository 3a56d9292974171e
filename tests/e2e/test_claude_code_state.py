"""The real Claude Code CLI (offline), command hooks: a halt holds for a sibling tool call.

Each hook event is a process of its own, so the halt lives in the ledger
(docs/design.md §7). The model calls two tools in one message; the first halts the
agent. The sibling's hook waits until the halt is in the ledger (whether Claude Code
runs the two hooks one after the other or at once), so its call is recorded after the
halt: it must not run.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from guardrails.testing import tool_use
from tests._claude_cli import run_claude
from tests._db import catch_up

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AGENT_YAML = """\
name: e2e-state
ledger: ledger.db
hooks:
  PreToolUse:
    - matcher: "Bash(echo halt*)"
      hooks: [state_hooks:halt]
    - matcher: "Bash(touch *)"
      hooks: [{use: state_hooks:after_the_halt, timeout: 30}]
"""

HOOKS = """\
import time
from guardrails import HookResult

def halt(event, ctx):
    return HookResult.halt("stop now")

def after_the_halt(event, ctx):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if ctx.ledger.value("select count(*) from tool_calls where reason = 'stop now'"):
                return None
        except Exception:  # no ledger file yet
            pass
        time.sleep(0.05)
    return None
"""


def test_a_sibling_call_after_a_halt_does_not_run(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(AGENT_YAML)
    (project / "state_hooks.py").write_text(HOOKS)
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("HOOKRAILS_LEDGER", None)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "--config", "agent.yaml"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    both = [
        tool_use("Bash", {"command": "echo halt"}, id="toolu_halt"),
        tool_use("Bash", {"command": "touch sibling.txt"}, id="toolu_sibling"),
    ]
    run = run_claude(
        [both, "Done."],
        tmp_path,
        settings=settings,
        env={"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")},
    )
    assert not (run.cwd / "sibling.txt").exists()  # the sibling never ran
    catch_up(project / "ledger.db")  # what the hook processes journaled, as hookrails reads
    with sqlite3.connect(project / "ledger.db") as db:
        calls = db.execute("select tool_call_id, decision, reason from tool_calls").fetchall()
    assert sorted(calls) == [
        ("toolu_halt", "deny", "stop now"),
        ("toolu_sibling", "deny", "the agent was halted: stop now"),
    ]
