"""``hookrails hook`` takes every one of Claude Code's 34 events: accepted, recorded,
answered, and failing (exit 2, exit 1, or a JSON deny) as Claude reads each event."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrails._event_table import NAMES
from guardrails.events import TOOL_EVENTS
from tests.processes.test_hook_command import env, hook, one_line, payload, pycache, write


def _connect(ledger: Path) -> sqlite3.Connection:
    """The ledger, read as another process would: what the hook processes journaled is
    imported first (``guardrails.ledger.journal``), as every hookrails reader does."""
    from tests._db import catch_up

    catch_up(ledger)
    return sqlite3.connect(ledger)


pytestmark = pytest.mark.slow  # each test starts hook processes

__all__ = ["env", "pycache"]  # fixtures, imported for this module's tests

WIRE = ["Stop" if n == "AgentStop" else n for n in NAMES]

OBSERVE = """\
from guardrails import HookResult


def observe(event, ctx):
    return None


def make_worktree(event, ctx):
    if event.name == "forbidden":
        return HookResult.block("no worktree for that")
    return HookResult(claude={"worktreePath": "/tmp/worktrees/" + event.name})


def slow(event, ctx):
    import time

    time.sleep(30)
"""


def every_event_definition() -> str:
    lines = ["name: observer", "hooks:"]
    for wire in WIRE:
        lines += [f"  {wire}:", "    - hooks: [hooks:observe]"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def observer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("observer")
    return write(folder, {"agent.yaml": every_event_definition(), "hooks.py": OBSERVE})


@pytest.mark.parametrize("wire", WIRE)
def test_every_claude_event_is_accepted_recorded_and_answered(
    wire: str, observer: Path, env: dict[str, str], tmp_path: Path
) -> None:
    ledger = tmp_path / "ledger.db"
    stdin = payload(wire, observer)
    args = ["--config", str(observer / "agent.yaml"), "--event", wire, "--ledger", str(ledger)]
    run = hook("module", *args, stdin=stdin, cwd=observer, env=env)
    assert run.code == 0, run.err
    if wire in ("WorktreeCreate", "PreCompact"):  # answered as text, and no hook gave any
        assert run.out == "\n"
    else:
        assert run.answer == {}
    name = "AgentStop" if wire == "Stop" else wire
    with _connect(ledger) as db:
        runs = db.execute("SELECT event, hook, outcome FROM hook_runs").fetchall()
        if name in TOOL_EVENTS:
            rows = db.execute("SELECT tool_name FROM tool_calls").fetchall()
            assert rows == [(stdin["tool_name"],)]
        else:
            rows = db.execute("SELECT event, payload, decision FROM events").fetchall()
            assert [(e, d) for e, _, d in rows] == [(name, "allow")]
            assert json.loads(rows[0][1]) == stdin  # the payload as Claude sent it
    assert runs == [(name, "hooks:observe", "noop")]


BROKEN = "name: broken\nhooks:\n  {event}:\n    - {policy}hooks: [missing_module:hook]\n"


@pytest.mark.parametrize(
    ("wire", "policy", "code", "answer"),
    [
        ("PreToolUse", "", 2, None),
        ("PreSkillShellCommand", "", 2, None),
        ("UserPromptExpansion", "", 2, None),
        ("ConfigChange", "on_failure: block\n      ", 2, None),
        ("TaskCreated", "on_failure: block\n      ", 2, None),
        ("Stop", "on_failure: block\n      ", 2, None),
        ("PermissionRequest", "on_failure: block\n      ", 0, "deny"),
        ("PermissionRequest", "", 1, None),
        ("ConfigChange", "", 1, None),
        ("Notification", "on_failure: block\n      ", 1, None),
        ("SessionStart", "on_failure: block\n      ", 1, None),
        ("InstructionsLoaded", "on_failure: block\n      ", 1, None),
    ],
)
def test_an_undecided_event_fails_as_claude_reads_that_event(
    wire: str,
    policy: str,
    code: int,
    answer: str | None,
    env: dict[str, str],
    tmp_path: Path,
) -> None:
    """Exit 2 where Claude lets a hook refuse; exit 1 where it cannot (the line is shown,
    the action goes ahead); a PermissionRequest refuses with its JSON deny, since Claude
    ignores exit 2 there."""
    write(tmp_path, {"agent.yaml": BROKEN.format(event=wire, policy=policy)})
    args = ["--config", str(tmp_path / "agent.yaml"), "--event", wire, "--no-ledger"]
    run = hook("module", *args, stdin=payload(wire, tmp_path), cwd=tmp_path, env=env)
    assert run.code == code, run.err
    line = one_line(run.err)
    assert "cannot load the definition" in line
    if answer is None:
        assert run.out == ""
        assert ("fails open" in line) == (code == 1)
    else:
        decision = run.answer["hookSpecificOutput"]["decision"]
        assert decision == {"behavior": "deny", "message": line}


def test_a_permission_request_the_watchdog_answers_is_denied_on_stdout(
    env: dict[str, str], tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "hooks.py": OBSERVE,
            "agent.yaml": "name: slow\nevent_budget: 0.2\nhooks:\n  PermissionRequest:\n"
            "    - on_failure: block\n      timeout: 0.2\n      hooks: [hooks:slow]\n",
        },
    )
    args = ["--config", str(tmp_path / "agent.yaml"), "--no-ledger"]
    stdin = payload("PermissionRequest", tmp_path)
    run = hook("module", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 0, run.err
    assert run.answer["hookSpecificOutput"]["decision"]["behavior"] == "deny"
    assert "no decision within" in one_line(run.err)


@pytest.mark.parametrize(
    ("name", "code", "out"),
    [("fix-login", 0, "/tmp/worktrees/fix-login\n"), ("forbidden", 2, "")],
)
def test_worktree_create_answers_the_path_as_text(
    name: str, code: int, out: str, env: dict[str, str], tmp_path: Path
) -> None:
    """Claude reads a command hook's stdout as the new worktree's path, and any exit but 0
    fails the creation."""
    write(
        tmp_path,
        {
            "hooks.py": OBSERVE,
            "agent.yaml": "name: wt\nhooks:\n  WorktreeCreate:\n"
            "    - hooks: [hooks:make_worktree]\n",
        },
    )
    args = ["--config", str(tmp_path / "agent.yaml"), "--no-ledger"]
    stdin = {**payload("WorktreeCreate", tmp_path), "name": name}
    run = hook("module", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert (run.code, run.out) == (code, out), run.err
    if code:
        assert "no worktree for that" in one_line(run.err)


@pytest.mark.parametrize(
    ("hooks", "code", "out"),
    [
        ("[reinject_instructions]", 0, "keep rule 7"),  # the compaction's instructions, as text
        ("[allow]", 0, ""),  # nothing: "{}" would join the instructions
        ("[reinject_instructions, {use: deny, with: {reason: later}}]", 0, '"decision":"block"'),
    ],
)
def test_pre_compact_answers_the_compactions_instructions_as_text(
    hooks: str, code: int, out: str, env: dict[str, str], tmp_path: Path
) -> None:
    """Claude adds a PreCompact hook's whole stdout to the compaction's custom
    instructions, JSON or not; a refusal is still JSON (``decision: block``)."""
    write(
        tmp_path,
        {"agent.yaml": f"name: c\ninstructions: keep rule 7\nhooks:\n  PreCompact:\n"
         f"    - hooks: {hooks}\n"},
    )  # fmt: skip
    args = ["--config", str(tmp_path / "agent.yaml"), "--no-ledger"]
    run = hook("module", *args, stdin=payload("PreCompact", tmp_path), cwd=tmp_path, env=env)
    assert run.code == code, run.err
    assert out in run.out if out else run.out == "\n"
    if "block" not in out:
        assert not run.out.lstrip().startswith("{")


@pytest.mark.parametrize("wire", ["PermissionRequest", "PreSkillShellCommand"])
def test_argument_rules_of_a_definition_apply_to_the_other_tool_events(
    wire: str, env: dict[str, str], tmp_path: Path
) -> None:
    write(
        tmp_path,
        {
            "agent.yaml": f"name: a\nhooks:\n  {wire}:\n    - matcher: 'Bash(git push *)'\n"
            "      hooks: [{use: deny, with: {reason: no pushing}}]\n"
        },
    )
    args = ["--config", str(tmp_path / "agent.yaml"), "--no-ledger"]
    push = payload(wire, tmp_path, tool_name="Bash", tool_input={"command": "git push origin x"})
    status = {**push, "tool_input": {"command": "git status"}}
    denied = hook("module", *args, stdin=push, cwd=tmp_path, env=env)
    allowed = hook("module", *args, stdin=status, cwd=tmp_path, env=env)
    assert allowed.answer == {}
    out: dict[str, Any] = denied.answer
    assert "no pushing" in json.dumps(out)


def test_a_stop_failure_row_says_which_api_error_ended_the_turn(
    env: dict[str, str], tmp_path: Path
) -> None:
    """The error type and Claude's message are the event's reason: ``SELECT reason FROM
    events WHERE event = 'StopFailure'`` reads what went wrong."""
    write(tmp_path, {"agent.yaml": "name: o\nhooks:\n  StopFailure:\n    - hooks: [allow]\n"})
    ledger = tmp_path / "ledger.db"
    args = ["--config", str(tmp_path / "agent.yaml"), "--ledger", str(ledger)]
    stdin = payload("StopFailure", tmp_path)
    run = hook("module", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 0 and run.answer == {}, run.err
    with _connect(ledger) as db:
        found = db.execute(
            "SELECT payload ->> 'error', reason, decision FROM events WHERE event = 'StopFailure'"
        ).fetchall()
    assert found == [("rate_limit", f"rate_limit: {stdin['error_details']}", "allow")]


RETRY = """\
from guardrails import HookResult


def retry_reads(event, ctx):
    return HookResult(claude={"retry": event.tool_input.get("command", "").startswith("cat ")})
"""


@pytest.mark.parametrize(("command", "retry"), [("cat notes.txt", True), ("rm -rf /tmp/x", False)])
def test_permission_denied_answers_retry(
    command: str, retry: bool, env: dict[str, str], tmp_path: Path
) -> None:
    """Auto mode's denial (PermissionDenied) gets ``retry`` from a privileged hook, and the
    event is recorded with Claude's reason for the denial."""
    write(
        tmp_path,
        {
            "hooks.py": RETRY,
            "agent.yaml": "name: r\nhooks:\n  PermissionDenied:\n    - matcher: Bash\n"
            "      hooks: [{use: hooks:retry_reads}]\n",
        },
    )
    ledger = tmp_path / "ledger.db"
    args = ["--config", str(tmp_path / "agent.yaml"), "--ledger", str(ledger)]
    stdin = payload("PermissionDenied", tmp_path, tool_input={"command": command})
    run = hook("module", *args, stdin=stdin, cwd=tmp_path, env=env)
    assert run.code == 0, run.err
    assert run.answer == {
        "hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": retry}
    }
    with _connect(ledger) as db:
        found = db.execute(
            "SELECT payload ->> '$.tool_input.command', payload ->> 'reason' FROM events"
        ).fetchall()
    assert found == [(command, "Deletes files outside the project")]
