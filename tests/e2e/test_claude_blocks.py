"""Blocks on PostToolBatch and UserPromptExpansion, through the real Claude Code CLI 2.1.332
(offline), with the command hooks ``hookrails claude install`` writes.

What Claude does with each block (read from the 2.1.332 binary, held here):

* PostToolBatch: the batch's tools have run; the agentic loop stops before the next model
  request (the turn ends as ``hook_stopped``). The reason is kept in the transcript as a
  ``hook_stopped_continuation`` attachment, which the model reads on the session's next
  prompt as ``PostToolBatch hook stopped continuation: <reason>``.
* UserPromptExpansion: the slash command is not expanded and nothing is sent to the model;
  the user is shown ``UserPromptExpansion operation blocked by hook:\\n<reason>`` and the
  original prompt (an informational system message).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import SystemMessage

from guardrails.testing import MessagesRequest, tool_use
from tests._claude_cli import run_claude
from tests._db import rows
from tests.e2e.test_claude_events import Session, run_session
from tests.e2e.test_claude_gates import install
from tests.e2e.test_claude_install import settled

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


# --- PostToolBatch ----------------------------------------------------------------------------

BATCH_YAML = """\
name: batches
ledger: ledger.db
hooks:
  PostToolBatch:
    - hooks: [batch_rules:no_writes_in_a_batch]
"""

BATCH_RULES = '''\
"""A batch that wrote a file ends the agentic loop."""

from guardrails import HookResult


def no_writes_in_a_batch(event, ctx):
    if any(call.get("tool_name") == "Write" for call in event.tool_calls):
        return HookResult.block("BATCH-REFUSED: review the written file before going on")
    return None
'''

BATCH_REASON = "BATCH-REFUSED: review the written file before going on"
AFTER_PROMPT = "What happened?"


def batch_script(cwd: Path) -> Any:
    """Turn 0: a batch of two Bash calls (let through); turn 1: Bash and Write (blocked);
    turn 2 is the answer to the next prompt, never to the blocked batch."""
    steps: list[Any] = [
        [
            tool_use("Bash", {"command": "echo one"}, id="toolu_a"),
            tool_use("Bash", {"command": "echo two"}, id="toolu_b"),
        ],
        [
            tool_use("Bash", {"command": "echo three"}, id="toolu_c"),
            tool_use("Write", {"file_path": str(cwd / "notes.txt"), "content": "x"}, id="toolu_d"),
        ],
    ]

    def script(request: MessagesRequest) -> Any:
        return steps[request.turn] if request.turn < len(steps) else "Stopped by the batch hook."

    return script


@pytest.fixture(scope="module")
def batches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Path]:
    tmp = tmp_path_factory.mktemp("batches")
    (tmp / "project").mkdir()
    (tmp / "project" / "batch_rules.py").write_text(BATCH_RULES, encoding="utf-8")
    settings, env, db = install(tmp, BATCH_YAML)
    session = run_session(
        batch_script(tmp / "project"), tmp, ["Take notes.", AFTER_PROMPT], settings=settings,
        env=env, allowed_tools=["Bash", "Write"],
    )  # fmt: skip
    return session, db


def test_a_batch_hookrails_lets_through_goes_on_to_the_next_request(
    batches: tuple[Session, Path],
) -> None:
    session, _ = batches
    second = session.requests[1]
    assert [second.result_for(i) is not None for i in ("toolu_a", "toolu_b")] == [True, True]
    assert "stopped continuation" not in second.text()


def test_a_blocked_batch_ends_the_loop_before_the_next_request(
    batches: tuple[Session, Path],
) -> None:
    """The blocked batch's tools ran, but the model is not asked again for that prompt:
    the next request is the next prompt's, and it carries the reason."""
    session, _ = batches
    assert (session.cwd / "notes.txt").read_text() == "x"  # the batch ran before its hook
    assert len(session.requests) == 3
    last = session.requests[2]
    assert last.turn == 2 and AFTER_PROMPT in last.last_text()
    assert f"PostToolBatch hook stopped continuation: {BATCH_REASON}" in last.text()


def test_each_batch_and_its_block_are_recorded(batches: tuple[Session, Path]) -> None:
    _, db = batches
    found = rows(
        db,
        "SELECT e.payload, e.decision, e.reason, h.outcome FROM events AS e "
        "JOIN hook_runs AS h ON h.event_id = e.id WHERE e.event = 'PostToolBatch' ORDER BY e.id",
    )
    batches_seen = [
        [c["tool_use_id"] for c in json.loads(r["payload"])["tool_calls"]] for r in found
    ]
    assert batches_seen == [["toolu_a", "toolu_b"], ["toolu_c", "toolu_d"]]
    assert [(r["decision"], r["reason"], r["outcome"]) for r in found] == [
        ("allow", None, "noop"),
        ("block", BATCH_REASON, "block"),
    ]


# --- UserPromptExpansion ----------------------------------------------------------------------

COMMANDS_YAML = """\
name: commands
ledger: ledger.db
hooks:
  UserPromptExpansion:
    - matcher: deploy
      hooks: [{use: deny, with: {reason: "DEPLOY-REFUSED: deploys go through the release train"}}]
"""

DEPLOY_REASON = "DEPLOY-REFUSED: deploys go through the release train"
COMMANDS = {
    "deploy": "DEPLOY-BODY: deploy $ARGUMENTS now.",
    "review": "REVIEW-BODY: review $ARGUMENTS carefully.",
}


@pytest.fixture(scope="module")
def expansions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Path]:
    """One session: ``/deploy prod`` (blocked), then ``/review the parser`` (expanded)."""
    tmp = tmp_path_factory.mktemp("expansions")
    commands = tmp / "project" / ".claude" / "commands"
    commands.mkdir(parents=True)
    for name, body in COMMANDS.items():
        text = f"---\ndescription: {name}\n---\n{body}\n"
        (commands / f"{name}.md").write_text(text, encoding="utf-8")
    settings, env, db = install(tmp, COMMANDS_YAML)
    session = run_session(
        lambda request: "Reviewed.", tmp, ["/deploy prod", "/review the parser"],
        settings=settings, env=env,
    )  # fmt: skip
    return session, db


def test_a_blocked_expansion_never_reaches_the_model(
    expansions: tuple[Session, Path],
) -> None:
    session, _ = expansions
    assert len(session.requests) == 1  # the /review prompt's alone
    seen = session.requests[0].text()
    assert "REVIEW-BODY: review the parser carefully." in seen
    assert "DEPLOY-BODY" not in seen and "deploy prod" not in seen


def test_the_user_is_told_why_the_command_did_not_expand(
    expansions: tuple[Session, Path],
) -> None:
    session, _ = expansions
    shown = [
        m.data.get("content", "")
        for m in session.messages
        if isinstance(m, SystemMessage) and m.subtype == "informational"
    ]
    assert any(
        text.startswith("UserPromptExpansion operation blocked by hook:")
        and DEPLOY_REASON in text
        and "/deploy prod" in text
        for text in shown
    ), shown


def test_each_expansion_is_recorded_with_its_command(expansions: tuple[Session, Path]) -> None:
    _, db = expansions
    found = rows(
        db,
        "SELECT payload ->> 'command_name' AS command, payload ->> 'command_args' AS args, "
        "payload ->> 'expansion_type' AS kind, decision, reason FROM events "
        "WHERE event = 'UserPromptExpansion' ORDER BY id",
    )
    assert [(r["command"], r["args"], r["kind"], r["decision"], r["reason"]) for r in found] == [
        ("deploy", "prod", "slash_command", "block", DEPLOY_REASON),
        ("review", "the parser", "slash_command", "allow", None),
    ]


# --- a bound PostToolBatch keeps the ledger whole -----------------------------------------------

ASK_AND_BATCH_YAML = """\
name: asks
ledger: ledger.db
hooks:
  PreToolUse:
    - matcher: "Bash(touch asked*)"
      hooks: [{use: ask, with: {reason: "needs a human"}}]
  PostToolBatch:
    - hooks: [allow]
"""


def test_a_call_claude_never_ran_is_closed_when_the_definition_binds_post_tool_batch(
    tmp_path: Path,
) -> None:
    """A deciding PostToolBatch handler decides; the record-only one still closes the row
    of the call ``claude -p`` could not ask anybody about."""
    settings, env, db = install(tmp_path, ASK_AND_BATCH_YAML)
    steps: list[Any] = [
        [tool_use("Bash", {"command": "touch asked.txt"}, id="toolu_ask"),
         tool_use("Bash", {"command": "touch ok.txt"}, id="toolu_ok")],
    ]  # fmt: skip

    def model(request: MessagesRequest) -> Any:
        if request.turn < len(steps):
            return steps[request.turn]
        time.sleep(1.0)  # a model takes a moment: the async record-only hooks run meanwhile
        return "Done."

    run = run_claude(model, tmp_path, settings=settings, env=env)
    assert not (run.cwd / "asked.txt").exists() and (run.cwd / "ok.txt").exists()
    closed = settled(db, 2)
    assert closed == {
        "toolu_ask": ("Bash", "ask", "interrupted"),
        "toolu_ok": ("Bash", "allow", "ok"),
    }
    batch = rows(db, "SELECT decision FROM events WHERE event = 'PostToolBatch'")
    assert [r["decision"] for r in batch] == ["allow"]
