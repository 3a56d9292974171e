"""Every payload a released Claude Code sends is accepted: real payloads from public hook
logs (CLI 1.0.41 to 2.1.2xx), captured from real CLIs by public projects (2.1.259, 2.1.285)
and from the CLI 2.1.332 itself, one per shape (``tests/fixtures/claude_payloads/versions``,
with their sources)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails.events import Event, event_class, wire_fields
from guardrails.testing import RecordingHook
from tests._db import value
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
        assert entry["payloads"] >= 1
        # a hook log (logs/<event>.json), or a capture that says how the real CLI was run
        assert source["path"].endswith(".json") or entry.get("captured"), shape_id(entry)


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


@pytest.mark.parametrize("entry", SHAPES, ids=shape_id)
def test_each_shape_parses_into_its_typed_class_with_its_fields_reachable(
    entry: dict[str, Any],
) -> None:
    payload = entry["payload"]
    event = Event.from_claude(copy.deepcopy(payload))
    assert type(event) is event_class(entry["event"])
    typed = set(payload) - set(event.extra)
    assert typed >= set(payload) & set(wire_fields(entry["event"]))  # never an extra
    for name in typed:
        assert getattr(event, name) == payload[name], name
    for name in event.extra:  # a field newer than this table is kept as it came
        assert event.extra[name] == payload[name]


#: the event types only captures of real CLIs hold (no public hook log has them), one
#: payload each; PermissionDenied, TeammateIdle, Elicitation, ElicitationResult,
#: WorktreeRemove and DirectoryAdded were found in none (versions/README.md)
CAPTURED_ONLY = {
    e["event"]: e
    for e in reversed(SHAPES)
    if e.get("captured") and all(o.get("captured") for o in SHAPES if o["event"] == e["event"])
}


def test_captures_hold_every_event_type_the_public_logs_lack() -> None:
    assert set(CAPTURED_ONLY) == {
        "ConfigChange",
        "CwdChanged",
        "FileChanged",
        "InstructionsLoaded",
        "MessageDisplay",
        "PostCompact",
        "PostModelSwitch",
        "PostToolBatch",
        "PreModelSwitch",
        "Setup",
        "StopFailure",
        "TaskCompleted",
        "TaskCreated",
        "UserPromptExpansion",
        "WorktreeCreate",
    }


OBSERVER = """\
import os

def seen(event, ctx):
    open(os.path.join(event.cwd, "ran-" + event.hook_event_name), "w").close()
"""


@pytest.mark.slow  # a `hookrails hook` process per event
@pytest.mark.parametrize("event", sorted(CAPTURED_ONLY))
def test_a_hook_process_answers_a_captured_payload_of_each_new_event(
    event: str, tmp_path: Path
) -> None:
    """The real payload on stdin of ``hookrails hook`` (its ``cwd`` moved to the test's
    folder): exit 0 with a valid answer, the bound hook ran, the event is in the ledger."""
    (tmp_path / "obs_hooks.py").write_text(OBSERVER)
    (tmp_path / "agent.yaml").write_text(
        f"name: observer\nhooks:\n  {event}:\n    - hooks: [obs_hooks:seen]\n"
    )
    payload = {**CAPTURED_ONLY[event]["payload"], "cwd": str(tmp_path)}
    ledger = tmp_path / "ledger.db"
    proc = subprocess.run(
        [sys.executable, "-m", "guardrails", "hook", "--config", "agent.yaml",
         "--ledger", str(ledger)],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=tmp_path,
        timeout=60,
    )  # fmt: skip
    out = proc.stdout.decode()
    assert (proc.returncode, proc.stderr.decode()) == (0, "")
    if event == "WorktreeCreate":  # the answer is the worktree's path, as text: none here
        assert out.strip() == ""
    else:
        assert isinstance(json.loads(out), dict)
    assert (tmp_path / f"ran-{event}").exists()
    assert value(ledger, "select count(*) from events where event = ?", event) == 1
