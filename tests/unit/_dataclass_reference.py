"""The dataclasses that ``guardrails._dataclass_free`` classes replaced, as they were declared.

``tests/test_records.py`` holds each hand-written class to its declaration here:
same fields (types, defaults, factories, flags), signature, repr, equality and
``dataclasses`` behaviour. A field added to a class must be added here too.
Only the fields are declared: the behaviour under test is what ``@dataclass``
generates.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from guardrails.results import UNSET

DecisionKind = Literal["allow", "deny", "ask", "defer", "block", "halt"]


class FieldSpec(NamedTuple):
    """How ``from_claude`` checks one wire field."""

    types: tuple[type, ...]  # accepted runtime types; empty: anything
    nullable: bool  # may the payload send ``null``?
    expected: str  # for messages: "a string", "a boolean or null", ...


class ModelContext(NamedTuple):
    """Context added for the model (``additional_context``), with the hook it came from."""

    hook: str
    text: str
    truncated: bool = False


class HookRun(NamedTuple):
    """One hook's outcome inside one event, as recorded in the ledger.

    ``outcome``: allow, deny, ask, block, halt, modify, inject, noop, skipped,
    error, timeout, invalid or refused.
    """

    hook: str
    matcher: str
    priority: int
    outcome: str
    duration_ms: float
    error: str | None = None
    injected_chars: int = 0


@dataclass(slots=True, kw_only=True)
class Event:
    event_name: ClassVar[str] = ""
    wire_name: ClassVar[str] = ""
    subject_field: ClassVar[str | None] = None
    required: ClassVar[tuple[str, ...]] = ()

    session_id: str = ""
    transcript_path: str | None = None
    cwd: str = ""
    hook_event_name: str = ""
    permission_mode: str | None = None
    prompt_id: str | None = None
    effort: dict[str, Any] | None = None
    agent_id: str | None = None
    agent_type: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    _nulls: frozenset[str] = field(default=frozenset(), repr=False, compare=False)


@dataclass(slots=True, kw_only=True)
class PreToolUse(Event):
    event_name: ClassVar[str] = "PreToolUse"
    wire_name: ClassVar[str] = "PreToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    mcp_server: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUse(Event):
    event_name: ClassVar[str] = "PostToolUse"
    wire_name: ClassVar[str] = "PostToolUse"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "tool_response")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_response: Any = None
    tool_use_id: str | None = None
    duration_ms: float | None = None
    mcp_server: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class PostToolUseFailure(Event):
    event_name: ClassVar[str] = "PostToolUseFailure"
    wire_name: ClassVar[str] = "PostToolUseFailure"
    subject_field: ClassVar[str | None] = "tool_name"
    required: ClassVar[tuple[str, ...]] = ("tool_name", "tool_input", "error")
    tool_name: str = ""
    tool_input: dict[str, Any] = field(default_factory=dict)
    tool_use_id: str | None = None
    error: str = ""
    is_interrupt: bool | None = None
    duration_ms: float | None = None
    mcp_server: dict[str, Any] | None = None


@dataclass(slots=True, kw_only=True)
class UserPromptSubmit(Event):
    event_name: ClassVar[str] = "UserPromptSubmit"
    wire_name: ClassVar[str] = "UserPromptSubmit"
    required: ClassVar[tuple[str, ...]] = ("prompt",)
    prompt: str = ""
    source: str | None = None
    session_title: str | None = None


@dataclass(slots=True, kw_only=True)
class SubagentStart(Event):
    event_name: ClassVar[str] = "SubagentStart"
    wire_name: ClassVar[str] = "SubagentStart"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("agent_id", "agent_type")


@dataclass(slots=True, kw_only=True)
class SubagentStop(Event):
    event_name: ClassVar[str] = "SubagentStop"
    wire_name: ClassVar[str] = "SubagentStop"
    subject_field: ClassVar[str | None] = "agent_type"
    required: ClassVar[tuple[str, ...]] = ("stop_hook_active",)
    stop_hook_active: bool = False
    agent_transcript_path: str | None = None
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class AgentStop(Event):
    event_name: ClassVar[str] = "AgentStop"
    wire_name: ClassVar[str] = "Stop"
    required: ClassVar[tuple[str, ...]] = ("stop_hook_active",)
    stop_hook_active: bool = False
    last_assistant_message: str | None = None
    background_tasks: list[Any] | None = None
    session_crons: list[Any] | None = None


@dataclass(slots=True, kw_only=True)
class SessionStart(Event):
    event_name: ClassVar[str] = "SessionStart"
    wire_name: ClassVar[str] = "SessionStart"
    subject_field: ClassVar[str | None] = "source"
    source: str | None = None
    model: str | None = None
    session_title: str | None = None
    seconds_since_last_response: float | None = None
    context_tokens: float | None = None
    prompt_cache_likely_expired: bool | None = None
    estimated_cache_write_usd: float | None = None


@dataclass(slots=True, kw_only=True)
class SessionEnd(Event):
    event_name: ClassVar[str] = "SessionEnd"
    wire_name: ClassVar[str] = "SessionEnd"
    subject_field: ClassVar[str | None] = "reason"
    reason: str | None = None


@dataclass(slots=True)
class HookResult:
    decision: DecisionKind | None = None
    reason: str | None = None
    hint: str | None = None
    updated_input: dict[str, Any] | None = None
    updated_output: Any = UNSET
    additional_context: str | None = None
    system_message: str | None = None
    annotations: dict[str, Any] | None = None
    claude: dict[str, Any] | None = None


@dataclass(slots=True)
class Decision:
    event: Any
    decision: Literal["allow", "deny", "ask"] = "allow"
    reason: str | None = None
    explicit: bool = False
    updated_input: dict[str, Any] | None = None
    updated_output: Any = UNSET
    injections: list[ModelContext] = field(default_factory=list)
    system_messages: list[str] = field(default_factory=list)
    blocked: bool = False
    halted: bool = False
    notes: list[str] = field(default_factory=list)
    annotations: dict[str, Any] | None = None
    deferred: bool = False
    claude: dict[str, Any] | None = None
    _raw: list[Any] = field(default_factory=list, repr=False, compare=False)


@dataclass
class ToolSpec:
    schema: Any = None
    side_effects: bool = False
    primary_arg: str | None = None
    arg_kind: Literal["path", "text"] | None = None
    idempotency: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    description: str | None = None


@dataclass
class HookMatcher:
    matcher: str | None = None
    hooks: list[Any] = field(default_factory=list)
    priority: int = 100
    timeout: float | None = None
    on_failure: Literal["block", "continue"] | None = None
    agents: list[str] | None = None
    tenants: list[str] | None = None
    name: str | None = None
    base_dir: str | None = field(default=None, repr=False, compare=False)


@dataclass
class AgentDefinition:
    name: str = "agent"
    description: str | None = None
    tools: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, list[Any]] = field(default_factory=dict)
    ledger: str | None = None
    injection_budget: int = 30_000
    event_budget: float = 30.0
    instructions: str | None = None
    source: str | None = field(default=None, compare=False)
    locations: dict[tuple[str | int, ...], int] = field(
        default_factory=dict, repr=False, compare=False
    )


@dataclass
class ToolRun:
    tool_name: str
    status: Literal["ok", "error", "denied"]
    pre: Decision
    output: Any = None
    error: str | None = None
    exception: BaseException | None = None
    post: Decision | None = None
    tool_input: dict[str, Any] = field(default_factory=dict)
    replayed: bool = False


@dataclass(frozen=True)
class Migration:
    number: int
    name: str
    sql: str


@dataclass
class RecoverReport:
    imported: int = 0
    interrupted: int = 0
    spools: list[str] = field(default_factory=list)
    rejected: int = 0
