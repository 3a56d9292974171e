"""``schema_nudge``: when a tool rejected its input, show the model the schema and an example.

A validation error from a tool (pydantic, jsonschema, zod, an MCP server's
``-32602 Invalid params``, Claude Code's ``InputValidationError``, Python's
``unexpected keyword argument``) tells the model *that* it was wrong, seldom
what right looks like, and models tend to resend the same input. The nudge adds
the tool's fields (type, required or optional, allowed values) and a valid
example, and says so more firmly each time the same input fails again.

Only places where a failure is reported are read: the ``error`` of a failed
call, an MCP result marked ``isError``, a plain-text result, the ``error`` /
``errors`` / ``detail`` fields of a dict result, and ``stderr`` when it names
the tool or one of its fields. Command output (``stdout``) and file contents
are never read, and only the first ``scan_chars`` characters are, so ordinary
output that merely mentions "error" or "validation" stays quiet and cheap.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import DefinitionError, LedgerError
from ..results import HookResult
from .schema.guardrail import ToolSchema, ToolSchemas
from .schema.violations import _plural

__all__ = [
    "VALIDATION_PATTERNS",
    "SchemaNudge",
    "failure_text",
    "nudge_text",
    "schema_nudge",
    "schema_summary",
]

#: what a validation failure of a tool's *input* looks like, across the usual stacks
VALIDATION_PATTERNS: tuple[str, ...] = (
    r"InputValidationError",  # Claude Code
    r"\b\d+ validation errors? for \S+",  # pydantic
    r"\bField required\b",  # pydantic v2
    r"\[type=[a-z_]+, input_value=",  # pydantic v2 detail line
    r"\bExtra inputs are not permitted\b",  # pydantic v2, extra="forbid"
    r"\bfield required \(type=value_error\.missing\)",  # pydantic v1
    r"is a required property",  # jsonschema
    r"is not of type '",  # jsonschema
    r"Failed validating '",  # jsonschema
    r"Additional properties are not allowed",  # jsonschema
    r"is not valid under any of the given schemas",  # jsonschema
    r"\binvalid_type\b",  # zod
    r"Unrecognized keys? in object",  # zod strict objects
    r"(?:error|code)\W{0,5}-32602\b",  # JSON-RPC / MCP invalid params
    r"\bInvalid params\b",  # MCP
    r"\bInvalid arguments? for tool\b",  # MCP SDKs
    r"\bmissing (?:a )?required\b",  # "missing required parameter ..."
    r"\brequired (?:parameter|argument|field|property|key) `?['\"]?[\w.-]*['\"]?`? is missing",
    r"\bunexpected keyword argument\b",  # Python: fn(**input) with a stray key
    r"\bmissing \d+ required (?:positional |keyword-only )?arguments?\b",  # Python
)
_STATE = "schema_nudge"
#: tool_use_ids remembered per session to nudge at most once per call
_REMEMBERED = 1000


class SchemaNudge:
    """Inject the tool's schema summary and an example after it rejected its input.

    ``patterns``: extra regular expressions that mark a validation failure (for
    a tool with its own error wording). ``scan_chars``: how much of a result or
    error is read.
    """

    hook_name = "schema_nudge"

    def __init__(self, patterns: list[str] | tuple[str, ...] = (), scan_chars: int = 4000) -> None:
        if isinstance(patterns, str) or not isinstance(patterns, list | tuple):
            raise TypeError("patterns must be a list of regular expressions")
        for i, pattern in enumerate(patterns):
            if not isinstance(pattern, str):
                raise TypeError(f"patterns[{i}] must be a string, got {type(pattern).__name__}")
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(
                    f"patterns[{i}] is not a valid regular expression: {exc}"
                ) from None
        if isinstance(scan_chars, bool) or not isinstance(scan_chars, int) or scan_chars <= 0:
            raise ValueError(f"scan_chars must be a positive integer, got {scan_chars!r}")
        self.patterns = tuple(patterns)
        self.scan_chars = scan_chars
        self.recognizer = re.compile(
            "|".join(f"(?:{p})" for p in (*VALIDATION_PATTERNS, *self.patterns)), re.IGNORECASE
        )
        self.schemas = ToolSchemas()

    def __repr__(self) -> str:
        return f"SchemaNudge(patterns={list(self.patterns)!r}, scan_chars={self.scan_chars})"

    def check_definition(self, definition: Any) -> None:
        """At load (a Guard calls it): compile the declared tool schemas it would show."""
        self.schemas.check(definition)

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        name = event.event_name
        if name == "PostToolUseFailure":
            text, source = (event.error or "")[: self.scan_chars], "error"
        elif name == "PostToolUse":
            text, source = failure_text(event.tool_response, self.scan_chars)
        else:
            return None
        if not text or self.recognizer.search(text) is None:
            return None
        tool = event.tool_name
        try:
            entry = self.schemas.get(ctx.definition, tool)
        except DefinitionError:  # schema_guardrail reports a broken schema; still nudge
            entry = None
        if source == "stderr" and not _mentions(text, tool, entry):
            return None
        state = ctx.state.setdefault(_STATE, {"nudged": {}, "counts": {}, "last": None})
        call_id = event.tool_use_id
        if call_id:
            nudged = state["nudged"]
            if call_id in nudged:
                return None
            nudged[call_id] = True
            if len(nudged) > _REMEMBERED:
                del nudged[next(iter(nudged))]
        elif state["last"] is event:  # no id: the same event object is the same call
            return None
        state["last"] = event
        from .._canonical_json import input_hash

        digest = input_hash(event.tool_input)
        prior = state["counts"].get((tool, digest), 0)
        if ctx.ledger is not None:
            session = event.session_id or ctx.session_id
            prior = max(prior, _ledger_prior(ctx, session, tool, digest))
        state["counts"][(tool, digest)] = prior + 1
        return HookResult.inject(nudge_text(tool, entry, prior))


def _ledger_prior(ctx: Any, session: str, tool: str, digest: str) -> int:
    """Earlier calls with this input that failed, were denied, or were nudged here."""
    hook = getattr(ctx, "hook_name", None) or SchemaNudge.hook_name
    try:
        failed = ctx.ledger.count_failures(session, tool, digest)
        nudged = ctx.ledger.count_injected(session, tool, digest, hook)
    except LedgerError:
        return 0
    return int(failed) + int(nudged)


def _mentions(text: str, tool: str, entry: ToolSchema | None) -> bool:
    """Does ``text`` (from stderr) talk about this tool's input at all?"""
    names = [tool]
    if entry is not None and isinstance(entry.schema, dict):
        props = entry.schemas.flatten(entry.schema)
        if isinstance(props, dict) and isinstance(props.get("properties"), dict):
            names += list(props["properties"])
    return any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", text) for n in names)


def failure_text(response: Any, limit: int) -> tuple[str, str]:
    """The part of a tool result that reports a failure (at most ``limit`` chars), and where
    it came from: ``text``, ``mcp``, ``error`` or ``stderr``; ``("", "")`` for none."""
    if isinstance(response, str):
        return response[:limit], "text"
    if isinstance(response, list):
        return _content_text(response, limit), "text"
    if not isinstance(response, dict):
        return "", ""
    if "isError" in response:  # an MCP CallToolResult
        if response.get("isError") is not True:
            return "", ""
        return _content_text(response.get("content"), limit), "mcp"
    parts = [_as_text(response[k], limit) for k in ("error", "errors", "detail") if response.get(k)]
    status = response.get("status")
    failed = (
        response.get("ok") is False
        or response.get("success") is False
        or (isinstance(status, str) and status.lower() in ("error", "failed", "failure"))
    )
    if failed and response.get("message"):
        parts.append(_as_text(response["message"], limit))
    if parts:
        return "\n".join(parts)[:limit], "error"
    stderr = response.get("stderr")
    if isinstance(stderr, str) and stderr:
        return stderr[:limit], "stderr"
    return "", ""


def _as_text(value: Any, limit: int) -> str:
    if isinstance(value, str):
        return value[:limit]
    try:
        return json.dumps(value, ensure_ascii=False, default=str)[:limit]
    except (TypeError, ValueError):
        return ""


def _content_text(content: Any, limit: int) -> str:
    if isinstance(content, str):
        return content[:limit]
    if not isinstance(content, list):
        return ""
    out: list[str] = []
    size = 0
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text":
            text = block.get("text")
            if isinstance(text, str):
                out.append(text[: limit - size])
                size += len(out[-1])
                if size >= limit:
                    break
    return "\n".join(out)


# --- the nudge ----------------------------------------------------------------------------


def nudge_text(tool: str, entry: ToolSchema | None, prior: int) -> str:
    """The injected text; firmer when this input already failed ``prior`` times."""
    attempt = prior + 1
    if prior == 0:
        head = (
            f"{tool} rejected its input: the arguments did not match what the tool accepts "
            "(a validation error, not a problem with the task)."
        )
        tail = f"Call {tool} again with input that follows this schema."
    elif prior == 1:
        head = (
            f"{tool} has now rejected this same input {attempt} times; sending it again will "
            "fail the same way."
        )
        tail = f"Change the input to follow the fields above before calling {tool} again."
    else:
        head = f"Stop retrying {tool} with this input: it has been rejected {attempt} times."
        tail = (
            "Build the input field by field from the example above. If you cannot produce "
            "valid input, take a different approach or tell the user what is blocking you."
        )
    parts = [head]
    if entry is not None:
        parts.append(schema_summary(entry))
        example = entry.example_json()
        if example is not None:
            parts.append(f"Example of a valid input: {example}")
    else:
        parts.append(
            f"No input schema is known for {tool}: re-read its parameter descriptions, send "
            "every required field with the right JSON type, and leave out fields it does not "
            "accept."
        )
    parts.append(tail)
    return "\n".join(parts)


def schema_summary(entry: ToolSchema, max_fields: int = 40) -> str:
    """Each field of the tool's input: type, required or optional, allowed values."""
    lines = [f"{entry.tool} input fields:"]
    root = _flat(entry, entry.schema)
    if isinstance(root, dict) and isinstance(root.get("properties"), dict):
        _fields(entry, root, "", "", lines, 0, max_fields)
    else:
        lines.append(f"- (the whole input): {_label(entry, root)}")
    return "\n".join(lines)


def _flat(entry: ToolSchema, node: Any) -> Any:
    try:
        return entry.schemas.flatten(node)
    except ValueError:
        return node


def _fields(
    entry: ToolSchema,
    node: dict[str, Any],
    prefix: str,
    indent: str,
    lines: list[str],
    depth: int,
    max_fields: int,
) -> None:
    props: dict[str, Any] = node.get("properties", {})
    required = [r for r in node.get("required", []) if isinstance(r, str)]
    order = [n for n in required if n in props] + [n for n in props if n not in required]
    order += [n for n in required if n not in props]
    for name in order:
        if len(lines) > max_fields:
            lines.append(f"{indent}- … ({_plural(len(order), 'field')} in all)")
            return
        sub = _flat(entry, props.get(name, True))
        words = [_label(entry, sub), "required" if name in required else "optional"]
        if isinstance(sub, dict):
            if isinstance(sub.get("enum"), list):
                words.append("one of " + ", ".join(json.dumps(v) for v in sub["enum"][:20]))
            if "default" in sub:
                words.append(f"default {json.dumps(sub['default'], default=str)}")
        line = f"{indent}- {prefix}{name}: {', '.join(words)}"
        desc = sub.get("description") if isinstance(sub, dict) else None
        if isinstance(desc, str) and desc.strip():
            first = " ".join(desc.split())
            line += " — " + (first if len(first) <= 100 else first[:99] + "…")
        lines.append(line)
        if depth >= 2 or not isinstance(sub, dict):
            continue
        child, child_prefix = sub, f"{prefix}{name}."
        items = _preferred(_flat(entry, sub.get("items")))
        if isinstance(items, dict) and "properties" in items:
            child, child_prefix = items, f"{prefix}{name}[]."
        if isinstance(child.get("properties"), dict) and child["properties"]:
            _fields(entry, child, child_prefix, indent + "  ", lines, depth + 1, max_fields)


def _preferred(node: Any) -> Any:
    """Of objects that may take several forms (``anyOf`` / ``oneOf`` of objects, as the
    todo items of every Claude Code release), the first: the one the example shows."""
    if isinstance(node, dict) and "properties" not in node:
        for key in ("anyOf", "oneOf"):
            forms = node.get(key)
            if isinstance(forms, list) and forms and isinstance(forms[0], dict):
                return forms[0]
    return node


_NOUNS = {
    "string": "strings",
    "integer": "integers",
    "number": "numbers",
    "boolean": "booleans",
    "object": "objects",
    "array": "arrays",
    "null": "nulls",
}


def _label(entry: ToolSchema, node: Any, depth: int = 0) -> str:
    node = _flat(entry, node)
    if not isinstance(node, dict):
        return "any value" if node is not False else "no value"
    if "const" in node:
        return f"exactly {json.dumps(node['const'], default=str)}"
    for key in ("anyOf", "oneOf"):
        if isinstance(node.get(key), list) and depth < 2:
            return " or ".join(_label(entry, b, depth + 1) for b in node[key][:4])
    declared = node.get("type")
    types = [declared] if isinstance(declared, str) else list(declared or [])
    if not types:
        return "any value" if "enum" not in node else "value"
    words = []
    for t in types:
        if t == "array":
            items = _flat(entry, node.get("items"))
            inner = _label(entry, items, depth + 1) if isinstance(items, dict) else ""
            noun = _NOUNS.get(inner.split(" ")[0], "") if inner else ""
            words.append(f"array of {noun}" if noun else "array")
        elif t == "string" and isinstance(node.get("format"), str):
            words.append(f"string ({node['format']})")
        else:
            words.append(str(t))
    return " or ".join(words)


schema_nudge = SchemaNudge()
