"""A fast ``is_valid`` for the keywords tool schemas use.

``fast_is_valid`` compiles those keywords into plain closures that answer
exactly as jsonschema does (a property test holds them to it), 10-20x faster,
because a guardrail validates every call; errors are still listed by jsonschema.
"""

from __future__ import annotations

import itertools
import numbers
import operator
import re
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from .formats import _jsonschema
from .refs import ExampleError, Schemas, _is_num

__all__ = ["fast_is_valid", "json_equal"]

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
