"""Shared fixtures of the ledger tests: a definition that denies ``rm -rf`` and halts on
``halt``, for the journal and write-behind tests (what needs no session state, and what does)."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrails.definition.model import AgentDefinition
from guardrails.events import Event

AGENT = """\
name: journaled
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks: [{use: deny, with: {reason: "rm -rf is not allowed"}}]
    - matcher: "Bash(halt*)"
      hooks: [journal_test_hooks:halt]
"""
HOOKS = """\
from guardrails import HookResult


def halt(event, ctx):
    return HookResult.halt("stop now")
"""


@pytest.fixture
def definition(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AgentDefinition:
    """``agent.yaml`` in ``tmp_path``, its halting hook importable from there."""
    (tmp_path / "journal_test_hooks.py").write_text(HOOKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "agent.yaml").write_text(AGENT)
    return AgentDefinition.from_file(tmp_path / "agent.yaml")


def bash_call(command: str, call: str, session: str) -> Event:
    """A PreToolUse of ``Bash`` running ``command``, as Claude Code sends it."""
    return Event.from_claude(
        {
            "hook_event_name": "PreToolUse",
            "session_id": session,
            "cwd": "/tmp",
            "tool_name": "Bash",
            "tool_input": {"command": command},
            "tool_use_id": call,
        }
    )
