"""Minimal valid examples: one concrete input that would have passed.

A model fixes a rejected call fastest when it is shown one concrete input that
would have passed, so denials and nudges end with ``minimal_example(schema)``:
the schema's own ``examples[0]`` when it validates, else a value synthesized
from the required fields only. Every example is checked against the schema
before it is returned; one that cannot be built raises :class:`ExampleError`
rather than show the model something that would fail again.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Iterator
from fractions import Fraction
from typing import Any

from .formats import FORMAT_SAMPLES, compile_validator
from .refs import _ORDER, MAX_DEPTH, ExampleError, Schemas, _is_num, _types, merge

__all__ = ["ExampleError", "minimal_example", "regex_example", "try_example"]

#: placeholders chosen by property name, so an example reads like a real call
_NAME_HINTS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("url", "uri", "href", "link", "endpoint"), "https://example.com/"),
    (("email",), "user@example.com"),
    (("dir", "folder"), "/path/to/dir"),
    (("path", "file"), "/path/to/file"),
    (("command", "cmd"), "echo hello"),
    (("query", "prompt", "question"), "example query"),
)


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
