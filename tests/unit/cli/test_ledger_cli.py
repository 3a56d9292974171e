"""``hookrails ledger ...``: each command over a ledger a real Guard wrote, its formats,
the read-only guarantee, and the error contract (one ``error:`` line, no traceback)."""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import json
import os
import re
import shlex
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import click
import pytest
import sqlite_utils
from click.testing import CliRunner, Result

from guardrails import AgentDefinition, Guard, Ledger
from guardrails.cli.main import cli
from guardrails.ledger.admin import tail_calls
from guardrails.ledger.migrations import SQL_DIR, migrations
from tests._guards import filling_guard
from tests._paths import REPO

README = REPO / "README.md"
LEDGER_DOC = REPO / "docs" / "ledger.md"
DAY = 86400.0


def _close(guard: Guard) -> None:
    assert guard.ledger is not None
    guard.ledger.close()


def _run(*args: str | os.PathLike[str]) -> Result:
    return CliRunner().invoke(cli, [os.fspath(a) for a in args])


def _ok(*args: str | os.PathLike[str]) -> str:
    result = _run(*args)
    assert result.exit_code == 0, (result.output, result.exception)
    return result.stdout


def _one_error(result: Result) -> str:
    """The command failed with exactly one ``error:`` line and no traceback."""
    assert result.exit_code == 1, (result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def _rows(path: str | Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _session(path: str | Path) -> str:
    """The session the tool calls are in."""
    return str(_rows(path, "SELECT session_id FROM tool_calls ORDER BY id LIMIT 1")[0][0])


def _counts(path: str | Path) -> dict[str, int]:
    tables = (
        "tool_calls", "events", "hook_run_sets", "sessions", "idempotency_keys", "session_state",
    )  # fmt: skip
    return {t: _rows(path, f"SELECT count(*) FROM {t}")[0][0] for t in tables}


# --- path -------------------------------------------------------------------------------------


def test_path_follows_option_env_config_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert _ok("ledger", "path").strip() == str(tmp_path / ".hookrails" / "ledger.db")
    (tmp_path / "conf").mkdir()
    config = tmp_path / "conf" / "agent.yaml"
    config.write_text("name: a\nledger: logs/agent.db\n")
    assert _ok("ledger", "path", "--config", config).strip() == str(
        tmp_path / "conf" / "logs" / "agent.db"
    )
    assert _ok("ledger", "path", "-l", "x.db").strip() == str(tmp_path / "x.db")
    monkeypatch.setenv("HOOKRAILS_LEDGER", "env.db")
    assert _ok("ledger", "path").strip() == str(tmp_path / "env.db")
    # the Guard's order: the environment names the file even over the definition's key
    assert _ok("ledger", "path", "--config", config).strip() == str(tmp_path / "env.db")
    assert _ok("ledger", "path", "--ledger", "x.db").strip() == str(tmp_path / "x.db")


def test_config_with_an_invalid_definition_is_one_error(tmp_path: Path) -> None:
    config = tmp_path / "agent.yaml"
    config.write_text("name: [not, a, string]\n")
    assert "agent.yaml" in _one_error(_run("ledger", "status", "--config", config))


# --- status -------------------------------------------------------------------------------------


def test_status_text_and_json(filled_ledger: str) -> None:
    out = _ok("ledger", "status", "-l", filled_ledger)
    assert f"ledger: {filled_ledger}" in out
    assert re.search(r"tool_calls\s+4\b", out) and re.search(r"events\s+3\b", out)
    assert f"schema: version {len(migrations())}, this hookrails knows {len(migrations())}" in out
    assert "spool: none" in out
    data = json.loads(_ok("ledger", "status", "-l", filled_ledger, "--json"))
    assert data["tables"] == _counts(filled_ledger)
    assert data["schema_version"] == data["known_version"] == len(migrations())
    assert data["schema"] == "current"
    assert data["size"] == os.path.getsize(filled_ledger)
    assert data["spools"] == {}
    assert sorted(data["views"]) == sorted(p.stem for p in (Path(SQL_DIR) / "views").glob("*.sql"))


def test_status_shows_a_newer_schema(filled_ledger: str) -> None:
    conn = sqlite3.connect(filled_ledger)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    assert "newer than this hookrails" in _ok("ledger", "status", "-l", filled_ledger)
    assert json.loads(_ok("ledger", "status", "-l", filled_ledger, "--json"))["schema"] == "newer"


# --- query: formats -------------------------------------------------------------------------------

SUMMARY = "select tool_name, status, count(*) as n from tool_calls group by 1, 2 order by 1, 2"
EXPECTED = [
    {"tool_name": "Bash", "status": "denied", "n": 1},
    {"tool_name": "Bash", "status": "ok", "n": 2},
    {"tool_name": "Read", "status": "error", "n": 1},
]


def test_query_table_is_readable(filled_ledger: str) -> None:
    lines = _ok("ledger", "query", "-l", filled_ledger, SUMMARY).splitlines()
    assert lines[0].split() == ["tool_name", "status", "n"]
    assert set(lines[1]) <= {"-", " "}
    assert [line.split() for line in lines[2:]] == [
        [r["tool_name"], r["status"], str(r["n"])] for r in EXPECTED
    ]
    assert lines[2].endswith(" 1") and lines[3].endswith(" 2")  # numbers right-aligned


def test_query_json_jsonl_csv(filled_ledger: str) -> None:
    assert (
        json.loads(_ok("ledger", "query", "-l", filled_ledger, SUMMARY, "-f", "json")) == EXPECTED
    )
    jsonl = _ok("ledger", "query", "-l", filled_ledger, SUMMARY, "--format", "jsonl").splitlines()
    assert [json.loads(line) for line in jsonl] == EXPECTED
    rows = list(
        csv.DictReader(
            io.StringIO(_ok("ledger", "query", "-l", filled_ledger, SUMMARY, "-f", "csv"))
        )
    )
    assert rows == [{k: str(v) for k, v in r.items()} for r in EXPECTED]


def test_query_empty_result_and_nulls(filled_ledger: str) -> None:
    none = "select tool_name from tool_calls where 0"
    assert json.loads(_ok("ledger", "query", "-l", filled_ledger, none, "-f", "json")) == []
    assert _ok("ledger", "query", "-l", filled_ledger, none, "-f", "jsonl") == ""
    assert _ok("ledger", "query", "-l", filled_ledger, none, "-f", "csv") == "tool_name\n"
    assert _ok("ledger", "query", "-l", filled_ledger, none).split() == ["tool_name", "-----------"]
    nulls = "select null as a, 1.5 as b, 'x\ny' as c"
    assert json.loads(_ok("ledger", "query", "-l", filled_ledger, nulls, "-f", "json")) == [
        {"a": None, "b": 1.5, "c": "x\ny"}
    ]
    assert "x\u21b5y" in _ok("ledger", "query", "-l", filled_ledger, nulls)  # one line per row


def test_query_table_cuts_long_cells_unless_asked(filled_ledger: str) -> None:
    long = "select printf('%.200c', 'a') as s"
    assert (
        max(len(line) for line in _ok("ledger", "query", "-l", filled_ledger, long).splitlines())
        == 80
    )
    full = _ok("ledger", "query", "-l", filled_ledger, long, "--max-width", "0")
    assert "a" * 200 in full
    assert (
        json.loads(_ok("ledger", "query", "-l", filled_ledger, long, "-f", "json"))[0]["s"]
        == "a" * 200
    )


def test_query_json_columns_stay_text_for_json_extract(filled_ledger: str) -> None:
    sql = (
        "select json_extract(tool_call_arguments, '$.command') as command from tool_calls "
        "where tool_name = 'Bash' order by id"
    )
    out = json.loads(_ok("ledger", "query", "-l", filled_ledger, sql, "-f", "json"))
    assert [r["command"] for r in out] == ["ls", "ls", "rm -rf build"]


def test_readme_quick_check_prints_a_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    guard = Guard(AgentDefinition(hooks={}), ledger=Ledger())  # .hookrails/ledger.db
    guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out")
    _close(guard)
    command = next(
        line
        for line in README.read_text().splitlines()
        if line.startswith("hookrails ledger query")
    )
    args = shlex.split(command)[1:]
    assert args[:2] == ["ledger", "query"] and "count(*)" in args[2]
    lines = _ok(*args).splitlines()
    assert lines[0].split() == ["tool_name", "status", "count(*)"]
    assert lines[2].split() == ["Bash", "ok", "1"]


# --- query: read-only ----------------------------------------------------------------------------

WRITES = [
    "DROP TABLE tool_calls",
    "UPDATE tool_calls SET status = 'ok'",
    "INSERT INTO sessions (session_id, started_at, last_seen_at) VALUES ('x', 'a', 'b')",
    "DELETE FROM tool_calls",
    "ATTACH DATABASE 'other.db' AS other",
    "PRAGMA user_version = 9",
    "PRAGMA journal_mode = DELETE",
    "CREATE TABLE t (x)",
    "CREATE TEMP TABLE t (x)",
    "CREATE VIEW v AS SELECT 1",
    "DROP VIEW denials",
    "CREATE INDEX i ON tool_calls (reason)",
    "ALTER TABLE tool_calls ADD COLUMN x",
    "VACUUM",
    "REINDEX",
    "BEGIN IMMEDIATE",
]


def _digest(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.parametrize("sql", WRITES)
def test_query_refuses_writes_and_changes_nothing(
    filled_ledger: str, sql: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    before, counts, version = (
        _digest(filled_ledger),
        _counts(filled_ledger),
        _rows(filled_ledger, "PRAGMA user_version"),
    )
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, sql))
    assert line.startswith("error: ledger queries are read-only: ")
    assert "not authorized" in line or "authorization denied" in line
    assert _digest(filled_ledger) == before
    assert (
        _counts(filled_ledger) == counts and _rows(filled_ledger, "PRAGMA user_version") == version
    )
    assert _rows(filled_ledger, "PRAGMA journal_mode") == [("wal",)]
    assert not (tmp_path / "other.db").exists()


def test_query_refuses_two_statements(filled_ledger: str) -> None:
    before = _digest(filled_ledger)
    line = _one_error(
        _run("ledger", "query", "-l", filled_ledger, "select 1; drop table tool_calls")
    )
    assert "one statement" in line
    assert _digest(filled_ledger) == before and _counts(filled_ledger)["tool_calls"] == 4


# --- query: parameters and saved queries ---------------------------------------------------------


def test_query_named_parameters(filled_ledger: str) -> None:
    sql = "select count(*) as n from tool_calls where tool_name = :tool and status = :status"
    out = _ok(
        "ledger",
        "query",
        "-l",
        filled_ledger,
        sql,
        "-p",
        "tool",
        "Bash",
        "-p",
        "status",
        "ok",
        "-f",
        "json",
    )
    assert json.loads(out) == [{"n": 2}]
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, sql, "-p", "tool", "Bash"))
    assert line == "error: missing query parameter :status (-p status VALUE)"
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, "select ?", "-p", "a", "1"))
    assert "positional ? parameters are not supported" in line


def test_query_needs_sql_or_saved_not_both(filled_ledger: str) -> None:
    assert "--saved" in _one_error(_run("ledger", "query", "-l", filled_ledger))
    assert "--saved" in _one_error(
        _run("ledger", "query", "-l", filled_ledger, "select 1", "--saved", "x")
    )


def test_query_sql_errors_are_one_line(filled_ledger: str) -> None:
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, "select * from nope"))
    assert line == "error: query failed: no such table: nope"
    assert "syntax error" in _one_error(_run("ledger", "query", "-l", filled_ledger, "selec 1"))


SAVED = {
    "denials_by_tool": {},
    "slowest_hooks": {},
    "repeated_calls": {},
    "session_timeline": {"session": None},
    "tool_succeeded": {"session": None, "tool": "Bash"},
    "recent_calls": {"limit": "2"},
}


def test_the_saved_queries_are_the_documented_ones() -> None:
    names = {p.stem for p in (Path(SQL_DIR) / "queries").glob("*.sql")}
    assert set(SAVED) <= names


@pytest.mark.parametrize("name", sorted(SAVED))
def test_saved_queries_run(filled_ledger: str, name: str) -> None:
    args: list[str] = []
    for param, value in SAVED[name].items():
        args += ["-p", param, value if value is not None else _session(filled_ledger)]
    rows = json.loads(
        _ok("ledger", "query", "-l", filled_ledger, "--saved", name, *args, "-f", "json")
    )
    if name == "denials_by_tool":
        assert rows[0]["tool_name"] == "Bash" and rows[0]["denials"] == 1
    elif name == "repeated_calls":
        assert [(r["tool_name"], r["times"]) for r in rows] == [("Bash", 2)]
    elif name == "session_timeline":
        assert len(rows) >= 6  # 4 calls, a prompt, a stop
    elif name == "tool_succeeded":
        assert rows == [{"succeeded": 1}]
    elif name == "recent_calls":
        assert len(rows) == 2 and rows[0]["tool_name"] == "Read"
    elif name == "slowest_hooks":
        assert {r["hook"].rsplit(":", 1)[-1] for r in rows} >= {"no_rm", "noop"}


def test_saved_query_parameters_are_checked(filled_ledger: str) -> None:
    sid = _session(filled_ledger)
    params = ["-p", "session", sid, "-p", "tool", "Read"]
    out = _ok(
        "ledger", "query", "-l", filled_ledger, "-s", "tool_succeeded", *params, "-f", "jsonl"
    )
    assert json.loads(out) == {"succeeded": 0}
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, "--saved", "session_timeline"))
    assert line == "error: saved query 'session_timeline' needs -p session VALUE"
    line = _one_error(
        _run(
            "ledger",
            "query",
            "-l",
            filled_ledger,
            "--saved",
            "recent_calls",
            "-p",
            "limit",
            "1",
            "-p",
            "x",
            "2",
        )
    )
    assert "has no parameter :x (it takes :limit)" in line


def test_unknown_saved_query_lists_the_known_ones(filled_ledger: str) -> None:
    line = _one_error(_run("ledger", "query", "-l", filled_ledger, "--saved", "nope"))
    assert line.startswith("error: no saved query 'nope'; saved queries: ")
    for name in SAVED:
        assert name in line


# --- views ---------------------------------------------------------------------------------------


def test_views_lists_views_with_columns_and_saved_queries(filled_ledger: str) -> None:
    out = _ok("ledger", "views", "-l", filled_ledger)
    for p in (Path(SQL_DIR) / "views").glob("*.sql"):
        first = p.read_text().splitlines()[0].removeprefix("-- ")
        assert f"  {p.stem}  {first}" in out
    assert "tool_name, calls, ok" in out  # tool_stats' columns
    for p in (Path(SQL_DIR) / "queries").glob("*.sql"):
        first = p.read_text().splitlines()[0].removeprefix("-- ")
        assert f"  {p.stem}  {first}" in out
    assert "[-p session … -p tool …]" in out


def test_views_without_a_ledger_uses_the_schema(tmp_path: Path) -> None:
    out = _ok("ledger", "views", "-l", tmp_path / "none.db")
    assert "the schema this hookrails creates" in out and "denials" in out
    assert not (tmp_path / "none.db").exists()


# --- tail ----------------------------------------------------------------------------------------


def test_tail_prints_one_line_per_call(filled_ledger: str) -> None:
    lines = _ok("ledger", "tail", "-l", filled_ledger).splitlines()
    assert len(lines) == 4
    sid = _session(filled_ledger)[:8]
    assert all(line.split()[2] == sid for line in lines)
    assert [line.split()[3:5] for line in lines] == [
        ["ok", "allow"], ["ok", "allow"], ["denied", "deny"], ["error", "allow"]
    ]  # fmt: skip
    assert lines[0].endswith("Bash(ls)") and " ms  " in lines[0]
    assert "Bash(rm -rf build)  no rm -rf" in lines[2]
    assert lines[3].endswith("Read(notes.txt)  RuntimeError: disk on fire")
    assert _ok("ledger", "tail", "-l", filled_ledger, "-n", "1").splitlines() == lines[-1:]
    assert _ok("ledger", "tail", "-l", filled_ledger, "-n", "0") == ""


def test_tail_follow_library_sees_new_and_finished_calls(filled_ledger: str) -> None:
    guard = filling_guard(filled_ledger)
    polling = threading.Event()
    stop = threading.Event()

    def sleep(seconds: float) -> None:
        polling.set()
        time.sleep(seconds)

    def write() -> None:
        polling.wait(5)
        guard.sync.pre_tool_use("Bash", {"command": "make"}, tool_use_id="t-slow")
        time.sleep(0.05)
        guard.sync.post_tool_use("Bash", {"command": "make"}, "built", tool_use_id="t-slow")
        guard.sync.run_tool("Bash", {"command": "make test"}, lambda command: "passed")

    writer = threading.Thread(target=write)
    writer.start()
    seen = []
    try:
        calls = tail_calls(
            str(filled_ledger),
            1,
            follow=True,
            interval=0.01,
            stop=stop.is_set,
            max_polls=1000,
            sleep=sleep,
        )
        for call in calls:
            seen.append((call.tool_name, call.arguments, call.status))
            if call.arguments == '{"command": "make test"}' and call.status == "ok":
                stop.set()
    finally:
        writer.join()
        _close(guard)
    assert seen[0] == ("Read", '{"file_path": "notes.txt"}', "error")  # the last one before
    make = [s for s in seen if s[1] == '{"command": "make"}']
    assert make[-1][2] == "ok" and len(make) in (1, 2)  # shown pending, then again once done
    assert seen[-1] == ("Bash", '{"command": "make test"}', "ok")
    assert stop.is_set()


@pytest.mark.slow
def test_tail_follow_cli_runs_while_another_thread_writes(filled_ledger: str) -> None:
    guard = filling_guard(filled_ledger)
    done = threading.Event()

    def write() -> None:
        time.sleep(0.3)
        for i in range(5):
            guard.sync.run_tool("Bash", {"command": f"echo {i}"}, lambda command: command)
            time.sleep(0.02)
        done.set()

    writer = threading.Thread(target=write)
    writer.start()
    started = time.monotonic()
    try:
        result = _run(
            "ledger",
            "tail",
            "-l",
            filled_ledger,
            "-n",
            "0",
            "--follow",
            "--interval",
            "0.05",
            "--max-polls",
            "60",
        )
    finally:
        writer.join()
        _close(guard)
    assert result.exit_code == 0, result.output
    assert done.is_set() and time.monotonic() - started < 10
    lines = result.stdout.splitlines()
    echoed = [re.search(r"Bash\(echo (\d)\)", line) for line in lines]
    numbers = [int(m.group(1)) for m in echoed if m]
    assert numbers == sorted(set(numbers)) and numbers[-1] == 4  # each once, in order


def test_tail_follow_stops_after_max_polls(filled_ledger: str) -> None:
    slept: list[float] = []
    calls = list(
        tail_calls(
            str(filled_ledger), 2, follow=True, interval=0.5, max_polls=3, sleep=slept.append
        )
    )
    assert len(calls) == 2 and slept == [0.5, 0.5, 0.5]


# --- export --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "table", ["tool_calls", "events", "hook_runs", "sessions", "idempotency_keys"]
)
def test_export_every_table_as_json_lines(filled_ledger: str, table: str) -> None:
    out = _ok("ledger", "export", "-l", filled_ledger, "--table", table)
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == _rows(filled_ledger, f"SELECT count(*) FROM {table}")[0][0]
    columns = [r[1] for r in _rows(filled_ledger, f"PRAGMA table_info({table})")]
    assert all(list(r) == columns for r in rows)


def test_export_default_is_tool_calls_jsonl_to_a_file(filled_ledger: str, tmp_path: Path) -> None:
    target = tmp_path / "calls.jsonl"
    result = _run("ledger", "export", "-l", filled_ledger, "--format", "jsonl", "-o", target)
    assert result.exit_code == 0 and result.stdout == ""
    assert result.stderr.strip() == f"wrote 4 rows of tool_calls to {target}"
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["id"] for r in rows] == [1, 2, 3, 4]
    assert rows[0]["tool_call_arguments"] == '{"command": "ls"}'  # exactly as stored
    assert rows[2]["status"] == "denied" and rows[2]["reason"].startswith("no rm -rf")
    assert len(json.loads(_ok("ledger", "export", "-l", filled_ledger, "--format", "json"))) == 4
    table = list(
        csv.reader(io.StringIO(_ok("ledger", "export", "-l", filled_ledger, "--format", "csv")))
    )
    assert len(table) == 5 and table[3][table[0].index("reason")].startswith("no rm -rf\n")


# --- prune ---------------------------------------------------------------------------------------


def _aged(path: Path) -> tuple[float, str]:
    """Calls 40 days old in one session, then both old and new ones in another."""
    now = time.time()
    clock = [now - 40 * DAY]
    guard = filling_guard(path, clock=lambda: clock[0])
    old = guard.session("old-session")
    old.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out")
    old.sync.run_tool("Bash", {"command": "rm -rf /"}, lambda command: "no")
    old.sync.agent_stop(last_assistant_message="bye")
    mixed = guard.session("mixed-session")
    mixed.sync.run_tool("Bash", {"command": "pwd"}, lambda command: "/")
    clock[0] = now
    mixed.sync.run_tool("Bash", {"command": "whoami"}, lambda command: "me")
    _close(guard)
    return now, "old-session"


def test_prune_keep_days_dry_run_then_for_real(tmp_path: Path) -> None:
    path = tmp_path / "aged.db"
    _aged(path)
    before = _counts(path)
    digest = _digest(path)
    out = _ok("ledger", "prune", "-l", path, "--keep-days", "30", "--dry-run")
    assert "would delete" in out and "(dry run: nothing changed)" in out
    assert re.search(r"tool_calls\s+3\b", out) and re.search(r"sessions\s+1\b", out)
    assert _counts(path) == before and _digest(path) == digest
    old_sets = _rows(path, "SELECT count(*) FROM hook_run_sets WHERE session_id = 'old-session'")
    old_runs = old_sets[0][0] + 2  # mixed-session's old pre and post hook run sets
    out = _ok("ledger", "prune", "-l", path, "--keep-days", "30")
    assert re.search(r"tool_calls\s+3\b", out) and re.search(r"events\s+1\b", out)
    assert re.search(rf"hook_run_sets\s+{old_runs}\b", out)
    assert _rows(path, "SELECT count(*) FROM hook_runs") == [(2,)]  # whoami's
    assert _rows(path, "SELECT session_id FROM sessions") == [("mixed-session",)]
    assert _rows(path, "SELECT tool_call_arguments FROM tool_calls") == [('{"command": "whoami"}',)]


def test_prune_before_a_date_or_a_time(tmp_path: Path) -> None:
    path = tmp_path / "aged.db"
    _aged(path)
    out = _ok("ledger", "prune", "-l", path, "--before", "2000-01-01")
    assert "before 2000-01-01T00:00:00.000Z" in out and re.search(r"tool_calls\s+0\b", out)
    assert _counts(path)["tool_calls"] == 4
    out = _ok("ledger", "prune", "-l", path, "--before", "2999-01-31T12:00:00+02:00", "--dry-run")
    assert "before 2999-01-31T10:00:00.000Z" in out
    _ok("ledger", "prune", "-l", path, "--before", "2999-01-31T12:00:00Z")
    assert sum(_counts(path).values()) == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give exactly one of --before DATE and --keep-days N"),
        (("--before", "2026-01-31", "--keep-days", "3"), "give exactly one of"),
        (("--before", "last tuesday"), "is not a date; expected 2026-01-31"),
    ],
)
def test_prune_option_errors(filled_ledger: str, args: tuple[str, ...], message: str) -> None:
    before = _digest(filled_ledger)
    assert message in _one_error(_run("ledger", "prune", "-l", filled_ledger, *args))
    assert _digest(filled_ledger) == before


# --- backup --------------------------------------------------------------------------------------


def test_backup_copies_and_never_overwrites(filled_ledger: str, tmp_path: Path) -> None:
    target = tmp_path / "copy.db"
    out = _ok("ledger", "backup", "-l", filled_ledger, target)
    assert out.startswith(f"backed up {filled_ledger} to {target}")
    assert _counts(target) == _counts(filled_ledger)
    assert _ok("ledger", "query", "-l", target, "select count(*) from denials", "-f", "csv") == (
        "count(*)\n1\n"
    )
    target.write_bytes(b"precious")
    line = _one_error(_run("ledger", "backup", "-l", filled_ledger, target))
    assert line == f"error: {target}: already exists; backup never overwrites " + (
        "(choose a new file or remove it)"
    )
    assert target.read_bytes() == b"precious"


# --- recover -------------------------------------------------------------------------------------


def test_recover_imports_the_spool_and_marks_stale_calls(filled_ledger: str) -> None:
    blocker = sqlite3.connect(filled_ledger, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another process holds the write lock too long
    guard = Guard(
        AgentDefinition(hooks={}),
        ledger=Ledger(filled_ledger, busy_timeout=0.05),
        clock=lambda: 1e9,
    )
    guard.sync.run_tool("Bash", {"command": "date"}, lambda command: "today")
    blocker.execute("ROLLBACK")
    blocker.close()
    guard.sync.pre_tool_use("Bash", {"command": "sleep 99"}, tool_use_id="t-hung")
    _close(guard)
    status = json.loads(_ok("ledger", "status", "-l", filled_ledger, "--json"))
    assert status["spools"] == {f"{filled_ledger}.spool.jsonl": 2}  # pre and post of `date`
    assert "records waiting" in _ok("ledger", "status", "-l", filled_ledger)
    out = _ok("ledger", "recover", "-l", filled_ledger)
    assert out.splitlines() == [
        f"imported 2 spooled records from {filled_ledger}.spool.jsonl",
        "marked 0 unfinished calls interrupted",  # t-hung: no process of its own, not old
    ]
    assert _rows(
        filled_ledger, "SELECT status FROM tool_calls WHERE tool_call_arguments LIKE '%date%'"
    ) == [("ok",)]
    assert not Path(f"{filled_ledger}.spool.jsonl").exists()
    out = _ok("ledger", "recover", "-l", filled_ledger, "--older-than", "5")
    assert out.splitlines()[1] == "marked 1 unfinished calls interrupted"
    assert _rows(filled_ledger, "SELECT status FROM tool_calls WHERE tool_call_id = 't-hung'") == [
        ("interrupted",)
    ]
    assert "spool: none" in _ok("ledger", "status", "-l", filled_ledger)


# --- errors --------------------------------------------------------------------------------------

READ_COMMANDS = [
    ("status",),
    ("query", "select 1"),
    ("tail",),
    ("tail", "--follow", "--max-polls", "1"),
    ("export",),
    ("prune", "--keep-days", "1"),
    ("backup", "BACKUP"),
    ("recover",),
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=" ".join)
def test_a_missing_ledger_is_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    path = tmp_path / "nothing.db"
    args = tuple(str(tmp_path / "b.db") if a == "BACKUP" else a for a in args)
    line = _one_error(_run("ledger", *args, "-l", path))
    assert line.startswith(f"error: {path}: no ledger here yet")
    assert not path.exists() and not (tmp_path / "b.db").exists()


@pytest.mark.parametrize("args", [*READ_COMMANDS, ("views",)], ids=" ".join)
def test_a_corrupt_ledger_is_one_line(tmp_path: Path, args: tuple[str, ...]) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(b"this is not a database, just some text " * 100)
    args = tuple(str(tmp_path / "b.db") if a == "BACKUP" else a for a in args)
    line = _one_error(_run("ledger", *args, "-l", path))
    assert line.startswith(f"error: {path}: ") and "not a database" in line
    assert path.read_bytes().startswith(b"this is not a database")


def test_a_folder_is_not_a_ledger(tmp_path: Path) -> None:
    assert "is a directory" in _one_error(_run("ledger", "status", "-l", tmp_path))


# --- other tools, and import cost ---------------------------------------------------------------


def test_the_file_opens_unchanged_in_sqlite_utils(filled_ledger: str) -> None:
    counts = _counts(filled_ledger)
    database = sqlite_utils.Database(filled_ledger)
    try:
        assert set(database.table_names()) >= set(counts)
        views = {p.stem for p in (Path(SQL_DIR) / "views").glob("*.sql")}
        assert set(database.view_names()) == views
        assert database["tool_calls"].count == counts["tool_calls"] == 4
        assert database["denials"].count == 1
    finally:
        database.close()
    assert _counts(filled_ledger) == counts
    assert json.loads(_ok("ledger", "status", "-l", filled_ledger, "--json"))["tables"] == counts


def _cookbook() -> list[list[str]]:
    text = LEDGER_DOC.read_text()
    section = text[text.index("## SQL cookbook") :]
    end = section.find("\n## ", 3)
    section = section if end == -1 else section[:end]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    return [shlex.split(block)[1:] for block in blocks]


def test_ledger_doc_cookbook_runs(filled_ledger: str) -> None:
    recipes = _cookbook()
    assert len(recipes) >= 4
    prefix = _session(filled_ledger)[:8]
    for args in recipes:
        assert args[:2] == ["ledger", "query"], args
        args = [prefix if a == "9a9795aa" else a for a in args]  # the cookbook's example session
        rows = json.loads(_ok(*args, "-l", filled_ledger, "-f", "json"))
        assert rows, args  # every recipe finds something in this ledger


def test_importing_the_cli_stays_light() -> None:
    code = (
        "import sys, guardrails.cli.main; "
        "print([m for m in ('sqlite_utils', 'tabulate', 'guardrails.ledger.admin', "
        "'guardrails.ledger.sqlite') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    ).stdout
    assert out.strip() == "[]"


def test_cli_choices_match_the_library() -> None:
    from guardrails.ledger import admin as _ledger_ops
    from guardrails.ledger import query as _query_ops

    ledger = cli.commands["ledger"]
    assert isinstance(ledger, click.Group)
    options = {
        (name, p.name): p.type
        for name, command in ledger.commands.items()
        for p in command.params
        if isinstance(p.type, click.Choice)
    }
    assert list(options["query", "fmt"].choices) == list(_query_ops.FORMATS)
    assert set(options["export", "fmt"].choices) == set(_query_ops.FORMATS) - {"table"}
    assert tuple(options["export", "table"].choices) == _ledger_ops.TABLES


@pytest.mark.parametrize("module", ["sqlite3", "psycopg"])
def test_a_database_error_the_library_did_not_word_ends_in_one_line(
    module: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raw driver error (a server that went away mid-command, a file SQLite refuses) is one
    `error:` line with the driver's first line, never a traceback."""
    driver = importlib.import_module(module)  # both are dev dependencies
    from guardrails.ledger import admin

    def fail(path: str) -> None:
        raise driver.OperationalError("connection to server failed: Connection refused\nmore")

    monkeypatch.setattr(admin, "ledger_status", fail)
    result = _run("ledger", "status", "--ledger", tmp_path / "ledger.db")
    assert result.exit_code == 1
    assert result.output == "error: connection to server failed: Connection refused\n"
