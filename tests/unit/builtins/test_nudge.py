"""``schema_nudge``: after a tool rejected its input, inject its schema summary and an example."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.builtins import SchemaGuardrail, SchemaNudge, schema_nudge
from guardrails.errors import DefinitionError
from guardrails.results import Decision
from tests._guards import build_guard

SECRET = "ghp_Zx81bQ0verySecretTokenValue1234567890"


def guard(
    tools: dict[str, Any] | None = None, hook: Any = None, ledger: Any = None, **kw: Any
) -> Guard:
    hooks = [hook or SchemaNudge()]
    by_event = {"PostToolUse": hooks, "PostToolUseFailure": hooks}
    return build_guard(by_event, tools=tools or {}, ledger=ledger, **kw)


def post(g: Guard, tool: str, tool_input: dict[str, Any], response: Any, **kw: Any) -> Decision:
    return g.sync.post_tool_use(tool, tool_input, response, **kw)


def fail(g: Guard, tool: str, tool_input: dict[str, Any], error: str, **kw: Any) -> Decision:
    return g.sync.post_tool_use_failure(tool, tool_input, error, **kw)


WRITE_INPUT = {"file_path": "/p/a.txt", "text": SECRET}

#: (name, event kind, response or error) for validation failures of Write's input
FAILURES: list[tuple[str, str, Any]] = [
    (
        "claude InputValidationError",
        "failure",
        "InputValidationError: Write failed due to the following issues:\n"
        "The required parameter `content` is missing",
    ),
    (
        "pydantic v2",
        "failure",
        "1 validation error for WriteArgs\ncontent\n  Field required [type=missing, "
        "input_value={'file_path': '/p/a.txt'}, input_type=dict]",
    ),
    (
        "pydantic v2 extra forbidden",
        "post",
        "Error: 1 validation error for WriteArgs\ntext\n  Extra inputs are not permitted",
    ),
    ("pydantic v1", "failure", "content\n  field required (type=value_error.missing)"),
    ("jsonschema required", "post", "Input error: 'content' is a required property"),
    ("jsonschema type", "post", "Failed validating 'type' in schema['properties']['file_path']"),
    (
        "zod invalid_type",
        "post",
        {"error": [{"code": "invalid_type", "expected": "string", "path": ["content"]}]},
    ),
    (
        "mcp invalid params",
        "post",
        {
            "isError": True,
            "content": [{"type": "text", "text": "MCP error -32602: Invalid params"}],
        },
    ),
    (
        "mcp invalid arguments",
        "post",
        {
            "isError": True,
            "content": [{"type": "text", "text": "Invalid arguments for tool write"}],
        },
    ),
    ("missing required", "post", {"ok": False, "message": "missing required parameter: content"}),
    ("python kwargs", "failure", "TypeError: write() got an unexpected keyword argument 'text'"),
    (
        "python positional",
        "failure",
        "TypeError: write() missing 1 required positional argument: 'content'",
    ),
    ("stderr naming a field", "post", {"stdout": "", "stderr": "error: missing required content"}),
]


def emit(g: Guard, kind: str, payload: Any, tool_input: dict[str, Any] = WRITE_INPUT) -> Decision:
    if kind == "failure":
        return fail(g, "Write", tool_input, payload)
    return post(g, "Write", tool_input, payload)


@pytest.mark.parametrize(("name", "kind", "payload"), FAILURES, ids=[f[0] for f in FAILURES])
def test_validation_failures_are_recognised(name: str, kind: str, payload: Any) -> None:
    d = emit(guard(), kind, payload)
    assert len(d.injections) == 1, d.runs
    assert d.injections[0].hook == "schema_nudge"


def test_nudge_summarises_each_field_and_ends_with_an_example() -> None:
    d = fail(guard(), "Write", WRITE_INPUT, "InputValidationError: Write failed")
    text = d.additional_context or ""
    assert text.startswith("Write rejected its input")
    assert "- file_path: string, required — The absolute path to the file to write" in text
    assert "- content: string, required — The content to write to the file" in text
    example = json.loads(text.split("Example of a valid input: ", 1)[1].splitlines()[0])
    assert set(example) == {"file_path", "content"}
    assert text.endswith("Call Write again with input that follows this schema.")


def test_summary_lists_enums_defaults_and_nested_items() -> None:
    d = fail(guard(), "Grep", {"pattern": 1}, "'pattern' is not of type 'string'")
    text = d.additional_context or ""
    assert (
        '- output_mode: string, optional, one of "content", "files_with_matches", "count"' in text
    )
    d = fail(guard(), "MultiEdit", {}, "InputValidationError: MultiEdit failed")
    text = d.additional_context or ""
    assert "- edits: array of objects, required" in text
    assert "  - edits[].replace_all: boolean, optional, default false" in text


def test_summary_of_items_with_several_forms_lists_the_first_form() -> None:
    """TodoWrite items take each released form (``anyOf``); the summary shows today's,
    the one the example uses."""
    d = fail(guard(), "TodoWrite", {"todos": [{}]}, "InputValidationError: TodoWrite failed")
    text = d.additional_context or ""
    assert "  - todos[].activeForm: string, required" in text
    assert "priority" not in text.split("Example of a valid input:")[0]


def test_summary_of_a_pydantic_schema_follows_refs() -> None:
    from pydantic import BaseModel

    class Item(BaseModel):
        sku: str
        qty: int

    class Order(BaseModel):
        items: list[Item]
        note: str | None = None

    d = fail(guard({"order": {"schema": Order}}), "order", {}, "1 validation error for Order")
    text = d.additional_context or ""
    assert "- items: array of objects, required" in text
    assert "  - items[].sku: string, required" in text
    assert "- note: string or null, optional" in text


def test_the_bad_input_never_appears_in_the_nudge() -> None:
    error = (
        "1 validation error for WriteArgs\ntext\n  Extra inputs are not permitted "
        f"[type=extra_forbidden, input_value='{SECRET}', input_type=str]"
    )
    d = fail(guard(), "Write", WRITE_INPUT, error)
    assert d.additional_context and SECRET not in d.additional_context


def test_tool_without_a_schema_gets_a_generic_nudge() -> None:
    d = fail(
        guard(), "deploy", {"env": 1}, "1 validation error for DeployArgs\nenv\n  Field required"
    )
    text = d.additional_context or ""
    assert text.startswith("deploy rejected its input")
    assert "No input schema is known for deploy" in text


# --- what is not a validation failure ---------------------------------------------------------

LISTING = "\n".join(
    ["src/error_handler.py", "src/validation.py", "tests/test_validation_errors.py", "ERRORS.md"]
)
QUIET: list[tuple[str, str, Any]] = [
    ("no such file", "failure", "Error: ENOENT: No such file or directory, open '/p/x'"),
    ("permission denied", "failure", "bash: /etc/shadow: Permission denied"),
    ("exit code", "failure", "Command failed with exit code 1: error: build failed"),
    ("listing with error and validation", "post", LISTING),
    ("bash listing", "post", {"stdout": LISTING, "stderr": "", "interrupted": False}),
    (
        "bash stdout with a pydantic error",
        "post",
        {"stdout": "1 validation error for Settings\nport\n  Field required", "stderr": ""},
    ),
    (
        "script stderr not about the tool",
        "post",
        {"stdout": "", "stderr": "1 validation error for Settings\nport\n  Field required"},
    ),
    (
        "read of a file that talks about validation",
        "post",
        {"type": "text", "file": {"filePath": "/p/v.py", "content": "'x' is a required property"}},
    ),
    (
        "mcp success",
        "post",
        {"isError": False, "content": [{"type": "text", "text": "Invalid params"}]},
    ),
    ("large normal output", "post", "line of normal output, nothing wrong here\n" * 50_000),
    (
        "validation text past the scanned head",
        "post",
        "x" * 10_000 + "\n1 validation error for WriteArgs\ncontent\n  Field required",
    ),
    ("plain success", "post", {"filePath": "/p/a.txt", "type": "create"}),
]


@pytest.mark.parametrize(("name", "kind", "payload"), QUIET, ids=[q[0] for q in QUIET])
def test_ordinary_results_and_errors_get_no_nudge(name: str, kind: str, payload: Any) -> None:
    tool = "Bash" if "bash" in name or "script" in name else "Write"
    g = guard()
    d = (
        fail(g, tool, {"command": "x"}, payload)
        if kind == "failure"
        else post(g, tool, {"command": "x"}, payload)
    )
    assert d.injections == []
    assert [r.outcome for r in d.runs] == ["noop"]


def test_other_events_are_ignored() -> None:
    g = Guard(AgentDefinition(hooks={"UserPromptSubmit": [HookMatcher(hooks=[SchemaNudge()])]}))
    d = g.sync.user_prompt_submit("1 validation error for X")
    assert d.injections == []


# --- escalation ----------------------------------------------------------------------------------

FIRST = "Write rejected its input"
SECOND = "Write has now rejected this same input 2 times"
THIRD = "Stop retrying Write with this input: it has been rejected 3 times"


def test_repeated_same_input_escalates_the_wording() -> None:
    g = guard()
    texts = [
        fail(g, "Write", WRITE_INPUT, "InputValidationError: x").additional_context or ""
        for _ in range(4)
    ]
    assert texts[0].startswith(FIRST)
    assert texts[1].startswith(SECOND)
    assert texts[2].startswith(THIRD)
    assert texts[3].startswith("Stop retrying Write with this input: it has been rejected 4 times")


def test_a_different_input_starts_over() -> None:
    g = guard()
    fail(g, "Write", WRITE_INPUT, "InputValidationError: x")
    d = fail(g, "Write", {"file_path": "/other"}, "InputValidationError: x")
    assert (d.additional_context or "").startswith(FIRST)


def test_escalation_reads_the_ledger_across_processes(tmp_path: Path) -> None:
    """Claude Code runs a fresh process per hook: the session state is empty, the ledger is not."""
    path = tmp_path / "l.db"

    def one_process_run() -> str:
        g = guard(ledger=Ledger(path))
        session = g.session("s1")
        run = session.sync.run_tool(
            "Write", WRITE_INPUT, lambda **kw: (_ for _ in ()).throw(ValueError("Field required"))
        )
        assert run.status == "error"
        return run.post.additional_context or ""  # type: ignore[union-attr]

    assert one_process_run().startswith(FIRST)
    assert one_process_run().startswith(SECOND)
    assert one_process_run().startswith(THIRD)


def test_ledger_counts_nudged_calls_that_returned_normally(tmp_path: Path) -> None:
    """A tool that reports its validation error as output finishes 'ok' in the ledger."""
    path = tmp_path / "l.db"
    texts = []
    for _ in range(2):
        g = guard(ledger=Ledger(path))
        run = g.session("s1").sync.run_tool("Write", WRITE_INPUT, lambda **kw: "Field required")
        texts.append(run.post.additional_context or "")  # type: ignore[union-attr]
    assert texts[0].startswith(FIRST) and texts[1].startswith(SECOND)


def test_a_schema_guardrail_denial_counts_as_an_earlier_failure(tmp_path: Path) -> None:
    path = tmp_path / "l.db"
    deny_first = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[SchemaGuardrail()])]}),
        ledger=Ledger(path),
    )
    assert deny_first.session("s1").sync.pre_tool_use("Write", WRITE_INPUT).decision == "deny"
    g = guard(ledger=Ledger(path))
    d = g.session("s1").sync.post_tool_use_failure(
        "Write", WRITE_INPUT, "InputValidationError: x", tool_use_id="toolu_2"
    )
    assert (d.additional_context or "").startswith(SECOND)


# --- once per call -------------------------------------------------------------------------------


def test_at_most_one_nudge_per_call_even_when_bound_twice() -> None:
    nudge = SchemaNudge()
    g = Guard(
        AgentDefinition(
            hooks={
                "PostToolUseFailure": [
                    HookMatcher(matcher="*", hooks=[nudge]),
                    HookMatcher(matcher="Write", hooks=[nudge]),
                ]
            }
        )
    )
    d = fail(g, "Write", WRITE_INPUT, "InputValidationError: x", tool_use_id="toolu_1")
    assert len(d.injections) == 1
    d = fail(g, "Write", WRITE_INPUT, "InputValidationError: x")  # no id: same event object
    assert len(d.injections) == 1


def test_the_same_call_reported_twice_is_nudged_once() -> None:
    g = guard()
    first = fail(g, "Write", WRITE_INPUT, "InputValidationError: x", tool_use_id="toolu_9")
    again = fail(g, "Write", WRITE_INPUT, "InputValidationError: x", tool_use_id="toolu_9")
    assert len(first.injections) == 1 and again.injections == []


# --- configuration ------------------------------------------------------------------------------


def test_extra_patterns_recognise_a_tools_own_wording() -> None:
    g = guard(hook=SchemaNudge(patterns=[r"bad request: field \w+ absent"]))
    assert len(post(g, "Write", {}, "bad request: field content absent").injections) == 1
    assert post(guard(), "Write", {}, "bad request: field content absent").injections == []


def test_scan_chars_bounds_what_is_read() -> None:
    text = "x" * 100 + " Field required"
    assert post(guard(hook=SchemaNudge(scan_chars=50)), "Write", {}, text).injections == []
    assert len(post(guard(hook=SchemaNudge(scan_chars=500)), "Write", {}, text).injections) == 1


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"patterns": ["("]}, ValueError, "patterns[0] is not a valid regular expression"),
        ({"patterns": "Field"}, TypeError, "patterns must be a list"),
        ({"patterns": [1]}, TypeError, "patterns[0] must be a string"),
        ({"scan_chars": 0}, ValueError, "scan_chars must be a positive integer"),
    ],
)
def test_bad_parameters_are_rejected(kwargs: dict[str, Any], error: type, message: str) -> None:
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        SchemaNudge(**kwargs)


def test_ready_instance_is_exported() -> None:
    assert isinstance(schema_nudge, SchemaNudge)


def write_definition(folder: Path, body: str) -> Path:
    path = folder / "agent.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def test_declared_by_name_in_yaml(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PostToolUseFailure:
            - hooks: [schema_nudge]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert len(fail(g, "Write", {}, "InputValidationError: x").injections) == 1


def test_declared_with_parameters_in_yaml(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PostToolUse:
            - hooks: [{use: schema_nudge, with: {patterns: ["schema mismatch"], scan_chars: 200}}]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert len(post(g, "Write", {}, "schema mismatch in request").injections) == 1


def test_bad_parameter_in_yaml_is_a_definition_error(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PostToolUse:
            - hooks: [{use: schema_nudge, with: {patterns: ["(unclosed"]}}]
        """,
    )
    with pytest.raises(DefinitionError) as err:
        AgentDefinition.from_file(path)
    text = str(err.value)
    assert str(path) in text and "patterns[0] is not a valid regular expression" in text
    assert "\n" not in text
