"""The definition file format: pydantic models, loaders and located errors.

The models are the single source of ``schemas/agent-definition.schema.json``;
``definition_from_data`` validates against them and then builds the runtime
dataclasses, so a file and a dict get identical errors.
"""

from __future__ import annotations

import json
import sys
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

from .definition import AgentDefinition, HookMatcher, ToolSpec
from .errors import DefinitionError
from .events import EVENT_NAMES

__all__ = ["DefinitionModel", "definition_from_data", "json_schema", "load_definition"]

EventKey = Literal[
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "SubagentStart",
    "SubagentStop",
    "AgentStop",
    "Stop",
    "SessionStart",
    "SessionEnd",
]


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


def json_schema() -> dict[str, Any]:
    schema = DefinitionModel.model_json_schema(by_alias=True)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://hookrails.dev/schemas/agent-definition.schema.json"
    return schema


# --- loading -----------------------------------------------------------------

Lines = dict[tuple[str | int, ...], int]


def _yaml_lines(text: str) -> Lines:
    """Map each key/item path to its 1-based line, from the YAML node tree."""
    import yaml

    lines: Lines = {}
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return lines

    def walk(node: Any, loc: tuple[str | int, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                sub = (*loc, key.value)
                lines[sub] = key.start_mark.line + 1
                walk(value, sub)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*loc, i)] = item.start_mark.line + 1
                walk(item, (*loc, i))

    if root is not None:
        walk(root, ())
    return lines


def _parse(path: Path) -> tuple[Any, Lines]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DefinitionError("file not found", file=str(path)) from None
    except OSError as exc:
        raise DefinitionError(f"cannot read: {exc.strerror}", file=str(path)) from None
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        import yaml

        try:
            return yaml.safe_load(text), _yaml_lines(text)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            problem = getattr(exc, "problem", None) or str(exc)
            raise DefinitionError(
                f"invalid YAML: {problem}",
                file=str(path),
                line=mark.line + 1 if mark else None,
            ) from None
    if suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise DefinitionError(
                f"invalid JSON: {exc.msg}", file=str(path), line=exc.lineno
            ) from None
        return data, _yaml_lines(text)
    if suffix == ".toml":
        try:
            return tomllib.loads(text), {}
        except tomllib.TOMLDecodeError as exc:
            raise DefinitionError(f"invalid TOML: {exc}", file=str(path)) from None
    raise DefinitionError(
        f"unsupported file type {suffix or '(none)'!r}",
        file=str(path),
        expected=".yaml, .yml, .toml or .json",
    )


def load_definition(path: Path) -> AgentDefinition:
    data, lines = _parse(path)
    return definition_from_data(data, source=str(path), lines=lines)


def _pydantic_error(exc: ValidationError, source: str | None, lines: Lines) -> DefinitionError:
    err = exc.errors(include_url=False)[0]
    loc: list[str | int] = []
    message = err["msg"]
    expected: str | None = None
    raw = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("ref:"))]
    for part in raw:
        if part == "[key]":
            message = f"unknown event {loc[-1]!r}"
            expected = ", ".join(EVENT_NAMES) + " (or Stop)"
        elif isinstance(part, str) and part in ("function-after", "function-before"):
            continue
        else:
            loc.append(part)
    if err["type"] == "extra_forbidden":
        message = f"unknown key {loc[-1]!r}"
    elif err["type"] == "missing":
        message = f"missing required key {loc[-1]!r}"
    elif expected is None and err["type"] not in ("hook_ref",):
        given = err.get("input")
        if not isinstance(given, dict | list):
            message = f"{message}, got {given!r}"
    extra = len(exc.errors()) - 1
    if extra:
        message += f" (and {extra} more error{'s' if extra > 1 else ''})"
    return DefinitionError(message, file=source, expected=expected).within(
        *loc, file=source, lines=lines
    )


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
        model = DefinitionModel.model_validate(data)
    except ValidationError as exc:
        raise _pydantic_error(exc, source, lines) from None
    base = str(Path(source).resolve().parent) if source else None
    added = base is not None and base not in sys.path
    if added:
        sys.path.insert(0, str(base))  # so `hooks:fn` beside the file imports
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
            source=source,
            locations=lines,
        )
    except DefinitionError as exc:
        if exc.file:
            raise
        raise exc.within(file=source, lines=lines) from None
    finally:
        if added:
            sys.path.remove(str(base))
