"""``AgentDefinition``, ``HookMatcher`` and ``ToolSpec``: the runtime form of a definition.

These are plain dataclasses that validate and compile in ``__post_init__`` so a
bad pattern or hook fails at load time with its location. Files (YAML, TOML,
JSON) are first checked against the pydantic models in ``_config``; building
from Python never imports pydantic, which keeps a hook process fast. For the
same reason they are written out by hand (``_records``), without importing
``dataclasses`` or ``typing`` at run time.
"""

from __future__ import annotations

import os

from .._dataclass_free import DICT, LIST, field_names, record
from ..errors import DefinitionError, EventError
from ..events import EVENT_NAMES, canonical_event_name
from .hook_refs import Hook, resolve_hook
from .matchers import BUILTIN_PRIMARY_ARGS, PATH_ARG_NAMES, Pattern, compile_glob

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, Literal

__all__ = [
    "DEFAULT_ON_FAILURE",
    "DEFAULT_TIMEOUT",
    "INSTRUCTIONS_CAP",
    "AgentDefinition",
    "HookMatcher",
    "ToolSpec",
]

DEFAULT_TIMEOUT = 5.0
#: characters of standing instructions at most: one injection (``INJECTION_CAP``, 10,000)
#: holds them with the frame ``reinject_instructions`` puts around them
INSTRUCTIONS_CAP = 9_000
#: fail closed where a missed check lets something through, open elsewhere
DEFAULT_ON_FAILURE: dict[str, Literal["block", "continue"]] = {
    "PreToolUse": "block",
    "UserPromptSubmit": "block",
    "UserPromptExpansion": "block",  # the prompt a slash command expands into
    "PreSkillShellCommand": "block",  # a shell command about to run
}


@record()
class ToolSpec:
    """What the definition knows about one tool."""

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    schema: Any
    side_effects: bool
    primary_arg: str | None
    arg_kind: Literal["path", "text"] | None
    idempotency: dict[str, Any] | None
    annotations: dict[str, Any] | None
    description: str | None

    def __init__(
        self,
        schema: Any = None,
        side_effects: bool = False,
        primary_arg: str | None = None,
        arg_kind: Literal["path", "text"] | None = None,
        idempotency: dict[str, Any] | None = None,
        annotations: dict[str, Any] | None = None,
        description: str | None = None,
    ) -> None:
        self.schema = schema
        self.side_effects = side_effects
        self.primary_arg = primary_arg
        self.arg_kind = arg_kind
        self.idempotency = idempotency
        self.annotations = annotations
        self.description = description
        self.__post_init__()

    def __post_init__(self) -> None:
        for key, types in (
            ("side_effects", bool),
            ("primary_arg", str),
            ("idempotency", dict),
            ("annotations", dict),
            ("description", str),
        ):
            value = getattr(self, key)
            if value is not None and not isinstance(value, types):
                raise DefinitionError(
                    f"{key} must be a {types.__name__}, got {value!r}", loc=(key,)
                )
        if self.arg_kind not in (None, "path", "text"):
            raise DefinitionError(
                f"arg_kind must be 'path' or 'text', got {self.arg_kind!r}", loc=("arg_kind",)
            )
        if self.primary_arg is not None and self.arg_kind is None:
            self.arg_kind = "path" if self.primary_arg in PATH_ARG_NAMES else "text"


@record(no_repr=("base_dir",), no_compare=("base_dir",))
class HookMatcher:
    """Bind hooks to the subjects (tool names, agent types) a pattern matches.

    ``priority`` orders hooks across matchers (lower first, then declaration
    order); ``timeout`` applies to each hook; ``on_failure`` says what a hook
    that raises, times out or answers nonsense means: ``block`` (fail closed) or
    ``continue`` (fail open, recorded). ``agents``/``tenants`` narrow the scope.
    """

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    matcher: str | None
    hooks: list[Any]
    priority: int
    timeout: float | None
    on_failure: Literal["block", "continue"] | None
    agents: list[str] | None
    tenants: list[str] | None
    name: str | None
    base_dir: str | None

    def __init__(
        self,
        matcher: str | None = None,
        hooks: list[Any] = LIST,
        priority: int = 100,
        timeout: float | None = None,
        on_failure: Literal["block", "continue"] | None = None,
        agents: list[str] | None = None,
        tenants: list[str] | None = None,
        name: str | None = None,
        base_dir: str | None = None,
    ) -> None:
        self.matcher = matcher
        self.hooks = [] if hooks is LIST else hooks
        self.priority = priority
        self.timeout = timeout
        self.on_failure = on_failure
        self.agents = agents
        self.tenants = tenants
        self.name = name
        self.base_dir = base_dir
        self.__post_init__()

    def __post_init__(self) -> None:
        try:
            self.pattern = Pattern(self.matcher)
        except DefinitionError as exc:
            raise exc.within("matcher") from None
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise DefinitionError(
                f"priority must be an integer, got {self.priority!r}", loc=("priority",)
            )
        if self.timeout is not None and (
            isinstance(self.timeout, bool)
            or not isinstance(self.timeout, int | float)
            or not self.timeout > 0  # also rejects NaN
        ):
            raise DefinitionError(
                f"timeout must be a positive number of seconds, got {self.timeout!r}",
                loc=("timeout",),
            )
        if self.on_failure not in (None, "block", "continue"):
            raise DefinitionError(
                f"on_failure must be 'block' or 'continue', got {self.on_failure!r}",
                loc=("on_failure",),
            )
        if self.name is not None and not isinstance(self.name, str):
            raise DefinitionError(f"name must be a string, got {self.name!r}", loc=("name",))
        self.agent_globs = self._globs("agents")
        self.tenant_globs = self._globs("tenants")
        if not isinstance(self.hooks, list | tuple):
            raise DefinitionError(
                f"hooks must be a list, got {type(self.hooks).__name__}",
                loc=("hooks",),
                expected="a list of hooks",
            )
        if not self.hooks:
            raise DefinitionError("a matcher needs at least one hook", loc=("hooks",))
        resolved: list[Hook] = []
        for i, ref in enumerate(self.hooks):
            try:
                resolved.append(resolve_hook(ref, base_dir=self.base_dir))
            except DefinitionError as exc:
                raise exc.within("hooks", i) from None
        self.resolved = resolved

    def _globs(self, attr: str) -> list[Any] | None:
        values = getattr(self, attr)
        if values is None:
            return None
        if not isinstance(values, list | tuple) or not all(isinstance(v, str) for v in values):
            raise DefinitionError(
                f"{attr} must be a list of globs, got {values!r}",
                loc=(attr,),
                expected="[glob, ...]",
            )
        compiled = []
        for i, glob in enumerate(values):
            try:
                compiled.append(compile_glob(glob))
            except DefinitionError as exc:
                raise exc.within(attr, i) from None
        return compiled

    @property
    def label(self) -> str:
        return self.name or self.pattern.source or "*"


@record(no_repr=("locations",), no_compare=("source", "locations"))
class AgentDefinition:
    """An agent's tools and the hooks bound to its lifecycle events.

    Build it in Python, or load it with :meth:`from_file` (YAML, TOML, JSON).
    ``injection_budget`` caps context added per turn (characters);
    ``event_budget`` caps the time all hooks of one event may take (seconds).
    ``instructions``: the standing instructions the model must keep for the whole
    session; ``reinject_instructions`` gives them at session start and again after
    Claude Code compacts the conversation (whose summary would lose them).
    """

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    name: str
    description: str | None
    tools: dict[str, Any]
    hooks: dict[str, list[Any]]
    ledger: str | None
    injection_budget: int
    event_budget: float
    instructions: str | None
    source: str | None
    #: (key, path, ...) -> line in ``source``, for messages about the file
    locations: dict[tuple[str | int, ...], int]

    def __init__(
        self,
        name: str = "agent",
        description: str | None = None,
        tools: dict[str, Any] = DICT,
        hooks: dict[str, list[Any]] = DICT,
        ledger: str | None = None,
        injection_budget: int = 30_000,
        event_budget: float = 30.0,
        instructions: str | None = None,
        source: str | None = None,
        locations: dict[tuple[str | int, ...], int] = DICT,
    ) -> None:
        self.name = name
        self.description = description
        self.tools = {} if tools is DICT else tools
        self.hooks = {} if hooks is DICT else hooks
        self.ledger = ledger
        self.injection_budget = injection_budget
        self.event_budget = event_budget
        self.instructions = instructions
        self.source = source
        self.locations = {} if locations is DICT else locations
        self.__post_init__()

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise DefinitionError(f"name must be a string, got {self.name!r}", loc=("name",))
        base_dir = os.path.dirname(os.path.abspath(self.source)) if self.source else None
        tools: dict[str, ToolSpec] = {}
        for tool, spec in _mapping(self.tools, "tools", "{tool name: ToolSpec or mapping}"):
            if isinstance(spec, ToolSpec):
                tools[tool] = spec
                continue
            spec = spec if spec is not None else {}
            if not isinstance(spec, dict):
                raise DefinitionError(
                    f"expected a ToolSpec or mapping, got {type(spec).__name__}",
                    loc=("tools", tool),
                )
            _known_keys(spec, _TOOL_KEYS, ("tools", tool))
            try:
                tools[tool] = ToolSpec(**spec)
            except DefinitionError as exc:
                raise exc.within("tools", tool) from None
        self.tools = tools
        hooks: dict[str, list[HookMatcher]] = {}
        for event, matchers in _mapping(self.hooks, "hooks", "{event name: [HookMatcher, ...]}"):
            try:
                name = canonical_event_name(event)
            except EventError:
                raise DefinitionError(
                    f"unknown event {event!r}",
                    loc=("hooks", event),
                    expected=", ".join(EVENT_NAMES) + " (Stop is an alias of AgentStop)",
                ) from None
            if not isinstance(matchers, list | tuple):
                raise DefinitionError(
                    f"expected a list of matchers, got {type(matchers).__name__}",
                    loc=("hooks", event),
                )
            bucket = hooks.setdefault(name, [])
            for i, m in enumerate(matchers):
                try:
                    if isinstance(m, HookMatcher):
                        bucket.append(m)
                    elif isinstance(m, dict):
                        _known_keys(m, _MATCHER_KEYS, ())
                        bucket.append(HookMatcher(**m, base_dir=base_dir))
                    else:
                        raise DefinitionError(
                            f"expected a HookMatcher or mapping, got {type(m).__name__}"
                        )
                except DefinitionError as exc:
                    raise exc.within("hooks", event, i) from None
        self.hooks = hooks
        if (
            isinstance(self.injection_budget, bool)
            or not isinstance(self.injection_budget, int)
            or self.injection_budget < 0
        ):
            raise DefinitionError(
                f"injection_budget must be a non-negative integer, got {self.injection_budget!r}",
                loc=("injection_budget",),
            )
        if (
            isinstance(self.event_budget, bool)
            or not isinstance(self.event_budget, int | float)
            or not self.event_budget > 0
        ):
            raise DefinitionError(
                f"event_budget must be positive seconds, got {self.event_budget!r}",
                loc=("event_budget",),
            )
        if self.instructions is not None and (
            not isinstance(self.instructions, str) or not self.instructions.strip()
        ):
            raise DefinitionError(
                f"instructions must be non-empty text, got {self.instructions!r}",
                loc=("instructions",),
            )
        if self.instructions is not None and len(self.instructions) > INSTRUCTIONS_CAP:
            raise DefinitionError(
                f"instructions are {len(self.instructions):,} characters, over the "
                f"{INSTRUCTIONS_CAP:,} that fit in one injection with their frame",
                loc=("instructions",),
                expected="shorter standing instructions (or a file the model is told to read)",
            )

    def arg_of(self, tool: str) -> tuple[str, str] | None:
        """The primary argument of ``tool`` and its kind (``path`` or ``text``)."""
        spec = self.tools.get(tool)
        if spec is not None and spec.primary_arg:
            return spec.primary_arg, spec.arg_kind or "text"
        return BUILTIN_PRIMARY_ARGS.get(tool)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> AgentDefinition:
        """Load a ``.yaml``/``.yml``/``.toml``/``.json`` definition.

        Errors name the file, the line (YAML and JSON) and the path inside it.
        """
        from pathlib import Path

        from .file_format import load_definition

        return load_definition(Path(path))

    @classmethod
    def from_dict(cls, data: Any, *, source: str | None = None) -> AgentDefinition:
        """Validate ``data`` as the file format would, then build the definition."""
        from .file_format import definition_from_data

        return definition_from_data(data, source=source)


_TOOL_KEYS = frozenset(field_names(ToolSpec))
#: what a matcher mapping may say (``base_dir`` comes from the definition's file)
_MATCHER_KEYS = frozenset(field_names(HookMatcher)) - {"base_dir"}


def _mapping(value: Any, key: str, expected: str) -> list[tuple[Any, Any]]:
    if value is None:
        return []
    if not isinstance(value, dict):
        raise DefinitionError(
            f"{key} must be a mapping, got {type(value).__name__}", loc=(key,), expected=expected
        )
    return list(value.items())


def _known_keys(data: dict[Any, Any], known: frozenset[str], loc: tuple[str | int, ...]) -> None:
    unknown = sorted((k for k in data if k not in known), key=str)
    if unknown:
        raise DefinitionError(
            f"unknown key {unknown[0]!r}",
            loc=(*loc, str(unknown[0])),
            expected="one of " + ", ".join(sorted(known)),
        )
