"""What a hook returns (``HookResult``) and what a chain of hooks decides (``Decision``).

``HookResult`` and ``Decision`` are dataclasses (``slots=True``) written out by
hand (``_records``), and nothing here imports ``typing`` at run time: a hook
process imports this module on every event.
"""

from __future__ import annotations

from ._dataclass_free import LIST, named_tuple, record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, Final, Literal, NamedTuple, TypeAlias

    DecisionKind: TypeAlias = Literal["allow", "deny", "ask", "block", "halt"]

__all__ = [
    "INJECTION_CAP",
    "MESSAGE_CAP",
    "STOP_BLOCK_CAP",
    "UNSET",
    "Decision",
    "DecisionKind",
    "HookResult",
    "HookRun",
    "ModelContext",
]

_KINDS: Final = frozenset({"allow", "deny", "ask", "block", "halt"})
#: characters one hook may add as context for the model in one event (more is cut)
INJECTION_CAP: Final = 10_000
#: blocked stops in a row after which a stop is let through (no endless "keep working")
STOP_BLOCK_CAP: Final = 8
#: characters of a reason or a system message that reach the model or the user (more is cut)
MESSAGE_CAP: Final = 10_000


def __getattr__(name: str) -> Any:
    """``DecisionKind`` (``Literal[...]``) is made on first use: ``typing`` costs a hook ~3 ms."""
    if name == "DecisionKind":
        import typing

        value = typing.Literal["allow", "deny", "ask", "block", "halt"]
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Unset:
    """A singleton: ``is UNSET`` must hold after copy and pickle too."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self) -> str:
        return "UNSET"  # pickle finds the module's UNSET, not a new instance

    def __copy__(self) -> _Unset:
        return self

    def __deepcopy__(self, memo: object) -> _Unset:
        return self


#: marks "no rewritten output", since ``None`` is a legitimate tool output
UNSET: Final = _Unset()


@record(slots=True)
class HookResult:
    """One hook's answer. Build it with the constructors, e.g. ``HookResult.deny(...)``.

    ``decision`` is one of allow, deny, ask (PreToolUse), block (prompt, stop and
    post events; on PreToolUse it means deny) and halt (end the whole agent).
    """

    __slots__ = (  # noqa: RUF023  # field order, as @dataclass(slots=True) writes it
        "decision",
        "reason",
        "hint",
        "updated_input",
        "updated_output",
        "additional_context",
        "system_message",
        "annotations",
    )
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    decision: DecisionKind | None
    reason: str | None
    hint: str | None
    updated_input: dict[str, Any] | None
    updated_output: Any
    additional_context: str | None
    system_message: str | None
    #: facts about the call for the ledger (e.g. ``{"intent": ...}``); merged across hooks
    annotations: dict[str, Any] | None

    def __init__(
        self,
        decision: DecisionKind | None = None,
        reason: str | None = None,
        hint: str | None = None,
        updated_input: dict[str, Any] | None = None,
        updated_output: Any = UNSET,
        additional_context: str | None = None,
        system_message: str | None = None,
        annotations: dict[str, Any] | None = None,
    ) -> None:
        self.decision = decision
        self.reason = reason
        self.hint = hint
        self.updated_input = updated_input
        self.updated_output = updated_output
        self.additional_context = additional_context
        self.system_message = system_message
        self.annotations = annotations
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.decision is not None and self.decision not in _KINDS:
            raise ValueError(f"decision must be one of {sorted(_KINDS)}, got {self.decision!r}")
        if self.updated_input is not None and not isinstance(self.updated_input, dict):
            raise ValueError("updated_input must be a dict (the whole new input)")

    @classmethod
    def allow(cls, reason: str | None = None) -> HookResult:
        return cls("allow", reason)

    @classmethod
    def deny(cls, reason: str, hint: str | None = None) -> HookResult:
        """Refuse the call; ``reason`` (and ``hint``) go to the model as an instruction."""
        return cls("deny", reason, hint)

    @classmethod
    def ask(cls, reason: str) -> HookResult:
        return cls("ask", reason)

    @classmethod
    def modify(
        cls,
        input: dict[str, Any] | None = None,
        output: Any = UNSET,
        reason: str | None = None,
    ) -> HookResult:
        """Rewrite the whole tool input (PreToolUse) or the tool output (PostToolUse)."""
        return cls(None, reason, updated_input=input, updated_output=output)

    @classmethod
    def inject(cls, text: str) -> HookResult:
        """Add context for the model (capped and budgeted by the Guard)."""
        return cls(additional_context=text)

    @classmethod
    def block(cls, reason: str) -> HookResult:
        """Keep a stopping agent working, or erase a prompt, with ``reason``."""
        return cls("block", reason)

    @classmethod
    def halt(cls, reason: str) -> HookResult:
        return cls("halt", reason)

    @property
    def message(self) -> str:
        """``reason`` followed by ``hint``: the text the model reads."""
        if self.hint:
            return f"{self.reason}\n{self.hint}" if self.reason else self.hint
        return self.reason or ""

    @classmethod
    def from_claude(cls, data: Any) -> HookResult:
        """Read a Claude hook output dict (SDK callback or command-hook stdout).

        Raises ``ValueError`` naming the offending field for output Claude would reject.
        """
        if not isinstance(data, dict):
            raise ValueError(f"expected a dict, got {type(data).__name__}")
        unknown = sorted(set(data) - _CLAUDE_KEYS)
        if unknown:  # a typo (``permisionDecision``) must not pass as "no opinion"
            raise ValueError(f"unknown key {unknown[0]!r} in a Claude hook output")
        out = cls()
        spec = data.get("hookSpecificOutput")
        if spec is not None:
            if not isinstance(spec, dict):
                raise ValueError("hookSpecificOutput must be an object")
            unknown = sorted(set(spec) - _CLAUDE_SPECIFIC_KEYS)
            if unknown:
                raise ValueError(f"unknown key {unknown[0]!r} in hookSpecificOutput")
            perm = spec.get("permissionDecision")
            if perm is not None:
                if perm not in ("allow", "deny", "ask", "defer"):
                    raise ValueError(
                        f"hookSpecificOutput.permissionDecision must be allow, deny, ask or "
                        f"defer, got {perm!r}"
                    )
                out.decision = "ask" if perm == "defer" else perm
                out.reason = _opt_str(spec, "permissionDecisionReason", "hookSpecificOutput")
            upd = spec.get("updatedInput")
            if upd is not None:
                if not isinstance(upd, dict):
                    raise ValueError("hookSpecificOutput.updatedInput must be an object")
                out.updated_input = upd
            out.additional_context = _opt_str(spec, "additionalContext", "hookSpecificOutput")
            for key in ("updatedToolOutput", "updatedMCPToolOutput"):
                if key in spec:
                    out.updated_output = spec[key]
        top = data.get("decision")
        if top is not None:
            if top == "block":
                out.decision = "block"
                out.reason = _opt_str(data, "reason", "") or out.reason
            elif top == "approve":
                out.decision = out.decision or "allow"
            else:
                raise ValueError(f"decision must be 'block' (or legacy 'approve'), got {top!r}")
        cont = data.get("continue", data.get("continue_"))
        if cont is not None:
            if not isinstance(cont, bool):
                raise ValueError("continue must be a boolean")
            if cont is False:
                out.decision = "halt"
                out.reason = _opt_str(data, "stopReason", "") or out.reason or "halted by hook"
        out.system_message = _opt_str(data, "systemMessage", "")
        return out


#: what Claude Code (2.1.x) accepts in a hook output; anything else is a mistake
_CLAUDE_KEYS: Final = frozenset(
    {
        "continue",
        "continue_",
        "suppressOutput",
        "stopReason",
        "decision",
        "reason",
        "systemMessage",
        "hookSpecificOutput",
        "async",
        "async_",
        "asyncTimeout",
        "terminalSequence",
    }
)
_CLAUDE_SPECIFIC_KEYS: Final = frozenset(
    {
        "hookEventName",
        "permissionDecision",
        "permissionDecisionReason",
        "updatedInput",
        "additionalContext",
        "updatedToolOutput",
        "updatedMCPToolOutput",
        "sessionTitle",
        "suppressOriginalPrompt",
        "initialUserMessage",
        "watchPaths",
        "reloadSkills",
        "decision",
        "retry",
        "action",
        "content",
        "worktreePath",
        "displayContent",
    }
)


def _opt_str(d: dict[str, Any], key: str, where: str) -> str | None:
    value = d.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{where + '.' if where else ''}{key} must be a string")
    return value


if TYPE_CHECKING:

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

else:  # the same NamedTuples, made without importing typing
    ModelContext = named_tuple(
        "ModelContext",
        {"hook": "str", "text": "str", "truncated": "bool"},
        defaults=(False,),
        module=__name__,
        doc="Context added for the model (``additional_context``), with the hook it came from.",
    )
    HookRun = named_tuple(
        "HookRun",
        {
            "hook": "str",
            "matcher": "str",
            "priority": "int",
            "outcome": "str",
            "duration_ms": "float",
            "error": "str | None",
            "injected_chars": "int",
        },
        defaults=(None, 0),
        module=__name__,
        doc="""One hook's outcome inside one event, as recorded in the ledger.

    ``outcome``: allow, deny, ask, block, halt, modify, inject, noop, skipped,
    error, timeout, invalid or refused.
    """,
    )


@record(slots=True, no_repr=("_raw",), no_compare=("_raw",))
class Decision:
    """The merged result of every hook bound to one event.

    ``event`` is the event as it arrived; ``updated_input`` / ``updated_output``
    carry what the hooks rewrote (``tool_input`` gives the input to run with).

    ``decision`` is ``allow``, ``deny`` or ``ask`` (PreToolUse); ``blocked`` and
    ``halted`` carry the stop/prompt semantics. ``explicit`` is false when no hook
    expressed a permission, so a host keeps its own permission flow.
    """

    __slots__ = (  # noqa: RUF023  # field order, as @dataclass(slots=True) writes it
        "event",
        "decision",
        "reason",
        "explicit",
        "updated_input",
        "updated_output",
        "injections",
        "system_messages",
        "blocked",
        "halted",
        "notes",
        "annotations",
        "_raw",
    )
    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    event: Any
    decision: Literal["allow", "deny", "ask"]
    reason: str | None
    explicit: bool
    updated_input: dict[str, Any] | None
    updated_output: Any
    injections: list[ModelContext]
    system_messages: list[str]
    blocked: bool
    halted: bool
    notes: list[str]
    #: facts hooks attached to the call (``HookResult.annotations``), stored with it
    annotations: dict[str, Any] | None
    #: hook outcomes; the dispatcher appends cheap raw tuples, ``runs`` types them
    _raw: list[Any]

    def __init__(
        self,
        event: Any,
        decision: Literal["allow", "deny", "ask"] = "allow",
        reason: str | None = None,
        explicit: bool = False,
        updated_input: dict[str, Any] | None = None,
        updated_output: Any = UNSET,
        injections: list[ModelContext] = LIST,
        system_messages: list[str] = LIST,
        blocked: bool = False,
        halted: bool = False,
        notes: list[str] = LIST,
        annotations: dict[str, Any] | None = None,
        _raw: list[Any] = LIST,
    ) -> None:
        self.event = event
        self.decision = decision
        self.reason = reason
        self.explicit = explicit
        self.updated_input = updated_input
        self.updated_output = updated_output
        self.injections = [] if injections is LIST else injections
        self.system_messages = [] if system_messages is LIST else system_messages
        self.blocked = blocked
        self.halted = halted
        self.notes = [] if notes is LIST else notes
        self.annotations = annotations
        self._raw = [] if _raw is LIST else _raw

    @property
    def runs(self) -> list[HookRun]:
        """Each hook's outcome, in the order they ran (what the ledger records)."""
        raw = self._raw
        for i, r in enumerate(raw):
            if type(r) is tuple:
                b, outcome, seconds, error, injected = r
                raw[i] = HookRun(
                    b.hook.name, b.label, b.priority, outcome, seconds * 1000, error, injected
                )
        return raw

    @property
    def event_name(self) -> str:
        return str(self.event.event_name)

    @property
    def denied(self) -> bool:
        return self.decision == "deny"

    @property
    def allowed(self) -> bool:
        return self.decision == "allow" and not self.halted

    @property
    def additional_context(self) -> str | None:
        if not self.injections:
            return None
        return "\n\n".join(i.text for i in self.injections)

    @property
    def tool_input(self) -> dict[str, Any] | None:
        """The input the tool should run with (rewritten if a hook modified it)."""
        if self.updated_input is not None:
            return self.updated_input
        return getattr(self.event, "tool_input", None)

    def refuse_halted(self, why: str) -> None:
        """Deny this PreToolUse after all: its session was halted (``why``) by an event the
        ledger recorded first (a sibling call in another process). What its hooks added for
        the model is dropped; their runs stay recorded (docs/design.md §5)."""
        self.decision, self.explicit, self.halted = "deny", True, True
        self.reason = f"the agent was halted: {why}"
        self.cut_context(0, quiet=True)
        self.notes.append(f"denied: the agent was halted before this call was recorded ({why})")

    def cut_context(self, room: int, *, quiet: bool = False) -> None:
        """Keep at most ``room`` characters of context for the model: what is left of the
        turn's injection budget as the ledger holds it, when other processes used some of
        it meanwhile. Later injections are cut or dropped (noted unless ``quiet``) and the
        hook runs' injected counts follow."""
        runs = self.runs
        counted = [i for i, r in enumerate(runs) if r.injected_chars]
        left = max(0, room)
        kept: list[ModelContext] = []
        for n, ctx in enumerate(self.injections):
            text = ctx.text
            if len(text) > left:
                if not quiet:
                    self.notes.append(
                        f"{ctx.hook}: context dropped, the turn's injection budget is spent"
                        if left == 0
                        else f"{ctx.hook}: context cut to the turn's remaining budget ({left})"
                    )
                text = text[:left]
            left -= len(text)
            if n < len(counted):
                runs[counted[n]] = runs[counted[n]]._replace(injected_chars=len(text))
            if text:
                kept.append(ModelContext(ctx.hook, text, ctx.truncated or text != ctx.text))
        self.injections = kept

    def to_claude(self) -> dict[str, Any]:
        """The Claude hook output JSON for this decision (SDK callback or command stdout)."""
        name = self.event_name
        wire = getattr(self.event, "hook_event_name", name) or name
        out: dict[str, Any] = {}
        spec: dict[str, Any] = {}
        if name == "PreToolUse":
            if self.explicit or self.denied:
                spec["permissionDecision"] = self.decision
                if self.reason:
                    spec["permissionDecisionReason"] = self.reason
            if self.updated_input is not None and not self.denied:
                spec["updatedInput"] = self.updated_input
        elif self.blocked:
            out["decision"] = "block"
            out["reason"] = self.reason or "blocked by hook"
        if name == "PostToolUse" and self.updated_output is not UNSET:
            spec["updatedToolOutput"] = self.updated_output
        ctx = self.additional_context
        if ctx and name != "SessionEnd":
            spec["additionalContext"] = ctx
        if spec:
            out["hookSpecificOutput"] = {"hookEventName": wire, **spec}
        if self.halted:
            out["continue"] = False
            out["stopReason"] = self.reason or "halted by hook"
        if self.system_messages:
            out["systemMessage"] = "\n".join(self.system_messages)
        return out
