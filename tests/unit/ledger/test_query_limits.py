"""``hookrails ledger query`` limits and odd stored text (issue #10 §3): a query that never
ends (a recursive CTE without a bound) is stopped after ``--timeout`` seconds of SQLite work
with one clear error; a string stored with a lone surrogate can be queried and printed."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from guardrails import AgentDefinition, Guard, Ledger, LedgerError
from guardrails.cli.main import cli
from guardrails.ledger.admin import tail_calls
from guardrails.ledger.query import DEFAULT_TIMEOUT, run_query

FOREVER = "with recursive c(x) as (select 1 union all select x + 1 from c) "
#: (id, a query that never ends)
ENDLESS = [
    ("aggregate", FOREVER + "select count(*) from c"),
    ("rows", FOREVER + "select x from c"),
    ("join", FOREVER + "select count(*) from c as a join c as b on a.x = b.x"),
    (
        "no-recursion",
        "select count(*) from (select 1 from tool_calls, tool_calls, tool_calls, tool_calls,"
        " tool_calls, tool_calls, tool_calls, tool_calls, tool_calls, tool_calls)",
    ),
]


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[str]:
    path = str(tmp_path / "ledger.db")
    with Ledger(path) as led:
        guard = Guard(AgentDefinition(), ledger=led)
        for i in range(30):
            guard.sync.run_tool("echo", {"i": i}, lambda i: i)
    yield path


def _run(*args: str | os.PathLike[str]) -> Result:
    return CliRunner().invoke(cli, [os.fspath(a) for a in args])


@pytest.mark.parametrize(("id_", "sql"), ENDLESS, ids=[e[0] for e in ENDLESS])
def test_a_query_that_never_ends_is_stopped_with_one_clear_error(
    ledger: str, id_: str, sql: str
) -> None:
    with pytest.raises(LedgerError) as info:
        result = run_query(ledger, sql, timeout=0.2)
        for _ in result.rows:
            pass
    message = str(info.value)
    assert info.value.kind == "query"
    assert "0.2 s" in message and "--timeout" in message and "no limit" in message
    assert "\n" not in message


def test_the_cli_names_the_limit_and_how_to_raise_it(ledger: str) -> None:
    result = _run("ledger", "query", "-l", ledger, "--timeout", "0.2", ENDLESS[0][1])
    assert result.exit_code == 1 and "Traceback" not in result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: query stopped after 0.2 s")
    assert "--timeout SECONDS" in lines[0]


def test_the_default_limit_applies_without_the_option(ledger: str) -> None:
    assert DEFAULT_TIMEOUT == 30.0
    result = _run("ledger", "query", "--help")
    assert "--timeout" in result.output and "30" in result.output


@pytest.mark.slow  # reads rows over a second, on purpose
def test_time_spent_reading_rows_does_not_count(ledger: str) -> None:
    """Only SQLite's work counts, not a slow reader (a pager): 2000 rows read over ~1 s
    with a 0.3 s limit come through."""
    result = run_query(ledger, FOREVER + "select x from c limit 2000", timeout=0.3)
    got = []
    for row in result.rows:
        got.append(row[0])
        time.sleep(0.0005)
    assert got == list(range(1, 2001))


def test_no_limit_with_zero(ledger: str) -> None:
    bounded = "with recursive c(x) as (select 1 union all select x + 1 from c where x < 300000) "
    result = run_query(ledger, bounded + "select count(*) from c", timeout=0)
    assert list(result.rows) == [(300000,)]
    assert _run("ledger", "query", "-l", ledger, "--timeout", "0", "select 1").exit_code == 0


def test_a_negative_limit_is_refused(ledger: str) -> None:
    with pytest.raises(LedgerError, match="--timeout must be 0"):
        run_query(ledger, "select 1", timeout=-1)
    assert _run("ledger", "query", "-l", ledger, "--timeout", "-1", "select 1").exit_code == 2


def test_a_lone_surrogate_can_be_queried_and_printed(tmp_path: Path) -> None:
    """``json_extract`` of such a string gives SQLite text that is not UTF-8; before, the
    whole query failed ("Could not decode to UTF-8") and ``tail`` could not print it."""
    path = str(tmp_path / "ledger.db")
    with Ledger(path) as led:
        Guard(AgentDefinition(), ledger=led).sync.run_tool(
            "Bash", {"command": "echo \ud800"}, lambda command: "ok"
        )
    sql = "select json_extract(tool_call_arguments, '$.command') as c from tool_calls"
    assert list(run_query(path, sql).rows) == [("echo \\ud800",)]
    for fmt in ("table", "json", "jsonl", "csv"):
        result = _run("ledger", "query", "-l", path, "-f", fmt, sql)
        assert result.exit_code == 0, result.output
        assert "\\ud800" in result.stdout
    assert json.loads(_run("ledger", "query", "-l", path, "-f", "json", sql).stdout) == [
        {"c": "echo \\ud800"}
    ]
    [line] = list(tail_calls(path))
    assert "Bash(echo \\ud800)" in line.line()
    assert _run("ledger", "tail", "-l", path).exit_code == 0


def test_tail_shows_the_head_of_capped_arguments(tmp_path: Path) -> None:
    path = str(tmp_path / "ledger.db")
    with Ledger(path, max_arguments=100) as led:
        Guard(AgentDefinition(), ledger=led).sync.run_tool(
            "Bash", {"command": "echo " + "x" * 500}, lambda command: "ok"
        )
    [line] = list(tail_calls(path))
    assert 'Bash([520 bytes, truncated] {"command": "echo xxx' in line.line()
