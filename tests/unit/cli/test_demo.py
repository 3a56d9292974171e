"""`hookrails demo`: the main job runs every scripted step and leaves it all in the ledger."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardrails.cli.demo_run import DEMO_DEFINITION, load_definition, run_demo
from guardrails.cli.main import cli


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory):
    base = tmp_path_factory.mktemp("demo")
    work = base / "work"
    work.mkdir()
    return run_demo(str(base / "ledger.db"), workdir=str(work))


def outcomes(report) -> list[tuple[str | None, str, bool]]:
    return [(s.tool or s.event, s.outcome, s.ran) for s in report.steps]


def test_the_session_goes_as_scripted(report) -> None:
    assert outcomes(report) == [
        ("search_docs", "ok", True),
        ("create_ticket", "denied", False),
        ("create_ticket", "ok", True),
        ("create_ticket", "replayed", False),
        ("Write", "denied", False),
        ("SubagentStop", "blocked", False),
        ("Write", "ok", True),
        ("SubagentStop", "allowed", False),
        ("AgentStop", "blocked", False),
        ("AgentStop", "allowed", False),
    ]


def test_denied_and_duplicate_calls_never_ran(report) -> None:
    assert report.executions == {"Write": 1, "create_ticket": 1, "search_docs": 1}
    assert not (Path(report.workdir) / ".env").exists()


def test_invalid_call_gets_an_instruction_and_an_example(report) -> None:
    detail = report.steps[1].detail
    assert "$.body: required field is missing" in detail
    assert "Call create_ticket again" in detail
    assert 'Example of a valid input: {"title"' in detail


def test_duplicate_is_stopped_by_idempotency(report) -> None:
    assert "already ran with the same idempotency key" in report.steps[3].detail


@pytest.mark.parametrize(
    ("step", "needle"),
    [
        (4, "protected path"),
        (5, "REPORT.txt missing"),
        (8, "<promise>DONE</promise>"),
    ],
)
def test_each_refusal_says_why(report, step: int, needle: str) -> None:
    assert needle in report.steps[step].detail


def test_ledger_holds_every_call_and_stop(report) -> None:
    with sqlite3.connect(report.ledger) as db:
        calls = db.execute(
            "select tool_name, status, agent_id from tool_calls where session_id = ? order by id",
            (report.session_id,),
        ).fetchall()
        stops = db.execute(
            "select event, decision from events where session_id = ? and event like '%Stop' "
            "order by id",
            (report.session_id,),
        ).fetchall()
    assert calls == [
        ("search_docs", "ok", None),
        ("create_ticket", "denied", None),
        ("create_ticket", "ok", None),
        ("create_ticket", "denied", None),
        ("Write", "denied", None),
        ("Write", "ok", "writer-1"),
    ]
    assert stops == [
        ("SubagentStop", "block"),
        ("SubagentStop", "allow"),
        ("AgentStop", "block"),
        ("AgentStop", "allow"),
    ]


def test_summary_comes_from_the_ledger(report) -> None:
    assert {"agent": "writer", "tool_name": "Write", "status": "ok", "calls": 1} in report.summary
    assert {r["hook"] for r in report.hooks} == {
        "schema_guardrail",
        "idempotency_guard",
        "protect_paths",
        "require_artifacts",
        "completion_promise",
    }
    assert any(cmd.startswith("datasette ") for cmd in report.explore)
    assert any(" ledger query " in cmd and report.session_id in cmd for cmd in report.explore)


def test_bundled_definition_loads_like_a_users_file() -> None:
    agent = load_definition()
    assert agent.name == "support-agent"
    assert set(agent.hooks) == {
        "PreToolUse",
        "PostToolUse",
        "PostToolUseFailure",
        "SubagentStop",
        "AgentStop",
    }


def test_cli_prints_readable_steps_and_the_explore_commands(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--ledger", str(tmp_path / "l.db")])
    assert result.exit_code == 0, result.output
    assert "DENIED, the tool did not run" in result.output
    assert "DENIED as a duplicate; the stored result is replayed" in result.output
    assert "tool calls by agent, tool and status:" in result.output
    assert f"datasette {tmp_path / 'l.db'}" in result.output
    assert (tmp_path / "demo" / "REPORT.txt").is_file()  # the folder the messages name is kept


def test_cli_json_is_one_document(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["demo", "--json", "--ledger", str(tmp_path / "l.db")])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert [s["outcome"] for s in doc["steps"]][:4] == ["ok", "denied", "ok", "replayed"]
    assert doc["executions"]["create_ticket"] == 1


def test_cli_show_definition_prints_the_yaml() -> None:
    result = CliRunner().invoke(cli, ["demo", "--show-definition"])
    assert result.exit_code == 0
    assert result.output == DEMO_DEFINITION


def test_default_ledger_is_under_the_working_directory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["demo", "--json"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".hookrails" / "ledger.db").is_file()


def test_a_ledger_it_cannot_write_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    ledger = tmp_path / "a-file" / "ledger.db"
    result = CliRunner().invoke(
        cli, ["demo", "--ledger", str(ledger), "--workdir", str(tmp_path / "w")]
    )
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines()[-1].startswith(f"error: {ledger}: cannot write")
    assert "pass --ledger FILE somewhere writable" in result.stderr
    assert not (tmp_path / "w" / "REPORT.txt").exists()  # nothing ran


def test_a_work_folder_it_cannot_create_is_one_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    result = CliRunner().invoke(
        cli,
        ["demo", "--ledger", str(tmp_path / "l.db"), "--workdir", str(tmp_path / "a-file" / "w")],
    )
    assert result.exit_code == 1
    assert "cannot create the demo's work folder" in result.stderr
