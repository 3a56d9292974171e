"""What is wrong with a tool input, in words a model can act on.

Each jsonschema error becomes one or more :class:`Violation`: where (a JSON
path), the problem, and the fix. Messages name the JSON type a field received,
never its value, so a secret pasted into the wrong field does not travel further.
"""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

from .formats import FORMAT_SAMPLES, _jsonschema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .refs import Schemas

__all__ = ["Violation", "describe", "expected", "json_path", "json_type"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Violation(NamedTuple):
    """One reason the input is invalid: where, what is wrong, and what to do about it."""

    path: str
    problem: str
    fix: str
    keyword: str


def json_path(parts: Any) -> str:
    """``$.edits[0].old_string``; keys that are not identifiers are quoted: ``$["-A"]``."""
    out = ["$"]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENT.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{json.dumps(_short(part), ensure_ascii=False)}]")
    return "".join(out)


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


_TYPE_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean (true or false)",
    "object": "an object",
    "array": "an array",
    "null": "null",
}


def json_type(value: Any) -> str:
    """The JSON type of ``value`` with an article ("a string"): what a message may reveal."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "an empty string" if value == "" else "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def _type_words(types: Any) -> str:
    listed = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_WORDS.get(t, t) for t in listed)


def _values(values: list[Any], limit: int = 20) -> str:
    shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:limit])
    return shown + (", …" if len(values) > limit else "")


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def expected(schemas: Schemas, node: Any) -> str:
    """What a subschema wants, in words ("a string", 'one of "a", "b"'), or ``""``."""
    try:
        node = schemas.flatten(node)
    except ValueError:
        return ""
    if not isinstance(node, dict):
        return ""
    if "const" in node:
        return f"exactly {json.dumps(node['const'], ensure_ascii=False)}"
    if isinstance(node.get("enum"), list):
        return f"one of {_values(node['enum'])}"
    if "type" in node:
        return _type_words(node["type"])
    return ""


def describe(err: Any, schemas: Schemas) -> list[Violation]:
    """What one jsonschema error means, as violations (a ``required`` error lists one per
    missing field); ``schemas`` resolves the subschemas a message quotes."""
    kw = err.validator
    parts = list(err.absolute_path)
    where = json_path(parts)
    inst = err.instance
    val = err.validator_value
    schema = err.schema if isinstance(err.schema, dict) else {}
    got = json_type(inst)
    if "propertyNames" in err.relative_schema_path:
        return [
            Violation(
                where,
                f"field name {json.dumps(_short(str(inst)), ensure_ascii=False)} "
                "is not allowed here",
                f"rename or remove that field of {where}",
                "propertyNames",
            )
        ]
    if kw == "required" and isinstance(inst, dict):
        props = schema.get("properties", {})
        out = []
        for name in val:
            if name in inst:
                continue
            path = json_path([*parts, name])
            want = expected(schemas, props.get(name, True)) if isinstance(props, dict) else ""
            extra = f" (expected {want})" if want else ""
            fix = f"add {path}" + (f" ({want})" if want else "")
            out.append(Violation(path, "required field is missing" + extra, fix, kw))
        return out
    if kw in ("additionalProperties", "unevaluatedProperties") and isinstance(inst, dict):
        return _unexpected(err, parts, inst, schema, kw)
    if kw == "type":
        want = _type_words(val)
        types = [val] if isinstance(val, str) else list(val)
        if isinstance(inst, float) and "integer" in types and not inst.is_integer():
            got = "a number with a fractional part"
        fix = f"make {where} {want}"
        if isinstance(inst, str) and {"number", "integer", "boolean"} & set(types):
            fix = f"give {where} as {want}, without quotes"
        elif isinstance(inst, str) and {"array", "object"} & set(types):
            fix = f"pass {where} as {want} itself, not as a JSON-encoded string"
        return [Violation(where, f"expected {want}, got {got}", fix, kw)]
    if kw == "enum":
        return [
            Violation(
                where,
                f"expected one of {_values(val)}, got {got} that is not one of them",
                f"set {where} to one of {_values(val)}",
                kw,
            )
        ]
    if kw == "const":
        shown = json.dumps(val, ensure_ascii=False)
        return [
            Violation(where, f"expected exactly {shown}, got {got}", f"set {where} to {shown}", kw)
        ]
    if kw == "minLength" and isinstance(inst, str):
        if val == 1:
            fix = f"give {where} a non-empty value"
            return [Violation(where, f"expected a non-empty string, got {got}", fix, kw)]
        return [
            Violation(
                where,
                f"expected at least {_plural(val, 'character')}, got {len(inst)}",
                f"make {where} at least {_plural(val, 'character')} long",
                kw,
            )
        ]
    if kw == "maxLength" and isinstance(inst, str):
        return [
            Violation(
                where,
                f"expected at most {_plural(val, 'character')}, got {len(inst)}",
                f"shorten {where} to at most {_plural(val, 'character')}",
                kw,
            )
        ]
    if kw == "pattern":
        return [
            Violation(
                where,
                f"expected a string matching the pattern {val}, got one that does not match",
                f"make {where} match {val}",
                kw,
            )
        ]
    if kw == "format":
        sample = FORMAT_SAMPLES.get(val)
        like = f" such as {json.dumps(sample)}" if sample else ""
        return [
            Violation(
                where,
                f"expected a valid {val}{like}, got {got} that is not one",
                f"make {where} a valid {val}{like}",
                kw,
            )
        ]
    bounds = {
        "minimum": (">=", "smaller"),
        "exclusiveMinimum": (">", "smaller"),
        "maximum": ("<=", "larger"),
        "exclusiveMaximum": ("<", "larger"),
    }
    if kw in bounds:
        op, side = bounds[kw]
        return [
            Violation(
                where,
                f"expected a number {op} {val}, got a {side} number",
                f"make {where} {op} {val}",
                kw,
            )
        ]
    if kw == "multipleOf":
        return [
            Violation(
                where,
                f"expected a multiple of {val}, got a number that is not",
                f"make {where} a multiple of {val}",
                kw,
            )
        ]
    if kw in ("minItems", "maxItems") and isinstance(inst, list):
        least = kw == "minItems"
        word = "at least" if least else "at most"
        return [
            Violation(
                where,
                f"expected {word} {_plural(val, 'item')}, got {len(inst)}",
                f"give {where} {word} {_plural(val, 'item')}",
                kw,
            )
        ]
    if kw in ("minProperties", "maxProperties") and isinstance(inst, dict):
        word = "at least" if kw == "minProperties" else "at most"
        return [
            Violation(
                where,
                f"expected {word} {_plural(val, 'field')}, got {len(inst)}",
                f"give {where} {word} {_plural(val, 'field')}",
                kw,
            )
        ]
    if kw == "uniqueItems":
        return [
            Violation(
                where,
                "expected unique items, got duplicates",
                f"remove the duplicate items from {where}",
                kw,
            )
        ]
    if kw in ("contains", "minContains", "maxContains"):
        return [
            Violation(
                where,
                f"does not have the number of items of the required kind ({kw})",
                f"adjust the items of {where} to match the schema's {kw} rule",
                kw,
            )
        ]
    if kw == "dependentRequired" and isinstance(inst, dict) and isinstance(val, dict):
        out = []
        for trigger, needs in val.items():
            if trigger not in inst:
                continue
            for name in needs:
                if name not in inst:
                    path = json_path([*parts, name])
                    out.append(
                        Violation(
                            path,
                            f"required when {json_path([*parts, trigger])} is given",
                            f"add {path}",
                            kw,
                        )
                    )
        return out
    if kw in ("anyOf", "oneOf"):
        return [_branches(err, where, kw, val, schemas)]
    if kw in ("items", "prefixItems", "unevaluatedItems", "additionalItems") and val is False:
        return [
            Violation(
                where,
                "has more items than the schema allows",
                f"remove the extra items from {where}",
                kw,
            )
        ]
    if kw == "not":
        together = _exclusive(val, inst)
        if together:  # not: {required: [a, b]}: fields that replaced one another
            first, *rest = (json_path([*parts, name]) for name in together)
            listed = " and ".join(rest)
            return [
                Violation(
                    rest[-1],
                    f"cannot be given together with {first}",
                    f"give only one of {first} and {listed}",
                    "not",
                )
            ]
        return [Violation(where, "matches a form the schema forbids", f"change {where}", "not")]
    if kw is None or kw is False:  # a ``false`` subschema
        return [Violation(where, "no value is allowed here", f"remove {where}", "false")]
    return [Violation(where, f"fails the schema's {kw} rule", f"fix {where} ({kw})", str(kw))]


def _unexpected(
    err: Any, parts: list[Any], inst: dict[str, Any], schema: dict[str, Any], kw: str
) -> list[Violation]:
    props = schema.get("properties", {})
    if kw == "additionalProperties":
        patterns = list(schema.get("patternProperties", {}))
        extras = [k for k in inst if k not in props and not any(re.search(p, k) for p in patterns)]
    else:  # the message names each unevaluated key
        extras = [k for k in inst if repr(k) in err.message]
    allowed = list(props) if isinstance(props, dict) else []
    out = []
    for key in extras:
        path = json_path([*parts, key])
        problem = "unexpected field"
        fix = f"remove {path}"
        close = _closest(key, [a for a in allowed if a not in inst])
        if close is not None:
            problem += f" (did you mean {json.dumps(close, ensure_ascii=False)}?)"
            fix = f"rename {path} to {json.dumps(close, ensure_ascii=False)}"
        elif allowed:
            problem += f"; allowed fields: {', '.join(allowed[:30])}"
        out.append(Violation(path, problem, fix, kw))
    return out


def _branches(err: Any, where: str, kw: str, options: Any, schemas: Schemas) -> Violation:
    n = len(options) if isinstance(options, list) else 0
    context = list(err.context or ())
    if kw == "oneOf" and (not context or len({e.relative_schema_path[0] for e in context}) < n):
        return Violation(
            where,
            f"matches more than one of the {n} allowed forms; it must match exactly one",
            f"change {where} so it matches exactly one allowed form",
            kw,
        )
    if context:
        closest = describe(_closest_branch(context), schemas)
        if closest:
            first = closest[0]
            return Violation(
                where,
                f"matches none of the {n} allowed forms; closest: {first.path}: {first.problem}",
                first.fix,
                kw,
            )
    return Violation(
        where,
        f"matches none of the {n} allowed forms",
        f"change {where} to one of the allowed forms",
        kw,
    )


def _exclusive(value: Any, inst: Any) -> list[str]:
    """The fields of ``not: {required: [...]}`` when ``inst`` has them all, else ``[]``."""
    if not isinstance(value, dict) or set(value) != {"required"} or not isinstance(inst, dict):
        return []
    names = value["required"]
    if not isinstance(names, list) or len(names) < 2 or not all(n in inst for n in names):
        return []
    return [n for n in names if isinstance(n, str)]


def _closest_branch(context: list[Any]) -> Any:
    """The error to show for an input no branch of ``anyOf``/``oneOf`` accepts: the best
    match (jsonschema's) within the branch with the fewest problems, the earliest on a
    tie, so an input one fix away from the first form is told that fix."""
    by_branch: dict[Any, list[Any]] = {}
    for error in context:
        key = error.relative_schema_path[0] if error.relative_schema_path else None
        by_branch.setdefault(key, []).append(error)
    fewest = min(by_branch.values(), key=len)
    return _jsonschema().exceptions.best_match(fewest)


def _closest(key: str, options: list[str]) -> str | None:
    if not options:
        return None
    import difflib

    lowered = {o.lower(): o for o in options}
    if key.lower() in lowered:
        return lowered[key.lower()]
    hits = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[hits[0]] if hits else None
