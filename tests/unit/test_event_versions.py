"""Every payload a released Claude Code sends is accepted: real payloads from public hook
logs (CLI 1.0.41 to 2.1.2xx) and from the CLI 2.1.332 itself, one per shape
(``tests/fixtures/claude_payloads/versions``, with their sources)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails.events import Event
from guardrails.testing import RecordingHook
from tests._paths import FIXTURES_DIR

VERSIONS = FIXTURES_DIR / "claude_payloads" / "versions"
SHAPES: list[dict[str, Any]] = json.loads((VERSIONS / "shapes.json").read_text(encoding="utf-8"))
CURRENT: list[dict[str, Any]] = json.loads(
    (VERSIONS / "cli-2.1.332.json").read_text(encoding="utf-8")
)
#: fields hookrails reads into typed attributes, whichever CLI sent them
BASE = {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}


def shape_id(entry: dict[str, Any]) -> str:
    return f"{entry['event']}[{entry['cli']}]({len(entry['fields'])} fields)"


def test_every_entry_names_its_source_and_its_fields() -> None:
    for entry in SHAPES:
        assert sorted(entry["payload"]) == entry["fields"], shape_id(entry)
        assert entry["payload"]["hook_event_name"] == entry["event"]
        source = entry["source"]
        assert source["repo"] in entry["repos"] and len(source["commit"]) == 40
        assert source["path"].endswith(".json") and entry["payloads"] >= 1


@pytest.mark.parametrize("entry", SHAPES, ids=shape_id)
def test_a_payload_an_older_or_newer_cli_sent_is_accepted_and_written_back(
    entry: dict[str, Any],
) -> None:
    payload = entry["payload"]
    event = Event.from_claude(copy.deepcopy(payload))
    assert event.to_claude() == {"session_id": "", "cwd": "", **payload}
    typed = set(payload) - set(event.extra)
    assert BASE & set(payload) <= typed  # the base fields are never mistaken for extras


@pytest.mark.parametrize("entry", CURRENT, ids=lambda e: f"{e['event']}-{e['via']}")
def test_a_payload_of_cli_2_1_332_is_accepted_with_every_field_typed(
    entry: dict[str, Any],
) -> None:
    event = Event.from_claude(copy.deepcopy(entry["payload"]))
    assert event.to_claude() == entry["payload"]
    assert event.extra == {}, f"untyped fields: {sorted(event.extra)}"


OLD_SUBAGENT_STOPS = [
    e for e in SHAPES if e["event"] == "SubagentStop" and "agent_type" not in e["fields"]
]


def test_the_public_logs_hold_subagent_stops_without_agent_type() -> None:
    assert {e["cli"] for e in OLD_SUBAGENT_STOPS} >= {
        "1.0.54 ≤ CLI < 2.0.42",
        "2.0.42 ≤ CLI < 2.1.47",
    }


@pytest.mark.parametrize("entry", OLD_SUBAGENT_STOPS, ids=shape_id)
def test_subagent_stop_guardrails_run_for_clis_that_send_no_agent_type(
    entry: dict[str, Any],
) -> None:
    """They were rejected ("agent_type: missing ... fails open"), so SubagentStop hooks
    silently never ran on those CLIs."""
    hook = RecordingHook()
    definition = AgentDefinition(hooks={"SubagentStop": [HookMatcher(hooks=[hook])]})
    Guard(definition, ledger=False).emit_sync(Event.from_claude(dict(entry["payload"])))
    assert hook.called
    assert hook.events[0].agent_type is None and hook.events[0].subject == ""
