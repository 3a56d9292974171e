"""The SQLite ledger (docs/design.md §7): opening, migrations, and what a real Guard records.

Every assertion reads the file through its own ``sqlite3`` connection, the way
``hookrails ledger query`` and other processes see it. Durability (crashes,
concurrent writers, degraded mode, redaction, size caps) is in
``test_ledger_durability.py``.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from guardrails import (
    AgentDefinition,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    LedgerError,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
)
from guardrails.ledger.migrations import SQL_DIR, Migration, migrations, schema_sql
from guardrails.testing import SpyTool
from tests._guards import build_guard
from tests._paths import REPO

ROOT = REPO
LATEST = len(migrations())


# --- helpers ------------------------------------------------------------------------------


from tests._db import rows, value  # noqa: E402


def named(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    fn.hook_name = name  # type: ignore[attr-defined]
    return fn


def answer(name: str, result: Any = None) -> Callable[..., Any]:
    """A hook called ``name`` that always answers ``result``."""
    return named(name, lambda event, ctx: result)


@pytest.fixture
def ledgers() -> Iterator[list[Ledger]]:
    """Ledgers to close after the test (so Windows-like locking never leaks across tests)."""
    opened: list[Ledger] = []
    yield opened
    for ledger in opened:
        ledger.close()


# --- opening: where the file is ----------------------------------------------------------


def test_default_path_is_dot_hookrails_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with Ledger() as ledger:
        assert ledger.path == str(tmp_path / ".hookrails" / "ledger.db")
        assert ledger.degraded is None  # Ledger() opens its file when first used (or adopted)
    assert (tmp_path / ".hookrails" / "ledger.db").is_file()


def _definition_file(folder: Path, ledger_key: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "agent.yaml"
    path.write_text(f"name: located\nledger: {ledger_key}\n", encoding="utf-8")
    return path


def test_definition_ledger_key_is_relative_to_the_definition_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = _definition_file(tmp_path / "config", "data/agent.db")
    guard = Guard(config)  # ledger=None: the definition's key turns recording on
    assert guard.ledger is not None
    try:
        assert guard.ledger.path == str(tmp_path / "config" / "data" / "agent.db")
    finally:
        guard.ledger.close()


def test_env_var_overrides_the_definition_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = _definition_file(tmp_path / "config", "data/agent.db")
    monkeypatch.setenv("HOOKRAILS_LEDGER", "from-env/ledger.db")  # relative to the cwd
    guard = Guard(config)
    assert guard.ledger is not None
    try:
        assert guard.ledger.path == str(tmp_path / "from-env" / "ledger.db")
    finally:
        guard.ledger.close()
    assert not (tmp_path / "config" / "data").exists()


def test_explicit_path_overrides_env_and_definition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    config = _definition_file(tmp_path / "config", "data/agent.db")
    monkeypatch.setenv("HOOKRAILS_LEDGER", str(tmp_path / "from-env.db"))
    guard = Guard(config, ledger=tmp_path / "explicit.db")
    assert guard.ledger is not None
    try:
        assert guard.ledger.path == str(tmp_path / "explicit.db")
    finally:
        guard.ledger.close()
    assert not (tmp_path / "from-env.db").exists()


def test_env_var_alone_turns_recording_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOOKRAILS_LEDGER", str(tmp_path / "env.db"))
    guard = Guard(AgentDefinition(name="plain"))
    assert guard.ledger is not None
    try:
        guard.sync.run_tool("echo", {"text": "hi"}, lambda text: text)
    finally:
        guard.ledger.close()
    assert value(tmp_path / "env.db", "SELECT count(*) FROM tool_calls") == 1


def test_no_ledger_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    guard = Guard(AgentDefinition(name="plain"))
    guard.sync.run_tool("echo", {"text": "hi"}, lambda text: text)
    assert guard.ledger is None
    assert not (tmp_path / ".hookrails").exists()


def test_a_missing_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "c" / "ledger.db"
    with Ledger(path):
        pass
    assert path.is_file()
    assert value(path, "PRAGMA user_version") == LATEST


# --- migrations ----------------------------------------------------------------------------


def _version_1_file(path: Path) -> None:
    """A ledger as hookrails left it at schema 1: migration 0001 applied by hand, with rows."""
    sql = (Path(SQL_DIR) / "migrations" / "0001_initial.sql").read_text(encoding="utf-8")
    conn = sqlite3.connect(path)
    conn.executescript(sql)
    conn.executescript(
        """
        CREATE TABLE _hookrails_migrations
            (number INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
        INSERT INTO _hookrails_migrations VALUES (1, 'initial', '2025-01-01T00:00:00.000Z');
        INSERT INTO sessions (session_id, agent_name, started_at, last_seen_at)
            VALUES ('old-session', 'old-agent', '2025-01-01T00:00:00.000Z',
                    '2025-01-01T00:00:01.000Z');
        INSERT INTO tool_calls (session_id, tool_call_id, tool_name, tool_call_arguments,
                                decision, status, tool_call_result, started_at, finished_at)
            VALUES ('old-session', 'toolu_old', 'run_tests', '{"suite": "unit"}', 'allow', 'ok',
                    '"42 passed"', '2025-01-01T00:00:00.000Z', '2025-01-01T00:00:01.000Z');
        INSERT INTO events (session_id, event, decision, created_at)
            VALUES ('old-session', 'UserPromptSubmit', 'allow', '2025-01-01T00:00:00.000Z');
        INSERT INTO hook_runs (session_id, event, tool_call_id, hook, matcher, priority, outcome,
                               duration_ms, error, created_at)
            VALUES ('old-session', 'PreToolUse', 'toolu_old', 'check', 'run_*', 5, 'error', 1.5,
                    'ValueError: bad', '2025-01-01T00:00:00.000Z');
        PRAGMA user_version = 1;
        """
    )
    conn.close()


def test_a_version_1_file_upgrades_to_the_latest_with_its_data(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    _version_1_file(path)
    assert LATEST >= 2, "this test needs a migration after 0001"
    with Ledger(path) as ledger:
        guard = Guard(AgentDefinition(name="new-agent"), ledger=ledger)
        guard.session("new-session").sync.run_tool("echo", {"text": "hi"}, lambda text: text)
        assert ledger.reader.succeeded("run_tests", "old-session")  # old rows, new indexes
    assert value(path, "PRAGMA user_version") == LATEST
    applied = rows(path, "SELECT number, name FROM _hookrails_migrations ORDER BY number")
    assert [(m["number"], m["name"]) for m in applied] == [(m.number, m.name) for m in migrations()]
    calls = rows(path, "SELECT session_id, tool_call_arguments, status FROM tool_calls ORDER BY id")
    assert calls == [
        {"session_id": "old-session", "tool_call_arguments": '{"suite": "unit"}', "status": "ok"},
        {"session_id": "new-session", "tool_call_arguments": '{"text": "hi"}', "status": "ok"},
    ]
    assert value(path, "SELECT agent_name FROM sessions WHERE session_id = 'old-session'") == (
        "old-agent"
    )
    assert value(path, "SELECT count(*) FROM events WHERE session_id = 'old-session'") == 1
    # what the later migrations create is there (0002: the lookup indexes; 0005: the query
    # indexes, and 0002's tool_calls_pending dropped: it was written twice per call)
    indexes = {r["name"] for r in rows(path, "SELECT name FROM sqlite_master WHERE type='index'")}
    assert {"hook_run_sets_by_event", "events_by_kind", "tool_calls_by_start"} <= indexes
    assert "tool_calls_pending" not in indexes
    # 0007: the hook_runs table's rows live on in hook_run_sets, shown by the hook_runs view
    old_runs = rows(
        path,
        "SELECT session_id, event, tool_call_id, hook, matcher, priority, outcome, duration_ms, "
        "error, injected_chars FROM hook_runs WHERE session_id = 'old-session'",
    )
    assert old_runs == [
        {"session_id": "old-session", "event": "PreToolUse", "tool_call_id": "toolu_old",
         "hook": "check", "matcher": "run_*", "priority": 5, "outcome": "error",
         "duration_ms": 1.5, "error": "ValueError: bad", "injected_chars": 0},
    ]  # fmt: skip
    failed = rows(path, "SELECT name, status FROM failures WHERE kind = 'hook'")
    assert failed == [{"name": "check", "status": "error"}]


def test_a_new_file_gets_every_migration_recorded(ledger_path: str) -> None:
    with Ledger(ledger_path):
        pass
    applied = rows(ledger_path, "SELECT number FROM _hookrails_migrations ORDER BY number")
    assert [r["number"] for r in applied] == list(range(1, LATEST + 1))
    assert value(ledger_path, "PRAGMA user_version") == LATEST


def test_each_migration_runs_in_its_own_transaction(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A failing migration rolls back alone: the ones before it stay applied."""
    broken = Migration(
        LATEST + 1, "broken", "CREATE TABLE half_done (x);\nSELECT * FROM no_such_table;\n"
    )
    monkeypatch.setattr("guardrails.ledger.migrations.migrations", lambda: [*migrations(), broken])
    monkeypatch.setattr("guardrails.ledger.migrations.latest_version", lambda: LATEST + 1)
    ledger = Ledger(ledger_path)
    try:
        assert ledger.degraded is not None and "no_such_table" in ledger.degraded
    finally:
        ledger.close()
    assert value(ledger_path, "PRAGMA user_version") == LATEST
    applied = rows(ledger_path, "SELECT number FROM _hookrails_migrations ORDER BY number")
    assert [r["number"] for r in applied] == list(range(1, LATEST + 1))
    assert value(ledger_path, "SELECT count(*) FROM sqlite_master WHERE name = 'half_done'") == 0


def test_the_migrations_are_read_once_and_handed_out_as_copies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process that makes many new files (a suite, a server with many ledgers) reads and
    splits the SQL once; a caller that changes the list it got changes nobody else's."""
    from guardrails.ledger import migrations as mig

    mig.migrations()
    mig.views()
    reads: list[str] = []
    real = Path.read_text

    def read_text(self: Path, *args: Any, **kwargs: Any) -> str:
        reads.append(self.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    for n in range(3):
        Ledger(str(tmp_path / f"new{n}.db")).close()
    assert [r for r in reads if r.endswith(".sql")] == []
    got = mig.migrations()
    got.clear()
    views = mig.views()
    views.clear()
    assert len(mig.migrations()) == mig.latest_version() and mig.views()


def test_checked_in_schema_sql_matches_the_migrations() -> None:
    checked_in = (Path(SQL_DIR) / "schema.sql").read_text(encoding="utf-8")
    assert checked_in == schema_sql(), (
        "ledger/schema.sql is stale: run `make schemas` and commit the result"
    )


def test_a_newer_schema_is_never_written_and_its_records_wait_in_the_spool(
    ledger_path: str,
) -> None:
    """Changed on purpose (issue #10 §3): a newer schema used to raise here, so a Guard
    refused to start and a hook process recorded nothing. Now the Ledger opens degraded
    (kind ``newer_schema``), guarding goes on, and records are spooled for a newer
    hookrails's ``recover`` (tests/unit/ledger/test_faults.py follows them there)."""
    conn = sqlite3.connect(ledger_path)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.close()
    ledger = Ledger(ledger_path)
    try:
        assert ledger.degraded is not None and ledger.degraded.startswith("newer_schema:")
        assert f"schema version {LATEST + 1}" in ledger.degraded
        assert "upgrade hookrails" in ledger.degraded
        run = Guard(AgentDefinition(), ledger=ledger).sync.run_tool("echo", {"t": 1}, lambda t: t)
        assert run.ok
        assert os.path.getsize(ledger.spool_path) > 0
        with pytest.raises(LedgerError) as info:  # this hookrails cannot import into it
            ledger.recover()
        assert info.value.kind == "newer_schema"
        assert "newer hookrails" in str(info.value) and ledger.spool_path in str(info.value)
    finally:
        ledger.close()
    assert value(ledger_path, "PRAGMA user_version") == LATEST + 1  # untouched
    assert value(ledger_path, "SELECT count(*) FROM sqlite_master") == 0


def test_an_already_migrated_file_is_opened_without_sqlite_utils(ledger_path: str) -> None:
    """The hot path (a hook process per event) stays on stdlib sqlite3."""
    with Ledger(ledger_path):
        pass
    code = (
        "import sys\n"
        "from guardrails import AgentDefinition, Guard, Ledger\n"
        f"guard = Guard(AgentDefinition(), ledger=Ledger({ledger_path!r}))\n"
        "run = guard.sync.run_tool('echo', {'text': 'hi'}, lambda text: text)\n"
        "assert run.ok and guard.ledger.degraded is None, guard.ledger.degraded\n"
        "print('sqlite_utils' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 1


# --- pragmas -----------------------------------------------------------------------------


def _pragma(ledger: Ledger, name: str) -> Any:
    conn = ledger._conn
    assert conn is not None, ledger.degraded
    return conn.execute(f"PRAGMA {name}").fetchone()[0]


def test_wal_normal_sync_and_busy_timeout_by_default(ledger_path: str) -> None:
    with Ledger(ledger_path) as ledger:
        assert _pragma(ledger, "journal_mode") == "wal"
        assert _pragma(ledger, "synchronous") == 1  # NORMAL
        # the wait for another writer is the ledger's own short-sleep loop (sqlite_write.begin),
        # not SQLite's busy handler, whose sleeps grow to 100 ms
        assert ledger.busy_timeout == 5.0
        assert _pragma(ledger, "busy_timeout") == 0
    assert value(ledger_path, "PRAGMA journal_mode") == "wal"  # a property of the file


def test_durable_means_synchronous_full(ledger_path: str) -> None:
    with Ledger(ledger_path, durable=True) as ledger:
        assert _pragma(ledger, "synchronous") == 2  # FULL


def test_busy_timeout_is_configurable(ledger_path: str) -> None:
    with Ledger(ledger_path, busy_timeout=0.25) as ledger:
        assert ledger.busy_timeout == 0.25  # the retry loop's total (test_hot_path.py)


# --- a real Guard: tool calls -----------------------------------------------------------


def _deny_hook(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("not on a Friday", hint="Wait for Monday.")


def _tool_guard(ledger: Ledger) -> Guard:
    hooks = {
        "PreToolUse": [
            HookMatcher(matcher="*", hooks=[answer("watch")]),
            HookMatcher(matcher="deploy", hooks=[named("friday", _deny_hook)]),
        ],
        "PostToolUse": [answer("after")],
        "PostToolUseFailure": [answer("after_failure")],
    }
    return build_guard(hooks, name="recorder", ledger=ledger)


def _run(guard: Guard, mode: str, session: str, tool: str, args: dict[str, Any], fn: Any) -> Any:
    s = guard.session(session)
    if mode == "sync":
        return s.sync.run_tool(tool, args, fn)
    return asyncio.run(s.run_tool(tool, args, fn))


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_ok_error_and_denied_calls_are_finished_rows(ledger_path: str, mode: str) -> None:
    with Ledger(ledger_path) as ledger:
        guard = _tool_guard(ledger)
        ok = _run(guard, mode, "s1", "echo", {"text": "hi"}, lambda text: {"said": text})
        failing = SpyTool(error=ValueError("the disk said no"))
        err = _run(guard, mode, "s1", "write", {"path": "x"}, failing)
        never = SpyTool()
        denied = _run(guard, mode, "s1", "deploy", {"env": "prod"}, never)
    assert (ok.status, err.status, denied.status) == ("ok", "error", "denied")
    assert never.calls == []  # the denied tool never ran
    calls = {r["tool_name"]: r for r in rows(ledger_path, "SELECT * FROM tool_calls ORDER BY id")}
    assert set(calls) == {"echo", "write", "deploy"}

    echo = calls["echo"]
    assert echo["status"] == "ok" and echo["decision"] == "allow"
    assert json.loads(echo["tool_call_result"]) == {"said": "hi"}
    assert json.loads(echo["tool_call_arguments"]) == {"text": "hi"}
    assert echo["duration_ms"] is not None and echo["duration_ms"] >= 0
    assert echo["finished_at"] is not None and echo["finished_at"] >= echo["started_at"]
    assert echo["result_truncated"] == 0 and echo["error_type"] is None

    write = calls["write"]
    assert write["status"] == "error"
    assert (write["error_type"], write["error_message"]) == ("ValueError", "the disk said no")
    assert write["tool_call_result"] is None and write["duration_ms"] is not None

    deploy = calls["deploy"]
    assert deploy["status"] == "denied" and deploy["decision"] == "deny"
    assert deploy["reason"] == "not on a Friday\nWait for Monday."
    assert deploy["tool_call_result"] is None and deploy["finished_at"] is not None
    assert {r["session_id"] for r in calls.values()} == {"s1"}
    assert {r["agent_name"] for r in calls.values()} == {"recorder"}


def test_closing_leaves_the_records_in_the_file_after_its_reader_was_used(
    ledger_path: str,
) -> None:
    """The last connection to close moves the WAL into the file and removes it; the
    ledger's reader cannot (it is read-only), so it is closed first."""
    guard = build_guard(ledger=ledger_path)
    assert guard.ledger is not None
    guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out")
    assert guard.ledger.reader.query("SELECT count(*) AS n FROM tool_calls") == [{"n": 1}]
    guard.ledger.close()
    assert not os.path.exists(ledger_path + "-wal")
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 1


def test_a_pending_row_exists_before_the_tool_runs(ledger_path: str) -> None:
    seen: list[dict[str, Any]] = []

    def tool(text: str) -> str:
        seen.extend(
            rows(ledger_path, "SELECT * FROM tool_calls WHERE tool_call_id = 'toolu_early'")
        )
        return text

    with Ledger(ledger_path) as ledger:
        guard = _tool_guard(ledger)
        guard.sync.run_tool("echo", {"text": "hi"}, tool, tool_use_id="toolu_early")
    assert len(seen) == 1, "no row was committed before the tool ran"
    assert seen[0]["status"] == "pending"
    assert seen[0]["pid"] == os.getpid()  # the process running the tool
    assert seen[0]["finished_at"] is None and seen[0]["tool_call_result"] is None
    assert (
        value(ledger_path, "SELECT status FROM tool_calls WHERE tool_call_id = 'toolu_early'")
        == "ok"
    )


def test_post_tool_use_rewrites_are_what_is_stored(ledger_path: str) -> None:
    def scrub(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify(output=event.tool_response.replace("internal", "[scrubbed]"))

    definition = AgentDefinition(
        hooks={"PostToolUse": [HookMatcher(hooks=[named("scrub", scrub)])]}
    )
    with Ledger(ledger_path) as ledger:
        run = Guard(definition, ledger=ledger).sync.run_tool(
            "read", {"path": "notes"}, lambda path: "the internal hostname"
        )
    assert run.output == "the [scrubbed] hostname"
    stored = value(ledger_path, "SELECT tool_call_result FROM tool_calls")
    assert json.loads(stored) == "the [scrubbed] hostname"
    assert "internal" not in stored
    assert value(ledger_path, "SELECT outcome FROM hook_runs WHERE hook = 'scrub'") == "modify"


def test_pre_tool_use_rewrites_are_stored_as_final_arguments(ledger_path: str) -> None:
    def add_flag(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify(input={"command": event.tool_input["command"] + " -i"})

    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[named("add_flag", add_flag)])]}
    )
    tool = SpyTool()
    with Ledger(ledger_path) as ledger:
        Guard(definition, ledger=ledger).sync.run_tool("rm", {"command": "rm x"}, tool)
    assert tool.calls == [{"command": "rm x -i"}]
    final = value(ledger_path, "SELECT final_arguments FROM tool_calls")
    assert json.loads(final) == {"command": "rm x -i"}


def test_model_arguments_survive_a_pre_tool_use_rewrite(ledger_path: str) -> None:
    def add_flag(event: Any, ctx: Any) -> HookResult:
        return HookResult.modify(input={"command": event.tool_input["command"] + " -i"})

    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[named("add_flag", add_flag)])]}
    )
    with Ledger(ledger_path) as ledger:
        Guard(definition, ledger=ledger).sync.run_tool("rm", {"command": "rm x"}, SpyTool())
    assert json.loads(value(ledger_path, "SELECT tool_call_arguments FROM tool_calls")) == {
        "command": "rm x"
    }


def test_subagent_calls_carry_agent_id_and_type(ledger_path: str) -> None:
    with Ledger(ledger_path) as ledger:
        guard = _tool_guard(ledger)
        s = guard.session("s1")
        s.sync.subagent_start("agent-7", "researcher")
        s.sync.run_tool(
            "echo", {"text": "hi"}, lambda text: text, agent_id="agent-7", agent_type="researcher"
        )
        s.sync.run_tool("echo", {"text": "main"}, lambda text: text)
        s.sync.subagent_stop("agent-7", "researcher", stop_hook_active=False)
    calls = rows(ledger_path, "SELECT agent_id, agent_type FROM tool_calls ORDER BY id")
    assert calls == [
        {"agent_id": "agent-7", "agent_type": "researcher"},
        {"agent_id": None, "agent_type": None},
    ]
    events = rows(ledger_path, "SELECT event, agent_id, agent_type FROM events ORDER BY id")
    assert events == [
        {"event": "SubagentStart", "agent_id": "agent-7", "agent_type": "researcher"},
        {"event": "SubagentStop", "agent_id": "agent-7", "agent_type": "researcher"},
    ]


# --- a real Guard: events and hook runs ---------------------------------------------------


def test_prompts_stops_and_session_events_are_recorded_with_their_decision(
    ledger_path: str,
) -> None:
    def no_secrets_talk(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.block("no talk of launch codes") if "launch" in event.prompt else None

    def keep_going(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.block("tests are still red") if ctx.state.get("red") else None

    def pull_the_plug(event: Any, ctx: Any) -> HookResult | None:
        return HookResult.halt("budget exhausted") if "halt" in event.prompt else None

    definition = AgentDefinition(
        name="chatty",
        hooks={
            "SessionStart": [HookMatcher(hooks=[answer("hello")])],
            "UserPromptSubmit": [
                HookMatcher(hooks=[named("topic", no_secrets_talk), named("plug", pull_the_plug)])
            ],
            "Stop": [HookMatcher(hooks=[named("keep_going", keep_going)])],
            "SessionEnd": [HookMatcher(hooks=[answer("bye")])],
        },
    )
    with Ledger(ledger_path) as ledger:
        s = Guard(definition, ledger=ledger).session("chat-1")
        s.sync.session_start("startup")
        s.sync.user_prompt_submit("summarise the README")
        s.sync.user_prompt_submit("what are the launch codes?")
        s.state["red"] = True
        s.sync.agent_stop("done")
        s.state["red"] = False
        s.sync.agent_stop("done now")
        s.sync.user_prompt_submit("please halt")
        s.sync.session_end("logout")
    events = rows(ledger_path, "SELECT event, decision, reason, payload FROM events ORDER BY id")
    assert [(e["event"], e["decision"], e["reason"]) for e in events] == [
        ("SessionStart", "allow", None),
        ("UserPromptSubmit", "allow", None),
        ("UserPromptSubmit", "block", "no talk of launch codes"),
        ("AgentStop", "block", "tests are still red"),
        ("AgentStop", "allow", None),
        ("UserPromptSubmit", "halt", "budget exhausted"),
        ("SessionEnd", "allow", None),
    ]
    assert json.loads(events[1]["payload"])["prompt"] == "summarise the README"
    session = rows(ledger_path, "SELECT * FROM sessions")
    assert len(session) == 1
    assert session[0]["session_id"] == "chat-1" and session[0]["agent_name"] == "chatty"
    assert session[0]["end_reason"] == "logout" and session[0]["ended_at"] is not None
    # hook runs of events point at their event row
    linked = rows(
        ledger_path,
        "SELECT e.event, h.hook, h.outcome FROM hook_runs h JOIN events e ON e.id = h.event_id "
        "ORDER BY h.id",
    )
    assert ("SessionStart", "hello", "noop") in [tuple(r.values()) for r in linked]
    assert ("UserPromptSubmit", "topic", "block") in [tuple(r.values()) for r in linked]
    assert value(ledger_path, "SELECT count(*) FROM hook_runs WHERE event_id IS NULL") == 0


def test_every_hook_run_lands_in_hook_runs_with_outcome_and_error(ledger_path: str) -> None:
    def boom(event: Any, ctx: Any) -> None:
        raise RuntimeError("hook exploded")

    def slow(event: Any, ctx: Any) -> None:
        time.sleep(0.2)  # over its 0.05 s timeout: recorded as a timeout

    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(hooks=[answer("quiet")], priority=1),
                HookMatcher(hooks=[named("boom", boom)], priority=2, on_failure="continue"),
                HookMatcher(
                    hooks=[named("slow", slow)], priority=3, timeout=0.05, on_failure="continue"
                ),
                HookMatcher(
                    hooks=[answer("context", HookResult.inject("remember the style guide"))],
                    priority=4,
                ),
                HookMatcher(hooks=[answer("nope", HookResult.deny("no"))], priority=5),
                HookMatcher(hooks=[answer("never_asked")], priority=6),
            ]
        }
    )
    tool = SpyTool()
    with Ledger(ledger_path) as ledger:
        run = Guard(definition, ledger=ledger).sync.run_tool(
            "echo", {"text": "hi"}, tool, tool_use_id="toolu_hooks"
        )
    assert run.denied and tool.calls == []
    runs = rows(
        ledger_path,
        "SELECT hook, outcome, error, injected_chars, tool_call_id, event FROM hook_runs "
        "ORDER BY id",
    )
    assert [(r["hook"], r["outcome"]) for r in runs] == [
        ("quiet", "noop"),
        ("boom", "error"),
        ("slow", "timeout"),
        ("context", "inject"),
        ("nope", "deny"),
        ("never_asked", "skipped"),
    ]
    errors = {r["hook"]: r["error"] for r in runs}
    assert errors["boom"] == "RuntimeError: hook exploded"
    assert "timeout" in errors["slow"]
    assert errors["quiet"] is None and errors["never_asked"] is None
    assert runs[3]["injected_chars"] == len("remember the style guide")
    assert {r["tool_call_id"] for r in runs} == {"toolu_hooks"}
    assert {r["event"] for r in runs} == {"PreToolUse"}


def test_a_failing_hook_that_blocks_is_recorded_as_the_reason(ledger_path: str) -> None:
    def boom(event: Any, ctx: Any) -> None:
        raise RuntimeError("policy service down")

    definition = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[named("boom", boom)])]})
    tool = SpyTool()
    with Ledger(ledger_path) as ledger:
        Guard(definition, ledger=ledger).sync.run_tool("echo", {"text": "hi"}, tool)
    assert tool.calls == []  # on_failure=block on PreToolUse: fail closed
    call = rows(ledger_path, "SELECT status, decision, reason FROM tool_calls")[0]
    assert call["status"] == "denied" and call["decision"] == "deny"
    assert "policy service down" in call["reason"]
    assert value(ledger_path, "SELECT outcome FROM hook_runs WHERE hook = 'boom'") == "error"


# --- the host flow: Claude Code command hooks, one process per event -----------------------


def test_host_flow_pre_and_post_from_two_guards_finish_one_row(ledger_path: str) -> None:
    definition = AgentDefinition(
        name="claude",
        hooks={
            "PreToolUse": [HookMatcher(hooks=[answer("pre_hook")])],
            "PostToolUse": [HookMatcher(hooks=[answer("post_hook")])],
        },
    )
    common = {"session_id": "cc-1", "cwd": "/project", "tool_use_id": "toolu_host"}
    args = {"command": "ls"}
    with Ledger(ledger_path) as first:  # the PreToolUse hook process
        decision = Guard(definition, ledger=first).emit_sync(
            PreToolUse(tool_name="Bash", tool_input=args, **common)
        )
    assert decision.allowed
    pending = rows(ledger_path, "SELECT status, pid FROM tool_calls")
    assert pending == [{"status": "pending", "pid": None}]  # nobody here runs the tool
    with Ledger(ledger_path) as second:  # the PostToolUse hook process
        Guard(definition, ledger=second).emit_sync(
            PostToolUse(tool_name="Bash", tool_input=args, tool_response="a b c", **common)
        )
    calls = rows(ledger_path, "SELECT * FROM tool_calls")
    assert len(calls) == 1
    call = calls[0]
    assert (call["status"], call["decision"], call["tool_call_id"]) == ("ok", "allow", "toolu_host")
    assert json.loads(call["tool_call_result"]) == "a b c"
    assert call["duration_ms"] is not None and call["duration_ms"] >= 0
    runs = rows(ledger_path, "SELECT hook, event, tool_call_id FROM hook_runs ORDER BY id")
    assert runs == [
        {"hook": "pre_hook", "event": "PreToolUse", "tool_call_id": "toolu_host"},
        {"hook": "post_hook", "event": "PostToolUse", "tool_call_id": "toolu_host"},
    ]


def test_host_flow_failure_finishes_the_row_as_error(ledger_path: str) -> None:
    common = {"session_id": "cc-2", "cwd": "/project", "tool_use_id": "toolu_fail"}
    with Ledger(ledger_path) as first:
        Guard(AgentDefinition(), ledger=first).emit_sync(
            PreToolUse(tool_name="Bash", tool_input={"command": "false"}, **common)
        )
    with Ledger(ledger_path) as second:
        Guard(AgentDefinition(), ledger=second).emit_sync(
            PostToolUseFailure(
                tool_name="Bash",
                tool_input={"command": "false"},
                error="Exit code 1: command failed",
                **common,
            )
        )
    call = rows(ledger_path, "SELECT status, error_type, error_message FROM tool_calls")
    assert call == [
        {"status": "error", "error_type": None, "error_message": "Exit code 1: command failed"}
    ]


def test_a_replayed_pre_tool_use_never_reopens_a_finished_call(ledger_path: str) -> None:
    """Spooled records are imported late: a PreToolUse may arrive after its PostToolUse."""
    common = {"session_id": "cc-3", "cwd": "/project", "tool_use_id": "toolu_late"}
    with Ledger(ledger_path) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        guard.emit_sync(PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, **common))
        guard.emit_sync(
            PostToolUse(tool_name="Bash", tool_input={"command": "ls"}, tool_response="x", **common)
        )
        guard.emit_sync(PreToolUse(tool_name="Bash", tool_input={"command": "ls"}, **common))
    assert rows(ledger_path, "SELECT status, tool_call_result FROM tool_calls") == [
        {"status": "ok", "tool_call_result": '"x"'}
    ]


# --- ctx.ledger: hooks read the ledger ---------------------------------------------------


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "deploy_rule_example", ROOT / "examples" / "deploy_rule.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def deploy_rule() -> ModuleType:
    return _load_example()


@pytest.fixture
def release(ledger_path: str, deploy_rule: ModuleType) -> Iterator[Guard]:
    ledger = Ledger(ledger_path)
    yield Guard(deploy_rule.agent, ledger=ledger)
    ledger.close()


def _deploy(guard: Guard, session: str, deploy_rule: ModuleType) -> tuple[Any, SpyTool]:
    tool = SpyTool("deployed")
    return guard.session(session).sync.run_tool("deploy", {"target": "prod"}, tool), tool


def test_deploy_rule_denies_before_any_tests(release: Guard, deploy_rule: ModuleType) -> None:
    run, tool = _deploy(release, "rel", deploy_rule)
    assert run.denied and tool.calls == []
    assert "passing tests" in (run.reason or "")


def test_deploy_rule_denies_after_failed_tests(release: Guard, deploy_rule: ModuleType) -> None:
    s = release.session("rel")
    tests = s.sync.run_tool("run_tests", {"suite": "flaky"}, deploy_rule.run_tests)
    assert tests.status == "error"
    run, tool = _deploy(release, "rel", deploy_rule)
    assert run.denied and tool.calls == []


def test_deploy_rule_allows_after_passing_tests(release: Guard, deploy_rule: ModuleType) -> None:
    s = release.session("rel")
    s.sync.run_tool("run_tests", {"suite": "flaky"}, deploy_rule.run_tests)
    assert s.sync.run_tool("run_tests", {"suite": "unit"}, deploy_rule.run_tests).ok
    run, tool = _deploy(release, "rel", deploy_rule)
    assert run.ok and tool.calls == [{"target": "prod"}]


def test_deploy_rule_is_per_session(release: Guard, deploy_rule: ModuleType) -> None:
    assert (
        release.session("rel-a")
        .sync.run_tool("run_tests", {"suite": "unit"}, deploy_rule.run_tests)
        .ok
    )
    run, tool = _deploy(release, "rel-b", deploy_rule)
    assert run.denied and tool.calls == []
    run, tool = _deploy(release, "rel-a", deploy_rule)
    assert run.ok


def test_deploy_rule_example_runs_and_prints_the_decisions(
    deploy_rule: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    deploy_rule.main()
    lines = capsys.readouterr().out.splitlines()
    statuses = [line.split("->")[1].split()[0] for line in lines]
    assert statuses == ["denied", "error", "denied", "ok", "ok", "denied"]
    assert lines[0].startswith("release-1") and lines[-1].startswith("release-2")


def test_hooks_read_through_a_read_only_connection(ledger_path: str) -> None:
    seen: list[Any] = []

    def try_to_write(event: Any, ctx: Any) -> None:
        try:
            ctx.ledger.query("DELETE FROM tool_calls")
        except LedgerError as exc:
            seen.append(exc.kind)
        seen.append(ctx.ledger.value("SELECT count(*) FROM tool_calls"))

    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[named("writer", try_to_write)])]}
    )
    with Ledger(ledger_path) as ledger:
        guard = Guard(definition, ledger=ledger)
        guard.sync.run_tool("echo", {"text": "1"}, lambda text: text)
        guard.sync.run_tool("echo", {"text": "2"}, lambda text: text)
    assert seen == ["query", 0, "query", 1]  # it sees earlier calls, never the one deciding
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 2


def test_hooks_read_the_ledger_from_worker_threads_in_the_async_core(ledger_path: str) -> None:
    """The async core runs sync hooks in threads; ctx.ledger must work there and after."""
    import asyncio

    seen: list[bool] = []

    def check(event: Any, ctx: Any) -> None:
        seen.append(ctx.ledger.succeeded("run_tests", ctx.session_id))

    definition = AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[named("check", check)])]})
    with Ledger(ledger_path) as ledger:
        guard = Guard(definition, ledger=ledger)
        s = guard.session("s1")
        asyncio.run(s.run_tool("run_tests", {}, lambda: "ok"))
        asyncio.run(s.run_tool("deploy", {}, lambda: "ok"))
        assert ledger.reader.succeeded("run_tests", "s1")  # the main thread, same reader
    assert seen == [False, True]
