"""Claude Code itself (the real CLI, offline) obeys `hookrails claude install`'s command hooks.

The project is set up the way the README says: an agent.yaml, then
`hookrails claude install --project --config agent.yaml`, then Claude Code
runs with the project's settings. The http-hook twin (`install --http`, then `hookrails
serve`) is the last test here.
"""

from __future__ import annotations

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from guardrails.testing import tool_use
from tests._claude_cli import run_claude
from tests._db import catch_up

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

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


SERVE = [sys.executable, "-m", "guardrails", "serve"]


def install(project: Path, *options: str) -> dict:
    """``hookrails claude install`` of the project's agent.yaml (with ``options``): the
    settings it wrote."""
    (project / "agent.yaml").write_text(AGENT_YAML)
    return claude(project, "install", "--config", "agent.yaml", *options)


def claude(project: Path, *args: str) -> dict:
    """``hookrails claude ARGS`` in the project, which must succeed: the settings after."""
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(project.parent / "cache")}
    env.pop("HOOKRAILS_LEDGER", None)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", *args],
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
    # deciding: PreToolUse (Bash calls only), PostToolUse, Stop, and by default the guard
    # of the settings (ConfigChange) and of skills' shell commands; record-only: the rest
    assert set(settings["hooks"]) == {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "PostToolBatch",
        "Stop",
        "ConfigChange",
        "PreSkillShellCommand",
    }
    assert settings["hooks"]["PreToolUse"][0]["matcher"] == "Bash"

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

    catch_up(project / "ledger.db")  # what the hook processes journaled, as hookrails reads
    with sqlite3.connect(project / "ledger.db") as db:
        calls = db.execute("select tool_call_id, status from tool_calls order by id").fetchall()
        stops = db.execute(
            "select decision from events where event = 'AgentStop' order by id"
        ).fetchall()
        sessions = db.execute("select distinct session_id from tool_calls").fetchall()
    assert calls == [("toolu_rm", "denied"), ("toolu_ok", "ok")]
    assert stops == [("block",), ("allow",)]
    assert sessions == [(run.session_id,)]


def test_a_hook_claude_cannot_run_refuses_the_call(tmp_path: Path) -> None:
    """hookrails moved or uninstalled from the venv: exit 127, and onFailure: block refuses."""
    project = tmp_path / "project"
    project.mkdir()
    settings = install(project)
    handler = settings["hooks"]["PreToolUse"][0]["hooks"][0]
    assert handler["onFailure"] == "block"
    handler["command"] = "/nonexistent/bin/hookrails"  # exec form: the arguments stay
    run = run_claude(
        [tool_use("Bash", {"command": "touch ran.txt"}, id="toolu_1"), "Done."],
        tmp_path,
        settings=settings,
    )
    assert not (run.cwd / "ran.txt").exists()
    assert 'onFailure is "block"' in run.result_text("toolu_1")


def test_an_unreachable_hookrails_serve_refuses_the_call(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = install(project, "--http", f"http://127.0.0.1:{port}")
    run = run_claude(
        [tool_use("Bash", {"command": "touch ran.txt"}, id="toolu_1"), "Done."],
        tmp_path,
        settings=settings,
    )
    assert not (run.cwd / "ran.txt").exists()
    assert 'onFailure is "block"' in run.result_text("toolu_1")


def test_uninstall_leaves_claude_unguarded(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    install(project)
    settings = claude(project, "uninstall")
    assert not settings.get("hooks")
    run = run_claude(
        [tool_use("Bash", {"command": "rm -f x && touch ran.txt"}, id="toolu_rm"), "Done."],
        tmp_path,
        settings=settings,
    )
    assert (run.cwd / "ran.txt").exists()
    assert not (project / "ledger.db").exists()


def _serve(project: Path) -> tuple[subprocess.Popen[str], str]:
    """`hookrails serve` for the project, as its own process; (process, its URL)."""
    proc = subprocess.Popen(
        [*SERVE, "--config", "agent.yaml", "--ledger", "ledger.db", "--port", "0"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:  # ends when the process does
        seen.append(line)
        found = re.search(r"listening on (http://[^\s]+)", line)
        if found:  # its log goes on being read, so a full pipe never stalls it
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, found.group(1).rstrip("/")
    proc.wait(10)
    raise AssertionError(f"hookrails serve did not start: {''.join(seen)}")


def test_installed_http_hooks_deny_and_record_through_hookrails_serve(tmp_path: Path) -> None:
    """The http-hook setup docs/hosts.md gives: `install --http`, then `hookrails serve`."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(AGENT_YAML)
    proc, url = _serve(project)
    try:
        settings = claude(project, "install", "-c", "agent.yaml", "--http", url)
        handler = settings["hooks"]["PreToolUse"][0]["hooks"][0]
        assert handler["type"] == "http" and handler["url"].startswith(url)
        denied = tool_use("Bash", {"command": "rm -f gone.txt && touch denied.txt"}, id="toolu_rm")
        allowed = tool_use("Bash", {"command": "touch allowed.txt"}, id="toolu_ok")
        run = run_claude(
            [denied, allowed, "Finished, I think.", "All checked. <promise>DONE</promise>"],
            tmp_path,
            settings=settings,
        )
    finally:
        proc.terminate()
        proc.wait(30)

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
    assert calls == [("toolu_rm", "denied"), ("toolu_ok", "ok")]
    assert stops == [("block",), ("allow",)]
