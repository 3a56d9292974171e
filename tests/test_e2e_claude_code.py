"""Claude Code itself (the real CLI, offline) obeys `hookrails claude install`'s command hooks.

The project is set up the way the README says: an agent.yaml, then
`hookrails claude install --project --config agent.yaml`, then Claude Code
runs with the project's settings. The http-hook twin is in test_serve.py.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

from guardrails.testing import tool_use
from tests._claude_cli import run_claude

AGENT_YAML = """\
name: e2e
ledger: ledger.db
hooks:
  PreToolUse:
    - matcher: "Bash(rm *)"
      hooks: [{use: deny, with: {reason: "rm is not allowed here", hint: "Move files aside."}}]
    - matcher: Bash
      hooks: [deny_commands]
  PostToolUse:
    - hooks: [redact_secrets]
  Stop:
    - hooks: [{use: completion_promise, with: {promise: DONE, max_iterations: 2}}]
"""


def install(project: Path) -> dict:
    (project / "agent.yaml").write_text(AGENT_YAML)
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(project.parent / "cache")}
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
    return json.loads((project / ".claude" / "settings.json").read_text())


def test_installed_command_hooks_deny_record_and_hold_the_stop(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    settings = install(project)
    assert set(settings["hooks"]) == {"PreToolUse", "PostToolUse", "Stop"}

    denied = tool_use("Bash", {"command": "rm -f gone.txt && touch denied.txt"}, id="toolu_rm")
    allowed = tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_ok")
    run = run_claude(
        [denied, allowed, "Finished, I think.", "All checked. <promise>DONE</promise>"],
        tmp_path,
        settings=settings,
        env={"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")},
    )

    assert not (run.cwd / "denied.txt").exists()  # the denied call never ran
    assert (run.cwd / "allowed.txt").exists()
    text = run.result_text("toolu_rm")
    assert "rm is not allowed here" in text and "Move files aside." in text
    assert "<promise>DONE</promise>" in run.shown()  # the stop was held and told why

    with sqlite3.connect(project / "ledger.db") as db:
        calls = db.execute("select tool_call_id, status from tool_calls order by id").fetchall()
        stops = db.execute(
            "select decision from events where event = 'AgentStop' order by id"
        ).fetchall()
        sessions = db.execute("select distinct session_id from tool_calls").fetchall()
    assert calls == [("toolu_rm", "denied"), ("toolu_ok", "ok")]
    assert stops == [("block",), ("allow",)]
    assert sessions == [(run.session_id,)]


def test_uninstall_leaves_claude_unguarded(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    install(project)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "uninstall"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    assert not settings.get("hooks")
    run = run_claude(
        [tool_use("Bash", {"command": "rm -f x && touch ran.txt"}, id="toolu_rm"), "Done."],
        tmp_path,
        settings=settings,
    )
    assert (run.cwd / "ran.txt").exists()
    assert not (project / "ledger.db").exists()
