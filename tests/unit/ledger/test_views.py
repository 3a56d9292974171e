"""Ledger views and saved queries (``ledger/views``, ``ledger/queries``) against a fixture.

The database is built the way a ledger file is: every ``ledger/migrations/*.sql`` in
order, then every ``ledger/views/*.sql``, with the standard library's sqlite3 only. The
fixture is two sessions of a deploying agent: tests fail, deploys are denied (a deny, a
fail-closed timeout, a rejected ask), calls are repeated, a subagent reads files, hooks
time out, error, emit invalid output and are refused, stops are blocked. Tool call ids are
numbered per session (``call_1``, ``call_2``, ... in both), as some frameworks do, so a
join that forgets ``session_id`` picks up the other session's rows. Every expected value
below was worked out by hand from these tables.
"""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests._paths import REPO

LEDGER = REPO / "guardrails" / "ledger" / "sql"
MIGRATIONS = LEDGER / "migrations"
VIEWS = LEDGER / "views"
QUERIES = LEDGER / "queries"

#: the public column lists of the views, in order (users write SQL against these)
VIEW_COLUMNS: dict[str, list[str]] = {
    "hook_runs": [
        "id",
        "session_id",
        "event",
        "tool_call_id",
        "event_id",
        "hook",
        "matcher",
        "priority",
        "outcome",
        "duration_ms",
        "error",
        "injected_chars",
        "created_at",
        "flags",
    ],
    "tool_stats": [
        "tool_name",
        "calls",
        "ok",
        "denials",
        "errors",
        "interrupted",
        "p50_ms",
        "p95_ms",
        "avg_ms",
        "last_called_at",
    ],
    "denials": [
        "started_at",
        "session_id",
        "agent_name",
        "agent_id",
        "tool_name",
        "tool_call_id",
        "tool_call_arguments",
        "reason",
        "hook",
        "matcher",
        "hook_outcome",
    ],
    "failures": [
        "at",
        "kind",
        "session_id",
        "event",
        "name",
        "status",
        "tool_call_id",
        "error_type",
        "error_message",
    ],
    "slow_hooks": ["hook", "event", "runs", "avg_ms", "p95_ms", "max_ms", "failures"],
    "repeated_calls": [
        "session_id",
        "tool_name",
        "arguments_hash",
        "times",
        "first_at",
        "last_at",
        "statuses",
        "example_arguments",
    ],
    "session_summary": [
        "session_id",
        "agent_name",
        "tenant",
        "started_at",
        "last_seen_at",
        "ended_at",
        "calls",
        "ok",
        "denied",
        "errors",
        "interrupted",
        "prompts",
        "stops",
        "blocked_stops",
        "injected_chars",
        "duration_s",
    ],
}

#: saved query -> the values its parameters take in these tests
SAVED_QUERIES: dict[str, dict[str, Any]] = {
    "denials_by_tool": {},
    "slowest_hooks": {},
    "repeated_calls": {},
    "session_timeline": {"session": "sess-b"},
    "tool_succeeded": {"session": "sess-a", "tool": "run_tests"},
    "recent_calls": {"limit": 3},
}


def at_a(clock: str) -> str:
    """A time on the day of session ``sess-a``."""
    return f"2026-11-25T{clock}Z"


def at_b(clock: str) -> str:
    """A time on the day of session ``sess-b``."""
    return f"2026-11-26T{clock}Z"


DAY = {"sess-a": at_a, "sess-b": at_b}


def digest(arguments: str) -> str:
    """sha256 of the canonical JSON, as the ledger computes ``arguments_hash``."""
    canonical = json.dumps(json.loads(arguments), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


SUITE_UNIT = '{"suite":"unit"}'
SUITE_ALL = '{"suite":"all"}'
SUITE_LINT = '{"suite":"lint"}'
ENV_PROD = '{"env":"prod"}'
ENV_STAGING = '{"env":"staging"}'
ENV_STAGING_SPACED = '{"env": "staging"}'  # same canonical JSON, same hash
README = '{"file_path":"README.md"}'
BIG_LOG = '{"file_path":"logs/big.log"}'
NOTES = '{"file_path":"notes.md"}'
SECRETS = '{"file_path":"config/secrets.env"}'
DOCS = '{"file_path":"docs/index.md"}'

SESSIONS = [
    # (session_id, agent_name, tenant, started_at, last_seen_at, ended_at, end_reason)
    (
        "sess-a",
        "deployer",
        "acme",
        at_a("23:40:00.000"),
        at_a("23:45:30.500"),
        at_a("23:45:31.000"),
        "stop",
    ),
    ("sess-b", "researcher", "globex", at_b("08:00:00.000"), at_b("08:02:00.250"), None, None),
]

TOOL_CALLS = [
    # (session_id, tool_call_id, tool_name, arguments, status, started clock, duration_ms)
    ("sess-a", "call_1", "run_tests", SUITE_UNIT, "error", "23:40:05.000", 900),
    ("sess-a", "call_2", "deploy", ENV_PROD, "denied", "23:40:10.000", None),
    ("sess-a", "call_3", "run_tests", SUITE_UNIT, "ok", "23:41:00.000", 1200),
    ("sess-a", "call_4", "deploy", ENV_PROD, "denied", "23:41:30.000", None),
    ("sess-a", "call_5", "run_tests", SUITE_UNIT, "ok", "23:42:00.000", 1100),
    ("sess-a", "call_6", "deploy", ENV_PROD, "ok", "23:43:00.000", 5000),
    ("sess-a", "call_7", "Read", BIG_LOG, "interrupted", "23:43:30.000", 99999),
    ("sess-a", "call_8", "Read", README, "ok", "23:44:00.000", 12),
    ("sess-b", "call_1", "Read", README, "ok", "08:00:05.000", 8),
    ("sess-b", "call_2", "run_tests", SUITE_ALL, "ok", "08:00:10.000", 3000),
    ("sess-b", "call_3", "Read", NOTES, "error", "08:00:30.000", 5),
    ("sess-b", "call_4", "Read", SECRETS, "denied", "08:00:40.000", None),
    ("sess-b", "call_5", "Read", DOCS, "ok", "08:00:50.000", 20),
    ("sess-b", "call_6", "run_tests", SUITE_ALL, "error", "08:01:00.000", 2500),
    ("sess-b", "call_7", "run_tests", SUITE_LINT, "ok", "08:01:30.000", 400),
    ("sess-b", "call_8", "deploy", ENV_STAGING_SPACED, "denied", "08:01:50.000", None),
    ("sess-b", "call_9", "deploy", ENV_STAGING, "pending", "08:02:00.000", None),
    ("sess-b", "call_10", "deploy", ENV_PROD, "interrupted", "08:02:00.100", None),
]
CALL_REASONS = {
    ("sess-a", "call_2"): "change freeze in effect",
    ("sess-a", "call_4"): "change freeze in effect",
    ("sess-b", "call_4"): "protect_secrets: **/*.env is off limits",
    ("sess-b", "call_8"): "user rejected the ask",
}
CALL_ERRORS = {
    ("sess-a", "call_1"): ("ExitCode", "exit status 1"),
    ("sess-a", "call_7"): (None, "interrupted by the user"),
    ("sess-b", "call_3"): ("FileNotFoundError", "notes.md"),
    ("sess-b", "call_6"): ("ExitCode", "exit status 2"),
    ("sess-b", "call_10"): (None, "agent process exited"),
}
SUBAGENT_CALLS = {("sess-b", "call_3"), ("sess-b", "call_4")}  # run by subagent sub-1
UNHASHED_CALLS = {("sess-b", "call_3"), ("sess-b", "call_5")}  # arguments_hash NULL

EVENTS = [
    # (session_id, event, agent_id, decision, reason, injected_chars, clock); ids 1..10
    ("sess-a", "SessionStart", None, "allow", None, 0, "23:40:00.000"),
    ("sess-a", "UserPromptSubmit", None, "allow", None, 120, "23:40:01.000"),
    ("sess-a", "UserPromptSubmit", None, "allow", None, 0, "23:42:30.000"),
    ("sess-a", "AgentStop", None, "block", "run_tests has not passed", 0, "23:44:30.000"),
    ("sess-a", "AgentStop", None, "allow", None, 0, "23:45:30.000"),
    ("sess-b", "UserPromptSubmit", None, "allow", None, 250, "08:00:01.000"),
    ("sess-b", "UserPromptSubmit", None, "allow", None, 0, "08:01:05.000"),
    ("sess-b", "SubagentStop", "sub-1", "block", "lint first", 0, "08:01:40.000"),
    ("sess-b", "UserPromptSubmit", None, "allow", None, 0, "08:01:55.000"),
    (
        "sess-b",
        "UserPromptSubmit",
        None,
        "block",
        "prompt contains a credential",
        0,
        "08:01:58.000",
    ),
]

HOOK_RUNS = [
    # (session_id, event, tool_call_id, event_id, hook, outcome, duration_ms, clock); ids 1..18
    ("sess-a", "PreToolUse", "call_2", None, "change_freeze", "deny", 1.0, "23:40:10.010"),
    ("sess-a", "PreToolUse", "call_2", None, "require_tests", "deny", 2.0, "23:40:10.020"),
    ("sess-a", "PreToolUse", "call_4", None, "require_tests", "allow", 3.0, "23:41:30.010"),
    ("sess-a", "PreToolUse", "call_4", None, "check_window", "timeout", 5000.0, "23:41:35.010"),
    ("sess-a", "PreToolUse", "call_4", None, "change_freeze", "deny", 1.0, "23:41:35.020"),
    ("sess-a", "PreToolUse", "call_6", None, "require_tests", "allow", 4.0, "23:43:00.010"),
    ("sess-a", "PreToolUse", "call_6", None, "check_window", "allow", 20.0, "23:43:00.030"),
    ("sess-a", "PostToolUse", "call_1", None, "summarize_tests", "error", 15.0, "23:40:06.000"),
    ("sess-b", "PreToolUse", "call_4", None, "protect_secrets", "deny", 0.5, "08:00:40.001"),
    ("sess-b", "PreToolUse", "call_8", None, "confirm_deploy", "ask", 1.5, "08:01:50.001"),
    ("sess-a", "UserPromptSubmit", None, 2, "inject_context", "inject", 4.0, "23:40:01.000"),
    ("sess-b", "UserPromptSubmit", None, 6, "inject_context", "inject", 6.0, "08:00:01.000"),
    ("sess-b", "UserPromptSubmit", None, 7, "inject_context", "invalid", 2.0, "08:01:05.000"),
    ("sess-a", "AgentStop", None, 4, "tests_must_pass", "block", 10.0, "23:44:30.000"),
    ("sess-a", "AgentStop", None, 5, "tests_must_pass", "allow", 8.0, "23:45:30.000"),
    ("sess-b", "SubagentStop", None, 8, "tests_must_pass", "block", 30.0, "08:01:40.000"),
    ("sess-b", "PreToolUse", "call_7", None, "lint_policy", "refused", None, "08:01:30.001"),
    ("sess-a", "PostToolUse", "call_3", None, "summarize_tests", "inject", 12.0, "23:41:01.300"),
]
MATCHERS = {
    "change_freeze": "deploy",
    "require_tests": "deploy",
    "check_window": "deploy",
    "confirm_deploy": "deploy",
    "summarize_tests": "run_tests",
    "lint_policy": "run_tests",
    "protect_secrets": "Read(**/*.env)",
}
HOOK_ERRORS = {
    4: "timed out after 5000 ms",
    8: "KeyError: 'stdout'",
    13: "hook output is not valid JSON",
    17: "hook file is not trusted",
}
HOOK_INJECTED = {11: 120, 12: 250, 18: 80}  # 18: PostToolUse, no events row


# --- building the database ----------------------------------------------------------------


def sql_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*.sql"))


def migrated() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    for path in sql_files(MIGRATIONS):
        conn.executescript(path.read_text(encoding="utf-8"))
    return conn


def with_views() -> sqlite3.Connection:
    conn = migrated()
    for path in sql_files(VIEWS):
        conn.executescript(path.read_text(encoding="utf-8"))
    return conn


def finished(started: str, duration_ms: float) -> str:
    moment = datetime.fromisoformat(started.removesuffix("Z")) + timedelta(milliseconds=duration_ms)
    return moment.isoformat(timespec="milliseconds") + "Z"


def insert_call(
    conn: sqlite3.Connection,
    session_id: str,
    tool_call_id: str,
    tool_name: str,
    arguments: str,
    status: str,
    started_at: str,
    duration_ms: float | None,
    *,
    agent_name: str | None = None,
) -> None:
    key = (session_id, tool_call_id)
    error_type, error_message = CALL_ERRORS.get(key, (None, None))
    finished_at = None
    if status in ("ok", "error", "interrupted") and duration_ms is not None:
        finished_at = finished(started_at, duration_ms)
    conn.execute(
        "INSERT INTO tool_calls (session_id, agent_name, agent_id, agent_type, tool_call_id,"
        " tool_name, tool_call_arguments, final_arguments, arguments_hash, decision, reason,"
        " status, error_type, error_message, started_at, finished_at, duration_ms)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            session_id,
            agent_name,
            "sub-1" if key in SUBAGENT_CALLS else None,
            "Explore" if key in SUBAGENT_CALLS else None,
            tool_call_id,
            tool_name,
            arguments,
            arguments,
            None if key in UNHASHED_CALLS else digest(arguments),
            "deny" if status == "denied" else "allow",
            CALL_REASONS.get(key),
            status,
            error_type,
            error_message,
            started_at,
            finished_at,
            duration_ms,
        ),
    )


def insert_fixture(conn: sqlite3.Connection) -> None:
    conn.executemany(
        "INSERT INTO sessions (session_id, agent_name, tenant, started_at, last_seen_at,"
        " ended_at, end_reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
        SESSIONS,
    )
    agents = {row[0]: row[1] for row in SESSIONS}
    for session_id, call_id, tool, arguments, status, clock, duration in TOOL_CALLS:
        insert_call(
            conn,
            session_id,
            call_id,
            tool,
            arguments,
            status,
            DAY[session_id](clock),
            duration,
            agent_name=agents[session_id],
        )
    for event_id, (session_id, event, agent_id, decision, reason, injected, clock) in enumerate(
        EVENTS, start=1
    ):
        conn.execute(
            "INSERT INTO events (id, session_id, event, agent_id, payload, decision, reason,"
            " injected_chars, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                event_id,
                session_id,
                event,
                agent_id,
                json.dumps({"hook_event_name": event, "session_id": session_id}),
                decision,
                reason,
                injected,
                DAY[session_id](clock),
            ),
        )
    for run_id, (session_id, event, call_id, event_id, hook, outcome, duration, clock) in enumerate(
        HOOK_RUNS, start=1
    ):
        conn.execute(
            "INSERT INTO hook_runs (id, session_id, event, tool_call_id, event_id, hook,"
            " matcher, priority, outcome, duration_ms, error, injected_chars, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run_id,
                session_id,
                event,
                call_id,
                event_id,
                hook,
                MATCHERS.get(hook),
                0,
                outcome,
                duration,
                HOOK_ERRORS.get(run_id),
                HOOK_INJECTED.get(run_id, 0),
                DAY[session_id](clock),
            ),
        )


@pytest.fixture
def db() -> Iterator[sqlite3.Connection]:
    conn = with_views()
    insert_fixture(conn)
    yield conn
    conn.close()


@pytest.fixture
def empty_db() -> Iterator[sqlite3.Connection]:
    conn = with_views()
    yield conn
    conn.close()


def select(conn: sqlite3.Connection, view: str, *columns: str) -> list[tuple[Any, ...]]:
    """The view's rows in the view's own order, restricted to ``columns``."""
    return conn.execute(f"SELECT {', '.join(columns)} FROM {view}").fetchall()


# --- reading the SQL files ----------------------------------------------------------------


def header(path: Path) -> list[str]:
    """The leading ``--`` comment lines of a SQL file."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("--"):
            break
        lines.append(line)
    return lines


def declared_params(path: Path) -> list[str]:
    """The names on the ``-- params: :a :b`` header line (none without one)."""
    for line in header(path):
        if line.startswith("-- params:"):
            tokens = line.removeprefix("-- params:").split()
            assert tokens and all(re.fullmatch(r":[A-Za-z_]\w*", t) for t in tokens), line
            return [t[1:] for t in tokens]
    return []


def used_params(path: Path) -> set[str]:
    """The ``:name`` parameters in the SQL itself (comments and string literals removed)."""
    sql = re.sub(r"--[^\n]*", "", path.read_text(encoding="utf-8"))
    sql = re.sub(r"'(?:[^']|'')*'", "''", sql)
    return set(re.findall(r"(?<![\w:]):([A-Za-z_]\w*)", sql))


def run_saved(conn: sqlite3.Connection, name: str, **params: Any) -> list[tuple[Any, ...]]:
    path = QUERIES / f"{name}.sql"
    return conn.execute(path.read_text(encoding="utf-8"), params).fetchall()


# --- the files themselves -----------------------------------------------------------------


def test_views_folder_holds_exactly_the_documented_views() -> None:
    assert sorted(p.stem for p in sql_files(VIEWS)) == sorted(VIEW_COLUMNS)


def test_queries_folder_holds_exactly_the_documented_queries() -> None:
    assert sorted(p.stem for p in sql_files(QUERIES)) == sorted(SAVED_QUERIES)


@pytest.mark.parametrize(
    "path",
    [VIEWS / f"{name}.sql" for name in VIEW_COLUMNS]
    + [QUERIES / f"{name}.sql" for name in SAVED_QUERIES],
    ids=lambda p: f"{p.parent.name}/{p.name}",
)
def test_sql_file_starts_with_a_one_sentence_description(path: Path) -> None:
    first = header(path)[0]
    assert re.fullmatch(r"-- [A-Z0-9].*\S\.", first), first


@pytest.mark.parametrize("view", VIEW_COLUMNS)
def test_view_file_creates_one_view_named_after_the_file(view: str) -> None:
    conn = migrated()
    query = "SELECT type, name FROM sqlite_master"
    before = set(conn.execute(query))
    conn.executescript((VIEWS / f"{view}.sql").read_text(encoding="utf-8"))
    made = set(conn.execute(query)) - before
    # hook_runs also takes rows written into it (a script written for the old table)
    trigger = {("trigger", "hook_runs_insert")} if view == "hook_runs" else set()
    assert made == {("view", view)} | trigger


@pytest.mark.parametrize("view", VIEW_COLUMNS)
def test_view_has_its_public_columns_in_order(empty_db: sqlite3.Connection, view: str) -> None:
    cursor = empty_db.execute(f"SELECT * FROM {view}")
    assert [d[0] for d in cursor.description] == VIEW_COLUMNS[view]


@pytest.mark.parametrize("view", VIEW_COLUMNS)
def test_view_header_documents_every_column_in_order(view: str) -> None:
    documented = [
        m.group(1)
        for line in header(VIEWS / f"{view}.sql")
        if (m := re.match(r"-- {3}(\w+)(?:\s|$)", line))
    ]
    assert documented == VIEW_COLUMNS[view]


@pytest.mark.parametrize("name", SAVED_QUERIES)
def test_saved_query_declares_exactly_the_params_it_uses(name: str) -> None:
    path = QUERIES / f"{name}.sql"
    assert sorted(declared_params(path)) == sorted(used_params(path))


@pytest.mark.parametrize("name", SAVED_QUERIES)
def test_saved_query_runs_with_its_declared_params(db: sqlite3.Connection, name: str) -> None:
    params = {p: SAVED_QUERIES[name][p] for p in declared_params(QUERIES / f"{name}.sql")}
    assert run_saved(db, name, **params)


# --- tool_stats ---------------------------------------------------------------------------


def test_tool_stats_counts_calls_by_status(db: sqlite3.Connection) -> None:
    columns = ("tool_name", "calls", "ok", "denials", "errors", "interrupted", "last_called_at")
    assert select(db, "tool_stats", *columns) == [
        ("Read", 6, 3, 1, 1, 1, at_b("08:00:50.000")),
        ("deploy", 6, 1, 3, 0, 1, at_b("08:02:00.100")),
        ("run_tests", 6, 4, 0, 2, 0, at_b("08:01:30.000")),
    ]


def test_tool_stats_lists_the_most_called_tool_first(empty_db: sqlite3.Connection) -> None:
    for i, tool in enumerate(["b_tool", "c_tool", "a_tool", "c_tool", "c_tool"]):
        insert_call(empty_db, "s", f"c{i}", tool, "{}", "ok", at_a("10:00:00.000"), 1)
    assert select(empty_db, "tool_stats", "tool_name", "calls") == [
        ("c_tool", 3),
        ("a_tool", 1),
        ("b_tool", 1),
    ]


def test_tool_stats_durations_cover_only_calls_that_ran(db: sqlite3.Connection) -> None:
    # Read ran 5, 8, 12, 20 (the interrupted 99999 is out): ranks 2 and 4 of 4.
    # run_tests ran 400, 900, 1100, 1200, 2500, 3000: ranks 3 and 6 of 6.
    # deploy ran once (denied, pending and interrupted calls have no duration).
    assert select(db, "tool_stats", "tool_name", "p50_ms", "p95_ms", "avg_ms") == [
        ("Read", 8.0, 20.0, 11.25),
        ("deploy", 5000.0, 5000.0, 5000.0),
        ("run_tests", 1100.0, 3000.0, 1516.667),
    ]


# n -> (p50 rank, p95 rank) = (ceil(n / 2), ceil(0.95 * n)); durations are 1..n ms
NEAREST_RANKS = [
    (1, 1, 1),
    (2, 1, 2),
    (3, 2, 3),
    (4, 2, 4),
    (10, 5, 10),
    (19, 10, 19),
    (20, 10, 19),
    (21, 11, 20),
    (40, 20, 38),
    (100, 50, 95),
]


@pytest.mark.parametrize(("n", "p50", "p95"), NEAREST_RANKS)
def test_tool_stats_percentiles_are_nearest_rank(
    empty_db: sqlite3.Connection, n: int, p50: int, p95: int
) -> None:
    # inserted out of order, with statuses whose durations must not count
    for i, ms in enumerate([*range(n, 0, -2), *range(n - 1, 0, -2)]):
        status = "ok" if i % 3 else "error"
        insert_call(empty_db, "s", f"c{i}", "probe", "{}", status, at_a("10:00:00.000"), ms)
    for i, (status, ms) in enumerate(
        [("interrupted", 0.5), ("denied", 0.25), ("pending", 0.1), ("ok", None)]
    ):
        insert_call(empty_db, "s", f"x{i}", "probe", "{}", status, at_a("10:00:00.000"), ms)
    row = empty_db.execute("SELECT p50_ms, p95_ms FROM tool_stats").fetchone()
    assert row == (p50, p95)


def test_tool_stats_durations_are_null_for_a_tool_that_never_ran(
    empty_db: sqlite3.Connection,
) -> None:
    for i, status in enumerate(["denied", "pending", "interrupted"]):
        insert_call(empty_db, "s", f"c{i}", "deploy", "{}", status, at_a("10:00:00.000"), None)
    assert select(empty_db, "tool_stats", "tool_name", "calls", "p50_ms", "p95_ms", "avg_ms") == [
        ("deploy", 3, None, None, None)
    ]


# --- denials ------------------------------------------------------------------------------


def test_denials_list_every_denied_call_newest_first(db: sqlite3.Connection) -> None:
    columns = ("started_at", "session_id", "agent_name", "agent_id", "tool_name", "tool_call_id")
    assert select(db, "denials", *columns) == [
        (at_b("08:01:50.000"), "sess-b", "researcher", None, "deploy", "call_8"),
        (at_b("08:00:40.000"), "sess-b", "researcher", "sub-1", "Read", "call_4"),
        (at_a("23:41:30.000"), "sess-a", "deployer", None, "deploy", "call_4"),
        (at_a("23:40:10.000"), "sess-a", "deployer", None, "deploy", "call_2"),
    ]


def test_denials_carry_the_arguments_and_reason(db: sqlite3.Connection) -> None:
    assert select(db, "denials", "tool_call_arguments", "reason") == [
        (ENV_STAGING_SPACED, "user rejected the ask"),
        (SECRETS, "protect_secrets: **/*.env is off limits"),
        (ENV_PROD, "change freeze in effect"),
        (ENV_PROD, "change freeze in effect"),
    ]


def test_denials_name_the_first_denying_or_failing_hook_of_that_call(
    db: sqlite3.Connection,
) -> None:
    assert select(
        db, "denials", "session_id", "tool_call_id", "hook", "matcher", "hook_outcome"
    ) == [
        # only an 'ask' ran: no denying hook
        ("sess-b", "call_8", None, None, None),
        # sess-a's call_4 has a lower-id timeout: the session must be part of the join
        ("sess-b", "call_4", "protect_secrets", "Read(**/*.env)", "deny"),
        # a fail-closed timeout (id 4) before a deny (id 5): the first one wins
        ("sess-a", "call_4", "check_window", "deploy", "timeout"),
        # two denies (ids 1 and 2): the first one wins
        ("sess-a", "call_2", "change_freeze", "deploy", "deny"),
    ]


# --- failures -----------------------------------------------------------------------------


def test_failures_union_tool_and_hook_failures_newest_first(db: sqlite3.Connection) -> None:
    assert db.execute("SELECT * FROM failures").fetchall() == [
        (
            at_b("08:02:00.100"),  # never finished: started_at
            "tool",
            "sess-b",
            None,
            "deploy",
            "interrupted",
            "call_10",
            None,
            "agent process exited",
        ),
        (
            at_b("08:01:30.001"),
            "hook",
            "sess-b",
            "PreToolUse",
            "lint_policy",
            "refused",
            "call_7",
            None,
            "hook file is not trusted",
        ),
        (
            at_b("08:01:05.000"),
            "hook",
            "sess-b",
            "UserPromptSubmit",
            "inject_context",
            "invalid",
            None,
            None,
            "hook output is not valid JSON",
        ),
        (
            at_b("08:01:02.500"),
            "tool",
            "sess-b",
            None,
            "run_tests",
            "error",
            "call_6",
            "ExitCode",
            "exit status 2",
        ),
        (
            at_b("08:00:30.005"),
            "tool",
            "sess-b",
            None,
            "Read",
            "error",
            "call_3",
            "FileNotFoundError",
            "notes.md",
        ),
        (
            at_a("23:45:09.999"),
            "tool",
            "sess-a",
            None,
            "Read",
            "interrupted",
            "call_7",
            None,
            "interrupted by the user",
        ),
        (
            at_a("23:41:35.010"),
            "hook",
            "sess-a",
            "PreToolUse",
            "check_window",
            "timeout",
            "call_4",
            None,
            "timed out after 5000 ms",
        ),
        (
            at_a("23:40:06.000"),
            "hook",
            "sess-a",
            "PostToolUse",
            "summarize_tests",
            "error",
            "call_1",
            None,
            "KeyError: 'stdout'",
        ),
        (
            at_a("23:40:05.900"),
            "tool",
            "sess-a",
            None,
            "run_tests",
            "error",
            "call_1",
            "ExitCode",
            "exit status 1",
        ),
    ]


# --- slow_hooks ---------------------------------------------------------------------------


def test_slow_hooks_group_by_hook_and_event_slowest_first(db: sqlite3.Connection) -> None:
    assert db.execute("SELECT * FROM slow_hooks").fetchall() == [
        # (hook, event, runs, avg_ms, p95_ms, max_ms, failures)
        ("check_window", "PreToolUse", 2, 2510.0, 5000.0, 5000.0, 1),
        ("tests_must_pass", "SubagentStop", 1, 30.0, 30.0, 30.0, 0),
        ("summarize_tests", "PostToolUse", 2, 13.5, 15.0, 15.0, 1),
        ("tests_must_pass", "AgentStop", 2, 9.0, 10.0, 10.0, 0),
        ("inject_context", "UserPromptSubmit", 3, 4.0, 6.0, 6.0, 1),
        ("require_tests", "PreToolUse", 3, 3.0, 4.0, 4.0, 0),
        ("confirm_deploy", "PreToolUse", 1, 1.5, 1.5, 1.5, 0),
        ("change_freeze", "PreToolUse", 2, 1.0, 1.0, 1.0, 0),
        ("protect_secrets", "PreToolUse", 1, 0.5, 0.5, 0.5, 0),
        # refused before running: counted, but no duration
        ("lint_policy", "PreToolUse", 1, None, None, None, 1),
    ]


@pytest.mark.parametrize(("n", "p95"), [(n, p95) for n, _, p95 in NEAREST_RANKS])
def test_slow_hooks_p95_is_nearest_rank(empty_db: sqlite3.Connection, n: int, p95: int) -> None:
    runs = [("PreToolUse", ms) for ms in [*range(n, 0, -2), *range(n - 1, 0, -2)]]
    runs += [("PreToolUse", None), ("PostToolUse", 0.5)]  # no duration; another event
    empty_db.executemany(
        "INSERT INTO hook_runs (session_id, event, hook, outcome, duration_ms, created_at)"
        " VALUES ('s', ?, 'probe', 'allow', ?, '2026-11-25T10:00:00.000Z')",
        runs,
    )
    row = empty_db.execute(
        "SELECT runs, p95_ms, max_ms FROM slow_hooks WHERE event = 'PreToolUse'"
    ).fetchone()
    assert row == (n + 1, p95, n)


# --- repeated_calls -----------------------------------------------------------------------


def test_repeated_calls_find_only_same_session_tool_and_arguments(db: sqlite3.Connection) -> None:
    # README was read once in each session, the two unhashed sess-b reads are never grouped,
    # and sess-b's one interrupted prod deploy neither repeats nor joins sess-a's statuses
    assert db.execute("SELECT * FROM repeated_calls").fetchall() == [
        (
            "sess-a",
            "run_tests",
            digest(SUITE_UNIT),
            3,
            at_a("23:40:05.000"),
            at_a("23:42:00.000"),
            "error,ok",
            SUITE_UNIT,
        ),
        (
            "sess-a",
            "deploy",
            digest(ENV_PROD),
            3,
            at_a("23:40:10.000"),
            at_a("23:43:00.000"),
            "denied,ok",
            ENV_PROD,
        ),
        (
            "sess-b",
            "run_tests",
            digest(SUITE_ALL),
            2,
            at_b("08:00:10.000"),
            at_b("08:01:00.000"),
            "error,ok",
            SUITE_ALL,
        ),
        (
            "sess-b",
            "deploy",
            digest(ENV_STAGING),
            2,
            at_b("08:01:50.000"),
            at_b("08:02:00.000"),
            "denied,pending",
            ENV_STAGING_SPACED,  # the earliest call's arguments, as sent
        ),
    ]


# --- session_summary ----------------------------------------------------------------------


def test_session_summary_counts_calls_events_and_injections(db: sqlite3.Connection) -> None:
    assert db.execute("SELECT * FROM session_summary").fetchall() == [
        (
            "sess-b",
            "researcher",
            "globex",
            at_b("08:00:00.000"),
            at_b("08:02:00.250"),
            None,
            *(10, 4, 2, 2, 1),  # calls, ok, denied, errors, interrupted
            *(4, 1, 1),  # prompts (one blocked), stops, blocked_stops
            250,
            120.25,
        ),
        (
            "sess-a",
            "deployer",
            "acme",
            at_a("23:40:00.000"),
            at_a("23:45:30.500"),
            at_a("23:45:31.000"),
            *(8, 4, 2, 1, 1),
            *(2, 2, 1),
            200,  # 120 on a prompt + 80 from a PostToolUse hook
            330.5,
        ),
    ]


def test_session_summary_counts_zero_for_a_quiet_session(db: sqlite3.Connection) -> None:
    db.execute(
        "INSERT INTO sessions (session_id, started_at, last_seen_at)"
        " VALUES ('sess-c', '2026-11-27T09:00:00.000Z', '2026-11-27T09:00:00.000Z')"
    )
    row = db.execute("SELECT * FROM session_summary WHERE session_id = 'sess-c'").fetchone()
    assert row[6:] == (0, 0, 0, 0, 0, 0, 0, 0, 0, 0.0)


# --- saved queries ------------------------------------------------------------------------


def test_denials_by_tool_counts_denials_and_the_top_reason(db: sqlite3.Connection) -> None:
    assert run_saved(db, "denials_by_tool") == [
        ("deploy", 3, "change freeze in effect", 2),
        ("Read", 1, "protect_secrets: **/*.env is off limits", 1),
    ]


def test_slowest_hooks_keeps_the_twenty_slowest(empty_db: sqlite3.Connection) -> None:
    empty_db.executemany(
        "INSERT INTO hook_runs (session_id, event, hook, outcome, duration_ms, created_at)"
        " VALUES ('s', 'PreToolUse', ?, 'allow', ?, '2026-11-25T10:00:00.000Z')",
        [(f"hook_{ms:02d}", ms) for ms in range(1, 26)],
    )
    rows = run_saved(empty_db, "slowest_hooks")
    assert [(r[0], r[4]) for r in rows] == [(f"hook_{ms:02d}", ms) for ms in range(25, 5, -1)]


def test_repeated_calls_query_puts_the_most_repeated_first(db: sqlite3.Connection) -> None:
    assert [(r[0], r[1], r[3]) for r in run_saved(db, "repeated_calls")] == [
        ("sess-a", "deploy", 3),  # last at 23:43:00
        ("sess-a", "run_tests", 3),  # last at 23:42:00
        ("sess-b", "deploy", 2),
        ("sess-b", "run_tests", 2),
    ]


def test_session_timeline_interleaves_one_session_in_time_order(db: sqlite3.Connection) -> None:
    rows = run_saved(db, "session_timeline", session="sess-b")
    assert [(r[0], r[1], r[2], r[4]) for r in rows] == [
        # (at, kind, name, status)
        (at_b("08:00:01.000"), "event", "UserPromptSubmit", "allow"),
        (at_b("08:00:05.000"), "tool_call", "Read", "ok"),
        (at_b("08:00:10.000"), "tool_call", "run_tests", "ok"),
        (at_b("08:00:30.000"), "tool_call", "Read", "error"),
        (at_b("08:00:40.000"), "tool_call", "Read", "denied"),
        (at_b("08:00:50.000"), "tool_call", "Read", "ok"),
        (at_b("08:01:00.000"), "tool_call", "run_tests", "error"),
        (at_b("08:01:05.000"), "event", "UserPromptSubmit", "allow"),
        (at_b("08:01:05.000"), "hook_failure", "inject_context", "invalid"),
        (at_b("08:01:30.000"), "tool_call", "run_tests", "ok"),
        (at_b("08:01:30.001"), "hook_failure", "lint_policy", "refused"),
        (at_b("08:01:40.000"), "event", "SubagentStop", "block"),
        (at_b("08:01:50.000"), "tool_call", "deploy", "denied"),
        (at_b("08:01:55.000"), "event", "UserPromptSubmit", "allow"),
        (at_b("08:01:58.000"), "event", "UserPromptSubmit", "block"),
        (at_b("08:02:00.000"), "tool_call", "deploy", "pending"),
        (at_b("08:02:00.100"), "tool_call", "deploy", "interrupted"),
    ]


def test_recent_calls_returns_the_newest_limit_calls(db: sqlite3.Connection) -> None:
    # recorded last (highest id) but started long before: must not come first
    insert_call(db, "sess-a", "call_9", "Read", README, "ok", at_a("23:45:00.000"), 3)
    rows = run_saved(db, "recent_calls", limit=3)
    assert [(r[0], r[1], r[4], r[6]) for r in rows] == [
        (at_b("08:02:00.100"), "sess-b", "deploy", "interrupted"),
        (at_b("08:02:00.000"), "sess-b", "deploy", "pending"),
        (at_b("08:01:50.000"), "sess-b", "deploy", "denied"),
    ]


@pytest.mark.parametrize(
    ("session", "tool", "expected"),
    [
        ("sess-a", "run_tests", 1),
        ("sess-a", "deploy", 1),
        ("sess-b", "deploy", 0),  # denied, pending, interrupted; sess-a's ok deploy is elsewhere
        ("sess-b", "Read", 1),
        ("sess-a", "Bash", 0),
        ("sess-a", "run_*", 1),  # a GLOB, as ctx.ledger.succeeded takes it
        ("sess-b", "deplo?", 0),
        ("sess-a", "Run_tests", 0),  # case-sensitive
        ("sess-z", "run_tests", 0),
    ],
)
def test_tool_succeeded_on_the_fixture(
    db: sqlite3.Connection, session: str, tool: str, expected: int
) -> None:
    assert run_saved(db, "tool_succeeded", session=session, tool=tool) == [(expected,)]


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ((), 0),
        (("error",), 0),
        (("denied", "pending", "interrupted"), 0),
        (("error", "ok"), 1),
        (("ok",), 1),
    ],
)
def test_tool_succeeded_needs_an_ok_call_of_that_tool_in_that_session(
    db: sqlite3.Connection, statuses: tuple[str, ...], expected: int
) -> None:
    # sess-c also has an ok deploy, and run_tests succeeded in sess-a and sess-b
    insert_call(db, "sess-c", "call_0", "deploy", ENV_PROD, "ok", at_b("09:00:00.000"), 10)
    for i, status in enumerate(statuses, start=1):
        insert_call(
            db, "sess-c", f"call_{i}", "run_tests", SUITE_UNIT, status, at_b("09:00:01.000"), 5
        )
    assert run_saved(db, "tool_succeeded", session="sess-c", tool="run_tests") == [(expected,)]
