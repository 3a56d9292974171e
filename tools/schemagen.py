"""Generate the checked-in JSON Schemas from the code: ``make schemas``.

Tests compare the files with this output, so the published schemas cannot
drift from the types.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from guardrails._package_data import data_path
from guardrails.events import EVENT_NAMES, FieldSpec, event_class, wire_fields

__all__ = ["event_input_schema", "generated", "main"]

_DRAFT = "https://json-schema.org/draft/2020-12/schema"
_BASE_ID = "https://hookrails.dev/schemas/"
#: Claude always sends these; ``from_claude`` lets session_id and cwd be absent (a Guard fills them)
_REQUIRED_BASE = ("session_id", "cwd", "hook_event_name")
_JSON_TYPES = {str: "string", bool: "boolean", float: "number", dict: "object", list: "array"}


def _field_schema(spec: FieldSpec) -> dict[str, Any]:
    if not spec.types:
        return {}
    json_type = _JSON_TYPES[spec.types[-1]]
    return {"type": [json_type, "null"] if spec.nullable else json_type}


def event_input_schema(name: str) -> dict[str, Any]:
    """The JSON Schema of one event's payload, derived from the checks ``from_claude`` applies."""
    cls = event_class(name)
    props = {key: _field_schema(spec) for key, spec in wire_fields(name).items()}
    wire, canonical = cls.wire_name, cls.event_name
    props["hook_event_name"] = (
        {"enum": [wire, canonical]} if wire != canonical else {"const": canonical}
    )
    return {
        "$schema": _DRAFT,
        "$id": f"{_BASE_ID}hooks/{canonical}.input.json",
        "title": f"{canonical} hook input",
        "description": f"Payload of the {canonical} event; field names are the Claude hook wire "
        "names. Unknown fields are allowed and kept.",
        "type": "object",
        "required": sorted({*_REQUIRED_BASE, *cls.required}),
        "properties": props,
        "additionalProperties": True,
    }


def generated() -> dict[str, dict[str, Any]]:
    """Relative path under ``schemas/`` -> schema, for every generated file."""
    from guardrails.definition.file_format import json_schema

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
    from guardrails.ledger.migrations import SQL_DIR, schema_sql

    path = Path(SQL_DIR) / "schema.sql"
    path.write_text(schema_sql(), encoding="utf-8")
    print(f"wrote {path.relative_to(root.parent)}")
    from tools import eventstubs

    eventstubs.main()


if __name__ == "__main__":
    main()
