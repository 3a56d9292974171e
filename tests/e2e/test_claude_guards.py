"""The ways around PreToolUse, closed, through the real Claude Code CLI 2.1.332 (offline),
with the handlers ``hookrails claude install`` writes:

* a skill's inline shell command (``!`cmd``` in SKILL.md) runs outside PreToolUse: the CLI
  fires PreSkillShellCommand, and PreToolUse's ``deny_commands`` judges it there, with no
  binding of its own (a marker file proves the denied command never ran);
* a settings file edited mid-session fires ConfigChange, and ``protect_guard_settings``
  (installed by default) blocks an edit that switches the hooks off; the guard keeps
  denying afterwards.
"""

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
from tests._db import catch_up, rows
from tests.e2e.test_claude_events import run_session

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

AGENT_YAML = """\
name: guards
ledger: ledger.db
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{use: deny_commands, with: {rules: ["touch *denied*"], include_defaults: true}}]
"""


def installed(tmp_path: Path, *args: str) -> tuple[Path, dict[str, Any], dict[str, str]]:
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(AGENT_YAML)
    env = {"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")}
    full = {**os.environ, **env}
    full.pop("HOOKRAILS_LEDGER", None)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "--config", "agent.yaml", *args],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return project, json.loads((project / ".claude" / "settings.json").read_text()), env


def skill(project: Path, name: str, command: str) -> None:
    folder = project / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: marks the project\nallowed-tools: Bash\n---\n"
        f"State: !`{command}`\nSay done.\n"
    )


def test_a_skills_inline_shell_command_is_judged_by_pre_tool_uses_guards(
    tmp_path: Path,
) -> None:
    project, settings, env = installed(tmp_path)
    assert "PreSkillShellCommand" in settings["hooks"]  # no binding of its own was needed
    skill(project, "good", "touch ok-marker")
    skill(project, "bad", "touch denied-marker")
    session = run_session(
        lambda request: "Done.", tmp_path, ["/good", "/bad"], settings=settings, env=env,
        allowed_tools=["Bash"],
    )  # fmt: skip
    assert (project / "ok-marker").exists()
    assert not (project / "denied-marker").exists()  # the skill's command never ran
    recorded = rows(
        project / "ledger.db",
        "SELECT payload ->> '$.tool_input.command' AS command, decision FROM events "
        "WHERE event = 'PreSkillShellCommand' ORDER BY id",
    )
    assert [(r["command"], r["decision"]) for r in recorded] == [
        ("touch ok-marker", "allow"),
        ("touch denied-marker", "block"),
    ]
    assert rows(project / "ledger.db", "SELECT id FROM tool_calls") == []  # no call rows
    told = session.requests[-1].text()
    assert "not run: blocked by hook" in told and "touch *denied*" in told


def _config_changes(db: Path) -> int:
    try:
        catch_up(db)  # what the hook processes journaled, as every hookrails reader does
        with sqlite3.connect(db) as conn:
            n: int = conn.execute(
                "SELECT count(*) FROM events WHERE event = 'ConfigChange'"
            ).fetchone()[0]
            return n
    except sqlite3.Error:
        return 0


def test_a_settings_edit_that_switches_the_hooks_off_is_blocked(tmp_path: Path) -> None:
    project, settings, env = installed(tmp_path)
    assert "--protect-settings" in settings["hooks"]["ConfigChange"][0]["hooks"][0]["args"]
    local = project / ".claude" / "settings.local.json"

    def script(request: MessagesRequest) -> Any:
        if request.turn == 0:  # something the agent started edits the settings meanwhile
            local.write_text(json.dumps({"disableAllHooks": True}))
            return tool_use("Bash", {"command": "echo edited"}, id="toolu_1")
        if request.turn == 1:  # the CLI noticed the edit (its ConfigChange was decided)
            deadline = time.monotonic() + 30
            while not _config_changes(project / "ledger.db") and time.monotonic() < deadline:
                time.sleep(0.1)
            return tool_use("Bash", {"command": "touch denied-marker"}, id="toolu_2")
        return "Done."

    run_session(script, tmp_path, ["go"], settings=settings, env=env, allowed_tools=["Bash"])
    db = project / "ledger.db"
    (change,) = rows(
        db, "SELECT decision, reason, payload FROM events WHERE event = 'ConfigChange'"
    )
    assert change["decision"] == "block"
    assert "sets disableAllHooks: true" in change["reason"]
    assert json.loads(change["payload"])["file_path"] == str(local)
    assert not (project / "denied-marker").exists()  # the guard still decides
    calls = rows(db, "SELECT tool_call_id, decision FROM tool_calls ORDER BY id")
    assert [(c["tool_call_id"], c["decision"]) for c in calls] == [
        ("toolu_1", "allow"),
        ("toolu_2", "deny"),
    ]
