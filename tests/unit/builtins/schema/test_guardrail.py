"""``schema_guardrail``: deny tool calls whose input does not match the tool's schema."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from pydantic import BaseModel, Field

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.builtins import SchemaGuardrail, schema_guardrail
from guardrails.builtins.schema import guardrail as schema_module
from guardrails.builtins.schema.examples import minimal_example
from guardrails.builtins.schema.fastpath import fast_is_valid
from guardrails.builtins.schema.formats import compile_validator, format_checker
from guardrails.builtins.schema.sources import builtin_schema
from guardrails.builtins.schema.violations import json_path
from guardrails.errors import DefinitionError
from guardrails.testing import SpyTool
from tests._guards import build_guard
from tests.unit.builtins.schema.test_examples import SCHEMA_STRATEGY

SECRET = "sk-live-51HxQ2eZvKYlo2C0123456789abcdef"


def guard(tools: dict[str, Any] | None = None, hook: Any = None, **kw: Any) -> Guard:
    return build_guard([hook or SchemaGuardrail()], tools=tools or {}, **kw)


def example_in(message: str) -> Any:
    """The JSON after 'Example of a valid input: ' at the end of a denial."""
    return json.loads(message.split("Example of a valid input: ", 1)[1])


# --- valid and invalid input ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"file_path": "/p/a.txt", "content": "x"}),
        ("Bash", {"command": "ls", "timeout": 1000, "run_in_background": False}),
        ("Grep", {"pattern": "x", "output_mode": "count", "-i": True}),
        ("MultiEdit", {"file_path": "/p", "edits": [{"old_string": "a", "new_string": "b"}]}),
        ("TodoWrite", {"todos": [{"content": "a", "status": "pending", "activeForm": "b"}]}),
        ("WebFetch", {"url": "https://example.com", "prompt": "summary"}),
    ],
)
def test_valid_input_is_allowed_without_an_opinion(tool: str, tool_input: dict[str, Any]) -> None:
    d = guard().sync.pre_tool_use(tool, tool_input)
    assert d.decision == "allow" and not d.explicit
    assert [r.outcome for r in d.runs] == ["noop"]


#: (tool, bad input, lines the reason must hold)
INVALID: list[tuple[str, dict[str, Any], list[str]]] = [
    ("Write", {"file_path": "/a"}, ["- $.content: required field is missing (expected a string)"]),
    (
        "Write",
        {"file_path": 42, "content": "x"},
        ["- $.file_path: expected a string, got a number"],
    ),
    (
        "Write",
        {"file_path": "/a", "contnt": "y"},
        ['- $.contnt: unexpected field (did you mean "content"?)', 'rename $.contnt to "content"'],
    ),
    (
        "Write",
        {"file_path": "/a", "content": "x", "contnt": "y"},
        ["- $.contnt: unexpected field; allowed fields: file_path, content", "remove $.contnt"],
    ),
    (
        "MultiEdit",
        {"file_path": "/a", "edits": [{"old_string": 1, "new_string": "b"}]},
        ["- $.edits[0].old_string: expected a string, got a number"],
    ),
    (
        "MultiEdit",
        {"file_path": "/a", "edits": []},
        ["- $.edits: expected at least 1 item, got 0"],
    ),
    (
        "Grep",
        {"pattern": "x", "output_mode": "lines"},
        ['- $.output_mode: expected one of "content", "files_with_matches", "count", got a string'],
    ),
    ("Grep", {"pattern": "x", "-A": "3"}, ['- $["-A"]: expected an integer, got a string']),
    ("Grep", {"pattern": "x", "head_limit": 2.5}, ["expected an integer, got a number with a"]),
    ("Bash", {"command": "ls", "timeout": -1}, ["- $.timeout: expected a number >= 0"]),
    ("Bash", {"command": ""}, ["- $.command: expected a non-empty string, got an empty string"]),
    ("WebSearch", {"query": "a"}, ["- $.query: expected at least 2 characters, got 1"]),
    ("WebFetch", {"url": "example.com", "prompt": "p"}, ["- $.url: expected a valid uri"]),
    (
        "TodoWrite",
        {"todos": [{"content": "a", "status": "done", "activeForm": "b"}]},
        [
            "- $.todos[0]: matches none of the 3 allowed forms; "
            'closest: $.todos[0].status: expected one of "pending", "in_progress", "completed"'
        ],
    ),
    ("TodoWrite", {"todos": "[]"}, ["- $.todos: expected an array, got a string"]),
    ("Read", ["file_path"], ["- $: expected an object, got an array"]),  # type: ignore[list-item]
]


@pytest.mark.parametrize(("tool", "tool_input", "lines"), INVALID)
def test_invalid_input_is_denied_naming_path_expected_and_received(
    tool: str, tool_input: Any, lines: list[str]
) -> None:
    d = guard().sync.pre_tool_use(tool, tool_input)
    assert d.decision == "deny"
    for line in lines:
        assert line in d.reason, d.reason


def test_every_violation_is_listed() -> None:
    bad = {"file_path": 1, "edits": [{"old_string": "a"}, {"new_string": 2, "x": 1}], "y": 0}
    d = guard().sync.pre_tool_use("MultiEdit", bad)
    listed = [line for line in (d.reason or "").splitlines() if line.startswith("- ")]
    assert d.reason and d.reason.startswith(
        "MultiEdit input does not match its schema (6 problems)"
    )
    assert sorted(line.split(":")[0] for line in listed) == sorted(
        [
            "- $.file_path",
            "- $.edits[0].new_string",
            "- $.edits[1].old_string",
            "- $.edits[1].new_string",
            "- $.edits[1].x",
            "- $.y",
        ]
    )


def test_a_value_outside_an_enum_is_one_problem_even_of_the_wrong_type() -> None:
    schema = {
        "type": "object",
        "properties": {"priority": {"type": "string", "enum": ["low", "high"]}},
    }
    agent = AgentDefinition(
        tools={"t": {"schema": schema}},
        hooks={"PreToolUse": [HookMatcher(hooks=[schema_guardrail])]},
    )
    d = Guard(agent).sync.pre_tool_use("t", {"priority": 3})
    listed = [line for line in (d.reason or "").splitlines() if line.startswith("- ")]
    assert listed == [
        '- $.priority: expected one of "low", "high", got a number that is not one of them'
    ]


def test_denial_is_an_instruction_ending_with_a_valid_example() -> None:
    d = guard().sync.pre_tool_use("Write", {"file_path": "/a", "text": "hi"})
    assert d.reason is not None
    assert "\nCall Write again with input that matches its schema. Fix: " in d.reason
    assert "add $.content (a string)" in d.reason
    example = example_in(d.reason)
    assert example == builtin_schema("Write")["examples"][0]  # type: ignore[index]


def test_example_is_synthesized_when_the_schema_has_none() -> None:
    schema = {
        "type": "object",
        "required": ["ticket", "priority"],
        "properties": {
            "ticket": {"type": "string", "pattern": "^[A-Z]+-[0-9]+$"},
            "priority": {"enum": ["low", "high"]},
            "note": {"type": "string"},
        },
    }
    d = guard({"file_issue": {"schema": schema}}).sync.pre_tool_use("file_issue", {})
    example = example_in(d.reason or "")
    assert example == {"ticket": "A-0", "priority": "low"}
    assert Draft202012Validator(schema).is_valid(example)


def test_denied_call_never_runs() -> None:
    tool = SpyTool()
    run = guard().sync.run_tool("Write", {"file_path": "/a"}, tool)
    assert run.denied and tool.calls == []


def test_numbers_sent_as_strings_are_told_to_drop_the_quotes() -> None:
    d = guard().sync.pre_tool_use("Bash", {"command": "ls", "timeout": "5000"})
    assert "give $.timeout as a number, without quotes" in (d.reason or "")


def test_arrays_sent_as_json_strings_are_told_to_pass_the_array() -> None:
    d = guard().sync.pre_tool_use("MultiEdit", {"file_path": "/a", "edits": "[]"})
    assert "pass $.edits as an array itself, not as a JSON-encoded string" in (d.reason or "")


def test_long_listings_are_capped() -> None:
    obj = {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}}
    d = guard({"t": {"schema": obj}}).sync.pre_tool_use("t", {"x": list(range(150))})
    assert "(150 problems)" in (d.reason or "")
    assert "- … and 50 more" in (d.reason or "")


def test_denial_annotates_the_call_with_paths_and_keywords(tmp_path: Path) -> None:
    g = Guard(
        AgentDefinition(hooks={"PreToolUse": [HookMatcher(hooks=[SchemaGuardrail()])]}),
        ledger=Ledger(tmp_path / "l.db"),
    )
    d = g.sync.pre_tool_use("Write", {"file_path": 1})
    assert d.annotations == {
        "schema_violations": [
            {"path": "$.content", "keyword": "required"},
            {"path": "$.file_path", "keyword": "type"},
        ]
    }
    stored = g.ledger.reader.value("SELECT annotations FROM tool_calls")  # type: ignore[union-attr]
    assert json.loads(stored) == d.annotations


@pytest.mark.parametrize(
    ("parts", "expected"),
    [
        ([], "$"),
        (["edits", 0, "old_string"], "$.edits[0].old_string"),
        (["-A"], '$["-A"]'),
        (["a b", 2], '$["a b"][2]'),
    ],
)
def test_json_paths(parts: list[Any], expected: str) -> None:
    assert json_path(parts) == expected


# --- secrets never echo ----------------------------------------------------------------------

SECRET_SCHEMA = {
    "type": "object",
    "required": ["token", "region", "url", "pin", "kind", "tags"],
    "additionalProperties": False,
    "properties": {
        "token": {"type": "integer"},
        "region": {"enum": ["eu", "us"]},
        "url": {"type": "string", "format": "uri"},
        "pin": {"type": "string", "pattern": "^[0-9]{4}$", "maxLength": 4},
        "kind": {"oneOf": [{"const": "a"}, {"type": "integer"}]},
        "tags": {"type": "array", "uniqueItems": True, "items": {"const": "ok"}},
        "note": {"not": {"type": "string"}},
    },
}


@pytest.mark.parametrize(
    "field", ["token", "region", "url", "pin", "kind", "tags", "note", "extra_field"]
)
def test_a_secret_in_bad_input_never_appears_in_the_denial(field: str) -> None:
    good = {"token": 1, "region": "eu", "url": "https://e.com", "pin": "1234", "kind": "a"}
    good["tags"] = ["ok"]
    bad = dict(good)
    bad[field] = [SECRET, SECRET] if field == "tags" else SECRET
    g = guard({"login": {"schema": SECRET_SCHEMA}})
    d = g.sync.pre_tool_use("login", bad)
    assert d.decision == "deny"
    assert SECRET not in (d.reason or "")
    assert SECRET[:12] not in (d.reason or "")
    assert SECRET not in json.dumps(d.annotations)


# --- unknown tools ---------------------------------------------------------------------------


def test_tool_without_a_schema_is_allowed_by_default() -> None:
    d = guard().sync.pre_tool_use("deploy", {"anything": [1, 2]})
    assert d.decision == "allow"


def test_tool_without_a_schema_is_denied_when_configured() -> None:
    d = guard(hook=SchemaGuardrail(unknown_tools="deny")).sync.pre_tool_use("deploy", {})
    assert d.decision == "deny"
    assert "deploy has no input schema" in (d.reason or "")
    assert "tools.deploy.schema" in (d.reason or "")


def test_unknown_tools_policy_is_validated() -> None:
    with pytest.raises(ValueError, match="unknown_tools must be 'allow' or 'deny'"):
        SchemaGuardrail(unknown_tools="warn")  # type: ignore[arg-type]


# --- where schemas come from ---------------------------------------------------------------------

NEEDS_NAME = {
    "type": "object",
    "required": ["name"],
    "properties": {"name": {"type": "string"}},
    "additionalProperties": False,
}


class CreateUser(BaseModel):
    name: str
    age: int = Field(ge=0)


def decide(tools: dict[str, Any], tool: str, tool_input: dict[str, Any]) -> str:
    return guard(tools).sync.pre_tool_use(tool, tool_input).decision


@pytest.mark.parametrize(
    "declared",
    [
        NEEDS_NAME,
        {"name": "create_user", "description": "MCP tool", "inputSchema": NEEDS_NAME},
        {"inputSchema": NEEDS_NAME},
        {"name": "create_user", "input_schema": NEEDS_NAME},
    ],
    ids=["inline", "mcp-tool", "mcp-inputSchema-only", "anthropic-input_schema"],
)
def test_declared_mapping_schemas(declared: dict[str, Any]) -> None:
    tools = {"create_user": {"schema": declared}}
    assert decide(tools, "create_user", {"name": "ann"}) == "allow"
    assert decide(tools, "create_user", {"nme": "ann"}) == "deny"


def test_pydantic_model_class_schema() -> None:
    tools = {"create_user": {"schema": CreateUser}}
    assert decide(tools, "create_user", {"name": "ann", "age": 3}) == "allow"
    d = guard(tools).sync.pre_tool_use("create_user", {"name": "ann", "age": -1})
    assert "- $.age: expected a number >= 0, got a smaller number" in (d.reason or "")
    assert example_in(d.reason or "") == {"name": "example", "age": 0}


def test_pydantic_type_adapter_schema() -> None:
    from pydantic import TypeAdapter

    tools = {"create_user": {"schema": TypeAdapter(CreateUser)}}
    assert decide(tools, "create_user", {"name": "ann"}) == "deny"


def write_definition(folder: Path, body: str) -> Path:
    path = folder / "agent.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".json", ".yaml"])
def test_schema_file_relative_to_the_definition(tmp_path: Path, suffix: str) -> None:
    (tmp_path / "schemas").mkdir()
    file = tmp_path / "schemas" / f"create_user{suffix}"
    if suffix == ".json":
        file.write_text(json.dumps(NEEDS_NAME), encoding="utf-8")
    else:
        import yaml

        file.write_text(yaml.safe_dump(NEEDS_NAME), encoding="utf-8")
    path = write_definition(
        tmp_path,
        f"""\
        tools:
          create_user: {{schema: schemas/create_user{suffix}}}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("create_user", {"name": "a"}).decision == "allow"
    assert g.sync.pre_tool_use("create_user", {}).decision == "deny"


def test_mcp_tool_listing_in_a_file(tmp_path: Path) -> None:
    listing = {"name": "create_user", "inputSchema": NEEDS_NAME, "annotations": {}}
    (tmp_path / "create_user.tool.json").write_text(json.dumps(listing), encoding="utf-8")
    path = write_definition(
        tmp_path,
        """\
        tools:
          mcp__users__create_user: {schema: create_user.tool.json}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("mcp__users__create_user", {"nme": "a"}).decision == "deny"


def test_pydantic_model_named_in_a_file(tmp_path: Path) -> None:
    (tmp_path / "usermodels.py").write_text(
        "from pydantic import BaseModel\n\nclass NewUser(BaseModel):\n    name: str\n",
        encoding="utf-8",
    )
    path = write_definition(
        tmp_path,
        """\
        tools:
          create_user: {schema: "usermodels:NewUser"}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("create_user", {"name": "a"}).decision == "allow"
    assert g.sync.pre_tool_use("create_user", {"name": 1}).decision == "deny"


def test_shipped_schema_path_works_from_any_folder(tmp_path: Path) -> None:
    """The design example: ``schema: schemas/tools/Bash.json`` for a renamed Bash tool."""
    path = write_definition(
        tmp_path,
        """\
        tools:
          execute_bash_command: {schema: schemas/tools/Bash.json, primary_arg: command}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("execute_bash_command", {"command": "ls"}).decision == "allow"
    assert g.sync.pre_tool_use("execute_bash_command", {"cmd": "ls"}).decision == "deny"


def test_undeclared_schema_falls_back_to_the_claude_tool_of_the_same_name() -> None:
    tools = {"Bash": {"side_effects": True}}
    assert decide(tools, "Bash", {"command": "ls"}) == "allow"
    assert decide(tools, "Bash", {"cmd": "ls"}) == "deny"


def test_declared_schema_overrides_the_built_in() -> None:
    tools = {"Bash": {"schema": {"type": "object", "required": ["cmd"]}}}
    assert decide(tools, "Bash", {"cmd": "ls"}) == "allow"
    assert decide(tools, "Bash", {"command": "ls"}) == "deny"


def test_schema_declaring_draft_7_is_validated_as_draft_7() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]}
        },
    }
    tools = {"t": {"schema": schema}}
    assert decide(tools, "t", {"pair": ["a", 1]}) == "allow"
    assert decide(tools, "t", {"pair": [1, "a"]}) == "deny"  # tuple items, a draft-7 meaning


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [("date-time", "2024-05-01T10:00:00Z", "yesterday"), ("email", "a@b.io", "a.b.io")],
)
def test_formats_are_checked(fmt: str, good: str, bad: str) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert decide({"t": {"schema": schema}}, "t", {"v": good}) == "allow"
    assert decide({"t": {"schema": schema}}, "t", {"v": bad}) == "deny"
    assert format_checker().conforms(good, fmt)


# --- schema errors ------------------------------------------------------------------------------


def test_missing_schema_file_is_a_clear_error(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        tools:
          create_user: {schema: schemas/nope.json}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    definition = AgentDefinition.from_file(path)
    with pytest.raises(DefinitionError) as err:
        SchemaGuardrail().check(definition)
    text = str(err.value)
    assert text.startswith(str(path))
    assert "tools.create_user.schema: schema file 'schemas/nope.json' not found" in text
    # a Guard fails at load with the same error, at the line of the schema
    with pytest.raises(DefinitionError) as at_load:
        Guard(definition)
    assert str(at_load.value) == text and at_load.value.line == 2
    # one that leaves it to the call (a hook process): the hook fails closed, same explanation
    d = Guard(definition, check=False).sync.pre_tool_use("create_user", {"name": "a"})
    assert d.decision == "deny"
    assert "schema file 'schemas/nope.json' not found" in (d.reason or "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not valid JSON"),
        ('{"type": "strng"}', "not a valid JSON Schema"),
        ('{"properties": {"a": {"minLength": -1}}}', "not a valid JSON Schema"),
        ("[1, 2]", "the schema must be a JSON Schema, got list"),
    ],
)
def test_invalid_schema_file_is_a_clear_error(tmp_path: Path, content: str, message: str) -> None:
    (tmp_path / "bad.json").write_text(content, encoding="utf-8")
    path = write_definition(
        tmp_path,
        """\
        tools:
          t: {schema: bad.json}
        hooks:
          PreToolUse:
            - hooks: [schema_guardrail]
        """,
    )
    with pytest.raises(DefinitionError, match=re.escape(message)) as err:
        SchemaGuardrail().check(AgentDefinition.from_file(path))
    assert "tools.t.schema" in str(err.value)


def test_bad_module_reference_is_a_clear_error(tmp_path: Path) -> None:
    definition = AgentDefinition(tools={"t": {"schema": "no_such_module_xyz:Model"}})
    with pytest.raises(DefinitionError, match="cannot import schema 'no_such_module_xyz:Model'"):
        SchemaGuardrail().check(definition)


# --- caching -------------------------------------------------------------------------------------


def test_schema_is_resolved_and_compiled_once_per_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = schema_module.resolve_schema

    def counting(declared: Any, *, tool: str, source: str | None = None) -> Any:
        calls.append(tool)
        return real(declared, tool=tool, source=source)

    monkeypatch.setattr(schema_module, "resolve_schema", counting)
    g = guard()
    for _ in range(5):
        g.sync.pre_tool_use("Write", {"file_path": "/a", "content": "x"})
        g.sync.pre_tool_use("Write", {"file_path": "/a"})
        g.sync.pre_tool_use("unknown_tool", {})
    assert sorted(calls) == ["Write", "unknown_tool"]


def test_one_instance_keeps_each_definitions_schemas_apart() -> None:
    shared = SchemaGuardrail()
    a = guard({"t": {"schema": {"type": "object", "required": ["a"]}}}, hook=shared)
    b = guard({"t": {"schema": {"type": "object", "required": ["b"]}}}, hook=shared)
    for _ in range(2):
        assert a.sync.pre_tool_use("t", {"a": 1}).decision == "allow"
        assert b.sync.pre_tool_use("t", {"a": 1}).decision == "deny"
        assert b.sync.pre_tool_use("t", {"b": 1}).decision == "allow"


def test_hook_ignores_events_other_than_pre_tool_use() -> None:
    g = Guard(AgentDefinition(hooks={"PostToolUse": [HookMatcher(hooks=[SchemaGuardrail()])]}))
    d = g.sync.post_tool_use("Write", {"nonsense": 1}, "ok")
    assert not d.blocked and [r.outcome for r in d.runs] == ["noop"]


# --- declared in a file --------------------------------------------------------------------------


def test_ready_instance_is_exported() -> None:
    assert isinstance(schema_guardrail, SchemaGuardrail)
    assert schema_guardrail.unknown_tools == "allow"


def test_declared_by_name_in_yaml(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PreToolUse:
            - matcher: "*"
              hooks: [schema_guardrail]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("Write", {"file_path": "/a"}).decision == "deny"
    assert g.sync.pre_tool_use("deploy", {}).decision == "allow"


def test_declared_with_parameters_in_yaml(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PreToolUse:
            - hooks: [{use: schema_guardrail, with: {unknown_tools: deny}}]
        """,
    )
    g = Guard(AgentDefinition.from_file(path))
    assert g.sync.pre_tool_use("deploy", {}).decision == "deny"


def test_bad_parameter_in_yaml_is_a_definition_error(tmp_path: Path) -> None:
    path = write_definition(
        tmp_path,
        """\
        hooks:
          PreToolUse:
            - hooks: [{use: schema_guardrail, with: {unknown_tools: sometimes}}]
        """,
    )
    with pytest.raises(DefinitionError) as err:
        AgentDefinition.from_file(path)
    text = str(err.value)
    assert str(path) in text and "unknown_tools must be 'allow' or 'deny'" in text
    assert "\n" not in text


# --- the compiled fast path agrees with jsonschema ------------------------------------------------

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-100, 100)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.sampled_from([0.0, 1.0, -2.0, 0.5])
    | st.text(max_size=8)
    | st.sampled_from(["https://e.com/", "a@b.io", "2024-01-01", "AB-12", "x" * 30]),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text("abcdefghij_", min_size=1, max_size=6), children, max_size=4)
    ),
    max_leaves=10,
)


def mutate(value: Any, data: st.DataObject) -> Any:
    """``value`` with one nested part replaced by an arbitrary JSON value."""
    if isinstance(value, dict) and value and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(value)))
        return {**value, key: mutate(value[key], data)}
    if isinstance(value, list) and value and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(value) - 1))
        return [*value[:i], mutate(value[i], data), *value[i + 1 :]]
    return data.draw(JSON_VALUES)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMA_STRATEGY, JSON_VALUES, st.data())
def test_fast_path_agrees_with_jsonschema(schema: Any, value: Any, data: st.DataObject) -> None:
    validator = compile_validator(schema)
    fast = fast_is_valid(validator)
    assert fast is not None
    example = minimal_example(schema)
    for candidate in (value, example, mutate(example, data), mutate(example, data)):
        assert fast(candidate) == validator.is_valid(candidate), candidate


FAST_CASES: list[tuple[dict[str, Any], list[Any]]] = [
    ({"enum": [1, "a", None]}, [True, 1, 1.0, "a", None, False, [1]]),
    ({"const": [1, {"a": False}]}, [[1, {"a": False}], [True, {"a": 0}], [1.0, {"a": False}]]),
    ({"type": "integer"}, [1, 1.0, 1.5, True, "1"]),
    ({"type": ["number", "null"], "minimum": 2}, [None, 2, 1.9, False, "3"]),
    (
        {
            "properties": {"a": {"type": "string"}},
            "patternProperties": {"^x-": {"type": "integer"}, "b": {"minLength": 2}},
            "additionalProperties": False,
        },
        [{"a": "s", "x-1": 1}, {"x-1": "s"}, {"ab": "ss"}, {"ab": "s"}, {"zz": 1}, {"a": 1}],
    ),
    ({"oneOf": [{"type": "integer"}, {"minimum": 0}]}, [1, -1, 0.5, -0.5, "s"]),
    ({"not": {"type": "string"}, "anyOf": [{"type": "null"}, {"maximum": 3}]}, [None, 3, 4, "s"]),
    (
        {"$defs": {"n": {"type": "object", "properties": {"kids": {"items": {"$ref": "#/$defs/n"}}},
                         "required": ["v"]}}, "$ref": "#/$defs/n"},
        [{"v": 1, "kids": [{"v": 2, "kids": []}]}, {"v": 1, "kids": [{"kids": []}]}, {"kids": []}],
    ),
    ({"prefixItems": [{"type": "string"}], "items": False}, [["a"], ["a", "b"], [1], []]),
    ({"format": "uri"}, ["https://x.io", "x.io", 5]),
    ({"dependentRequired": {"a": ["b"]}, "maxProperties": 2}, [{"a": 1}, {"a": 1, "b": 2}, {}]),
    ({"multipleOf": 0.1}, [0.3, 0.2, 1, 7.0, 1e308, "x"]),
    ({"multipleOf": 3}, [9, 9.0, 10, True, -3]),
    (
        {"uniqueItems": True},
        [[1, 1.0], [True, 1], [[True], [1], [True]], [{"a": 1}, {"a": 1}], ["a", "b"], [0, False]],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "values"), FAST_CASES)
def test_fast_path_edge_cases(schema: dict[str, Any], values: list[Any]) -> None:
    validator = compile_validator(schema)
    fast = fast_is_valid(validator)
    assert fast is not None
    assert [fast(v) for v in values] == [validator.is_valid(v) for v in values]


@pytest.mark.parametrize(
    "schema",
    [
        {"if": {"minimum": 0}, "then": {"multipleOf": 2}},
        {"type": "array", "contains": {"type": "string"}},
        {"unevaluatedProperties": False},
        {"properties": {"a": {"$ref": "https://example.com/other.json"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
    ],
)
def test_fast_path_declines_what_it_does_not_implement(schema: dict[str, Any]) -> None:
    assert fast_is_valid(compile_validator(schema)) is None


def test_builtin_schemas_use_the_fast_path() -> None:
    for tool in ("Bash", "Write", "MultiEdit", "Grep", "TodoWrite", "WebFetch", "Agent"):
        validator = compile_validator(builtin_schema(tool))
        assert fast_is_valid(validator) is not None, tool
