"""Schema mechanics for the schema built-ins: validators, formats, examples, a fast path.

A model fixes a rejected call fastest when it is shown one concrete input that
would have passed, so denials and nudges end with ``minimal_example(schema)``:
the schema's own ``examples[0]`` when it validates, else a value synthesized
from the required fields only. Every example is checked against the schema
before it is returned; one that cannot be built raises :class:`ExampleError`
rather than show the model something that would fail again.

``compile_validator`` is the one place a schema becomes a validator: the draft
named by ``$schema`` (Draft 2020-12 when absent) with formats checked. The
format checks jsonschema leaves to optional packages (``uri``, ``date-time``,
``hostname``...) are filled in here from the standard library, so ``format:
uri`` is enforced without extra dependencies.

``fast_is_valid`` compiles the keywords tool schemas use into plain closures
that answer exactly as jsonschema does (a property test holds them to it),
10-20x faster, because a guardrail validates every call; errors are still
listed by jsonschema.
"""

from __future__ import annotations

import copy
import datetime
import itertools
import math
import numbers
import operator
import re
from collections.abc import Callable, Iterator
from fractions import Fraction
from typing import Any

__all__ = [
    "FORMAT_SAMPLES",
    "ExampleError",
    "Schemas",
    "compile_validator",
    "fast_is_valid",
    "format_checker",
    "json_equal",
    "minimal_example",
    "try_example",
]

#: deepest nesting (and ``$ref`` hops) the builder follows before giving up
MAX_DEPTH = 32

#: a valid sample value per JSON Schema format
FORMAT_SAMPLES: dict[str, str] = {
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uri-template": "https://example.com/{id}",
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "12:00:00Z",
    "duration": "P1D",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "json-pointer": "/example",
    "relative-json-pointer": "0",
    "regex": "^example$",
}

#: placeholders chosen by property name, so an example reads like a real call
_NAME_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("url", "uri", "href", "link", "endpoint"), "https://example.com/"),
    (("email",), "user@example.com"),
    (("dir", "folder"), "/path/to/dir"),
    (("path", "file"), "/path/to/file"),
    (("command", "cmd"), "echo hello"),
    (("query", "prompt", "question"), "example query"),
)


class ExampleError(ValueError):
    """No input valid against the schema could be built."""


# --- formats and validators -----------------------------------------------------------

_URI_CHARS = re.compile(r"[^\s<>\"{}|\\^`\x00-\x1f\x7f]*\Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z")
_DURATION = re.compile(
    r"P(?!\Z)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?\Z"
)
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*\Z")
_UUID = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_REL_POINTER = re.compile(r"(0|[1-9]\d*)(#|(/([^~/]|~[01])*)*)\Z")


def _uri(value: object, *, iri: bool = False, reference: bool = False) -> bool:
    if not isinstance(value, str):
        return True
    if not iri and not value.isascii():
        return False
    if not _URI_CHARS.match(value) or _BAD_ESCAPE.search(value):
        return False
    return reference or _SCHEME.match(value) is not None


def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _DATE_TIME.match(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    # RFC 3339 allows a leap second (60)
    return hour < 24 and minute < 60 and second <= 60 and _offset_ok(m.group(8))


def _matches_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _DATE.match(value)
    if m is None:
        return False
    try:
        datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def _offset_ok(offset: str) -> bool:
    if offset in ("Z", "z"):
        return True
    return int(offset[1:3]) < 24 and int(offset[4:6]) < 60


def _time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _TIME.match(value)
    if m is None:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    return hour < 24 and minute < 60 and second <= 60 and _offset_ok(m.group(5))


def _hostname(value: object) -> bool:
    if not isinstance(value, str):
        return True
    name = value[:-1] if value.endswith(".") else value
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def _matches(pattern: re.Pattern[str]) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        return not isinstance(value, str) or pattern.match(value) is not None

    return check


def _uri_template(value: object) -> bool:
    if not isinstance(value, str):
        return True
    depth = 0
    for ch in value:
        depth += (ch == "{") - (ch == "}")
        if depth not in (0, 1):
            return False
    return depth == 0 and not any(c.isspace() for c in value)


#: stdlib checks for the formats jsonschema only checks with optional packages installed
_EXTRA_FORMATS: dict[str, Callable[[object], bool]] = {
    "uri": _uri,
    "uri-reference": lambda v: _uri(v, reference=True),
    "iri": lambda v: _uri(v, iri=True),
    "iri-reference": lambda v: _uri(v, iri=True, reference=True),
    "uri-template": _uri_template,
    "date": _matches_date,
    "date-time": _date_time,
    "time": _time,
    "duration": _matches(_DURATION),
    "hostname": _hostname,
    "uuid": _matches(_UUID),
    "json-pointer": _matches(_JSON_POINTER),
    "relative-json-pointer": _matches(_REL_POINTER),
}

_CHECKERS: dict[Any, Any] = {}


def _jsonschema() -> Any:
    """``jsonschema``, imported on first use (by name: it ships no type stubs)."""
    import importlib

    module = importlib.import_module("jsonschema")
    importlib.import_module("jsonschema.validators")
    return module


def format_checker(validator_class: Any = None) -> Any:
    """The ``FormatChecker`` for a draft (default 2020-12): jsonschema's checks for that
    draft, plus the stdlib checks above for the formats it has no checker for."""
    checker = _CHECKERS.get(validator_class)
    if checker is None:
        jsonschema = _jsonschema()
        cls = validator_class or jsonschema.Draft202012Validator
        checker = jsonschema.FormatChecker(formats=())
        checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
        for name, check in _EXTRA_FORMATS.items():
            if name not in checker.checkers:
                checker.checks(name)(check)
        _CHECKERS[validator_class] = checker
    return checker


def compile_validator(schema: Any) -> Any:
    """A validator for ``schema``: the draft its ``$schema`` names (default 2020-12), formats
    checked. Raises ``jsonschema.SchemaError`` for a schema that is not valid JSON Schema."""
    import warnings

    jsonschema = _jsonschema()
    with warnings.catch_warnings():  # an unknown $schema URI falls back to the default
        warnings.simplefilter("ignore", DeprecationWarning)
        cls: Any = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
    cls.check_schema(schema)
    return cls(schema, format_checker=format_checker(cls))


# --- local $ref resolution and allOf merging --------------------------------------------


class Schemas:
    """Walks one schema document: resolves local ``$ref`` and folds ``allOf``.

    Shared by the example builder and the schema summaries, which both need a
    node's effective keywords (pydantic puts every nested model behind a ``$ref``).
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self._anchors: dict[str, Any] | None = None

    def resolve(self, ref: str) -> Any:
        if ref == "#" or ref == "":
            return self.root
        if ref.startswith("#/"):
            node = self.root
            for raw in ref[2:].split("/"):
                from urllib.parse import unquote

                part = unquote(raw).replace("~1", "/").replace("~0", "~")
                if isinstance(node, list):
                    try:
                        node = node[int(part)]
                    except (ValueError, IndexError):
                        raise ExampleError(f"$ref {ref!r} does not resolve") from None
                elif isinstance(node, dict) and part in node:
                    node = node[part]
                else:
                    raise ExampleError(f"$ref {ref!r} does not resolve")
            return node
        if ref.startswith("#"):
            found = self.anchors().get(ref[1:])
            if found is not None:
                return found
        raise ExampleError(f"$ref {ref!r} is not a local reference")

    def anchors(self) -> dict[str, Any]:
        if self._anchors is None:
            found: dict[str, Any] = {}

            def walk(node: Any) -> None:
                if isinstance(node, dict):
                    for key in ("$anchor", "$dynamicAnchor"):
                        if isinstance(node.get(key), str):
                            found.setdefault(node[key], node)
                    for value in node.values():
                        walk(value)
                elif isinstance(node, list):
                    for value in node:
                        walk(value)

            walk(self.root)
            self._anchors = found
        return self._anchors

    def flatten(self, node: Any) -> Any:
        """``node`` with ``$ref`` replaced by its target and ``allOf`` merged in."""
        for _ in range(MAX_DEPTH):
            if not isinstance(node, dict):
                return node
            if "$ref" in node or "$dynamicRef" in node:
                key = "$ref" if "$ref" in node else "$dynamicRef"
                ref = node[key]
                target = self.resolve(ref) if isinstance(ref, str) else True
                rest = {k: v for k, v in node.items() if k != key}
                if not rest:
                    node = target
                    continue
                if target is False:
                    return False
                node = merge(rest, target) if isinstance(target, dict) else rest
                continue
            if "allOf" in node:
                out = {k: v for k, v in node.items() if k != "allOf"}
                for part in node["allOf"]:
                    part = self.flatten(part)
                    if part is False:
                        return False
                    if isinstance(part, dict):
                        out = merge(out, part)
                node = out
                continue
            return node
        raise ExampleError("the schema refers to itself too deeply ($ref loop)")


_LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
_UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SUBSCHEMAS = ("items", "additionalProperties", "contains", "propertyNames", "not")


def _types(value: Any) -> set[str]:
    return {value} if isinstance(value, str) else set(value)


def merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """Both schemas' constraints in one node (an approximation of ``allOf: [a, b]``).

    Conflicts that cannot be expressed in one node keep ``a``'s keyword: the
    final validation against the whole schema still catches them.
    """
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
            continue
        cur = out[key]
        if key in _MAPS and isinstance(cur, dict) and isinstance(value, dict):
            both = dict(cur)
            for name, sub in value.items():
                both[name] = {"allOf": [both[name], sub]} if name in both else sub
            out[key] = both
        elif key == "required" and isinstance(cur, list) and isinstance(value, list):
            out[key] = list(dict.fromkeys([*cur, *value]))
        elif key == "type":
            left, right = _types(cur), _types(value)
            common = left & right
            if "integer" in left and "number" in right:
                common.add("integer")
            if "number" in left and "integer" in right:
                common.add("integer")
            out[key] = [t for t in ("null", *_ORDER) if t in common]
        elif key in _LOWER_BOUNDS and _is_num(cur) and _is_num(value):
            out[key] = max(cur, value)
        elif key in _UPPER_BOUNDS and _is_num(cur) and _is_num(value):
            out[key] = min(cur, value)
        elif key == "enum" and isinstance(cur, list) and isinstance(value, list):
            out[key] = [x for x in cur if any(_same(x, y) for y in value)]
        elif key in _SUBSCHEMAS and isinstance(cur, dict) and isinstance(value, dict):
            out[key] = {"allOf": [cur, value]}
        elif key in _SUBSCHEMAS and (cur is False or value is False):
            out[key] = False
        elif key == "uniqueItems":
            out[key] = bool(cur) or bool(value)
    return out


def _is_num(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _same(x: Any, y: Any) -> bool:
    """JSON equality: ``True`` is not ``1``."""
    if isinstance(x, bool) or isinstance(y, bool):
        return isinstance(x, bool) and isinstance(y, bool) and x == y
    return bool(x == y)


# --- the builder ----------------------------------------------------------------------

_ORDER = ("object", "array", "string", "integer", "number", "boolean")


class _Builder:
    def __init__(self, root: Any) -> None:
        self.schemas = Schemas(root)
        self.validator = compile_validator(root)

    def valid(self, node: Any, value: Any) -> bool:
        if node is True or node == {}:
            return True
        if node is False:
            return False
        return bool(self.validator.evolve(schema=node).is_valid(value))

    def build(self, node: Any, depth: int = 0, name: str | None = None) -> Any:
        if depth > MAX_DEPTH:
            raise ExampleError("the schema nests too deeply (a required field refers to itself?)")
        node = self.schemas.flatten(node)
        if node is True:
            return _hint(name) or "example"
        if not isinstance(node, dict):
            raise ExampleError("a false schema admits no value")
        for candidate in _own_examples(node):
            if self.valid(node, candidate):
                return copy.deepcopy(candidate)
        if "const" in node:
            return copy.deepcopy(node["const"])
        if "enum" in node:
            for value in node["enum"]:
                if self.valid(node, value):
                    return copy.deepcopy(value)
            raise ExampleError("no enum value satisfies the rest of the schema")
        for key in ("anyOf", "oneOf"):
            if key in node:
                return self._branches(node, key, depth, name)
        if "if" not in node:
            return self._typed(node, depth, name)
        base = {k: v for k, v in node.items() if k not in ("if", "then", "else")}
        value = self._conditional(node, self._typed(base, depth, name), depth, name)
        if not self.valid(node, value):
            raise ExampleError("no value satisfies the schema's if/then/else")
        return value

    def _branches(self, node: dict[str, Any], key: str, depth: int, name: str | None) -> Any:
        rest = {k: v for k, v in node.items() if k != key}
        for branch in node[key]:
            branch = self.schemas.flatten(branch)
            if branch is False:
                continue
            merged = merge(rest, branch) if isinstance(branch, dict) else rest
            try:
                value = self.build(merged, depth + 1, name)
            except ExampleError:
                continue
            if self.valid(node, value):
                return value
        raise ExampleError(f"no branch of {key} yields a valid value")

    def _conditional(self, node: dict[str, Any], value: Any, depth: int, name: str | None) -> Any:
        base = {k: v for k, v in node.items() if k not in ("if", "then", "else")}
        branch = node.get("then" if self.valid(node["if"], value) else "else")
        if branch is None or self.valid(branch, value):
            return value
        if not isinstance(branch, dict):
            raise ExampleError("a conditional branch admits no value")
        return self.build(merge(base, self.schemas.flatten(branch)), depth + 1, name)

    def _typed(self, node: dict[str, Any], depth: int, name: str | None) -> Any:
        declared = node.get("type")
        if declared is None:
            types = [_infer_type(node)]
        else:
            listed = _types(declared)
            types = [t for t in (*_ORDER, "null") if t in listed]
            if not types:
                raise ExampleError("the schema allows no type")
        last: ExampleError | None = None
        for t in types:
            try:
                value = self._of_type(t, node, depth, name)
            except ExampleError as exc:
                last = exc
                continue
            if self.valid(node, value):
                return value
        raise last or ExampleError("no value of the allowed types satisfies the schema")

    def _of_type(self, t: str, node: dict[str, Any], depth: int, name: str | None) -> Any:
        if t == "object":
            return self._object(node, depth)
        if t == "array":
            return self._array(node, depth, name)
        if t == "string":
            return self._string(node, name)
        if t in ("integer", "number"):
            return _number(node, integer=t == "integer")
        if t == "boolean":
            return False
        return None

    def _string(self, node: dict[str, Any], name: str | None) -> str:
        lo, hi = node.get("minLength", 0), node.get("maxLength")
        candidates: list[str] = []
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in FORMAT_SAMPLES:
            candidates.append(FORMAT_SAMPLES[fmt])
        pattern = node.get("pattern")
        if isinstance(pattern, str):
            found = regex_example(pattern)
            if found is not None:
                candidates.append(found)
        hint = _hint(name)
        if hint:
            candidates.append(hint)
        candidates.append("example")
        for base in candidates:
            for value in _fit_length(base, lo, hi):
                if self.valid(node, value):
                    return value
        raise ExampleError("no string satisfies the schema")

    def _array(self, node: dict[str, Any], depth: int, name: str | None) -> list[Any]:
        items: Any = node.get("items", True)
        prefix = node.get("prefixItems", [])
        if isinstance(items, list):  # draft 7 and earlier: a tuple
            prefix, items = items, node.get("additionalItems", True)
        contains = node.get("contains")
        min_contains = node.get("minContains", 1) if contains is not None else 0
        length = max(node.get("minItems", 0), min_contains)
        schemas: list[Any] = []
        for i in range(length):
            schema = prefix[i] if i < len(prefix) else items
            if contains is not None and i >= length - min_contains:
                schema = self._with(schema, contains)
            schemas.append(schema)
        if node.get("uniqueItems") and length > 1:
            return self._distinct(schemas, depth, name)
        return [self.build(s, depth + 1, name) for s in schemas]

    def _with(self, schema: Any, extra: Any) -> Any:
        schema, extra = self.schemas.flatten(schema), self.schemas.flatten(extra)
        if schema is False or extra is False:
            return False
        if not isinstance(schema, dict):
            return extra
        return merge(schema, extra) if isinstance(extra, dict) else schema

    def _distinct(self, schemas: list[Any], depth: int, name: str | None) -> list[Any]:
        """Values for ``schemas`` that are pairwise different (``uniqueItems``)."""
        from ..._canonical_json import canonical_json

        out: list[Any] = []
        seen: set[str] = set()
        for schema in schemas:
            base = self.build(schema, depth + 1, name)
            for candidate in _variants(base):
                key = canonical_json(candidate)
                if key not in seen and self.valid(schema, candidate):
                    seen.add(key)
                    out.append(candidate)
                    break
            else:
                raise ExampleError("cannot build enough distinct items for uniqueItems")
        return out

    def _object(self, node: dict[str, Any], depth: int) -> dict[str, Any]:
        props = node.get("properties", {})
        dependent = node.get("dependentRequired", {})
        out: dict[str, Any] = {}
        todo = list(node.get("required", []))
        while todo:
            key = todo.pop(0)
            if key in out:
                continue
            out[key] = self.build(self._property(node, key), depth + 1, key)
            todo.extend(dependent.get(key, []))
        wanted = node.get("minProperties", 0)
        extra = (k for k in props if k not in out)
        n = 0
        while len(out) < wanted:
            key = next(extra, None)
            if key is None:
                n += 1
                key = f"key{n}"
                if key in out:
                    continue
            out[key] = self.build(self._property(node, key), depth + 1, key)
        return out

    def _property(self, node: dict[str, Any], key: str) -> Any:
        props = node.get("properties", {})
        if key in props:
            return props[key]
        for pattern, schema in node.get("patternProperties", {}).items():
            if re.search(pattern, key):
                return schema
        extra = node.get("additionalProperties", True)
        return extra if isinstance(extra, dict) else True


def _own_examples(node: dict[str, Any]) -> Iterator[Any]:
    examples = node.get("examples")
    if isinstance(examples, list):
        yield from examples
    if "default" in node:
        yield node["default"]


def _infer_type(node: dict[str, Any]) -> str:
    keys = node.keys()
    if keys & {"properties", "required", "patternProperties", "additionalProperties"}:
        return "object"
    if keys & {"minProperties", "maxProperties", "dependentRequired", "propertyNames"}:
        return "object"
    if keys & {"items", "prefixItems", "minItems", "maxItems", "contains", "uniqueItems"}:
        return "array"
    if keys & {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}:
        return "number"
    return "string"


def _hint(name: str | None) -> str | None:
    if not name:
        return None
    lowered = name.lower()
    for words, value in _NAME_HINTS:
        if any(w in lowered for w in words):
            return value
    return None


def _fit_length(base: str, lo: int, hi: int | None) -> Iterator[str]:
    value = base
    if len(value) < lo:
        yield value + (value[-1:] or "x") * (lo - len(value))
        value = value + "x" * (lo - len(value))
    if hi is not None and len(value) > hi:
        value = value[:hi]
    yield value
    yield "x" * lo


def _bound(node: dict[str, Any], plain: str, exclusive: str, pick: Any) -> tuple[Any, bool]:
    """The tighter of ``minimum``/``exclusiveMinimum`` (or the maximums): (value, exclusive)."""
    value, strict = node.get(plain), False
    ex = node.get(exclusive)
    if _is_num(ex) and (value is None or pick(ex, value) == ex):
        value, strict = ex, True
    return (value if _is_num(value) else None), strict


def _number(node: dict[str, Any], *, integer: bool) -> int | float:
    lo: Any
    hi: Any
    lo, lo_strict = _bound(node, "minimum", "exclusiveMinimum", max)
    hi, hi_strict = _bound(node, "maximum", "exclusiveMaximum", min)
    step: Any = node.get("multipleOf")
    if integer:
        if lo is not None:
            lo, lo_strict = (math.floor(lo) + 1 if lo_strict else math.ceil(lo)), False
        if hi is not None:
            hi, hi_strict = (math.ceil(hi) - 1 if hi_strict else math.floor(hi)), False

    def ok(v: Fraction) -> bool:
        if lo is not None and (v < lo or (lo_strict and v == lo)):
            return False
        if hi is not None and (v > hi or (hi_strict and v == hi)):
            return False
        return not integer or v.denominator == 1

    if _is_num(step) and step > 0:
        m = Fraction(str(step))
        tries: Iterator[Fraction]
        if lo is not None:
            k = math.ceil(Fraction(str(lo)) / m)
            tries = (m * (k + i) for i in range(1000))
        elif hi is not None:
            k = min(0, math.floor(Fraction(str(hi)) / m))
            tries = (m * (k - i) for i in range(1000))
        else:
            tries = iter([Fraction(0)])
        for v in tries:
            if ok(v):
                return _plain(v)
        raise ExampleError("no multiple of multipleOf fits the bounds")
    candidates: list[Fraction] = [Fraction(0)]
    lo_f = None if lo is None else Fraction(str(lo))
    hi_f = None if hi is None else Fraction(str(hi))
    if lo_f is not None:
        candidates += [lo_f, lo_f + 1]
        if hi_f is not None:
            candidates.append((lo_f + hi_f) / 2)
    if hi_f is not None:
        candidates += [hi_f, hi_f - 1]
    for v in candidates:
        if ok(v):
            return _plain(v)
    raise ExampleError("no number fits the bounds")


def _plain(v: Fraction) -> int | float:
    return int(v) if v.denominator == 1 else float(v)


def _variants(base: Any) -> Iterator[Any]:
    """``base`` and values near it, for building distinct array items."""
    yield base
    if isinstance(base, bool):
        yield not base
    elif isinstance(base, int | float):
        for i in range(1, 50):
            yield base + i
            yield base - i
    elif isinstance(base, str):
        for i in range(1, 50):
            tag = str(i)
            yield base + tag
            if len(base) >= len(tag):
                yield base[: len(base) - len(tag)] + tag
        yield from "abcdefghijklmnopqrstuvwxyz"
    elif isinstance(base, dict):
        for key, value in base.items():
            for other in _variants(value):
                if other is not value:
                    yield {**base, key: other}
    elif isinstance(base, list):
        for i, value in enumerate(base):
            for other in _variants(value):
                if other is not value:
                    yield [*base[:i], other, *base[i + 1 :]]


# --- strings for a regular expression ----------------------------------------------------


class _Unsupported(Exception):
    pass


def regex_example(pattern: str) -> str | None:
    """A short string ``re.search(pattern, s)`` accepts, or ``None``.

    Follows the first alternative and the minimum count of every repeat; enough
    for the patterns tool schemas use (ids, slugs, dates, versions).
    """
    import importlib

    try:
        c: Any = importlib.import_module("re._constants")
        parsed = importlib.import_module("re._parser").parse(pattern)
        text = _gen(parsed, c)
    except Exception:  # unparsable or unsupported construct: no example from the pattern
        return None
    try:
        return text if re.search(pattern, text) else None
    except re.error:
        return None


def _gen(items: Any, c: Any) -> str:
    out: list[str] = []
    for op, av in items:
        if op is c.LITERAL:
            out.append(chr(av))
        elif op is c.NOT_LITERAL:
            out.append("a" if av != ord("a") else "b")
        elif op is c.ANY:
            out.append("a")
        elif op is c.IN:
            out.append(_in_class(av, c))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            low, _high, sub = av
            out.append(_gen(sub, c) * low)
        elif op is c.SUBPATTERN:
            out.append(_gen(av[-1], c))
        elif op is getattr(c, "ATOMIC_GROUP", None):
            out.append(_gen(av, c))
        elif op is c.BRANCH:
            out.append(_gen(av[1][0], c))
        elif op is c.CATEGORY:
            out.append(_category(av, c))
        elif op in (c.AT, c.ASSERT_NOT):
            continue
        else:
            raise _Unsupported(str(op))
    return "".join(out)


_CATEGORIES = {
    "CATEGORY_DIGIT": ("0", r"\d"),
    "CATEGORY_NOT_DIGIT": ("a", r"\D"),
    "CATEGORY_SPACE": (" ", r"\s"),
    "CATEGORY_NOT_SPACE": ("a", r"\S"),
    "CATEGORY_WORD": ("a", r"\w"),
    "CATEGORY_NOT_WORD": (" ", r"\W"),
}


def _category(av: Any, c: Any) -> str:
    found = _CATEGORIES.get(str(av))
    if found is None:
        raise _Unsupported(str(av))
    return found[0]


def _in_class(items: Any, c: Any) -> str:
    if items and items[0][0] is c.NEGATE:
        for ch in "aZ0_x -!~":
            if not any(_member(ch, op, av, c) for op, av in items[1:]):
                return ch
        raise _Unsupported("negated class")
    op, av = items[0]
    if op is c.LITERAL:
        return chr(av)
    if op is c.RANGE:
        return chr(av[0])
    if op is c.CATEGORY:
        return _category(av, c)
    raise _Unsupported(str(op))


def _member(ch: str, op: Any, av: Any, c: Any) -> bool:
    if op is c.LITERAL:
        return bool(ord(ch) == av)
    if op is c.RANGE:
        return bool(av[0] <= ord(ch) <= av[1])
    if op is c.CATEGORY and str(av) in _CATEGORIES:
        return re.fullmatch(_CATEGORIES[str(av)][1], ch) is not None
    return True  # an unknown member kind: treat the character as excluded


# --- a fast path for is_valid --------------------------------------------------------------

#: keywords the fast path implements (Draft 2020-12 semantics, as jsonschema applies them)
_FAST_KEYWORDS = frozenset(
    {
        "type", "enum", "const", "properties", "required", "additionalProperties",
        "patternProperties", "minProperties", "maxProperties", "dependentRequired",
        "minLength", "maxLength", "pattern", "format", "minimum", "maximum",
        "exclusiveMinimum", "exclusiveMaximum", "items", "prefixItems", "minItems",
        "maxItems", "uniqueItems", "multipleOf", "allOf", "anyOf", "oneOf", "not", "$ref",
    }
)  # fmt: skip
#: keywords that never affect validity (``$id`` only at the root: it moves ``$ref`` bases)
_FAST_IGNORED = frozenset(
    {
        "$schema", "$comment", "$defs", "definitions", "title", "description", "default",
        "examples", "deprecated", "readOnly", "writeOnly",
    }
)  # fmt: skip

Check = Callable[[Any], bool]


def _always(value: Any) -> bool:
    return True


def _never(value: Any) -> bool:
    return False


class _NoFast(Exception):
    """The schema uses something the fast path does not implement."""


def _is_number(value: Any) -> bool:
    if type(value) is int or type(value) is float:
        return True
    return not isinstance(value, bool) and isinstance(value, numbers.Number)


def _is_integer(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


_TYPE_CHECKS: dict[str, Check] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": _is_integer,
    "number": _is_number,
}


def json_equal(one: Any, two: Any) -> bool:
    """JSON Schema equality (``enum``, ``const``): ``true`` is not ``1``, ``1`` is ``1.0``."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, list | tuple) and isinstance(two, list | tuple):
        return len(one) == len(two) and all(json_equal(a, b) for a, b in zip(one, two, strict=True))
    if isinstance(one, dict) and isinstance(two, dict):
        return one.keys() == two.keys() and all(json_equal(one[k], two[k]) for k in one)
    if isinstance(one, bool) or isinstance(two, bool):
        return isinstance(one, bool) and isinstance(two, bool) and one == two
    return bool(one == two)


class _FastCompiler:
    """Compiles the common subset of Draft 2020-12 into nested closures.

    jsonschema walks the schema for every instance, yielding lazily; tool input
    schemas are small, fixed, and checked on every call, so the valid path is
    compiled once into plain Python checks. Any keyword outside the subset makes
    the whole schema fall back to jsonschema; an invalid answer is always
    re-derived by jsonschema for the error listing.
    """

    def __init__(self, root: Any, checker: Any) -> None:
        self.root = root
        self.schemas = Schemas(root)
        self.formats: dict[str, tuple[Any, Any]] = dict(checker.checkers)
        self.refs: dict[str, list[Check]] = {}

    def compile(self, node: Any, top: bool = False) -> Check:
        if node is True:
            return _always
        if node is False:
            return _never
        if not isinstance(node, dict):
            raise _NoFast("not a schema")
        unknown = node.keys() - _FAST_KEYWORDS - _FAST_IGNORED
        if unknown - ({"$id"} if top else set()):
            raise _NoFast(f"keywords {sorted(unknown)}")
        checks: list[Check] = []
        if node.get("type") == "string" and not node.keys() & {"pattern", "format"}:
            lo, hi = node.get("minLength", 0), node.get("maxLength")
            if hi is None:
                checks.append(lambda v: isinstance(v, str) and len(v) >= lo)
            else:
                checks.append(lambda v: isinstance(v, str) and lo <= len(v) <= hi)
            node = {k: v for k, v in node.items() if k not in ("type", "minLength", "maxLength")}
        if "type" in node:
            checks.append(self._type(node["type"]))
        if "const" in node:
            const = node["const"]
            checks.append(lambda v: json_equal(v, const))
        if "enum" in node:
            options = list(node["enum"])
            if options and all(isinstance(o, str) for o in options):
                names = frozenset(options)
                checks.append(lambda v: isinstance(v, str) and v in names)
            else:
                checks.append(lambda v: any(json_equal(v, o) for o in options))
        checks += self._strings(node) + self._numbers(node)
        if "format" in node:
            checks.append(self._format(node["format"]))
        obj = self._object(node)
        if obj is not None:
            checks.append(lambda v: not isinstance(v, dict) or obj(v))
        arr = self._array(node)
        if arr is not None:
            checks.append(lambda v: not isinstance(v, list) or arr(v))
        checks += self._combinators(node)
        if "$ref" in node:
            checks.append(self._ref(node["$ref"]))
        return _all(checks)

    def _type(self, declared: Any) -> Check:
        names = [declared] if isinstance(declared, str) else list(declared)
        try:
            fns = [_TYPE_CHECKS[n] for n in names]
        except (KeyError, TypeError):
            raise _NoFast("unknown type") from None
        if len(fns) == 1:
            return fns[0]
        return lambda v: any(f(v) for f in fns)

    def _strings(self, node: dict[str, Any]) -> list[Check]:
        out: list[Check] = []
        lo, hi = node.get("minLength"), node.get("maxLength")
        if lo is not None:
            out.append(lambda v: not isinstance(v, str) or len(v) >= lo)
        if hi is not None:
            out.append(lambda v: not isinstance(v, str) or len(v) <= hi)
        if "pattern" in node:
            try:
                rx = re.compile(node["pattern"])
            except (re.error, TypeError):
                raise _NoFast("pattern") from None
            out.append(lambda v: not isinstance(v, str) or rx.search(v) is not None)
        return out

    def _numbers(self, node: dict[str, Any]) -> list[Check]:
        out: list[Check] = []
        bounds: tuple[tuple[str, Callable[[Any, Any], bool]], ...] = (
            ("minimum", operator.ge),
            ("maximum", operator.le),
            ("exclusiveMinimum", operator.gt),
            ("exclusiveMaximum", operator.lt),
        )
        for key, ok in bounds:
            if key in node:
                bound = node[key]
                if not _is_num(bound):
                    raise _NoFast(key)
                out.append(_bounded(bound, ok))
        if "multipleOf" in node:
            step = node["multipleOf"]
            if not _is_num(step):
                raise _NoFast("multipleOf")
            out.append(lambda v: not _is_number(v) or _multiple_of(v, step))
        return out

    def _format(self, fmt: Any) -> Check:
        found = self.formats.get(fmt)
        if found is None:
            return _always  # unknown formats are annotations
        func, raises = found

        def check(value: Any) -> bool:
            try:
                return bool(func(value))
            except raises:
                return False

        return check

    def _object(self, node: dict[str, Any]) -> Check | None:
        keys = (
            "properties", "required", "additionalProperties", "patternProperties",
            "minProperties", "maxProperties", "dependentRequired",
        )  # fmt: skip
        if not any(k in node for k in keys):
            return None
        props = {k: self.compile(s) for k, s in node.get("properties", {}).items()}
        required = tuple(node.get("required", ()))
        try:
            patterns = [
                (re.compile(p), self.compile(s))
                for p, s in node.get("patternProperties", {}).items()
            ]
        except re.error:
            raise _NoFast("patternProperties") from None
        extra = node.get("additionalProperties", True)
        rest: Check | None = None if extra is True else self.compile(extra)
        lo, hi = node.get("minProperties"), node.get("maxProperties")
        dependent = node.get("dependentRequired", {})

        def check(value: dict[str, Any]) -> bool:
            for name in required:
                if name not in value:
                    return False
            for key, item in value.items():
                sub = props.get(key)
                matched = sub is not None
                if matched and not sub(item):  # type: ignore[misc]
                    return False
                for rx, pcheck in patterns:
                    if rx.search(key):
                        matched = True
                        if not pcheck(item):
                            return False
                if not matched and rest is not None and not rest(item):
                    return False
            if lo is not None and len(value) < lo:
                return False
            if hi is not None and len(value) > hi:
                return False
            for trigger, needs in dependent.items():
                if trigger in value and any(n not in value for n in needs):
                    return False
            return True

        return check

    def _array(self, node: dict[str, Any]) -> Check | None:
        keys = ("items", "prefixItems", "minItems", "maxItems", "uniqueItems")
        if not any(k in node for k in keys):
            return None
        unique = bool(node.get("uniqueItems"))
        prefix = [self.compile(s) for s in node.get("prefixItems", [])]
        items = node.get("items", True)
        rest = None if items is True else self.compile(items)
        lo, hi = node.get("minItems"), node.get("maxItems")
        n = len(prefix)

        def check(value: list[Any]) -> bool:
            if lo is not None and len(value) < lo:
                return False
            if hi is not None and len(value) > hi:
                return False
            for sub, item in zip(prefix, value, strict=False):
                if not sub(item):
                    return False
            if rest is not None:
                for item in value[n:] if n else value:
                    if not rest(item):
                        return False
            return not unique or _unique(value)

        return check

    def _combinators(self, node: dict[str, Any]) -> list[Check]:
        out: list[Check] = []
        if "allOf" in node:
            out.append(_all([self.compile(s) for s in node["allOf"]]))
        if "anyOf" in node:
            branches = [self.compile(s) for s in node["anyOf"]]
            out.append(lambda v: any(b(v) for b in branches))
        if "oneOf" in node:
            options = [self.compile(s) for s in node["oneOf"]]
            out.append(lambda v: sum(1 for b in options if b(v)) == 1)
        if "not" in node:
            negated = self.compile(node["not"])
            out.append(lambda v: not negated(v))
        return out

    def _ref(self, ref: Any) -> Check:
        if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
            raise _NoFast("non-local $ref")
        cell = self.refs.get(ref)
        if cell is None:
            cell = self.refs[ref] = []
            try:
                target = self.schemas.resolve(ref)
            except ExampleError:
                raise _NoFast("unresolvable $ref") from None
            cell.append(self.compile(target, top=target is self.root))
        return lambda v: cell[0](v)


def _all(checks: list[Check]) -> Check:
    checks = [c for c in checks if c is not _always]
    if not checks:
        return _always
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)
    fns = tuple(checks)

    def every(value: Any) -> bool:
        for fn in fns:  # noqa: SIM110 - a plain loop is faster than all() over a generator
            if not fn(value):
                return False
        return True

    return every


def _bounded(bound: Any, ok: Callable[[Any, Any], bool]) -> Check:
    return lambda v: not _is_number(v) or ok(v, bound)


def _multiple_of(value: Any, step: Any) -> bool:
    """jsonschema's ``multipleOf`` arithmetic, so both answer alike for every number."""
    if isinstance(step, float):
        quotient = value / step
        try:
            failed = int(quotient) != quotient
        except OverflowError:
            failed = (Fraction(value) / Fraction(step)).denominator != 1
    else:
        failed = value % step
    return not failed


_TRUE, _FALSE = object(), object()


def _unbool(value: Any) -> Any:
    return _TRUE if value is True else _FALSE if value is False else value


def _unique(items: list[Any]) -> bool:
    """jsonschema's ``uniqueItems`` algorithm (sort, compare neighbours; else pairwise)."""
    try:
        ordered = sorted(_unbool(i) for i in items)
        return not any(_eq(a, b) for a, b in itertools.pairwise(ordered))
    except (NotImplementedError, TypeError):
        seen: list[Any] = []
        for item in items:
            item = _unbool(item)
            if any(_eq(s, item) for s in seen):
                return False
            seen.append(item)
        return True


def _eq(one: Any, two: Any) -> bool:
    if one is two:
        return True
    if one is _TRUE or one is _FALSE or two is _TRUE or two is _FALSE:
        return False
    return json_equal(one, two)


def fast_is_valid(validator: Any) -> Check | None:
    """A compiled ``is_valid`` for ``validator``'s schema, or ``None`` where the fast path
    does not apply (another draft, or a keyword it does not implement)."""
    jsonschema = _jsonschema()
    if type(validator) is not jsonschema.Draft202012Validator:
        return None
    checker = validator.format_checker or jsonschema.FormatChecker(formats=())
    try:
        return _FastCompiler(validator.schema, checker).compile(validator.schema, top=True)
    except _NoFast:
        return None


# --- entry points -------------------------------------------------------------------------


def minimal_example(schema: Any) -> Any:
    """A small input valid against ``schema``: its ``examples[0]`` if valid, else synthesized.

    Only required fields are filled in. Raises :class:`ExampleError` when no
    valid value can be built (or ``jsonschema.SchemaError`` for an invalid schema).
    """
    builder = _Builder(schema)
    value = builder.build(schema)
    if not builder.validator.is_valid(value):
        raise ExampleError("the synthesized example does not validate against the schema")
    return value


def try_example(schema: Any) -> tuple[bool, Any]:
    """``(True, example)``, or ``(False, None)`` when none can be built."""
    try:
        return True, minimal_example(schema)
    except ExampleError:
        return False, None
