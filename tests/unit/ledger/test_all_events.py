"""Every Claude event reaches the ledger: tool events in ``tool_calls``, the others in
``events``, with their hook runs; the views read them."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails._event_table import NAMES
from guardrails.events import TOOL_EVENTS, Event
from tests._paths import FIXTURES_DIR


def payload(name: str) -> dict[str, Any]:
    wire = "Stop" if name == "AgentStop" else name
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{wire}.json").read_text(encoding="utf-8")
    )
    return data


def record(ledger_path: str, name: str, answer: Any) -> sqlite3.Connection:
    definition = AgentDefinition(
        name="observer", hooks={name: [HookMatcher(hooks=[lambda e, c: answer])]}
    )
    guard = Guard(definition, ledger=Ledger(ledger_path))
    guard.emit_sync(Event.from_claude(payload(name)))
    guard.ledger.close()  # type: ignore[union-attr]
    return sqlite3.connect(ledger_path)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in TOOL_EVENTS])
def test_every_other_event_is_one_events_row_with_its_hook_run(ledger_path: str, name: str) -> None:
    with record(ledger_path, name, None) as db:
        rows = db.execute("SELECT event, payload, decision, agent_type FROM events").fetchall()
        runs = db.execute("SELECT event, outcome, event_id IS NOT NULL FROM hook_runs").fetchall()
        summary = db.execute("SELECT session_id FROM session_summary").fetchall()
    assert [(e, d) for e, _, d, _ in rows] == [(name, "allow")]
    assert json.loads(rows[0][1]) == payload(name)
    assert runs == [(name, "noop", 1)]
    assert summary == [(payload(name)["session_id"],)]


@pytest.mark.parametrize(
    ("name", "answer", "decision", "outcome"),
    [
        ("PermissionRequest", HookResult.deny("not main"), "block", "deny"),
        ("PermissionRequest", HookResult.allow(), "allow", "allow"),
        ("PermissionRequest", HookResult.halt("stop"), "halt", "halt"),
        ("PreSkillShellCommand", HookResult.deny("no"), "block", "deny"),
        ("PreSkillShellCommand", HookResult.defer("later"), "allow", "ask"),
        ("PreModelSwitch", HookResult.ask("costly"), "allow", "ask"),
        ("ConfigChange", HookResult.block("managed"), "block", "block"),
        ("Notification", HookResult.block("ignored"), "allow", "block"),
        ("SessionStart", {"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                  "sessionTitle": "t"}}, "allow", "noop"),
    ],
)  # fmt: skip
def test_the_events_row_says_whether_the_event_was_refused(
    ledger_path: str, name: str, answer: Any, decision: str, outcome: str
) -> None:
    with record(ledger_path, name, answer) as db:
        assert db.execute("SELECT decision FROM events").fetchall() == [(decision,)]
        assert db.execute("SELECT outcome FROM hook_runs").fetchall() == [(outcome,)]


def test_a_deferred_tool_call_is_recorded_as_the_hosts_ask(ledger_path: str) -> None:
    with record(ledger_path, "PreToolUse", HookResult.defer("the host decides")) as db:
        call = db.execute("SELECT decision, status, reason FROM tool_calls").fetchall()
        runs = db.execute("SELECT outcome FROM hook_runs").fetchall()
    assert call == [("ask", "pending", "the host decides")]
    assert runs == [("ask",)]
