"""The shipped tool schemas accept what released Claude Code versions sent, and still deny
what none of them accepted (``historical_inputs`` records where each input comes from)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails.builtins import schema_guardrail
from guardrails.builtins.schema.guardrail import ToolSchema
from guardrails.builtins.schema.sources import builtin_schema, builtin_tool_names
from guardrails.cli.main import cli
from tests.unit.builtins.schema.historical_inputs import INVALID, SEEN, Seen

_VERSION = re.compile(r"\d+\.\d+\.\d+\Z")


def _guard() -> Guard:
    definition = AgentDefinition(
        name="history", hooks={"PreToolUse": [HookMatcher(hooks=[schema_guardrail])]}
    )
    return Guard(definition, ledger=False)


def _id(case: Seen) -> str:
    return f"{case.tool}-{case.version}"


@pytest.mark.parametrize("case", SEEN, ids=[_id(c) for c in SEEN])
def test_an_input_a_released_claude_code_sent_is_allowed(case: Seen) -> None:
    decision = _guard().sync.pre_tool_use(case.tool, case.input)
    assert decision.decision == "allow", f"{case.source}: {decision.reason}"


@pytest.mark.parametrize("case", SEEN, ids=[_id(c) for c in SEEN])
def test_the_fast_path_and_jsonschema_agree_on_released_inputs(case: Seen) -> None:
    entry = ToolSchema(case.tool, builtin_schema(case.tool))
    assert entry.is_valid(case.input) is True
    assert entry.validator.is_valid(case.input) is True


@pytest.mark.parametrize("case", SEEN, ids=[_id(c) for c in SEEN])
def test_every_released_input_names_its_source(case: Seen) -> None:
    assert _VERSION.match(case.version)
    assert case.source.startswith(("transcript: ", "schema: "))
    if case.source.startswith("transcript: "):
        assert re.search(r"[\w.-]+/[\w.-]+@[0-9a-f]{7}", case.source), "owner/repo@commit"


def test_every_shipped_tool_has_released_inputs_from_several_eras() -> None:
    for tool in builtin_tool_names():
        versions = {c.version for c in SEEN if c.tool == tool}
        assert versions, f"no released input of {tool}"
    for tool in ("Bash", "Edit", "Grep", "Read", "Task", "TodoWrite"):
        majors = {c.version.split(".")[0] for c in SEEN if c.tool == tool}
        assert len(majors) >= 2, f"{tool}: inputs from one major version only"


def test_each_todo_form_a_release_sent_is_allowed() -> None:
    forms = {frozenset(item) for c in SEEN if c.tool == "TodoWrite" for item in c.input["todos"]}
    assert forms == {
        frozenset({"content", "status", "priority", "id"}),  # 0.2.x to 1.0.65
        frozenset({"content", "status", "id"}),  # 1.0.80
        frozenset({"content", "status", "activeForm"}),  # 1.0.110 and later
    }


@pytest.mark.parametrize(
    ("tool", "tool_input", "path"), INVALID, ids=[f"{t}-{p}" for t, _, p in INVALID]
)
def test_what_no_release_accepted_is_still_denied(
    tool: str, tool_input: dict[str, Any], path: str
) -> None:
    decision = _guard().sync.pre_tool_use(tool, tool_input)
    assert decision.decision == "deny"
    listed = [v["path"] for v in decision.annotations["schema_violations"]]
    assert path in listed


@pytest.mark.parametrize(
    ("tool", "tool_input", "problem", "fix"),
    [
        (
            "TodoWrite",
            {"todos": [{"content": "a", "status": "pending"}]},
            "closest: $.todos[0].activeForm: required field is missing",
            "add $.todos[0].activeForm",
        ),
        (
            "TodoWrite",
            {"todos": [{"content": "a", "status": "done", "activeForm": "A"}]},
            "closest: $.todos[0].status: expected one of",
            "set $.todos[0].status to one of",
        ),
        (
            "Edit",
            {"file_path": "/a", "old_string": "a", "new_string": "b", "replace_all": True,
             "expected_replacements": 2},
            "$.replace_all: cannot be given together with $.expected_replacements",
            "give only one of $.expected_replacements and $.replace_all",
        ),
    ],
)  # fmt: skip
def test_a_denial_of_a_mixed_or_incomplete_shape_says_the_one_fix(
    tool: str, tool_input: dict[str, Any], problem: str, fix: str
) -> None:
    told = _guard().sync.pre_tool_use(tool, tool_input).reason or ""  # reason and hint
    assert problem in told
    assert f"Fix: {fix}" in told
    if tool == "TodoWrite":  # the example shows today's form
        assert '"activeForm": "Running the tests"' in told


# --- hookrails replay of a transcript with every released input ---------------------------


def _transcript(path: Path) -> Path:
    """A main transcript calling each released input in turn, each with a result."""
    lines: list[dict[str, Any]] = []
    sid = "cccccccc-0000-4000-8000-000000000003"
    for n, case in enumerate(SEEN):
        tid = f"toolu_hist{n:03d}"
        base = {"sessionId": sid, "cwd": "/p", "version": case.version}
        stamp = f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.000Z"
        use = {"type": "tool_use", "id": tid, "name": case.tool, "input": case.input}
        lines.append(
            {**base, "type": "assistant", "uuid": f"a{n}", "timestamp": stamp,
             "message": {"id": f"m{n}", "role": "assistant", "content": [use]}}
        )  # fmt: skip
        result = {"type": "tool_result", "tool_use_id": tid, "content": "ok", "is_error": False}
        lines.append(
            {**base, "type": "user", "uuid": f"u{n}", "timestamp": stamp,
             "message": {"role": "user", "content": [result]}}
        )  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_replay_of_older_transcripts_denies_none_of_their_calls(tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "session.jsonl")
    config = tmp_path / "agent.yaml"
    config.write_text(
        "name: history\nhooks:\n  PreToolUse:\n    - hooks: [schema_guardrail]\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        cli, ["replay", str(transcript), "--config", str(config), "--json", "--fail-on", "deny"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)["summary"]
    assert summary["calls"] == len(SEEN)
    assert summary["denied"] == 0
