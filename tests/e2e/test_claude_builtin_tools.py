"""What Claude Code decides about its own tools before any hook runs (real CLI, offline).

* The shipped tool schemas accept whatever the bundled CLI's own schemas accept.
* Claude Code validates a built-in tool's input before PreToolUse: an input it rejects
  never reaches a hook, so ``schema_guardrail`` and ``schema_nudge`` cannot see it.
  An MCP tool's input reaches PreToolUse unvalidated, and its validation error reaches
  PostToolUseFailure: there both built-ins work.
* Claude Code refuses a subagent's Write of ``REPORT*.md`` / ``SUMMARY*.md`` /
  ``FINDINGS*.md`` / ``ANALYSIS*.md`` (any folder, any case) before any hook: the
  artifact names hookrails' demo, examples and docs use are ones it allows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.adapters.claude_agent_sdk import to_sdk_hooks
from guardrails.builtins import schema_guardrail, schema_nudge
from guardrails.builtins.schema.examples import minimal_example
from guardrails.builtins.schema.guardrail import ToolSchema
from guardrails.builtins.schema.sources import builtin_schema, builtin_tool_names
from guardrails.testing import MessagesRequest, RecordingHook, tool_use
from tests._claude_cli import SUBAGENT_REPORT_FILE, CliRun, run_claude
from tests._db import rows

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# --- the bundled CLI's own tool schemas ----------------------------------------------------

#: tools the bundled CLI 2.1.332 offers the model (some only after ToolSearch loads them)
OFFERED = {"Agent", "Bash", "Edit", "NotebookEdit", "Read", "WebFetch", "WebSearch", "Write"}
#: fields a release offered that the shipped schemas refuse on purpose, and why
REFUSED = {
    # 2.1.30 only: "pre-computed sed edit result from preview"; it writes newContent to
    # filePath while the command names no file, so a guard reading the command is blind
    ("Bash", "_simulatedSedEdit"): "writes a file the command does not name",
}


@pytest.fixture(scope="module")
def cli_schemas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Each tool's input schema as the bundled CLI sends it to the model."""
    deferred = ",".join(sorted(set(builtin_tool_names()) - {"Agent", "Bash", "Edit", "Read"}))
    script = [tool_use("ToolSearch", {"query": f"select:{deferred}", "max_results": 20}), "Done."]
    run = run_claude(script, tmp_path_factory.mktemp("schemas"), allowed_tools=("ToolSearch",))
    found: dict[str, Any] = {}
    for request in run.requests:
        for spec in request.body.get("tools") or []:
            if isinstance(spec, dict) and isinstance(spec.get("input_schema"), dict):
                found[spec["name"]] = spec["input_schema"]
    return found


def test_the_bundled_cli_offers_the_tools_we_compare(cli_schemas: dict[str, Any]) -> None:
    assert set(cli_schemas) & set(builtin_tool_names()) >= OFFERED


@pytest.mark.parametrize("tool", sorted(OFFERED))
def test_every_field_the_cli_offers_is_one_the_shipped_schema_knows(
    tool: str, cli_schemas: dict[str, Any]
) -> None:
    theirs, ours = cli_schemas[tool], builtin_schema(tool)
    assert ours is not None
    unknown = set(theirs.get("properties", {})) - set(ours["properties"])
    assert {(tool, f) for f in unknown} <= set(REFUSED), f"{tool}: {sorted(unknown)}"
    assert set(ours.get("required", [])) <= set(theirs.get("required", []))


@pytest.mark.parametrize("tool", sorted(OFFERED))
def test_an_input_with_every_field_the_cli_offers_is_allowed(
    tool: str, cli_schemas: dict[str, Any]
) -> None:
    props = cli_schemas[tool].get("properties", {})
    full = {
        name: minimal_example(sub) for name, sub in props.items() if (tool, name) not in REFUSED
    }
    entry = ToolSchema(tool, builtin_schema(tool))
    assert entry.violations(full) == [], json.dumps(full)
    assert entry.is_valid(full)


# --- validation before PreToolUse: built-ins and MCP tools -------------------------------

TICKET_SCHEMA = {
    "type": "object",
    "properties": {"title": {"type": "string"}, "priority": {"enum": ["low", "high"]}},
    "required": ["title", "priority"],
    "additionalProperties": False,
}

#: (label, tool, input, the CLI's own message, or None when its validation lets it through)
CHECKED: list[tuple[str, str, dict[str, Any], str | None]] = [
    ("write-no-content", "Write", {"file_path": "{cwd}/a.txt"},
     "The required parameter `content` is missing"),
    ("write-content-number", "Write", {"file_path": "{cwd}/b.txt", "content": 5},
     "The parameter `content` type is expected as `string` but provided as `number`"),
    ("write-unknown-field", "Write", {"file_path": "{cwd}/c.txt", "content": "x", "mode": 1},
     "An unexpected parameter `mode` was provided"),
    ("bash-command-number", "Bash", {"command": 7},
     "The parameter `command` type is expected as `string` but provided as `number`"),
    ("mcp-priority-number", "mcp__desk__create_ticket", {"title": "t", "priority": 1}, None),
    ("mcp-no-priority", "mcp__desk__add_note", {"title": "t"}, None),
]  # fmt: skip


def _input(tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {
        k: v.replace("{cwd}", str(cwd)) if isinstance(v, str) else v for k, v in tool_input.items()
    }


@pytest.fixture(scope="module")
def checked_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path, RecordingHook]:
    from claude_agent_sdk import create_sdk_mcp_server, tool

    @tool("create_ticket", "File a ticket", TICKET_SCHEMA)
    async def create_ticket(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "filed"}]}

    @tool("add_note", "Add a note", TICKET_SCHEMA)
    async def add_note(args: dict[str, Any]) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": "noted"}]}

    tmp = tmp_path_factory.mktemp("checked")
    db = tmp / "ledger.db"
    seen = RecordingHook()
    definition = AgentDefinition(
        name="checked",
        tools={
            "mcp__desk__create_ticket": {"schema": TICKET_SCHEMA},
            "mcp__desk__add_note": {"schema": TICKET_SCHEMA},
        },
        hooks={
            "PreToolUse": [
                HookMatcher(hooks=[seen], priority=1),
                HookMatcher(
                    matcher="Write|Bash|mcp__desk__create_ticket", hooks=[schema_guardrail]
                ),
            ],
            "PostToolUseFailure": [HookMatcher(hooks=[seen, schema_nudge])],
        },
    )
    guard = Guard(definition, ledger=Ledger(db))
    cwd = tmp / "project"
    calls = [
        tool_use(t, _input(i, cwd), id=f"toolu_chk_{n}") for n, (_, t, i, _) in enumerate(CHECKED)
    ]
    run = run_claude(
        lambda r: calls if r.turn == 0 else "Done.",
        tmp,
        hooks=to_sdk_hooks(guard),
        allowed_tools=("Bash", "Write", "mcp__desk__create_ticket", "mcp__desk__add_note"),
        mcp_servers={"desk": create_sdk_mcp_server("desk", tools=[create_ticket, add_note])},
    )
    return run, db, seen


@pytest.mark.parametrize(
    ("label", "tool", "cli_message"),
    [(label, tool, msg) for label, tool, _, msg in CHECKED if msg is not None],
)
def test_claude_code_rejects_bad_built_in_input_before_any_hook(
    label: str, tool: str, cli_message: str, checked_run: tuple[CliRun, Path, RecordingHook]
) -> None:
    run, db, seen = checked_run
    tid = f"toolu_chk_{[c[0] for c in CHECKED].index(label)}"
    text = run.result_text(tid)
    assert f"InputValidationError: {tool} failed" in text and cli_message in text
    assert "does not match its schema" not in text  # schema_guardrail never saw it
    assert tid not in {e.tool_use_id for e in seen.events}  # nor any other hook
    assert rows(db, "SELECT 1 FROM tool_calls WHERE tool_call_id = ?", tid) == []
    after = next(r for r in run.requests if r.result_for(tid) is not None)
    assert f"PostToolUseFailure:{tool}" not in after.text()  # schema_nudge neither
    assert f"{tool} input fields:" not in after.text()


def test_schema_guardrail_denies_a_bad_mcp_input_with_its_instruction(
    checked_run: tuple[CliRun, Path, RecordingHook],
) -> None:
    run, db, _ = checked_run
    text = run.result_text("toolu_chk_4")
    assert "mcp__desk__create_ticket input does not match its schema" in text
    assert '$.priority: expected one of "low", "high"' in text
    assert "Example of a valid input:" in text
    (row,) = rows(db, "SELECT status FROM tool_calls WHERE tool_call_id = 'toolu_chk_4'")
    assert row == {"status": "denied"}


def test_schema_nudge_answers_an_mcp_validation_error(
    checked_run: tuple[CliRun, Path, RecordingHook],
) -> None:
    run, db, seen = checked_run
    failures = [e for e in seen.events if e.event_name == "PostToolUseFailure"]
    assert [e.tool_use_id for e in failures] == ["toolu_chk_5"]
    assert "'priority' is a required property" in (failures[0].error or "")
    after = next(r for r in run.requests if r.result_for("toolu_chk_5") is not None)
    shown = after.text()
    assert "PostToolUseFailure:mcp__desk__add_note hook additional context:" in shown
    assert "mcp__desk__add_note input fields:" in shown
    (row,) = rows(db, "SELECT status FROM tool_calls WHERE tool_call_id = 'toolu_chk_5'")
    assert row == {"status": "error"}


# --- a subagent's report files -----------------------------------------------------------

#: (file a subagent writes with Write, whether Claude Code refuses it)
SUBAGENT_WRITES: list[tuple[str, bool]] = [
    ("report.md", True),
    ("findings.md", True),
    ("summary.md", True),
    ("analysis.md", True),
    ("REPORT.md", True),
    ("Summary-final.md", True),
    ("notes/analysis.md", True),
    ("docs/report.md", True),
    ("REPORT.txt", False),  # what hookrails' demo, examples and docs use
    ("notes/report.txt", False),
    ("results.md", False),
    ("my-report.md", False),
]


@pytest.fixture(scope="module")
def subagent_writes(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, RecordingHook]:
    from claude_agent_sdk import AgentDefinition as SdkAgent

    tmp = tmp_path_factory.mktemp("writes")
    cwd = tmp / "project"
    (cwd / "notes").mkdir(parents=True)
    (cwd / "docs").mkdir()
    (cwd / "main").mkdir()
    seen = RecordingHook()
    guard = Guard(
        AgentDefinition(name="lead", hooks={"PreToolUse": [HookMatcher(hooks=[seen])]}),
        ledger=False,
    )
    writes = [
        tool_use("Write", {"file_path": str(cwd / name), "content": "x\n"}, id=f"toolu_sub_{n}")
        for n, (name, _) in enumerate(SUBAGENT_WRITES)
    ]
    main_write = tool_use(
        "Write", {"file_path": str(cwd / "main" / "report.md"), "content": "x\n"}, id="toolu_main"
    )

    def script(request: MessagesRequest) -> Any:
        if request.agent_id is None:
            if request.turn == 0:
                agent = {"description": "Write files", "prompt": "Write them",
                         "subagent_type": "writer", "run_in_background": False}  # fmt: skip
                return [tool_use("Agent", agent, id="toolu_agent"), main_write]
            return "Done."
        return writes if request.turn == 0 else "Written."

    run = run_claude(
        script,
        tmp,
        hooks=to_sdk_hooks(guard),
        agents={"writer": SdkAgent(description="Writes files", prompt="Write.", tools=["Write"])},
        allowed_tools=("Agent", "Write"),
    )
    return run, seen


@pytest.mark.parametrize(("name", "refused"), SUBAGENT_WRITES)
def test_claude_code_refuses_a_subagents_report_file_before_any_hook(
    name: str, refused: bool, subagent_writes: tuple[CliRun, RecordingHook]
) -> None:
    run, seen = subagent_writes
    tid = f"toolu_sub_{[n for n, _ in SUBAGENT_WRITES].index(name)}"
    fired = tid in {e.tool_use_id for e in seen.events}
    written = (run.cwd / name).exists()
    text = run.result_text(tid)
    assert bool(SUBAGENT_REPORT_FILE.match(Path(name).name)) is refused  # the rule we check by
    if refused:
        assert "Subagents should return findings as text, not write report files" in text
        assert (fired, written) == (False, False)
    else:
        assert (fired, written) == (True, True), text


def test_the_main_thread_may_write_report_md(subagent_writes: tuple[CliRun, RecordingHook]) -> None:
    run, seen = subagent_writes
    assert (run.cwd / "main" / "report.md").exists()
    assert "toolu_main" in {e.tool_use_id for e in seen.events}
