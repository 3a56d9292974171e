"""``hookrails explain`` (dry run) and the CLI's error contract: one line, non-zero exit."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardrails.cli.main import cli
from tests._paths import REPO

EXAMPLE = str(REPO / "examples" / "agent.yaml")


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_explain_shows_bindings_outcomes_and_the_decision() -> None:
    code, out, _ = _run(
        "explain",
        EXAMPLE,
        "-e",
        "PreToolUse",
        "-t",
        "Bash",
        "-i",
        '{"command": "git push --force"}',
    )
    assert code == 0
    assert "Bash(git push --force*)" in out and "[argument rule matched]" in out
    assert "hooks:no_force_push" in out and "deny" in out
    assert "decision: deny: force-push is not allowed" in out


def test_explain_json_is_machine_readable() -> None:
    code, out, _ = _run(
        "explain",
        EXAMPLE,
        "-e",
        "PreToolUse",
        "-t",
        "deploy",
        "-i",
        '{"environment": "staging"}',
        "--json",
    )
    data = json.loads(out)
    assert code == 0
    assert data["decision"] == "allow"
    assert data["updated_input"] == {"environment": "staging", "dry_run": True}
    assert [b["argument_rule"] for b in data["bindings"]] == [False, None]
    assert data["claude_output"]["hookSpecificOutput"]["updatedInput"]["dry_run"] is True


def test_explain_runs_prompt_and_stop_events() -> None:
    code, out, _ = _run("explain", EXAMPLE, "-e", "UserPromptSubmit", "--prompt", "hi")
    assert code == 0 and "House style" in out
    code, out, _ = _run("explain", EXAMPLE, "-e", "Stop", "--message", "done", "--json")
    data = json.loads(out)
    assert code == 0 and data["event"]["hook_event_name"] == "Stop"
    assert data["runs"][0]["outcome"] == "noop"


def test_explain_accepts_a_whole_claude_payload(tmp_path: Path) -> None:
    payload = tmp_path / "payload.json"
    payload.write_text(
        json.dumps(
            {
                "session_id": "s",
                "cwd": "/repo",
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": "/repo/.env.local", "content": "x"},
            }
        )
    )
    code, out, _ = _run("explain", EXAMPLE, "-e", "PreToolUse", "--payload", f"@{payload}")
    assert code == 0 and "it is a protected path" in out and ".env.local" in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-e", "Nope", "-t", "Bash"], "unknown event 'Nope'"),
        (["-e", "PreToolUse"], "PreToolUse needs --tool"),
        (["-e", "PreToolUse", "-t", "Bash", "-i", "[1]"], "must be a JSON object"),
    ],
)
def test_explain_errors_are_one_line(args: list[str], words: str) -> None:
    code, out, err = _run("explain", EXAMPLE, *args)
    assert code == 1
    assert err.startswith("error: ") and words in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err + out


def test_bad_json_input_is_a_usage_error() -> None:
    code, _, err = _run("explain", EXAMPLE, "-e", "PreToolUse", "-t", "Bash", "-i", "{nope")
    assert code == 2 and "not valid JSON" in err


def test_missing_definition_file_is_one_line() -> None:
    code, _, err = _run("explain", "missing.yaml", "-e", "Stop")
    assert code == 1 and "missing.yaml: file not found" in err


@pytest.mark.slow
def test_python_dash_m_guardrails_runs_the_cli() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "guardrails",
            "explain",
            EXAMPLE,
            "-e",
            "PreToolUse",
            "-t",
            "Read",
            "-i",
            '{"file_path": "README.md"}',
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    assert "decision: allow" in out
