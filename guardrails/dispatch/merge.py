"""Folding hook outcomes, in order, into one Decision.

Both dispatch drivers (sync and async) report each hook to the same ``Merge``:
``spent`` when the event budget leaves it no start, else ``returned`` or
``raised``. So a late hook, a hook that raises and a spent event budget are
judged, worded and recorded the same way whichever path ran them;
docs/design.md §5 gives the rules.
"""

from __future__ import annotations

from .._frozen import freeze
from ..errors import HookFailure, describe
from ..events import STOP_EVENTS
from ..results import (
    INJECTION_CAP,
    MESSAGE_CAP,
    STOP_BLOCK_CAP,
    UNSET,
    Decision,
    HookResult,
    HookRun,
    ModelContext,
)

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, Final

    from ..definition.model import AgentDefinition
    from ..events import Event
    from .chains import Binding, Chain
    from .session import Session

__all__ = ["Merge"]

_FAILURE_KINDS: Final = frozenset({"error", "timeout", "invalid", "refused"})
#: events where a block (or a deny) ends the chain: later hooks cannot undo it
_BLOCK_ENDS_CHAIN: Final = frozenset({"UserPromptSubmit", "AgentStop", "SubagentStop"})


class Merge:
    """One event's decision in the making: each hook's outcome is folded in as it comes."""

    __slots__ = (
        "budget",
        "chain",
        "d",
        "event",
        "event_budget",
        "name",
        "needs_async",
        "session",
        "stopped",
    )

    def __init__(
        self,
        event: Event,
        session: Session,
        definition: AgentDefinition,
        chain: Chain,
        needs_async: bool,
    ) -> None:
        self.event = event
        self.name = event.event_name
        self.session = session
        #: the bindings to fold in, in order, and whether one of them is async
        self.chain = chain
        self.needs_async = needs_async
        self.d = Decision(event)
        self.stopped = False
        #: characters of context the turn may still take (the definition's injection budget)
        self.budget = definition.injection_budget
        #: seconds within which the event's hooks must start
        self.event_budget = definition.event_budget

    # --- the steps each driver reports ----------------------------------------------

    def spent(self, b: Binding) -> None:
        """``b`` does not start: the event budget is spent. The budget bounds when hooks
        start, each hook's timeout how long it runs, so an event's worst case is the budget
        plus one timeout (what the hosts' deadlines allow for)."""
        self.fail(b, "timeout", f"the event budget of {self.event_budget:g}s is spent", 0.0)

    def returned(self, b: Binding, r: Any, seconds: float, limit: float) -> None:
        """``b`` answered ``r``. An answer after its limit has timed out and follows
        ``on_failure``, whatever it said; a refusal to proceed in it still refuses (it could
        only be safer), but nothing else of it counts (no rewrite, no context)."""
        if seconds <= limit:
            if r is None:
                self.d._raw.append((b, "noop", seconds, None, 0))
            else:
                self.apply(b, r, seconds)
            return
        late = f"took {seconds:.3f}s, over its {limit:g}s timeout"
        refusal = _refusal(r)
        if refusal is None:
            self.fail(b, "timeout", late, seconds)
            return
        self.fail(b, "timeout", f"{late}; its {refusal.decision} stands", seconds)
        self.apply(b, refusal, seconds, record=False)

    def raised(self, b: Binding, exc: BaseException, seconds: float) -> None:
        """``b`` raised (a hook's ``exit()`` included: it must not end the host)."""
        if isinstance(exc, HookFailure):
            self.fail(b, exc.kind, str(exc), seconds)
        else:
            self.fail(b, "error", describe(exc), seconds)

    def interrupted(self, b: Binding, exc: BaseException, seconds: float) -> None:
        """``b`` was interrupted (Ctrl-C, a cancelled task): the event is refused and
        recorded so before the interruption goes on."""
        d = self.d
        reason = f"interrupted while hook {b.hook.name} ran ({describe(exc)})"
        d._raw.append((b, "error", seconds, reason, 0))
        if self.name == "PreToolUse":
            d.decision, d.reason, d.explicit = "deny", reason, True
        else:
            d.blocked, d.reason = True, reason
        self.stopped = True

    def skip(self, b: Binding) -> None:
        self.d._raw.append((b, "skipped", 0.0, None, 0))

    # --- folding -----------------------------------------------------------------------

    def fail(self, b: Binding, kind: str, message: str, seconds: float) -> None:
        d = self.d
        message = _capped(message)
        if kind not in _FAILURE_KINDS:  # a hook's own HookFailure kind: record it as an error
            message, kind = f"{kind}: {message}", "error"
        d._raw.append((b, kind, seconds, message, 0))
        if b.on_failure != "block":
            d.notes.append(f"{b.hook.name} failed ({kind}: {message}); continuing (on_failure)")
            return
        reason = f"hook {b.hook.name} failed ({kind}: {message}); blocking because on_failure=block"
        if self.name == "PreToolUse":
            d.decision, d.reason, d.explicit = "deny", reason, True
            self.stopped = True
        else:
            d.blocked, d.reason = True, reason
            self.stopped = self.name in _BLOCK_ENDS_CHAIN

    def apply(self, b: Binding, r: Any, seconds: float, *, record: bool = True) -> None:
        if r is None:
            self.d._raw.append((b, "noop", seconds, None, 0))
            return
        if not isinstance(r, HookResult):
            if isinstance(r, dict):
                try:
                    r = HookResult.from_claude(r)
                except ValueError as exc:
                    self.fail(b, "invalid", f"invalid Claude output: {exc}", seconds)
                    return
            else:
                self.fail(
                    b,
                    "invalid",
                    f"returned {type(r).__name__}; expected HookResult, a Claude dict or None",
                    seconds,
                )
                return
        if not b.hook.privileged and (
            r.updated_input is not None or r.updated_output is not UNSET or r.additional_context
        ):
            refusal = (
                f"unprivileged {b.hook.kind} hook tried to rewrite or inject "
                "(mark it privileged: true to allow)"
            )
            if r.decision not in ("deny", "block", "halt"):
                self.fail(b, "refused", refusal, seconds)
                return
            # the rewrite is refused, but a refusal to proceed is never lost
            r = HookResult(r.decision, r.reason, r.hint, system_message=r.system_message)
            self.d.notes.append(f"{b.hook.name}: {refusal}; its {r.decision} stands")
        d = self.d
        outcome = r.decision or "noop"
        kind = r.decision
        message = r.message
        if len(message) > MESSAGE_CAP:
            message = _capped(message)
            d.notes.append(f"{b.hook.name}: reason cut to {MESSAGE_CAP} characters")
        if kind == "halt":
            d.halted, d.reason = True, message or "halted by hook"
            if self.name == "PreToolUse":
                d.decision, d.explicit = "deny", True
            self.stopped = True
        elif self.name == "PreToolUse":
            if kind in ("deny", "block"):
                d.decision, d.reason, d.explicit = "deny", message or "denied by hook", True
                outcome = "deny"
                self.stopped = True
            elif kind == "ask":
                d.decision, d.explicit = "ask", True
                d.reason = message or d.reason
            elif kind == "allow":
                d.explicit = True
                if d.decision == "allow" and r.reason:
                    d.reason = _capped(r.reason)
            if r.updated_input is not None and not self.stopped:
                frozen = freeze(r.updated_input)  # the hook keeps no handle on what runs
                self.event = self.event.replace(tool_input=frozen)
                d.updated_input = frozen
                outcome = "modify" if outcome == "noop" else outcome
        else:
            if kind in ("deny", "block"):
                d.blocked, d.reason = True, message or "blocked by hook"
                outcome = "block"
                self.stopped = self.name in _BLOCK_ENDS_CHAIN
            elif kind == "ask":
                d.notes.append(f"{b.hook.name}: ask has no meaning on {self.name}; ignored")
            elif kind == "allow" and r.reason and not d.blocked:
                d.reason = _capped(r.reason)  # e.g. "Report found: REPORT.txt" on a stop
            if r.updated_output is not UNSET:
                if self.name == "PostToolUse":
                    frozen = freeze(r.updated_output)
                    self.event = self.event.replace(tool_response=frozen)
                    d.updated_output = frozen
                    outcome = "modify" if outcome == "noop" else outcome
                else:
                    d.notes.append(f"{b.hook.name}: updated_output ignored on {self.name}")
            if r.updated_input is not None:
                d.notes.append(f"{b.hook.name}: updated_input ignored on {self.name}")
        injected = 0
        if r.additional_context:
            injected = self._inject(b, r.additional_context)
            outcome = "inject" if outcome == "noop" else outcome
        if r.system_message:
            if len(r.system_message) > MESSAGE_CAP:
                d.notes.append(f"{b.hook.name}: system message cut to {MESSAGE_CAP} characters")
            d.system_messages.append(_capped(r.system_message))
        if r.annotations:
            if d.annotations is None:
                d.annotations = {}
            d.annotations.update(r.annotations)
        if record:
            d._raw.append((b, outcome, seconds, None, injected))

    def _inject(self, b: Binding, text: str) -> int:
        d = self.d
        truncated = False
        if len(text) > INJECTION_CAP:
            text, truncated = text[:INJECTION_CAP], True
            d.notes.append(f"{b.hook.name}: context cut to {INJECTION_CAP} characters")
        room = self.budget - self.session.turn_chars
        if room <= 0:
            d.notes.append(f"{b.hook.name}: context dropped, the turn's injection budget is spent")
            return 0
        if len(text) > room:
            text, truncated = text[:room], True
            d.notes.append(f"{b.hook.name}: context cut to the turn's remaining budget ({room})")
        self.session.turn_chars += len(text)
        d.injections.append(ModelContext(b.hook.name, text, truncated))
        return len(text)

    def finish(self) -> Decision:
        """The Decision, with the session's stop-block count and halt brought up to date."""
        d = self.d
        if self.name in STOP_EVENTS:
            key = getattr(self.event, "agent_id", None) or ""
            blocks = self.session.stop_blocks
            if d.blocked:
                n = blocks.get(key, 0) + 1
                if n > STOP_BLOCK_CAP:
                    d.blocked = False
                    d.notes.append(
                        f"stop let through after {STOP_BLOCK_CAP} consecutive blocks "
                        f"(last reason: {d.reason})"
                    )
                    d._raw.append(HookRun("stop-block-cap", "*", 0, "allow", 0.0))
                    blocks[key] = 0
                else:
                    blocks[key] = n
            else:
                blocks[key] = 0
            if self.name == "AgentStop" and not d.blocked:
                self.session.turn_chars = 0
        if d.halted:
            self.session.halted = d.reason or "halted"
        return d


def _refusal(r: Any) -> HookResult | None:
    """The refusal to proceed in a late answer (deny, block, halt; a Claude-shaped one
    too), stripped of everything else; ``None`` when it does not refuse."""
    if isinstance(r, dict):
        try:
            r = HookResult.from_claude(r)
        except ValueError:
            return None
    if isinstance(r, HookResult) and r.decision in ("deny", "block", "halt"):
        return HookResult(r.decision, r.reason, r.hint)
    return None


def _capped(text: str) -> str:
    """``text`` within ``MESSAGE_CAP`` characters, saying how much was cut."""
    if len(text) <= MESSAGE_CAP:
        return text
    return f"{text[:MESSAGE_CAP]} [... {len(text) - MESSAGE_CAP} more characters cut]"
