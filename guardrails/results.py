"""What a hook returns (``HookResult``) and what a chain of hooks decides (``Decision``).

``HookResult`` and ``Decision`` are dataclasses (``slots=True``) written out by
hand (``_records``), and nothing here imports ``typing`` at run time: a hook
process imports this module on every event.
"""

from __future__ import annotations

from ._dataclass_free import LIST, named_tuple, record
from ._event_table import (
    CONTEXT_EVENTS,
    INSTRUCTION_EVENTS,
    OUTPUT_FIELDS,
    PERMISSION_EVENTS,
    SPECIFIC_KEYS,
    TOP_KEYS,
    TOP_LEVEL_OUTPUT,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from dataclasses import Field
    from typing import Any, ClassVar, Final, Literal, NamedTuple, TypeAlias

    DecisionKind: TypeAlias = Literal["allow", "deny", "ask", "defer", "block", "halt"]

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

_KINDS: Final = frozenset({"allow", "deny", "ask", "defer", "block", "halt"})
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

        value = typing.Literal["allow", "deny", "ask", "defer", "block", "halt"]
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

    ``decision`` is one of allow, deny, ask (the permission events: PreToolUse,
    PermissionRequest, PreSkillShellCommand, PreModelSwitch), defer (PreToolUse and
    PreSkillShellCommand: a headless session pauses), block (the other events Claude
    lets a hook refuse; on a permission event it means deny) and halt (end the whole
    agent). ``claude`` holds Claude output fields hookrails has no name for, by their
    wire names (``{"sessionTitle": ..., "watchPaths": [...]}``: docs/concepts.md).
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
        "claude",
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
    #: Claude output fields by wire name (``sessionTitle``, ``watchPaths``, ...), checked here
    #: and applied where Claude reads them (the Guard notes and drops the rest)
    claude: dict[str, Any] | None

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
        claude: dict[str, Any] | None = None,
    ) -> None:
        self.decision = decision
        self.reason = reason
        self.hint = hint
        self.updated_input = updated_input
        self.updated_output = updated_output
        self.additional_context = additional_context
        self.system_message = system_message
        self.annotations = annotations
        self.claude = claude
        self.__post_init__()

    def __post_init__(self) -> None:
        if self.decision is not None and self.decision not in _KINDS:
            raise ValueError(f"decision must be one of {sorted(_KINDS)}, got {self.decision!r}")
        if self.updated_input is not None and not isinstance(self.updated_input, dict):
            raise ValueError("updated_input must be a dict (the whole new input)")
        if self.claude is not None:
            if not isinstance(self.claude, dict):
                raise ValueError("claude must be a dict of Claude output fields")
            for key, value in self.claude.items():
                problem = output_problem(key, value)
                if problem is not None:
                    raise ValueError(f"claude: {problem}")

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
    def defer(cls, reason: str | None = None) -> HookResult:
        """Leave the call to the host for later: a headless (``-p``, SDK) session pauses,
        and resuming it asks again (PreToolUse and PreSkillShellCommand)."""
        return cls("defer", reason)

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
        """Read a Claude hook output dict (SDK callback, command-hook stdout, http body).

        Every field Claude (2.1.332) reads on some event is taken; a field that only
        other events read is dropped by the Guard with a note, as Claude drops it.
        Raises ``ValueError`` naming the offending field for a key Claude knows on no
        event (a typo, ``permisionDecision``, must not pass as "no opinion") and for a
        value Claude would reject.
        """
        if not isinstance(data, dict):
            raise ValueError(f"expected a dict, got {type(data).__name__}")
        _known_keys(data, "", _TOP_KEYS)
        out = cls()
        spec = data.get("hookSpecificOutput")
        if spec is not None:
            if not isinstance(spec, dict):
                raise ValueError("hookSpecificOutput must be an object")
            _known_keys(spec, "hookSpecificOutput.", _SPECIFIC_KEYS)
            perm = spec.get("permissionDecision")
            if perm is not None:
                if perm not in ("allow", "deny", "ask", "defer"):
                    raise ValueError(
                        f"hookSpecificOutput.permissionDecision must be allow, deny, ask or "
                        f"defer, got {perm!r}"
                    )
                out.decision = perm
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
            if spec.get("decision") is not None:
                _permission_request(out, spec["decision"])
            _take_output(out, spec, "hookSpecificOutput.")
        _take_output(out, data, "")
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


#: the output field Claude reads inside PermissionRequest's ``decision`` only
_IN_DECISION: Final = frozenset({"updatedPermissions"})
#: the keys Claude knows in a hook's answer, top level and in ``hookSpecificOutput``
_TOP_KEYS: Final = TOP_KEYS | TOP_LEVEL_OUTPUT
_SPECIFIC_KEYS: Final = SPECIFIC_KEYS | (frozenset(OUTPUT_FIELDS) - TOP_LEVEL_OUTPUT - _IN_DECISION)
_ACTIONS: Final = ("accept", "decline", "cancel")
#: a Claude output field's JSON type -> the Python check of a value
_CHECKS: Final[dict[str, Callable[[Any], bool]]] = {
    "a string": lambda v: isinstance(v, str),
    "a boolean": lambda v: isinstance(v, bool),
    "an object": lambda v: isinstance(v, dict),
    "accept, decline or cancel": lambda v: v in _ACTIONS,
    "an array of strings": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "an array of objects": lambda v: isinstance(v, list) and all(isinstance(x, dict) for x in v),
}


def output_problem(key: str, value: Any) -> str | None:
    """What is wrong with ``value`` as the Claude output field ``key`` (``None``: nothing)."""
    found = OUTPUT_FIELDS.get(key)
    if found is None:
        return f"unknown Claude output field {key!r}; expected one of {', '.join(OUTPUT_FIELDS)}"
    if _CHECKS[found[0]](value):
        return None
    return f"{key} must be {found[0]}, got {_json_kind(value)}"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    for tp, name in ((bool, "a boolean"), (str, "a string"), (dict, "an object")):
        if isinstance(value, tp):
            return f"{name} ({value!r:.40})"
    if isinstance(value, list):
        return f"an array ({value!r:.40})"
    return f"{type(value).__name__} ({value!r:.40})"


def _known_keys(data: dict[str, Any], where: str, known: frozenset[str]) -> None:
    unknown = sorted(str(k) for k in set(data) - known)
    if not unknown:
        return
    import difflib  # the error path only

    close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    raise ValueError(f"unknown key {where}{unknown[0]!r} in a Claude hook output{hint}")


def _take_output(out: HookResult, data: dict[str, Any], where: str) -> None:
    """The :data:`OUTPUT_FIELDS` in ``data`` (one level of a Claude answer), checked."""
    for key, value in data.items():
        if key in OUTPUT_FIELDS and (where.endswith("decision.") or key not in _IN_DECISION):
            problem = output_problem(key, value)
            if problem is not None:
                raise ValueError(where + problem)
            if out.claude is None:
                out.claude = {}
            out.claude[key] = value


_ALLOW_KEYS: Final = frozenset({"behavior", "updatedInput", "updatedPermissions"})
_DENY_KEYS: Final = frozenset({"behavior", "message", "interrupt"})


def _permission_request(out: HookResult, decision: Any) -> None:
    """PermissionRequest's ``decision: {behavior, updatedInput?, updatedPermissions?,
    message?, interrupt?}`` as the hook's allow or deny (an interrupting deny: halt)."""
    where = "hookSpecificOutput.decision"
    if not isinstance(decision, dict):
        raise ValueError(f"{where} must be an object")
    behavior = decision.get("behavior")
    if behavior == "allow":
        _known_keys(decision, where + ".", _ALLOW_KEYS)
        out.decision = "allow"
        upd = decision.get("updatedInput")
        if upd is not None:
            if not isinstance(upd, dict):
                raise ValueError(f"{where}.updatedInput must be an object")
            out.updated_input = upd
        if decision.get("updatedPermissions") is not None:
            _take_output(out, {"updatedPermissions": decision["updatedPermissions"]}, where + ".")
    elif behavior == "deny":
        _known_keys(decision, where + ".", _DENY_KEYS)
        message = _opt_str(decision, "message", where)
        interrupt = decision.get("interrupt")
        if interrupt is not None and not isinstance(interrupt, bool):
            raise ValueError(f"{where}.interrupt must be a boolean")
        out.decision = "halt" if interrupt else "deny"
        out.reason = message or out.reason
    else:
        raise ValueError(f"{where}.behavior must be allow or deny, got {behavior!r}")


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

    ``decision`` is ``allow``, ``deny`` or ``ask`` (the permission events; ``deferred``:
    the ask is a ``defer``, left to the host for later); ``blocked`` and ``halted``
    carry the refusals of the other events. ``explicit`` is false when no hook
    expressed a permission, so a host keeps its own permission flow. ``claude``: the
    merged Claude output fields (``HookResult.claude``) of this event.
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
        "deferred",
        "claude",
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
    #: the ``ask`` is a ``defer``: the host pauses, and asks again when resumed
    deferred: bool
    #: Claude output fields the hooks gave (``HookResult.claude``), merged
    claude: dict[str, Any] | None
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
        deferred: bool = False,
        claude: dict[str, Any] | None = None,
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
        self.deferred = deferred
        self.claude = claude
        self._raw = [] if _raw is LIST else _raw

    @property
    def runs(self) -> list[HookRun]:
        """Each hook's outcome, in the order they ran (what the ledger records)."""
        raw = self._raw
        if not any(type(r) is tuple for r in raw):
            return raw
        runs = []
        for r in raw:
            if type(r) is not tuple:
                runs.append(r)
                continue
            b, outcome, seconds, error, injected = r
            if type(b) is tuple:  # hooks timed together (dispatch/untimed.py): an even share
                ms = seconds * 1000 / len(b)
                runs += [HookRun(x.hook.name, x.label, x.priority, outcome, ms) for x in b]
            else:
                ms = seconds * 1000
                runs.append(HookRun(b.hook.name, b.label, b.priority, outcome, ms, error, injected))
        raw[:] = runs
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
        """Deny this call after all (PreToolUse, PreSkillShellCommand, PermissionRequest):
        its session was halted (``why``) by an event the ledger recorded first (a sibling
        call in another process). What its hooks added for the model is dropped; their runs
        stay recorded (docs/design.md §5)."""
        self.decision, self.explicit, self.halted = "deny", True, True
        self.reason = f"the agent was halted: {why}"
        self.cut_context(0, quiet=True)
        note = f"denied: the agent was halted before this call was recorded ({why})"
        if note not in self.notes:  # settled again (a batch that fell back to one by one)
            self.notes.append(note)

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
        """The Claude hook output JSON for this decision (SDK callback, command stdout, http
        body): each field only on the events where Claude reads it (docs/concepts.md)."""
        name = self.event_name
        wire = getattr(self.event, "hook_event_name", name) or name
        out: dict[str, Any] = {}
        spec: dict[str, Any] = {}
        if name in PERMISSION_EVENTS:
            if name == "PermissionRequest":
                answer = self._permission_request()
                if answer is not None:
                    spec["decision"] = answer
            elif self.explicit or self.denied:
                spec["permissionDecision"] = "defer" if self.deferred else self.decision
                if self.reason:
                    spec["permissionDecisionReason"] = self.reason
            if name == "PreToolUse" and self.updated_input is not None and not self.denied:
                spec["updatedInput"] = self.updated_input
        elif self.blocked:
            out["decision"] = "block"
            out["reason"] = self.reason or "blocked by hook"
            if name in _ELICITATIONS:
                spec["action"] = "decline"
        if name == "PostToolUse" and self.updated_output is not UNSET:
            spec["updatedToolOutput"] = self.updated_output
            if str(getattr(self.event, "tool_name", "")).startswith("mcp__"):
                spec["updatedMCPToolOutput"] = self.updated_output  # older CLIs read this
        ctx = self.additional_context
        if ctx and name in CONTEXT_EVENTS:
            spec["additionalContext"] = ctx
        if self.claude:
            for key, value in self.claude.items():
                if key in TOP_LEVEL_OUTPUT:
                    out[key] = value
                elif key not in spec and key not in _IN_DECISION:
                    spec[key] = value
        if spec:
            out["hookSpecificOutput"] = {"hookEventName": wire, **spec}
        if self.halted:
            out["continue"] = False
            out["stopReason"] = self.reason or "halted by hook"
        messages = self.system_messages
        if ctx and name in INSTRUCTION_EVENTS and not (self.blocked or self.halted):
            # PreCompact: an SDK callback's systemMessage is what Claude adds to the
            # compaction's instructions (a command hook prints the text instead)
            messages = [*messages, ctx]
        if messages:
            out["systemMessage"] = "\n".join(messages)
        return out

    def _permission_request(self) -> dict[str, Any] | None:
        """PermissionRequest's ``decision``; ``None`` (no opinion, or ask): Claude asks."""
        if self.halted:
            return {"behavior": "deny", "message": self.reason or "halted", "interrupt": True}
        if self.denied:
            return {"behavior": "deny", "message": self.reason or "denied by hook"}
        if not self.explicit or self.decision != "allow":
            return None
        answer: dict[str, Any] = {"behavior": "allow"}
        if self.updated_input is not None:
            answer["updatedInput"] = self.updated_input
        if self.claude and "updatedPermissions" in self.claude:
            answer["updatedPermissions"] = self.claude["updatedPermissions"]
        return answer


def allowed(event: Any, raw: list[Any]) -> Decision:
    """``Decision(event, _raw=raw)`` field by field, about half the cost of the keyword
    call: the allow of a chain whose hooks all said nothing (dispatch's quiet path), and
    a Merge's start. Every field is set: reading a slot is cheaper than a class default,
    and hosts read the decision (``to_claude``)."""
    d = _new(Decision)
    d.event = event
    d.decision = "allow"
    d.reason = None
    d.explicit = False
    d.updated_input = None
    d.updated_output = UNSET
    d.injections = []
    d.system_messages = []
    d.blocked = False
    d.halted = False
    d.notes = []
    d.annotations = None
    d.deferred = False
    d.claude = None
    d._raw = raw
    return d


_new = object.__new__

_ELICITATIONS: Final = frozenset({"Elicitation", "ElicitationResult"})
