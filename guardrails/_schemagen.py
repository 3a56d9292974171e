"""Generate the checked-in JSON Schemas from the code: ``make schemas``.

Tests compare the files with this output, so the published schemas cannot
drift from the types.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from pathlib import Path
from typing import Any

from ._resources import data_path
from .events import EVENT_NAMES, event_class

__all__ = ["event_input_schema", "generated", "main"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_BASE_ID = "https://hookrails.dev/schemas/"
#: fields the Claude payload always carries for each event
_REQUIRED_BASE = ("session_id", "cwd", "hook_event_name")
_REQUIRED: dict[str, tuple[str, ...]] = {
    "PreToolUse": ("tool_name", "tool_input"),
    "PostToolUse": ("tool_name", "tool_input", "tool_response"),
    "PostToolUseFailure": ("tool_name", "tool_input", "error"),
    "UserPromptSubmit": ("prompt",),
    "SubagentStart": ("agent_id", "agent_type"),
    "SubagentStop": ("agent_id", "agent_type", "stop_hook_active"),
    "AgentStop": ("stop_hook_active",),
}


def _type_schema(tp: Any) -> dict[str, Any]:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        inner = (
            _type_schema(args[0]) if len(args) == 1 else {"anyOf": [_type_schema(a) for a in args]}
        )
        if "type" in inner and isinstance(inner["type"], str):
            return {**inner, "type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    if tp is str:
        return {"type": "string"}
    if tp is bool:
        return {"type": "boolean"}
    if tp is float or tp is int:
        return {"type": "number"}
    if tp is dict or origin is dict:
        return {"type": "object"}
    if tp is list or origin is list:
        return {"type": "array"}
    return {}


def event_input_schema(name: str) -> dict[str, Any]:
    cls = event_class(name)
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        props[f.name] = _type_schema(hints[f.name])
    wire = "Stop" if name == "AgentStop" else name
    props["hook_event_name"] = {"enum": [wire, name]} if wire != name else {"const": name}
    return {
        "$schema": _DRAFT,
        "$id": f"{_BASE_ID}hooks/{name}.input.json",
        "title": f"{name} hook input",
        "description": f"Payload of the {name} event; field names are the Claude hook wire names. "
        "Unknown fields are allowed and kept.",
        "type": "object",
        "required": sorted({*_REQUIRED_BASE, *_REQUIRED.get(name, ())}),
        "properties": props,
        "additionalProperties": True,
    }


def generated() -> dict[str, dict[str, Any]]:
    """Relative path under ``schemas/`` -> schema, for every generated file."""
    from ._config import json_schema

    out = {f"hooks/{n}.input.json": event_input_schema(n) for n in EVENT_NAMES}
    out["agent-definition.schema.json"] = json_schema()
    return out


def dump(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=False) + "\n"


def main() -> None:
    root = data_path("schemas")
    for rel, schema in generated().items():
        path = Path(root, rel)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(dump(schema), encoding="utf-8")
        print(f"wrote {path.relative_to(root.parent)}")


if __name__ == "__main__":
    main()
