"""The definition file format: pydantic models, loaders and located errors.

The models are the single source of ``schemas/agent-definition.schema.json``;
``definition_from_data`` validates against them and then builds the runtime
dataclasses, so a file and a dict get identical errors.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
)

from ..errors import DefinitionError, one_line
from ..events import EVENT_NAMES, EventName
from .limits import check_depth, read_bytes, too_deep, yaml_document
from .model import AgentDefinition, HookMatcher, ToolSpec

__all__ = [
    "DefinitionModel",
    "definition_from_data",
    "json_lines",
    "json_schema",
    "load_definition",
    "parse_file",
]

#: event names a file may use: the canonical ones and the alias ``Stop``
EventKey = Literal[EventName, "Stop"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ToolModel(_Strict):
    """A tool the agent can call."""

    schema_: Any = Field(
        None,
        alias="schema",
        description="JSON Schema of the input: inline, or a path relative to this file",
    )
    side_effects: bool = Field(False, description="the call changes the world (idempotency)")
    primary_arg: str | None = Field(None, description="input field that Tool(glob) rules test")
    arg_kind: Literal["path", "text"] | None = Field(
        None, description="path: globstar path semantics; text: '*' crosses '/'"
    )
    idempotency: dict[str, Any] | None = Field(None, description="e.g. {key: [field, ...]}")
    annotations: dict[str, Any] | None = Field(None, description="MCP tool annotations")
    description: str | None = None


_Seconds = Annotated[float, Field(gt=0, description="seconds")]


class UseRef(_Strict):
    """A built-in or ``module:function`` hook with parameters."""

    use: str = Field(min_length=1, description="built-in name or 'package.module:function'")
    with_: dict[str, Any] = Field(default_factory=dict, alias="with")
    name: str | None = None
    timeout: _Seconds | None = None


class CommandRef(_Strict):
    """Claude Code command protocol: JSON on stdin, exit 2 blocks, JSON on stdout."""

    command: str = Field(min_length=1, pattern=r"\S")
    name: str | None = None
    timeout: _Seconds | None = None
    privileged: bool = Field(False, description="may rewrite input/output and inject context")


class HttpRef(_Strict):
    """POST the event as JSON; the response body is a Claude hook output."""

    http: str = Field(pattern=r"^https?://\S+$")
    headers: dict[str, str] = Field(default_factory=dict)
    name: str | None = None
    timeout: _Seconds | None = None
    privileged: bool = False


def _ref_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "ref:name"
    if isinstance(value, dict):
        for key in ("use", "command", "http"):
            if key in value:
                return f"ref:{key}"
    return None


HookRef = Annotated[
    Annotated[str, Tag("ref:name"), Field(min_length=1)]
    | Annotated[UseRef, Tag("ref:use")]
    | Annotated[CommandRef, Tag("ref:command")]
    | Annotated[HttpRef, Tag("ref:http")],
    Discriminator(
        _ref_kind,
        custom_error_type="hook_ref",
        custom_error_message="expected a hook: a built-in name, 'package.module:function', "
        "or a mapping with one of use / command / http",
    ),
]


class MatcherModel(_Strict):
    """Hooks bound to the subjects a pattern matches."""

    matcher: str | None = Field(
        None, description="glob, Tool(glob) argument rule, re:<regex>; None/''/'*' match all"
    )
    hooks: list[HookRef] = Field(min_length=1)
    priority: int = Field(100, description="lower runs first; ties keep declaration order")
    timeout: _Seconds | None = Field(None, description="per hook; default 5 s")
    on_failure: Literal["block", "continue"] | None = None
    agents: list[str] | None = Field(None, description="agent_type globs")
    tenants: list[str] | None = None
    name: str | None = None


class DefinitionModel(_Strict):
    """A hookrails agent definition."""

    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, title="hookrails agent definition"
    )

    schema_ref: str | None = Field(None, alias="$schema")
    name: str = "agent"
    description: str | None = None
    tools: dict[str, ToolModel] = Field(default_factory=dict)
    hooks: dict[EventKey, list[MatcherModel]] = Field(default_factory=dict)
    ledger: str | None = Field(None, description="SQLite ledger path")
    injection_budget: int = Field(30_000, ge=0, description="context characters per turn")
    event_budget: _Seconds = Field(30.0, description="time all hooks of one event may take")
    instructions: str | None = Field(
        None,
        description="standing instructions the model keeps all session: reinject_instructions "
        "gives them at session start and after compaction",
    )


def json_schema() -> dict[str, Any]:
    schema: dict[str, Any] = _sorted_enums(DefinitionModel.model_json_schema(by_alias=True))
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hookrails.dev/schemas/agent-definition.schema.json"
    return schema


def _sorted_enums(node: Any) -> Any:
    """Every ``enum`` in sorted order. ``typing.Literal`` caches by value set, so a
    ``Literal`` another library declared in another order (claude-agent-sdk's
    ``"continue", "block"``) could otherwise reorder ours, and the published schema with it."""
    if isinstance(node, dict):
        out = {k: _sorted_enums(v) for k, v in node.items()}
        if isinstance(out.get("enum"), list):
            out["enum"] = sorted(out["enum"], key=str)
        return out
    if isinstance(node, list):
        return [_sorted_enums(v) for v in node]
    return node


# --- loading -----------------------------------------------------------------

Lines = dict[tuple[str | int, ...], int]

_EVENTS_EXPECTED = ", ".join(EVENT_NAMES) + " (Stop is an alias of AgentStop)"


def _yaml_lines(root: Any, file: str) -> Lines:
    """Map each key/item path to its 1-based line, from the YAML node tree.

    Raises on a key repeated in one mapping: YAML forbids it, and PyYAML would
    silently keep the last one (dropping, say, a whole ``PreToolUse`` list).
    """
    import yaml

    lines: Lines = {}
    seen: set[int] = set()  # aliased nodes are walked once (no cycles, no blow-up)

    def walk(node: Any, loc: tuple[str | int, ...]) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: set[tuple[str, Any]] = set()
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                    continue  # complex keys are rejected when the document is constructed
                sub = (*loc, key.value)
                line = key.start_mark.line + 1
                if (key.tag, key.value) in keys:
                    raise DefinitionError(
                        f"duplicate key {key.value!r}", file=file, loc=sub, line=line
                    )
                keys.add((key.tag, key.value))
                lines.setdefault(sub, line)
                walk(value, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*loc, i)] = item.start_mark.line + 1
                walk(item, (*loc, i))

    if root is not None:
        walk(root, ())
    return lines


def _load_yaml(text: str, file: str) -> tuple[Any, Lines]:
    import yaml

    try:  # the bounds of `limits` first: depth, alias expansion, recursive aliases
        loader, root = yaml_document(text)
    except yaml.YAMLError as exc:  # the reader rejects control characters up front, too
        raise _yaml_error(exc, text, file) from None
    except DefinitionError as exc:
        raise exc.within(file=file) from None
    try:
        lines = _yaml_lines(root, file)
        return (loader.construct_document(root) if root is not None else None), lines
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, text, file) from None
    finally:
        loader.dispose()


def _yaml_error(exc: Any, text: str, file: str) -> DefinitionError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    line: int | None = None
    if mark is not None:
        line = mark.line + 1
        problem = f"{problem or exc.__class__.__name__} (column {mark.column + 1})"
    elif isinstance(getattr(exc, "position", None), int):  # yaml.reader.ReaderError
        line = text.count("\n", 0, exc.position) + 1
        problem = f"unacceptable character #x{exc.character:04x}: {exc.reason}"
    return DefinitionError(f"invalid YAML: {one_line(problem or str(exc))}", file=file, line=line)


def json_lines(text: str, file: str) -> Lines:
    """Map each key/item path of valid JSON ``text`` to its 1-based line.

    Raises on a key repeated in one object, which ``json.loads`` would let the
    last occurrence win silently. Also used for Claude's settings.json
    (``_claude_settings``), whose errors point at lines the same way.
    """
    starts = [0, *(i + 1 for i, ch in enumerate(text) if ch == "\n")]
    decode = json.JSONDecoder().raw_decode
    space = re.compile(r"[ \t\n\r]*")
    lines: Lines = {}

    def skip(i: int) -> int:
        m = space.match(text, i)
        return m.end() if m else i

    def value(i: int, loc: tuple[str | int, ...]) -> int:
        i = skip(i)
        if text[i] == "{":
            i = skip(i + 1)
            keys: set[str] = set()
            while text[i] != "}":
                key, i_end = decode(text, i)
                sub = (*loc, key)
                line = bisect.bisect_right(starts, i)
                if key in keys:
                    raise DefinitionError(f"duplicate key {key!r}", file=file, loc=sub, line=line)
                keys.add(key)
                lines[sub] = line
                i = skip(value(skip(i_end) + 1, sub))  # past ':' and the value
                if text[i] == ",":
                    i = skip(i + 1)
            return i + 1
        if text[i] == "[":
            i = skip(i + 1)
            n = 0
            while text[i] != "]":
                lines[(*loc, n)] = bisect.bisect_right(starts, i)
                i = skip(value(i, (*loc, n)))
                n += 1
                if text[i] == ",":
                    i = skip(i + 1)
            return i + 1
        return int(decode(text, i)[1])

    with contextlib.suppress(ValueError, IndexError, RecursionError):  # text parsed already
        value(0, ())
    return lines


_TOML_AT = re.compile(r"\s*\(at line (\d+), column (\d+)\)$")


def parse_file(path: Path) -> tuple[Any, Lines]:
    """The file's data, unvalidated, and where each key is (one-line errors with its line)."""
    file = str(path)
    try:
        raw = read_bytes(file)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise DefinitionError("file not found", file=file) from None
    except UnicodeDecodeError as exc:
        raise DefinitionError(
            f"not UTF-8 text: invalid byte 0x{raw[exc.start]:02x}",
            file=file,
            line=raw.count(b"\n", 0, exc.start) + 1,
        ) from None
    except OSError as exc:
        raise DefinitionError(f"cannot read: {exc.strerror or exc}", file=file) from None
    except DefinitionError as exc:  # over the size limit
        raise exc.within(file=file) from None
    if "\r" in text:  # as read_text() reads it (universal newlines)
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    suffix = path.suffix.lower()
    if suffix not in (".yaml", ".yml", ".json", ".toml"):
        raise DefinitionError(
            f"unsupported file type {suffix or '(none)'!r}",
            file=file,
            expected=".yaml, .yml, .toml or .json",
        )
    if suffix in (".yaml", ".yml"):
        return _load_yaml(text, file)
    if suffix == ".json":
        try:
            data = json.loads(text)
            check_depth(data)
        except json.JSONDecodeError as exc:
            raise DefinitionError(
                f"invalid JSON: {exc.msg} (column {exc.colno})", file=file, line=exc.lineno
            ) from None
        except RecursionError:  # deeper than the parser goes: far over the limit
            raise too_deep().within(file=file) from None
        except DefinitionError as exc:
            raise exc.within(file=file) from None
        return data, json_lines(text, file)
    try:
        data = tomllib.loads(text)
        check_depth(data)
        return data, {}
    except RecursionError:
        raise too_deep().within(file=file) from None
    except DefinitionError as exc:
        raise exc.within(file=file) from None
    except tomllib.TOMLDecodeError as exc:
        message = one_line(str(exc))
        at = _TOML_AT.search(message)
        line = None
        if at:
            line = int(at.group(1))
            message = f"{message[: at.start()]} (column {at.group(2)})"
        raise DefinitionError(f"invalid TOML: {message}", file=file, line=line) from None


def load_definition(path: Path) -> AgentDefinition:
    data, lines = parse_file(path)
    return definition_from_data(data, source=str(path), lines=lines)


#: pydantic error type -> what the value should have been
_EXPECTED_BY_TYPE = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "true or false",
    "bool_parsing": "true or false",
    "string_type": "a string",
    "string_too_short": "a non-empty string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_HOOK_EXPECTED = (
    "a built-in name, 'package.module:function', or a mapping with one of use, command, http"
)
_REF_MODELS: dict[str, type[BaseModel]] = {
    "ref:use": UseRef,
    "ref:command": CommandRef,
    "ref:http": HttpRef,
}


def _is_tag(part: Any) -> bool:
    return isinstance(part, str) and (
        part.startswith("ref:") or part in ("function-after", "function-before")
    )


def _model_at(raw: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model of the mapping at ``raw`` (a pydantic loc, tags included)."""
    tag = next((p for p in raw if isinstance(p, str) and p.startswith("ref:")), None)
    plain = [p for p in raw if not _is_tag(p)]
    if not plain:
        return DefinitionModel
    if plain[0] == "tools" and len(plain) == 2:
        return ToolModel
    if plain[0] == "hooks" and len(plain) == 3:
        return MatcherModel
    if plain[0] == "hooks" and len(plain) == 5 and tag is not None:
        return _REF_MODELS.get(tag)
    return None


def _keys_of(model: type[BaseModel]) -> str:
    return ", ".join(sorted(f.alias or name for name, f in model.model_fields.items()))


def _short(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _translate(err: Any) -> tuple[list[str | int], str, str | None]:
    """A pydantic error as (loc, message, expected) in the file's own terms."""
    raw = tuple(err["loc"])
    loc: list[str | int] = [p for p in raw if not _is_tag(p) and p != "[key]"]
    kind = err["type"]
    ctx = err.get("ctx") or {}
    given = err.get("input")
    last = loc[-1] if loc else ""
    if "[key]" in raw:
        return loc, f"unknown event {last!r}", _EVENTS_EXPECTED
    if kind == "extra_forbidden":
        if last in ("use", "command", "http"):
            return (
                loc,
                "a hook mapping needs exactly one of 'use', 'command' or 'http'",
                "{use: name, with: {...}}, {command: '...'} or {http: 'url'}",
            )
        model = _model_at(raw[:-1])
        return loc, f"unknown key {last!r}", f"one of {_keys_of(model)}" if model else None
    if kind == "missing":
        return loc, f"missing required key {last!r}", None
    if kind == "hook_ref":
        return loc, f"cannot use {_short(given)} as a hook", _HOOK_EXPECTED
    if kind == "too_short" and last == "hooks":
        return loc, "a matcher needs at least one hook", None
    if kind == "string_pattern_mismatch" and last == "command":
        return loc, "command hook has an empty command", "a shell command"
    if kind == "string_pattern_mismatch" and last == "http":
        return loc, f"http hook URL {given!r} is not http(s)", "an http:// or https:// URL"
    expected = _EXPECTED_BY_TYPE.get(kind)
    if kind == "greater_than":
        expected = f"a number greater than {_number(ctx.get('gt'))}"
    elif kind == "greater_than_equal":
        expected = f"a number of at least {_number(ctx.get('ge'))}"
    elif kind == "literal_error":  # sorted: the order must not depend on typing's cache
        names = sorted(re.findall(r"'([^']*)'", str(ctx.get("expected"))))
        expected = " or ".join(", ".join(f"'{n}'" for n in names).rsplit(", ", 1))
    elif kind == "too_short":
        expected = f"at least {ctx.get('min_length')} item(s)"
    if expected is None:
        return loc, f"{one_line(err['msg'])}, got {_short(given)}", None
    return loc, f"got {_short(given)}", expected


def _pydantic_error(exc: ValidationError, source: str | None, lines: Lines) -> DefinitionError:
    """The error that comes first in the file, located and worded for its author."""
    found = []
    for n, err in enumerate(exc.errors(include_url=False)):
        loc, message, expected = _translate(err)
        located = DefinitionError(message, file=source, expected=expected).within(
            *loc, file=source, lines=lines
        )
        found.append((located.line if located.line is not None else float("inf"), n, located))
    return min(found, key=lambda t: (t[0], t[1]))[2]


def definition_from_data(
    data: Any, *, source: str | None = None, lines: Lines | None = None
) -> AgentDefinition:
    """Validate ``data`` against :class:`DefinitionModel`, then build the definition."""
    lines = lines or {}
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise DefinitionError(
            f"expected a mapping at the top level, got {type(data).__name__}", file=source
        )
    try:
        # strict: no quiet coercion ("10" -> 10, "yes" -> True) the schema would reject
        model = DefinitionModel.model_validate(data, strict=True)
    except ValidationError as exc:
        raise _pydantic_error(exc, source, lines) from None
    # `module:function` hooks import from here first (see hook_refs.import_from_folder), and
    # command hooks run here
    base = str(Path(source).resolve().parent) if source else None
    try:
        tools = {
            name: ToolSpec(
                schema=t.schema_,
                side_effects=t.side_effects,
                primary_arg=t.primary_arg,
                arg_kind=t.arg_kind,
                idempotency=t.idempotency,
                annotations=t.annotations,
                description=t.description,
            )
            for name, t in model.tools.items()
        }
        hooks: dict[str, list[Any]] = {}
        for event, matchers in model.hooks.items():
            built = hooks.setdefault(event, [])
            for i, m in enumerate(matchers):
                refs = [
                    r if isinstance(r, str) else r.model_dump(by_alias=True, exclude_none=True)
                    for r in m.hooks
                ]
                try:
                    built.append(
                        HookMatcher(
                            matcher=m.matcher,
                            hooks=refs,
                            priority=m.priority,
                            timeout=m.timeout,
                            on_failure=m.on_failure,
                            agents=m.agents,
                            tenants=m.tenants,
                            name=m.name,
                            base_dir=base,
                        )
                    )
                except DefinitionError as exc:
                    raise exc.within("hooks", event, i, file=source, lines=lines) from None
        return AgentDefinition(
            name=model.name,
            description=model.description,
            tools=tools,
            hooks=hooks,
            ledger=model.ledger,
            injection_budget=model.injection_budget,
            event_budget=model.event_budget,
            instructions=model.instructions,
            source=source,
            locations=lines,
        )
    except DefinitionError as exc:
        if exc.file:
            raise
        raise exc.within(file=source, lines=lines) from None
