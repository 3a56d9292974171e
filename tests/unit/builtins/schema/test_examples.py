"""``minimal_example(schema)``: a small valid input for denial messages and nudges."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft7Validator, Draft202012Validator
from pydantic import BaseModel, Field

from guardrails.builtins.schema.examples import ExampleError, minimal_example, regex_example
from guardrails.builtins.schema.formats import FORMAT_SAMPLES, format_checker


def assert_valid(schema: Any, value: Any) -> None:
    validator = Draft202012Validator(schema, format_checker=format_checker())
    errors = [e.message for e in validator.iter_errors(value)]
    assert errors == [], f"{value!r} is not valid: {errors}"


class Address(BaseModel):
    street: str = Field(min_length=3)
    zip: str = Field(pattern=r"^\d{5}$")


class Person(BaseModel):
    name: str
    age: int = Field(ge=18, le=130)
    email: str | None = None
    home: Address
    tags: list[str] = Field(default_factory=list, min_length=1)


#: name -> schema; every one must yield a valid example
SCHEMAS: dict[str, Any] = {
    "string": {"type": "string"},
    "integer with bounds": {"type": "integer", "minimum": 5, "maximum": 9},
    "number with exclusive bounds": {
        "type": "number",
        "exclusiveMinimum": 0.5,
        "exclusiveMaximum": 0.75,
    },
    "negative range": {"type": "integer", "maximum": -10},
    "multipleOf": {"type": "integer", "minimum": 7, "multipleOf": 5},
    "fractional multipleOf": {"type": "number", "minimum": 0.3, "multipleOf": 0.25},
    "boolean": {"type": "boolean"},
    "null": {"type": "null"},
    "nullable string": {"type": ["null", "string"], "minLength": 2},
    "enum": {"enum": ["red", "green"]},
    "typed enum": {"type": "integer", "enum": ["x", 3, 4]},
    "const": {"const": {"kind": "fixed"}},
    "min and max length": {"type": "string", "minLength": 12, "maxLength": 14},
    "short max length": {"type": "string", "maxLength": 2},
    "pattern": {"type": "string", "pattern": r"^[A-Z]{3}-\d{4}$"},
    "pattern with alternation": {"type": "string", "pattern": r"^(feat|fix)/[a-z0-9-]+$"},
    "required only": {
        "type": "object",
        "required": ["id"],
        "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
        "additionalProperties": False,
    },
    "nested objects and arrays": {
        "type": "object",
        "required": ["file_path", "edits"],
        "properties": {
            "file_path": {"type": "string"},
            "edits": {
                "type": "array",
                "minItems": 2,
                "items": {
                    "type": "object",
                    "required": ["old", "new"],
                    "properties": {"old": {"type": "string"}, "new": {"type": "string"}},
                },
            },
        },
    },
    "unique items": {
        "type": "array",
        "minItems": 3,
        "uniqueItems": True,
        "items": {"type": "integer", "minimum": 0, "maximum": 10},
    },
    "unique enum items": {
        "type": "array",
        "minItems": 2,
        "uniqueItems": True,
        "items": {"enum": ["a", "b", "c"]},
    },
    "prefixItems": {
        "type": "array",
        "minItems": 2,
        "prefixItems": [{"type": "string", "format": "date"}, {"type": "integer"}],
    },
    "contains": {"type": "array", "contains": {"type": "string", "const": "needle"}},
    "$ref and $defs": {
        "$defs": {
            "point": {
                "type": "object",
                "required": ["x", "y"],
                "properties": {"x": {"type": "number"}, "y": {"type": "number"}},
            }
        },
        "type": "object",
        "required": ["from", "to"],
        "properties": {"from": {"$ref": "#/$defs/point"}, "to": {"$ref": "#/$defs/point"}},
    },
    "recursive tree": {
        "$defs": {
            "node": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        },
        "$ref": "#/$defs/node",
    },
    "anyOf first branch": {"anyOf": [{"type": "string", "format": "email"}, {"type": "integer"}]},
    "oneOf with overlap": {
        "oneOf": [{"type": "string"}, {"type": "string", "maxLength": 3}, {"type": "integer"}]
    },
    "allOf merge": {
        "allOf": [
            {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}},
            {"required": ["b"], "properties": {"a": {"minimum": 3}, "b": {"type": "boolean"}}},
        ]
    },
    "if then else": {
        "type": "object",
        "required": ["mode"],
        "properties": {"mode": {"enum": ["insert", "replace"]}},
        "if": {"properties": {"mode": {"const": "insert"}}},
        "then": {"required": ["cell_type"], "properties": {"cell_type": {"enum": ["code"]}}},
    },
    "dependentRequired": {
        "type": "object",
        "required": ["card"],
        "properties": {
            "card": {"type": "string"},
            "cvv": {"type": "string", "pattern": "^\\d{3}$"},
        },
        "dependentRequired": {"card": ["cvv"]},
    },
    "minProperties": {"type": "object", "minProperties": 2, "properties": {"a": {"type": "null"}}},
    "patternProperties": {
        "type": "object",
        "required": ["x-trace"],
        "patternProperties": {"^x-": {"type": "string", "format": "uuid"}},
        "additionalProperties": False,
    },
    "untyped properties": {"required": ["anything"], "properties": {"anything": {}}},
    "pydantic model": Person.model_json_schema(),
    "default used when valid": {
        "type": "object",
        "required": ["level"],
        "properties": {"level": {"type": "integer", "minimum": 1, "default": 3}},
    },
}


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_example_validates(name: str) -> None:
    schema = SCHEMAS[name]
    assert_valid(schema, minimal_example(schema))


@pytest.mark.parametrize("fmt", sorted(set(FORMAT_SAMPLES) - {"url"}))
def test_formats_yield_valid_strings(fmt: str) -> None:
    schema = {"type": "string", "format": fmt}
    value = minimal_example(schema)
    assert value == FORMAT_SAMPLES[fmt]
    assert_valid(schema, value)


def test_top_level_examples_win_when_valid() -> None:
    schema = {
        "type": "object",
        "required": ["q"],
        "properties": {"q": {"type": "string"}, "n": {"type": "integer"}},
        "examples": [{"q": "cats", "n": 3}],
    }
    assert minimal_example(schema) == {"q": "cats", "n": 3}


def test_invalid_examples_are_skipped() -> None:
    schema = {
        "type": "object",
        "required": ["q"],
        "properties": {"q": {"type": "string"}},
        "examples": [{"q": 1}, {"q": "second"}],
    }
    assert minimal_example(schema) == {"q": "second"}


def test_only_required_fields_are_filled() -> None:
    assert set(minimal_example(SCHEMAS["required only"])) == {"id"}


def test_enum_gives_its_first_value() -> None:
    assert minimal_example({"enum": ["red", "green"]}) == "red"


def test_typed_enum_skips_values_of_the_wrong_type() -> None:
    assert minimal_example(SCHEMAS["typed enum"]) == 3


def test_numbers_prefer_the_smallest_valid_value() -> None:
    assert minimal_example({"type": "integer", "minimum": 5}) == 5
    assert minimal_example({"type": "integer", "exclusiveMinimum": 5}) == 6
    assert minimal_example({"type": "integer"}) == 0


def test_anyof_takes_the_first_branch() -> None:
    assert minimal_example(SCHEMAS["anyOf first branch"]) == "user@example.com"


def test_property_names_pick_readable_placeholders() -> None:
    schema = {
        "type": "object",
        "required": ["file_path", "url", "command"],
        "properties": {
            "file_path": {"type": "string"},
            "url": {"type": "string"},
            "command": {"type": "string"},
        },
    }
    assert minimal_example(schema) == {
        "file_path": "/path/to/file",
        "url": "https://example.com/",
        "command": "echo hello",
    }


def test_draft_7_schemas_are_built_by_their_own_rules() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "definitions": {"name": {"type": "string", "minLength": 2}},
        "type": "array",
        "minItems": 2,
        "items": [{"$ref": "#/definitions/name"}, {"type": "boolean"}],
    }
    value = minimal_example(schema)
    assert Draft7Validator(schema).is_valid(value)
    assert value[1] is False


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "minLength": 5, "maxLength": 2},
        {"type": "integer", "minimum": 3, "maximum": 2},
        {"enum": []},
        {"type": "object", "required": ["a"], "properties": {"a": False}},
        {
            "$defs": {
                "loop": {
                    "type": "object",
                    "required": ["next"],
                    "properties": {"next": {"$ref": "#/$defs/loop"}},
                }
            },
            "$ref": "#/$defs/loop",
        },
        {"type": "array", "minItems": 3, "uniqueItems": True, "items": {"type": "boolean"}},
    ],
)
def test_unsatisfiable_schema_raises(schema: dict[str, Any]) -> None:
    with pytest.raises(ExampleError):
        minimal_example(schema)


@pytest.mark.parametrize(
    "pattern",
    [r"^[a-z]+$", r"^\d{3}-\d{4}$", r"^v\d+\.\d+\.\d+$", r"[^a-z\d]_\w+", r"^(?:ab|cd){2}$"],
)
def test_regex_example_matches(pattern: str) -> None:
    import re

    value = regex_example(pattern)
    assert value is not None and re.search(pattern, value)


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("uri", "https://example.com/a?b=c", "example.com/a"),
        ("uri", "mailto:user@example.com", "https://exa mple.com"),
        ("date-time", "2024-02-29T23:59:60+01:00", "2024-02-30T00:00:00Z"),
        ("date-time", "2024-01-01t00:00:00.5z", "2024-01-01 00:00:00"),
        ("time", "23:59:59Z", "24:00:00Z"),
        ("hostname", "api.example.com", "-bad-.example.com"),
        ("duration", "P1DT2H", "P"),
        ("json-pointer", "/a/b~1c", "a/b"),
        ("uri-reference", "../x?y", "a b"),
    ],
)
def test_format_checker_covers_formats_without_optional_packages(
    fmt: str, good: str, bad: str
) -> None:
    validator = Draft202012Validator({"format": fmt}, format_checker=format_checker())
    assert validator.is_valid(good)
    assert not validator.is_valid(bad)


# --- property test over generated schemas -------------------------------------------------

NAMES = st.text(alphabet="abcdefghij_", min_size=1, max_size=6)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-1000, 1000),
    st.text(max_size=5),
)


@st.composite
def string_schemas(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    kind = draw(st.sampled_from(["plain", "length", "format", "pattern"]))
    if kind == "length":
        lo = draw(st.integers(0, 20))
        schema["minLength"] = lo
        if draw(st.booleans()):
            schema["maxLength"] = lo + draw(st.integers(0, 10))
    elif kind == "format":
        schema["format"] = draw(st.sampled_from(sorted(FORMAT_SAMPLES)))
        if draw(st.booleans()):
            schema["maxLength"] = 64
    elif kind == "pattern":
        schema["pattern"] = draw(
            st.sampled_from([r"^[a-z]+$", r"^\d{2,4}$", r"^[A-Z][a-z]*-\d+$", r"x", r"^(a|bc)+$"])
        )
    return schema


@st.composite
def number_schemas(draw: st.DrawFn) -> dict[str, Any]:
    integer = draw(st.booleans())
    schema: dict[str, Any] = {"type": "integer" if integer else "number"}
    lo = draw(st.one_of(st.none(), st.integers(-50, 50)))
    span = draw(st.integers(4, 100))  # room for a multiple of 2 inside
    if lo is not None:
        schema["exclusiveMinimum" if draw(st.booleans()) else "minimum"] = lo
    if draw(st.booleans()):
        hi = (lo if lo is not None else draw(st.integers(-50, 50))) + span
        schema["exclusiveMaximum" if draw(st.booleans()) else "maximum"] = hi
    if draw(st.booleans()):
        schema["multipleOf"] = draw(st.sampled_from([1, 2, 0.5] if integer else [1, 0.5, 0.25]))
    return schema


def leaf_schemas() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        string_schemas(),
        number_schemas(),
        st.just({"type": "boolean"}),
        st.just({"type": "null"}),
        st.lists(SCALARS, min_size=1, max_size=4, unique_by=repr).map(lambda v: {"enum": v}),
        SCALARS.map(lambda v: {"const": v}),
    )


def _can_be_unique(items: dict[str, Any]) -> bool:
    """Whether ``items`` admits many distinct values (uniqueItems stays satisfiable)."""
    if items.get("type") == "string":
        return "format" not in items and "maxLength" not in items and "pattern" not in items
    return (
        items.get("type") in ("integer", "number")
        and "maximum" not in items
        and ("exclusiveMaximum" not in items)
    )


def extend(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    @st.composite
    def objects(draw: st.DrawFn) -> dict[str, Any]:
        props = draw(st.dictionaries(NAMES, children, max_size=4))
        required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
        schema: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        if draw(st.booleans()):
            schema["additionalProperties"] = False
        return schema

    @st.composite
    def arrays(draw: st.DrawFn) -> dict[str, Any]:
        items = draw(children)
        lo = draw(st.integers(0, 3))
        schema: dict[str, Any] = {"type": "array", "items": items, "minItems": lo}
        if draw(st.booleans()):
            schema["maxItems"] = lo + draw(st.integers(0, 3))
        if _can_be_unique(items) and draw(st.booleans()):
            schema["uniqueItems"] = True
        return schema

    @st.composite
    def any_of(draw: st.DrawFn) -> dict[str, Any]:
        return {"anyOf": draw(st.lists(children, min_size=1, max_size=3))}

    return st.one_of(objects(), arrays(), any_of())


TREES = st.recursive(leaf_schemas(), extend, max_leaves=12)


@st.composite
def with_refs(draw: st.DrawFn) -> dict[str, Any]:
    """A root object whose fields reach a shared definition through ``$ref``."""
    shared = draw(TREES)
    return {
        "$defs": {"shared": shared},
        "type": "object",
        "required": ["direct", "via_ref"],
        "properties": {
            "direct": draw(TREES),
            "via_ref": {"$ref": "#/$defs/shared"},
            "list": {"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/shared"}},
        },
    }


SCHEMA_STRATEGY = st.one_of(TREES, with_refs())


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(SCHEMA_STRATEGY)
def test_generated_schemas_yield_valid_examples(schema: dict[str, Any]) -> None:
    assert_valid(schema, minimal_example(schema))
