"""The events beyond tool calls, prompts and stops, through the real Claude Code CLI 2.1.332
(offline): SessionStart matched on its source, compaction (PreCompact, PostCompact, the
SessionStart it triggers), PermissionRequest answered by a hook and by the approver
(``can_use_tool``), and the payloads each event really carries.

Compaction runs in a streaming session (``ClaudeSDKClient``): a first prompt, then
``/compact``, then a prompt the compacted conversation answers. Notification, StopFailure,
Setup and the other events need a terminal, an API error or a team: the CLI cannot be
made to send them offline here (docs/hosts.md says which events reach which host).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.adapters.claude_agent_sdk import to_can_use_tool, to_sdk_hooks
from guardrails.events import Event
from guardrails.testing import FakeMessagesAPI, MessagesRequest, tool_use
from tests._claude_cli import RUN_TIMEOUT, cli_path, write_settings
from tests._db import rows

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SUMMARY = "Summary: the user said hello and asked for notes."


def compacting_script(request: MessagesRequest) -> Any:
    """Answer prompts; answer the compaction's summary request with SUMMARY."""
    if "summar" in request.text().lower() and "conversation" in request.text().lower():
        return SUMMARY
    return f"Answer {request.turn}."


class Session:
    """One CLI session of several prompts, and what it did."""

    def __init__(self, api: FakeMessagesAPI, cwd: Path) -> None:
        self.api = api
        self.cwd = cwd
        self.stderr: list[str] = []
        self.messages: list[Any] = []

    @property
    def requests(self) -> list[MessagesRequest]:
        return self.api.requests


def run_session(
    script: Any,
    tmp_path: Path,
    prompts: Sequence[str],
    *,
    settings: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Session:
    cwd = tmp_path / "project"
    home = tmp_path / "home"
    cwd.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        write_settings(cwd, settings)
    api = FakeMessagesAPI(script)
    session = Session(api, cwd)

    async def main() -> None:
        opts = ClaudeAgentOptions(
            cwd=str(cwd),
            cli_path=str(cli_path()),
            env={**api.env(home), **(env or {})},
            setting_sources=["project"] if settings is not None else [],
            permission_mode="default",
            stderr=session.stderr.append,
            **options,
        )
        async with asyncio.timeout(RUN_TIMEOUT), ClaudeSDKClient(opts) as client:
            for prompt in prompts:
                await client.query(prompt)
                async for message in client.receive_response():
                    session.messages.append(message)

    with api:
        asyncio.run(main())
    api.raise_errors()
    return session


# --- command hooks: SessionStart on its source, compaction, SessionEnd ---------------------

AGENT_YAML = """\
name: events
ledger: ledger.db
hooks:
  SessionStart:
    - matcher: startup
      hooks: [{use: inject, with: {text: "STARTUP-CONTEXT"}}]
    - matcher: compact
      hooks: [{use: inject, with: {text: "AFTER-COMPACT-CONTEXT"}}]
    - matcher: resume
      hooks: [{use: inject, with: {text: "RESUME-CONTEXT"}}]
  PreCompact:
    - matcher: manual
      hooks: [allow]
  PostCompact:
    - hooks: [allow]
  SessionEnd:
    - hooks: [allow]
"""


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Path]:
    tmp = tmp_path_factory.mktemp("installed")
    project = tmp / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(AGENT_YAML)
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(tmp / "cache")}
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
    session = run_session(
        compacting_script,
        tmp,
        ["hello", "/compact keep the notes", "go on"],
        settings=settings,
        env={"HOOKRAILS_CACHE_DIR": str(tmp / "cache")},
    )
    return session, project / "ledger.db"


def test_session_start_hooks_run_by_source(installed: tuple[Session, Path]) -> None:
    _, db = installed
    starts = rows(
        db,
        "SELECT e.payload ->> 'source' AS source, h.matcher FROM events AS e "
        "JOIN hook_runs AS h ON h.event_id = e.id WHERE e.event = 'SessionStart' ORDER BY e.id",
    )
    assert [(r["source"], r["matcher"]) for r in starts] == [
        ("startup", "startup"),
        ("compact", "compact"),
    ]


def test_the_model_reads_each_sources_context_where_it_belongs(
    installed: tuple[Session, Path],
) -> None:
    session, _ = installed
    first, last = session.requests[0].text(), session.requests[-1].text()
    assert "STARTUP-CONTEXT" in first and "AFTER-COMPACT-CONTEXT" not in first
    assert "AFTER-COMPACT-CONTEXT" in last and "RESUME-CONTEXT" not in last


def test_compaction_and_the_session_end_are_recorded(installed: tuple[Session, Path]) -> None:
    _, db = installed
    events = rows(db, "SELECT event, payload, decision FROM events ORDER BY id")
    names = [r["event"] for r in events]
    assert names.count("PreCompact") == names.count("PostCompact") == 1
    assert names[-1] == "SessionEnd"
    post = next(json.loads(r["payload"]) for r in events if r["event"] == "PostCompact")
    assert (post["trigger"], post["compact_summary"]) == ("manual", SUMMARY)
    pre = next(json.loads(r["payload"]) for r in events if r["event"] == "PreCompact")
    assert pre["custom_instructions"] == "keep the notes"


def summary_requests(session: Session) -> list[MessagesRequest]:
    """The requests that ask for the compaction's summary."""
    return [r for r in session.requests if "Additional Instructions:" in r.text()]


def test_a_pre_compact_hook_with_nothing_to_say_adds_nothing_to_the_summarys_instructions(
    installed: tuple[Session, Path],
) -> None:
    """Claude adds a PreCompact command hook's whole stdout to the instructions: a JSON
    ``{}`` there used to reach the summary."""
    session, _ = installed
    asked = summary_requests(session)
    assert asked
    for request in asked:
        tail = request.text().split("Additional Instructions:", 1)[1]
        assert tail.lstrip().startswith("keep the notes") and "{}" not in tail


# --- reinject_instructions: the standing instructions outlive a compaction -----------------

RULES = "RULE-7: answer in exactly three bullet points."

REINJECT_YAML = f"""\
name: standing
ledger: ledger.db
instructions: "{RULES}"
hooks:
  SessionStart:
    - hooks: [reinject_instructions]
  PreCompact:
    - hooks: [reinject_instructions]
  PostCompact:
    - hooks: [allow]
"""


@pytest.fixture(scope="module")
def reinjected(tmp_path_factory: pytest.TempPathFactory) -> tuple[Session, Path]:
    tmp = tmp_path_factory.mktemp("reinjected")
    project = tmp / "project"
    project.mkdir()
    (project / "agent.yaml").write_text(REINJECT_YAML)
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(tmp / "cache")}
    env.pop("HOOKRAILS_LEDGER", None)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "--config", "agent.yaml"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    session = run_session(
        compacting_script, tmp, ["hello", "/compact", "go on"], settings=settings,
        env={"HOOKRAILS_CACHE_DIR": str(tmp / "cache")},
    )  # fmt: skip
    return session, project / "ledger.db"


def test_the_standing_instructions_reach_the_model_at_startup_and_after_compaction(
    reinjected: tuple[Session, Path],
) -> None:
    session, _ = reinjected
    first, last = session.requests[0], session.requests[-1]
    assert RULES in first.system + first.text()
    assert SUMMARY in last.text()  # the compacted conversation...
    assert RULES in last.system + last.text()  # ...and the instructions, after it


def test_the_compaction_is_asked_to_keep_them_word_for_word(
    reinjected: tuple[Session, Path],
) -> None:
    session, _ = reinjected
    asked = summary_requests(session)
    assert asked
    for request in asked:
        tail = request.text().split("Additional Instructions:", 1)[1]
        assert "word for word" in tail and RULES in tail and "{}" not in tail


def test_sdk_callbacks_reinject_on_the_same_channels(tmp_path: Path) -> None:
    """Over the SDK a PreCompact callback's systemMessage is what joins the instructions,
    and SessionStart arrives after /compact."""
    definition = AgentDefinition(
        name="sdk",
        instructions=RULES,
        hooks={
            "SessionStart": [HookMatcher(hooks=["reinject_instructions"])],
            "PreCompact": [HookMatcher(hooks=["reinject_instructions"])],
        },
    )
    guard = Guard(definition, ledger=False)
    session = run_session(
        compacting_script, tmp_path, ["hello", "/compact", "go on"], hooks=to_sdk_hooks(guard)
    )
    asked = summary_requests(session)
    assert asked and all(RULES in r.text().split("Additional Instructions:", 1)[1] for r in asked)
    last = session.requests[-1]
    assert RULES in last.system + last.text()


def test_each_reinjection_is_recorded(reinjected: tuple[Session, Path]) -> None:
    _, db = reinjected
    found = rows(
        db,
        "SELECT e.event, coalesce(e.payload ->> 'source', e.payload ->> 'trigger') AS subject, "
        "h.outcome, h.injected_chars > 0 AS counted FROM events AS e "
        "JOIN hook_runs AS h ON h.event_id = e.id WHERE h.hook = 'reinject_instructions' "
        "ORDER BY e.id",
    )
    assert [(r["event"], r["subject"], r["outcome"], r["counted"]) for r in found] == [
        ("SessionStart", "startup", "inject", 1),
        ("PreCompact", "manual", "inject", 1),
        ("SessionStart", "compact", "inject", 1),
    ]


# --- SDK callbacks: a blocked compaction, PermissionRequest, can_use_tool ---------------------


def test_a_pre_compact_block_keeps_the_conversation_whole(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"

    def not_now(event: Event, ctx: Any) -> HookResult:
        return HookResult.block("not during the review")

    definition = AgentDefinition(
        name="sdk", hooks={"PreCompact": [HookMatcher(matcher="manual", hooks=[not_now])]}
    )
    guard = Guard(definition, ledger=Ledger(db))
    session = run_session(
        compacting_script, tmp_path, ["hello", "/compact"], hooks=to_sdk_hooks(guard)
    )
    assert not any(SUMMARY in str(r.body) for r in session.requests)  # no summary asked for
    recorded = rows(db, "SELECT event, decision, reason FROM events WHERE event LIKE '%Compact'")
    assert [(r["event"], r["decision"], r["reason"]) for r in recorded] == [
        ("PreCompact", "block", "not during the review")
    ]


WRITE_TXT = tool_use("Write", {"file_path": "PLACEHOLDER/notes.txt", "content": "ok"}, id="toolu_t")
WRITE_MD = tool_use("Write", {"file_path": "PLACEHOLDER/notes.md", "content": "no"}, id="toolu_m")


def writing_script(cwd: Path) -> Any:
    calls = []
    for call in (WRITE_TXT, WRITE_MD):
        path = call["input"]["file_path"].replace("PLACEHOLDER", str(cwd))
        calls.append({**call, "input": {**call["input"], "file_path": path}})

    def script(request: MessagesRequest) -> Any:
        return calls[request.turn] if request.turn < len(calls) else "Done."

    return script


def only_text_files(event: Event, ctx: Any) -> HookResult:
    path = str(event.tool_input.get("file_path", ""))  # type: ignore[attr-defined]
    if path.endswith(".txt"):
        return HookResult.allow("text files are fine")
    return HookResult.deny("only .txt files may be written here")


def test_a_permission_request_hook_answers_claudes_permission_dialog(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    definition = AgentDefinition(
        name="sdk",
        hooks={"PermissionRequest": [HookMatcher(matcher="Write", hooks=[only_text_files])]},
    )
    guard = Guard(definition, ledger=Ledger(db))
    cwd = tmp_path / "project"
    session = run_session(
        writing_script(cwd), tmp_path, ["write the notes"], hooks=to_sdk_hooks(guard),
        allowed_tools=["Bash"],
    )  # fmt: skip
    assert (cwd / "notes.txt").read_text() == "ok"
    assert not (cwd / "notes.md").exists()
    denial = session.requests[-1].result_for("toolu_m") or {}
    assert denial.get("is_error") and "only .txt files may be written here" in str(denial)
    asked = rows(
        db,
        "SELECT payload ->> '$.tool_input.file_path' AS path, decision FROM events "
        "WHERE event = 'PermissionRequest' ORDER BY id",
    )
    assert [(r["path"].rsplit("/", 1)[-1], r["decision"]) for r in asked] == [
        ("notes.txt", "allow"),
        ("notes.md", "block"),
    ]


def test_can_use_tool_hands_claudes_own_ask_to_the_approver(tmp_path: Path) -> None:
    db = tmp_path / "ledger.db"
    asked: list[str] = []

    def approver(request: Any) -> str:
        asked.append(request.tool_input["file_path"])
        return "allow" if request.tool_input["file_path"].endswith(".txt") else "deny"

    guard = Guard(AgentDefinition(name="sdk"), ledger=Ledger(db), approver=approver)
    cwd = tmp_path / "project"
    run_session(
        writing_script(cwd), tmp_path, ["write the notes"], hooks=to_sdk_hooks(guard),
        can_use_tool=to_can_use_tool(guard), allowed_tools=[],
    )  # fmt: skip
    assert (cwd / "notes.txt").exists() and not (cwd / "notes.md").exists()
    assert [p.rsplit("/", 1)[-1] for p in asked] == ["notes.txt", "notes.md"]
    calls = rows(db, "SELECT tool_call_id, decision, status FROM tool_calls ORDER BY id")
    assert [(c["tool_call_id"], c["decision"]) for c in calls] == [
        ("toolu_t", "allow"),
        ("toolu_m", "deny"),
    ]
    approvals = rows(db, "SELECT tool_call_id, outcome FROM hook_runs WHERE hook = 'approver'")
    assert [(a["tool_call_id"], a["outcome"]) for a in approvals] == [
        ("toolu_t", "allow"),
        ("toolu_m", "deny"),
    ]


def test_every_event_the_cli_sends_an_sdk_callback_is_accepted_and_recorded(
    tmp_path: Path,
) -> None:
    """PostToolBatch, MessageDisplay, PermissionRequest and the rest: whatever the CLI
    sends, the dispatcher reads it (no failure) and the ledger keeps it."""
    db = tmp_path / "ledger.db"
    names = ["PostToolBatch", "MessageDisplay", "PermissionRequest", "PreCompact", "PostCompact"]
    definition = AgentDefinition(
        name="sdk", hooks={n: [HookMatcher(hooks=[lambda e, c: None])] for n in names}
    )
    guard = Guard(definition, ledger=Ledger(db))
    cwd = tmp_path / "project"
    base = writing_script(cwd)

    def script(request: MessagesRequest) -> Any:
        if "summar" in request.text().lower() and "conversation" in request.text().lower():
            return SUMMARY
        return base(request)

    session = run_session(
        script, tmp_path, ["write the notes", "/compact"], hooks=to_sdk_hooks(guard),
        allowed_tools=["Bash", "Write"],
    )  # fmt: skip
    assert not [line for line in session.stderr if "hookrails" in line]
    seen = {r["event"] for r in rows(db, "SELECT DISTINCT event FROM events")}
    assert {"PostToolBatch", "MessageDisplay", "PreCompact", "PostCompact"} <= seen
    failures = rows(db, "SELECT hook, outcome FROM hook_runs WHERE outcome NOT IN ('noop')")
    assert failures == []


def test_claudes_permission_dialog_is_answered_by_the_approver(tmp_path: Path) -> None:
    """No can_use_tool: the CLI's PermissionRequest reaches the Guard's approver through the
    PermissionRequest hook, and the approver's allow and deny are Claude's answer."""
    db = tmp_path / "ledger.db"
    asked: list[tuple[str, str]] = []

    def approver(request: Any) -> str:
        path = request.tool_input["file_path"]
        asked.append((request.event, path.rsplit("/", 1)[-1]))
        return "allow" if path.endswith(".txt") else "deny"

    guard = Guard(AgentDefinition(name="sdk"), ledger=Ledger(db), approver=approver)
    cwd = tmp_path / "project"
    session = run_session(
        writing_script(cwd), tmp_path, ["write the notes"], hooks=to_sdk_hooks(guard),
        allowed_tools=["Bash"],
    )  # fmt: skip
    assert (cwd / "notes.txt").read_text() == "ok"
    assert not (cwd / "notes.md").exists()
    assert asked == [("PermissionRequest", "notes.txt"), ("PermissionRequest", "notes.md")]
    denial = session.requests[-1].result_for("toolu_m") or {}
    assert denial.get("is_error") and "denied by the approver" in str(denial)
    answered = rows(
        db,
        "SELECT e.decision, h.outcome FROM events AS e JOIN hook_runs AS h ON h.event_id = e.id "
        "WHERE e.event = 'PermissionRequest' AND h.hook = 'approver' ORDER BY e.id",
    )
    assert [(r["decision"], r["outcome"]) for r in answered] == [
        ("allow", "allow"),
        ("block", "deny"),
    ]
