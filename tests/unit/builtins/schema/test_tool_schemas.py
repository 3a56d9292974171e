"""The shipped schemas of Claude Code's built-in tools (``schemas/tools/*.json``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from guardrails._package_data import data_path
from guardrails.builtins.schema.formats import format_checker
from guardrails.builtins.schema.sources import builtin_schema, builtin_tool_names
from tests._paths import REPO

TOOLS_DIR = REPO / "schemas" / "tools"
DRAFT = "https://json-schema.org/draft/2020-12/schema"

#: tool -> the fields Claude Code requires
REQUIRED = {
    "Agent": ["description", "prompt"],
    "Bash": ["command"],
    "Edit": ["file_path", "old_string", "new_string"],
    "Glob": ["pattern"],
    "Grep": ["pattern"],
    "MultiEdit": ["file_path", "edits"],
    "NotebookEdit": ["notebook_path", "new_source"],
    "Read": ["file_path"],
    "Task": ["description", "prompt"],
    "TodoWrite": ["todos"],
    "WebFetch": ["url", "prompt"],
    "WebSearch": ["query"],
    "Write": ["file_path", "content"],
}


def load(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((TOOLS_DIR / f"{name}.json").read_text(encoding="utf-8"))
    return data


def test_one_schema_per_built_in_tool() -> None:
    assert sorted(p.stem for p in TOOLS_DIR.glob("*.json")) == sorted(REQUIRED)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_schema_is_valid_draft_2020_12(name: str) -> None:
    schema = load(name)
    assert schema["$schema"] == DRAFT
    Draft202012Validator.check_schema(schema)


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_schema_documents_itself(name: str) -> None:
    schema = load(name)
    assert schema["$id"].endswith(f"/tools/{name}.json")
    assert schema["title"] == f"{name} tool input"
    assert schema["description"].strip()
    assert schema["examples"], "at least one example"


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_every_example_validates(name: str) -> None:
    schema = load(name)
    validator = Draft202012Validator(schema, format_checker=format_checker())
    for example in schema["examples"]:
        assert list(validator.iter_errors(example)) == []


@pytest.mark.parametrize(("name", "required"), sorted(REQUIRED.items()))
def test_required_fields_match_claude_code(name: str, required: list[str]) -> None:
    assert load(name)["required"] == required


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_unknown_fields_are_rejected_as_claude_code_does(name: str) -> None:
    schema = load(name)
    assert schema["additionalProperties"] is False
    example = dict(schema["examples"][0], unexpected_field=1)
    assert not Draft202012Validator(schema).is_valid(example)


def test_ids_are_unique() -> None:
    ids = [load(name)["$id"] for name in REQUIRED]
    assert len(ids) == len(set(ids))


def test_task_is_the_same_schema_as_agent() -> None:
    def body(schema: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in schema.items() if k not in ("$id", "title", "description")}

    assert body(load("Task")) == body(load("Agent"))


@pytest.mark.parametrize(
    ("name", "field", "allowed"),
    [
        ("Grep", "output_mode", ["content", "files_with_matches", "count"]),
        ("NotebookEdit", "cell_type", ["code", "markdown"]),
        ("NotebookEdit", "edit_mode", ["replace", "insert", "delete"]),
    ],
)
def test_enums(name: str, field: str, allowed: list[str]) -> None:
    assert load(name)["properties"][field]["enum"] == allowed


def test_todo_items_take_each_released_form_with_one_status_enum() -> None:
    forms = load("TodoWrite")["properties"]["todos"]["items"]["anyOf"]
    assert [f["required"] for f in forms] == [
        ["content", "status", "activeForm"],  # 1.0.110 and later: the example's form
        ["content", "status", "id"],
        ["content", "status", "priority", "id"],
    ]
    for form in forms:
        assert form["properties"]["status"]["enum"] == ["pending", "in_progress", "completed"]
        assert form["additionalProperties"] is False


def test_multiedit_edits_need_old_and_new_string() -> None:
    edits = load("MultiEdit")["properties"]["edits"]
    assert edits["items"]["required"] == ["old_string", "new_string"]
    assert edits["items"]["additionalProperties"] is False


@pytest.mark.parametrize(
    ("name", "tool_input", "valid"),
    [
        ("WebFetch", {"url": "https://example.com/a", "prompt": "sum up"}, True),
        ("WebFetch", {"url": "example.com/a", "prompt": "sum up"}, False),  # format: uri
        ("WebSearch", {"query": "ab"}, True),
        ("WebSearch", {"query": "a"}, False),  # minLength 2
        ("Grep", {"pattern": "x", "-A": 3, "-i": True}, True),
        ("Grep", {"pattern": "x", "output_mode": "lines"}, False),
        ("Bash", {"command": "ls", "timeout": 600000}, True),
        ("Bash", {"command": "ls", "timeout": 7200000, "run_in_background": True}, True),
        ("Bash", {"command": "ls", "timeout": -1}, False),
        ("Read", {"file_path": "/a", "offset": 10, "limit": 20}, True),
        ("Edit", {"file_path": "/a", "old_string": "", "new_string": "x"}, True),
    ],
)
def test_constraints(name: str, tool_input: dict[str, Any], valid: bool) -> None:
    validator = Draft202012Validator(load(name), format_checker=format_checker())
    assert validator.is_valid(tool_input) is valid


def test_data_path_finds_the_tool_schemas_in_a_checkout() -> None:
    assert data_path("schemas") / "tools" == TOOLS_DIR
    assert sorted(builtin_tool_names()) == sorted(REQUIRED)
    assert builtin_schema("Write") == load("Write")
    assert builtin_schema("NoSuchTool") is None


def test_data_path_finds_the_tool_schemas_in_a_wheel_layout(tmp_path: Path) -> None:
    """As a wheel installs it: ``guardrails/_data/schemas`` and no ``pyproject.toml``."""
    site = tmp_path / "site-packages"
    shutil.copytree(
        REPO / "guardrails", site / "guardrails", ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copytree(REPO / "schemas", site / "guardrails" / "_data" / "schemas")
    code = (
        "import guardrails._package_data as r; "
        "from guardrails.builtins.schema.sources import builtin_schema, builtin_tool_names; "
        "print(r.data_path('schemas')); print(len(builtin_tool_names())); "
        "print(builtin_schema('Bash')['title'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    folder, count, title = proc.stdout.splitlines()
    assert Path(folder) == site / "guardrails" / "_data" / "schemas"
    assert int(count) == len(REQUIRED)
    assert title == "Bash tool input"
