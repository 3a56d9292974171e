"""``hookrails hook --record-only`` closes every call's row, and ``--covers`` catches an
install the definition's matchers have moved past. In-process (``hook_command.run``);
tests/processes/test_hook_command.py runs the real processes, tests/e2e/test_claude_install.py
the real CLI."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from guardrails.claude_code import hook_command
from guardrails.claude_code.hook_command import HookOptions, parse_args
from guardrails.definition.install_plan import coverage_tag, plan_matchers

AGENT = """\
name: rec
hooks:
  PreToolUse:
    - matcher: "Bash|Write"
      hooks: [{use: ask, with: {reason: "needs a human"}}]
  PostToolUse:
    - matcher: "Write"
      hooks: [{use: inject, with: {text: "written"}}]
"""


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    (tmp_path / "agent.yaml").write_text(AGENT)
    monkeypatch.setenv("HOOKRAILS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "agent.yaml", str(tmp_path / "ledger.db")


def call(
    options: HookOptions, payload: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    code = hook_command.run(options, json.dumps(payload).encode())
    out, err = capsys.readouterr()
    return code, out, err


def rows(ledger: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(ledger) as db:
        return db.execute(
            "SELECT tool_call_id, tool_name, decision, status, error_message FROM tool_calls "
            "ORDER BY id"
        ).fetchall()


def tool_event(name: str, tool: str, call_id: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": "s1",
        "cwd": "/project",
        "hook_event_name": name,
        "tool_name": tool,
        "tool_input": {"command": "ls"} if tool == "Bash" else {"file_path": "/project/a"},
        "tool_use_id": call_id,
        **fields,
    }


def test_rows_are_closed_or_opened_and_calls_claude_never_ran_are_interrupted(
    setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config, ledger = setup
    decide = HookOptions(str(config), event="PreToolUse", ledger=ledger)
    for call_id in ("toolu_ran", "toolu_refused"):
        code, out, _ = call(decide, tool_event("PreToolUse", "Bash", call_id), capsys)
        assert code == 0 and '"ask"' in out
    recorder = HookOptions(
        str(config), event="PostToolUse", ledger=ledger, record_only=True, except_matcher="Write"
    )
    post = tool_event("PostToolUse", "Bash", "toolu_ran", tool_response={"stdout": "x"})
    assert call(recorder, post, capsys) == (0, "{}\n", "")
    read = tool_event("PostToolUse", "Read", "toolu_read", tool_response="text")
    assert call(recorder, read, capsys)[0] == 0  # no deciding handler heard it: a new row
    write = tool_event("PostToolUse", "Write", "toolu_write", tool_response="ok")
    assert call(recorder, write, capsys)[0] == 0  # the deciding handler records it: skipped
    batch = HookOptions(str(config), event="PostToolBatch", ledger=ledger, record_only=True)
    calls = [
        {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "toolu_ran", "tool_response": "x"},
        {"tool_name": "Bash", "tool_input": {}, "tool_use_id": "toolu_refused",
         "tool_response": "needs a human"},
    ]  # fmt: skip
    payload = {"session_id": "s1", "hook_event_name": "PostToolBatch", "tool_calls": calls}
    assert call(batch, payload, capsys) == (0, "{}\n", "")
    assert rows(ledger) == [
        ("toolu_ran", "Bash", "ask", "ok", None),
        ("toolu_refused", "Bash", "ask", "interrupted",
         "Claude Code did not run this call; it told the model: needs a human"),
        ("toolu_read", "Read", "allow", "ok", None),
    ]  # fmt: skip
    # a PostToolUse recorded after the batch (both are async) sets the row right again
    late = tool_event("PostToolUse", "Bash", "toolu_refused", tool_response="ran after all")
    assert call(recorder, late, capsys)[0] == 0
    assert rows(ledger)[1][3:] == ("ok", None)


@pytest.mark.parametrize(
    "stdin",
    [b"not json", b"[]", b'{"hook_event_name": "PreToolUse", "tool_name": "Bash"}',
     b'{"hook_event_name": "PostToolBatch", "tool_calls": 3}'],
)  # fmt: skip
def test_a_record_only_handler_never_blocks(
    stdin: bytes, setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config, ledger = setup
    options = HookOptions(str(config), event="PostToolUse", ledger=ledger, record_only=True)
    code = hook_command.run(options, stdin)
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")  # Claude's non-blocking error, never exit 2
    assert err.startswith("hookrails: could not record this event") and err.count("\n") == 1


def test_no_ledger_records_nothing(
    setup: tuple[Path, str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    config, _ = setup
    options = HookOptions(str(config), event="PostToolUse", no_ledger=True, record_only=True)
    post = tool_event("PostToolUse", "Read", "toolu_1", tool_response="x")
    assert call(options, post, capsys) == (0, "{}\n", "")
    assert not list(tmp_path.glob("**/*.db"))


def test_a_stale_install_refuses_pre_tool_use_and_warns_elsewhere(
    setup: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    config, ledger = setup
    current = coverage_tag(plan_matchers("PreToolUse", [("Bash|Write", False)]))
    stale = coverage_tag(plan_matchers("PreToolUse", [("Bash", False)]))  # before Write was added
    options = HookOptions(str(config), event="PreToolUse", ledger=ledger, covers=current)
    assert call(options, tool_event("PreToolUse", "Bash", "toolu_1"), capsys)[0] == 0
    options.covers = stale
    code, out, err = call(options, tool_event("PreToolUse", "Bash", "toolu_2"), capsys)
    assert (code, out) == (2, "")
    assert "were installed for other matchers" in err and "claude install" in err
    assert rows(ledger)[1][:4] == ("toolu_2", "Bash", "deny", "denied")
    post = HookOptions(str(config), event="PostToolUse", ledger=ledger, covers="00000000")
    code, out, _ = call(post, tool_event("PostToolUse", "Write", "t3", tool_response="x"), capsys)
    assert code == 0 and "were installed for other matchers" in json.loads(out)["systemMessage"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["-c", "a.yaml", "--record-only", "--except", "Bash|Write"], (True, "Bash|Write", None)),
        (["-c", "a.yaml", "--covers=1a2b3c4d"], (False, None, "1a2b3c4d")),
        (["-c", "a.yaml", "--except", "Bash"], "--except goes with --record-only"),
        (["-c", "a.yaml", "--covers"], "--covers needs a value"),
    ],
)
def test_the_new_options_are_read(argv: list[str], expected: Any) -> None:
    if isinstance(expected, str):
        with pytest.raises(ValueError, match=expected):
            parse_args(argv)
        return
    opts = parse_args(argv)
    assert (opts.record_only, opts.except_matcher, opts.covers) == expected
