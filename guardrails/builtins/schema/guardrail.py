"""``schema_guardrail``: deny a tool call whose input does not match the tool's JSON Schema.

Models get tool arguments wrong in a few recurring ways (a missing field, a
number sent as a string, a misspelt key, an array passed as a JSON string).
Catching that before the tool runs, and answering with every problem and a
valid example, turns a confusing tool failure into one corrective retry.

Where a tool's schema comes from: :mod:`.sources`. Validation follows the draft
named by ``$schema`` (Draft 2020-12 by default) with formats checked
(:mod:`.formats`), through a compiled fast path where it applies
(:mod:`.fastpath`); the denial lists every violation (:mod:`.violations`) and a
minimal valid example (:mod:`.examples`).
"""

from __future__ import annotations

import functools
import json
import weakref
from collections.abc import Callable
from typing import Any, Literal

from ...errors import DefinitionError
from ...results import HookResult
from .sources import resolve_schema

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .violations import Violation

__all__ = ["SchemaGuardrail", "ToolSchema", "ToolSchemas", "schema_guardrail"]

#: violations listed in one denial; the rest are counted
MAX_LISTED = 100
_MISSING: Any = object()


class ToolSchema:
    """One tool's schema, compiled once: the validator, the example, the error listing."""

    __slots__ = ("_example", "_example_text", "is_valid", "schema", "schemas", "tool", "validator")

    def __init__(self, tool: str, schema: Any) -> None:
        from .fastpath import fast_is_valid
        from .formats import compile_validator
        from .refs import Schemas

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
        from .violations import describe

        out: list[Violation] = []
        seen: set[tuple[str, str, str]] = set()
        for err in self.validator.iter_errors(instance):
            for v in describe(err, self.schemas):
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
        from .violations import expected

        return expected(self.schemas, node)

    def denial(self, instance: Any) -> HookResult | None:
        """The deny answer for invalid ``instance``: every violation, the fixes, an example.

        ``None`` if jsonschema finds nothing wrong after all: it is the reference,
        and the compiled fast path is held to agree with it.
        """
        from .violations import _plural

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
            try:
                found = tools[tool] = self._compile(definition, tool)
            except DefinitionError as exc:  # at the line of tools.<tool>.schema
                raise exc.within(lines=getattr(definition, "locations", None)) from None
        return found  # type: ignore[no-any-return]

    def check(self, definition: Any) -> None:
        """Resolve and compile every declared tool's schema now (raises ``DefinitionError``,
        located): what a Guard does at load (``check_definition``) and ``hookrails check``."""
        for tool in getattr(definition, "tools", None) or {}:
            self.get(definition, tool)

    def _compile(self, definition: Any, tool: str) -> ToolSchema | None:
        specs = getattr(definition, "tools", None) or {}
        spec = specs.get(tool)
        declared = getattr(spec, "schema", None) if spec is not None else None
        source = getattr(definition, "source", None)
        schema = resolve_schema(declared, tool=tool, source=source)
        if schema is None:
            return None
        from .formats import _jsonschema

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
        self.schemas.check(definition)

    #: a Guard calls it at load (docs/design.md §4): a missing or invalid schema fails
    #: there, not as a denial of every call of that tool
    check_definition = check

    def _unknown(self, tool: str) -> HookResult:
        return HookResult.deny(
            f"{tool} has no input schema, and tools without one are denied here.",
            hint="Use a tool that has a schema, or ask the operator to declare "
            f"tools.{tool}.schema in the agent definition.",
        )


schema_guardrail = SchemaGuardrail()
