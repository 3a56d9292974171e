"""``schema_guardrail``: deny a tool call whose input does not match the tool's JSON Schema.

Models get tool arguments wrong in a few recurring ways (a missing field, a
number sent as a string, a misspelt key, an array passed as a JSON string).
Catching that before the tool runs, and answering with every problem and a
valid example, turns a confusing tool failure into one corrective retry.

Where a tool's schema comes from (``ToolSpec.schema``), resolved once per tool
and definition and compiled once:

* a mapping: the JSON Schema itself, inline;
* an MCP tool, ``{name: ..., inputSchema: {...}}`` (or just ``{inputSchema: ...}``;
  the Anthropic API's ``input_schema`` is accepted too): its input schema;
* a string: a ``.json``/``.yaml`` file, relative to the definition file (or
  the working directory for a definition built in Python); a path under
  ``schemas/`` that is not there falls back to the schemas shipped with
  hookrails (``schemas/tools/Bash.json``); ``package.module:Model`` imports a
  pydantic model;
* a pydantic model class (or ``TypeAdapter``): its ``model_json_schema()``;
* nothing: the built-in schema of the Claude Code tool of the same name
  (``schemas/tools/<Tool>.json``), if there is one.

Validation follows the draft named by ``$schema`` (Draft 2020-12 by default)
with formats checked. Messages name the JSON type a field received, never its
value, so a secret pasted into the wrong field does not travel further.
"""

from __future__ import annotations

import functools
import json
import os
import re
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ...errors import DefinitionError
from ...results import HookResult

__all__ = [
    "SchemaGuardrail",
    "ToolSchema",
    "ToolSchemas",
    "Violation",
    "builtin_schema",
    "builtin_tool_names",
    "json_path",
    "json_type",
    "resolve_schema",
    "schema_guardrail",
]

#: violations listed in one denial; the rest are counted
MAX_LISTED = 100
_MISSING: Any = object()
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_IMPORT_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_][\w.]*\Z")


# --- built-in schemas ------------------------------------------------------------------


@functools.cache
def _builtin_index() -> dict[str, Path]:
    from ..._package_data import data_path

    return {p.stem: p for p in sorted((data_path("schemas") / "tools").glob("*.json"))}


@functools.cache
def _load_builtin(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def builtin_tool_names() -> list[str]:
    """Claude Code tools with a schema shipped in ``schemas/tools``."""
    return list(_builtin_index())


def builtin_schema(tool: str) -> dict[str, Any] | None:
    """The shipped schema of Claude Code's ``tool`` (shared: do not modify), or ``None``."""
    path = _builtin_index().get(tool)
    return None if path is None else _load_builtin(path)


# --- resolving a declared schema -------------------------------------------------------


def resolve_schema(declared: Any, *, tool: str, source: str | None = None) -> Any:
    """The JSON Schema (a dict or a boolean) ``declared`` for ``tool``, or ``None``.

    ``source`` is the definition file; relative paths resolve against its folder.
    Raises :class:`DefinitionError` (located at ``tools.<tool>.schema``) for a
    missing or unreadable file or a value that is no kind of schema.
    """
    if declared is None:
        return builtin_schema(tool)
    loc: tuple[str | int, ...] = ("tools", tool, "schema")
    value = declared
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = _load_ref(value, source, loc)
    value = _from_model(value)
    if isinstance(value, dict):
        for key in ("inputSchema", "input_schema"):  # an MCP / Anthropic API tool description
            if isinstance(value.get(key), dict | bool):
                value = value[key]
                break
    if not isinstance(value, dict | bool):
        raise DefinitionError(
            f"the schema must be a JSON Schema, got {type(value).__name__}",
            file=source,
            loc=loc,
            expected="a mapping, a file path, a pydantic model or an MCP tool with inputSchema",
        )
    return value


def _from_model(value: Any) -> Any:
    dump = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(dump):
        return dump()
    if not isinstance(value, dict | list | str | bool | int | float | type(None)):
        dump = getattr(value, "json_schema", None)  # pydantic.TypeAdapter
        if callable(dump):
            return dump()
    return value


def _load_ref(ref: str, source: str | None, loc: tuple[str | int, ...]) -> Any:
    base = os.path.dirname(os.path.abspath(source)) if source else os.getcwd()
    path = Path(base, ref)
    if _IMPORT_REF.match(ref) and not path.exists():
        return _import_model(ref, base, source, loc)
    if not path.is_file():
        packaged = _packaged(ref)
        if packaged is None:
            raise DefinitionError(
                f"schema file {ref!r} not found (looked for {path})", file=source, loc=loc
            )
        path = packaged
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DefinitionError(
            f"cannot read schema file {path}: {exc}", file=source, loc=loc
        ) from None
    if path.suffix.lower() in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as exc:
            why = " ".join(str(exc).split())
            raise DefinitionError(
                f"schema file {path} is not valid YAML: {why}", file=source, loc=loc
            ) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DefinitionError(
            f"schema file {path} is not valid JSON: {exc}", file=source, loc=loc
        ) from None


def _packaged(ref: str) -> Path | None:
    """``schemas/tools/Bash.json`` read from the schemas shipped with hookrails."""
    parts = Path(ref).parts
    if len(parts) < 2 or parts[0] != "schemas" or ".." in parts:
        return None
    from ..._package_data import data_path

    candidate = data_path("schemas").joinpath(*parts[1:])
    return candidate if candidate.is_file() else None


def _import_model(ref: str, base: str, source: str | None, loc: tuple[str | int, ...]) -> Any:
    from ...definition.hook_refs import _import_module

    module_name, _, attr = ref.partition(":")
    try:
        obj: Any = _import_module(module_name, base)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except Exception as exc:  # any failure to import is a bad reference
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise DefinitionError(
            f"cannot import schema {ref!r}: {why}",
            file=source,
            loc=loc,
            expected="'package.module:Model' naming a pydantic model",
        ) from None
    return obj


# --- violations ---------------------------------------------------------------------------


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


class ToolSchema:
    """One tool's schema, compiled once: the validator, the example, the error listing."""

    __slots__ = ("_example", "_example_text", "is_valid", "schema", "schemas", "tool", "validator")

    def __init__(self, tool: str, schema: Any) -> None:
        from .examples import Schemas, compile_validator, fast_is_valid

        self.tool = tool
        self.schema = schema
        self.validator = compile_validator(schema)
        #: ``is_valid(instance) -> bool``: compiled checks where the schema allows, else
        #: jsonschema's; errors are always listed by jsonschema
        self.is_valid: Callable[[Any], bool] = fast_is_valid(self.validator) or (
            self.validator.is_valid
        )
        self.schemas = Schemas(schema)
        self._example: tuple[bool, Any] | None = None
        self._example_text: Any = _MISSING

    def __repr__(self) -> str:
        return f"ToolSchema({self.tool!r})"

    @property
    def example(self) -> tuple[bool, Any]:
        """``(True, minimal valid input)``, or ``(False, None)`` when none can be built."""
        if self._example is None:
            from .examples import try_example

            self._example = try_example(self.schema)
        return self._example

    def example_json(self) -> str | None:
        """The example as JSON text (built once), or ``None``."""
        if self._example_text is _MISSING:
            ok, value = self.example
            self._example_text = json.dumps(value, ensure_ascii=False) if ok else None
        return self._example_text  # type: ignore[no-any-return]

    def violations(self, instance: Any) -> list[Violation]:
        """Every violation, deduplicated, in the validator's order.

        A value that is both of the wrong type and not among an ``enum``/``const``
        is reported once, by the enum: "one of ..." says the type too.
        """
        out: list[Violation] = []
        seen: set[tuple[str, str, str]] = set()
        for err in self.validator.iter_errors(instance):
            for v in self._describe(err):
                key = (v.path, v.keyword, v.problem)
                if key not in seen:
                    seen.add(key)
                    out.append(v)
        listed = {v.path for v in out if v.keyword in ("enum", "const")}
        if listed:
            out = [v for v in out if not (v.keyword == "type" and v.path in listed)]
        return out

    def expected(self, node: Any) -> str:
        """What a subschema wants, in words ("a string", 'one of "a", "b"'), or ``""``."""
        try:
            node = self.schemas.flatten(node)
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

    def _describe(self, err: Any) -> list[Violation]:
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
                want = self.expected(props.get(name, True)) if isinstance(props, dict) else ""
                extra = f" (expected {want})" if want else ""
                fix = f"add {path}" + (f" ({want})" if want else "")
                out.append(Violation(path, "required field is missing" + extra, fix, kw))
            return out
        if kw in ("additionalProperties", "unevaluatedProperties") and isinstance(inst, dict):
            return self._unexpected(err, parts, inst, schema, kw)
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
                Violation(
                    where, f"expected exactly {shown}, got {got}", f"set {where} to {shown}", kw
                )
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
            from .examples import FORMAT_SAMPLES

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
            return [self._branches(err, where, kw, val)]
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
            return [Violation(where, "matches a form the schema forbids", f"change {where}", "not")]
        if kw is None or kw is False:  # a ``false`` subschema
            return [Violation(where, "no value is allowed here", f"remove {where}", "false")]
        return [Violation(where, f"fails the schema's {kw} rule", f"fix {where} ({kw})", str(kw))]

    def _unexpected(
        self, err: Any, parts: list[Any], inst: dict[str, Any], schema: dict[str, Any], kw: str
    ) -> list[Violation]:
        props = schema.get("properties", {})
        if kw == "additionalProperties":
            patterns = list(schema.get("patternProperties", {}))
            extras = [
                k for k in inst if k not in props and not any(re.search(p, k) for p in patterns)
            ]
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

    def _branches(self, err: Any, where: str, kw: str, options: Any) -> Violation:
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
            from .examples import _jsonschema

            closest = self._describe(_jsonschema().exceptions.best_match(context))
            if closest:
                first = closest[0]
                return Violation(
                    where,
                    f"matches none of the {n} allowed forms; closest: {first.path}: "
                    f"{first.problem}",
                    first.fix,
                    kw,
                )
        return Violation(
            where,
            f"matches none of the {n} allowed forms",
            f"change {where} to one of the allowed forms",
            kw,
        )

    def denial(self, instance: Any) -> HookResult | None:
        """The deny answer for invalid ``instance``: every violation, the fixes, an example.

        ``None`` if jsonschema finds nothing wrong after all: it is the reference,
        and the compiled fast path is held to agree with it.
        """
        found = self.violations(instance)
        if not found:
            return None
        shown = found[:MAX_LISTED]
        tool = self.tool
        lines = [f"- {v.path}: {v.problem}" for v in shown]
        if len(found) > len(shown):
            lines.append(f"- … and {len(found) - len(shown)} more")
        reason = (
            f"{tool} input does not match its schema ({_plural(len(found), 'problem')}):\n"
            + "\n".join(lines)
        )
        fixes = "; ".join(dict.fromkeys(v.fix for v in shown))
        hint = f"Call {tool} again with input that matches its schema. Fix: {fixes}."
        example = self.example_json()
        if example is not None:
            hint += f" Example of a valid input: {example}"
        return HookResult(
            "deny",
            reason,
            hint,
            annotations={
                "schema_violations": [{"path": v.path, "keyword": v.keyword} for v in shown]
            },
        )


def _closest(key: str, options: list[str]) -> str | None:
    if not options:
        return None
    import difflib

    lowered = {o.lower(): o for o in options}
    if key.lower() in lowered:
        return lowered[key.lower()]
    hits = difflib.get_close_matches(key.lower(), list(lowered), n=1, cutoff=0.6)
    return lowered[hits[0]] if hits else None


# --- the per-hook cache -------------------------------------------------------------------


class ToolSchemas:
    """Resolved and compiled schemas, per definition and tool, owned by one hook instance.

    A definition is held weakly (keyed by identity), so a hook instance shared
    by several Guards keeps each definition's schemas apart.
    """

    def __init__(self) -> None:
        self._by_def: dict[int, tuple[Callable[[], Any], dict[str, ToolSchema | None]]] = {}
        #: (definition, its tools): the last one asked for, read without a lookup
        self.last: tuple[Any, dict[str, ToolSchema | None]] = (None, {})

    def tools(self, definition: Any) -> dict[str, ToolSchema | None]:
        """``tool name -> ToolSchema | None`` resolved so far for ``definition``."""
        last = self.last
        if last[0] is definition:
            return last[1]
        slot = self._by_def.get(id(definition))
        if slot is None or slot[0]() is not definition:
            for key in [k for k, (ref, _) in self._by_def.items() if ref() is None]:
                del self._by_def[key]
            try:
                ref: Callable[[], Any] = weakref.ref(definition)
            except TypeError:  # not weak-referenceable: hold it
                ref = functools.partial(lambda d: d, definition)
            slot = (ref, {})
            self._by_def[id(definition)] = slot
        self.last = (definition, slot[1])
        return slot[1]

    def get(self, definition: Any, tool: str) -> ToolSchema | None:
        """The compiled schema of ``tool``, or ``None`` when it has none.

        Raises :class:`DefinitionError` for a declared schema that cannot be
        loaded or is not valid JSON Schema.
        """
        tools = self.tools(definition)
        found = tools.get(tool, _MISSING)
        if found is _MISSING:
            found = tools[tool] = self._compile(definition, tool)
        return found  # type: ignore[no-any-return]

    def _compile(self, definition: Any, tool: str) -> ToolSchema | None:
        specs = getattr(definition, "tools", None) or {}
        spec = specs.get(tool)
        declared = getattr(spec, "schema", None) if spec is not None else None
        source = getattr(definition, "source", None)
        schema = resolve_schema(declared, tool=tool, source=source)
        if schema is None:
            return None
        from .examples import _jsonschema

        try:
            return ToolSchema(tool, schema)
        except _jsonschema().exceptions.SchemaError as exc:
            where = "/".join(str(p) for p in exc.path)
            at = f" (at /{where})" if where else ""
            raise DefinitionError(
                f"not a valid JSON Schema: {' '.join(exc.message.split())}{at}",
                file=source,
                loc=("tools", tool, "schema"),
            ) from None


# --- the hook ---------------------------------------------------------------------------------


class SchemaGuardrail:
    """Deny a call whose input does not match the tool's schema, listing every violation.

    ``unknown_tools``: what to do with a tool that has no schema (none declared
    and no built-in of that name): ``"allow"`` (default) or ``"deny"``.
    """

    hook_name = "schema_guardrail"

    def __init__(self, unknown_tools: Literal["allow", "deny"] = "allow") -> None:
        if unknown_tools not in ("allow", "deny"):
            raise ValueError(f"unknown_tools must be 'allow' or 'deny', got {unknown_tools!r}")
        self.unknown_tools = unknown_tools
        self.schemas = ToolSchemas()

    def __repr__(self) -> str:
        return f"SchemaGuardrail(unknown_tools={self.unknown_tools!r})"

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        if event.event_name != "PreToolUse":
            return None
        definition = ctx.definition
        last = self.schemas.last
        tools = last[1] if last[0] is definition else self.schemas.tools(definition)
        entry = tools.get(event.tool_name, _MISSING)
        if entry is _MISSING:
            entry = self.schemas.get(definition, event.tool_name)
        if entry is None:
            return None if self.unknown_tools == "allow" else self._unknown(event.tool_name)
        if entry.is_valid(event.tool_input):
            return None
        return entry.denial(event.tool_input)  # type: ignore[no-any-return]

    def check(self, definition: Any) -> None:
        """Resolve and compile every declared tool's schema now (raises ``DefinitionError``)."""
        for tool in getattr(definition, "tools", None) or {}:
            self.schemas.get(definition, tool)

    def _unknown(self, tool: str) -> HookResult:
        return HookResult.deny(
            f"{tool} has no input schema, and tools without one are denied here.",
            hint="Use a tool that has a schema, or ask the operator to declare "
            f"tools.{tool}.schema in the agent definition.",
        )


schema_guardrail = SchemaGuardrail()
