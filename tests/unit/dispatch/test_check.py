"""``hookrails check`` and loading a Guard report what would otherwise fail at run time: a tool
schema that is missing or not a JSON Schema, and a hook that rejects the definition
(``check_definition``), located; a Guard with ``check=False`` (a hook process) leaves the
schema to the call that needs it, which fails closed."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from guardrails import AgentDefinition, Guard, HookMatcher
from guardrails.cli.main import cli
from guardrails.dispatch.explain import check_definition
from guardrails.errors import DefinitionError

LAUGHS = "l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n" + "".join(
    f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9)
)


@dataclass(frozen=True)
class BadSchema:
    id: str
    schema: str  # what tools.send.schema says
    beside: dict[str, str]  # files next to the definition
    says: str


BAD_SCHEMAS = [
    BadSchema("missing-file", "missing.json", {}, "schema file 'missing.json' not found"),
    BadSchema("not-json", "bad.json", {"bad.json": "{not json"}, "is not valid JSON"),
    BadSchema("not-yaml", "bad.yaml", {"bad.yaml": "a: [\n"}, "is not valid YAML"),
    BadSchema("not-a-json-schema", "bad.json", {"bad.json": '{"type": "strng"}'},
              "not a valid JSON Schema: 'strng'"),
    BadSchema("a-list", "bad.json", {"bad.json": "[1, 2]"},
              "the schema must be a JSON Schema, got list"),
    BadSchema("nested-too-deep", "deep.json",
              {"deep.json": '{"items": ' * 3000 + "{}" + "}" * 3000}, "nested deeper than 100"),
    BadSchema("billion-laughs", "laughs.yaml", {"laughs.yaml": LAUGHS},
              "expand to more than 500,000 values"),
    BadSchema("model-module-exits-on-import", "exiting_models:Model",
              {"exiting_models.py": "import sys\nsys.exit(0)\n"},
              "importing it raised SystemExit(0)"),
]  # fmt: skip

DEFINITION = """\
name: shop
tools:
  send:
    side_effects: true
    schema: {schema}
  lookup: {{}}
hooks:
  PreToolUse:
    - hooks: [{hook}]
"""
#: the line of tools.send.schema in DEFINITION
SCHEMA_LINE = 5


def _definition(folder: Path, case: BadSchema, hook: str = "schema_guardrail") -> Path:
    for name, text in case.beside.items():
        (folder / name).write_text(text, encoding="utf-8")
    path = folder / "agent.yaml"
    path.write_text(DEFINITION.format(schema=case.schema, hook=hook), encoding="utf-8")
    return path


bad_schema = pytest.mark.parametrize("case", BAD_SCHEMAS, ids=[c.id for c in BAD_SCHEMAS])


@bad_schema
@pytest.mark.parametrize("hook", ["schema_guardrail", "schema_nudge", "allow"])
def test_check_reports_a_bad_schema_at_its_line_and_exits_1(
    case: BadSchema, hook: str, tmp_path: Path
) -> None:
    """Whichever hook reads it (none: `allow`), a declared schema that cannot be used is an
    error of the definition, not an `ok`."""
    path = _definition(tmp_path, case, hook)
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert isinstance(result.exception, SystemExit)
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr.startswith(f"error: {path}:{SCHEMA_LINE}: tools.send.schema: ")
    assert case.says in result.stderr and result.stderr.count("\n") == 1


@bad_schema
@pytest.mark.parametrize("hook", ["schema_guardrail", "schema_nudge"])
def test_a_guard_whose_hooks_read_a_bad_schema_fails_at_load(
    case: BadSchema, hook: str, tmp_path: Path
) -> None:
    path = _definition(tmp_path, case, hook)
    with pytest.raises(DefinitionError) as info:
        Guard(path, ledger=False)
    assert (info.value.file, info.value.line, info.value.path) == (
        str(path),
        SCHEMA_LINE,
        "tools.send.schema",
    )
    assert case.says in str(info.value)


@bad_schema
def test_without_the_load_check_the_call_that_needs_the_schema_fails_closed(
    case: BadSchema, tmp_path: Path
) -> None:
    """What `hookrails hook` does (one event per process): only the calls of that tool are
    denied, with the same explanation; other tools are judged as usual."""
    guard = Guard(_definition(tmp_path, case), ledger=False, check=False)
    denied = guard.sync.pre_tool_use("send", {"to": "a"})
    assert denied.decision == "deny" and case.says in (denied.reason or "")
    assert guard.sync.pre_tool_use("lookup", {"q": "a"}).decision == "allow"


def test_a_definition_that_binds_no_schema_hook_still_loads_a_guard(tmp_path: Path) -> None:
    """A Guard checks what its hooks read; `check` is the stricter lint."""
    path = _definition(tmp_path, BAD_SCHEMAS[0], "allow")
    assert Guard(path, ledger=False).sync.pre_tool_use("send", {}).decision == "allow"
    with pytest.raises(DefinitionError, match=r"tools\.send\.schema: schema file 'missing\.json'"):
        check_definition(str(path))


def test_a_good_schema_file_checks_ok_and_is_compiled_at_load(tmp_path: Path) -> None:
    (tmp_path / "send.json").write_text('{"type": "object", "required": ["to"]}')
    path = tmp_path / "agent.yaml"
    path.write_text(DEFINITION.format(schema="send.json", hook="schema_guardrail"))
    report = check_definition(str(path))
    assert report.lines[0].startswith(f"ok: {path}: agent 'shop', 2 tools")
    guard = Guard(path, ledger=False)
    (hook,) = {b.fn for b in guard.bindings["PreToolUse"]}
    assert "send" in hook.schemas.tools(guard.definition)  # compiled: the call is a lookup
    assert guard.sync.pre_tool_use("send", {}).decision == "deny"


# --- the hooks' own check (check_definition) ----------------------------------------------


class Picky:
    """A hook that checks the definition it is bound in."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.checked: list[Any] = []

    def check_definition(self, definition: AgentDefinition) -> None:
        self.checked.append(definition)
        if self.error is not None:
            raise self.error

    def __call__(self, event: Any, ctx: Any) -> None:
        return None


def _picky_definition(hook: Picky) -> AgentDefinition:
    return AgentDefinition(
        hooks={
            "PreToolUse": [HookMatcher(hooks=[hook]), HookMatcher(matcher="Bash", hooks=[hook])],
            "Stop": [HookMatcher(hooks=[hook])],
        }
    )


def test_a_guard_asks_each_bound_hook_once_at_load() -> None:
    hook = Picky()
    definition = _picky_definition(hook)
    Guard(definition, ledger=False)
    assert hook.checked == [definition]
    Guard(definition, ledger=False, check=False)
    assert hook.checked == [definition]


@pytest.mark.parametrize(
    ("error", "says", "path"),
    [
        (
            DefinitionError("needs tools.x", loc=("tools", "x")),
            "tools.x: needs tools.x",
            "tools.x",
        ),
        (
            ValueError("no deploy tool declared"),
            "test_check:Picky' rejects the definition: ValueError: no deploy tool declared",
            "hooks.PreToolUse[0].hooks[0]",
        ),
    ],
    ids=["its own location", "located at its binding"],
)
def test_a_hook_that_rejects_the_definition_fails_the_load(
    error: Exception, says: str, path: str
) -> None:
    with pytest.raises(DefinitionError) as info:
        Guard(_picky_definition(Picky(error)), ledger=False)
    assert says in str(info.value) and info.value.path == path


def test_serve_refuses_to_start_on_a_bad_schema_in_one_line(tmp_path: Path) -> None:
    path = _definition(tmp_path, BAD_SCHEMAS[0])
    result = CliRunner().invoke(cli, ["serve", "--config", str(path), "--port", "0", "--no-ledger"])
    assert isinstance(result.exception, SystemExit) and result.exit_code == 1
    assert result.stdout == ""  # it never listened
    assert result.stderr.startswith(f"error: {path}:{SCHEMA_LINE}: tools.send.schema: ")


def test_a_hooks_own_error_in_a_file_is_located_in_that_file(tmp_path: Path) -> None:
    (tmp_path / "picky_hooks.py").write_text(
        "from guardrails.errors import DefinitionError\n"
        "class Picky:\n"
        "    def check_definition(self, definition):\n"
        "        raise DefinitionError('needs a schema', loc=('tools', 'deploy'))\n"
        "    def __call__(self, event, ctx):\n"
        "        return None\n"
        "hook = Picky()\n"
    )
    path = tmp_path / "agent.yaml"
    path.write_text(
        "tools:\n  lookup: {}\n  deploy: {side_effects: true}\n"
        "hooks:\n  PreToolUse:\n    - hooks: [picky_hooks:hook]\n"
    )
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 1
    assert result.stderr == f"error: {path}:3: tools.deploy: needs a schema\n"
