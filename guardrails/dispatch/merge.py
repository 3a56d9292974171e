"""Folding hook outcomes, in order, into one Decision.

Both dispatch drivers (sync and async) report each hook to the same ``Merge``:
``spent`` when the event budget leaves it no start, else ``returned`` or
``raised``. So a late hook, a hook that raises and a spent event budget are
judged, worded and recorded the same way whichever path ran them;
docs/design.md §5 gives the rules.
"""

from __future__ import annotations

from .._event_table import (
    BLOCK_ENDS_CHAIN,
    CONTEXT_EVENTS,
    DEFER_EVENTS,
    INSTRUCTION_EVENTS,
    OUTPUT_FIELDS,
    OUTPUT_KEYS,
    PERMISSION_EVENTS,
    REFUSALS,
    TOP_LEVEL_OUTPUT,
    UNPRIVILEGED_OUTPUT,
)
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
    allowed,
)

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, Final

    from ..definition.model import AgentDefinition
    from ..events import Event
    from .chains import Binding, Plan
    from .session import Session

__all__ = ["Merge"]

_FAILURE_KINDS: Final = frozenset({"error", "timeout", "invalid", "refused"})
#: events whose input a hook may rewrite (the whole ``tool_input``, then judged by the rest)
_REWRITABLE: Final = frozenset({"PreToolUse", "PermissionRequest"})


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
        "permission",
        "plan",
        "session",
        "stopped",
    )

    def __init__(
        self,
        event: Event,
        session: Session,
        definition: AgentDefinition,
        plan: Plan,
    ) -> None:
        self.event = event
        self.name = event.event_name
        #: decided by allow / deny / ask (PreToolUse's branch), or else by blocks
        self.permission = self.name in PERMISSION_EVENTS
        self.session = session
        #: the bindings to fold in, in order, and whether one of them is async
        self.plan = plan
        self.chain = plan.chain
        self.needs_async = plan.needs_async
        self.d = allowed(event, [])  # Decision(event), field by field (cheaper)
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
        self._refuse(reason, "the interruption")
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
        if self._refuse(reason, "on_failure=block"):
            self.stopped = self.permission or self.name in BLOCK_ENDS_CHAIN

    def _refuse(self, reason: str, what: str) -> bool:
        """Deny (a permission event) or block (an event Claude lets a hook refuse); on any
        other event Claude ignores a block, so it is a note. Whether it refused."""
        d = self.d
        if self.permission:
            d.decision, d.reason, d.explicit = "deny", reason, True
        elif self.name in REFUSALS:
            d.blocked, d.reason = True, reason
        else:
            d.notes.append(f"{what} has no effect on {self.name}, which Claude cannot block")
            return False
        return True

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
        if b.follower:  # a PreToolUse judge on another event's call: its refusal or ask
            r = self._judgement(b, r)
            if r is None:
                if record:
                    self.d._raw.append((b, "noop", seconds, None, 0))
                return
        if not b.hook.privileged and (
            r.updated_input is not None
            or r.updated_output is not UNSET
            or r.additional_context
            or (r.claude and not UNPRIVILEGED_OUTPUT.issuperset(r.claude))
        ):
            refusal = (
                f"unprivileged {b.hook.kind} hook tried to rewrite or inject "
                "(mark it privileged: true to allow)"
            )
            if r.decision not in ("deny", "block", "halt"):
                self.fail(b, "refused", refusal, seconds)
                return
            # the rewrite is refused, but a refusal to proceed is never lost
            safe = {k: v for k, v in (r.claude or {}).items() if k in UNPRIVILEGED_OUTPUT}
            r = HookResult(
                r.decision, r.reason, r.hint, system_message=r.system_message, claude=safe or None
            )
            self.d.notes.append(f"{b.hook.name}: {refusal}; its {r.decision} stands")
        d = self.d
        outcome = r.decision or "noop"
        if outcome == "defer":
            outcome = "ask"  # the ledger's outcomes: a defer is the host's ask, for later
        kind = r.decision
        message = r.message
        if len(message) > MESSAGE_CAP:
            message = _capped(message)
            d.notes.append(f"{b.hook.name}: reason cut to {MESSAGE_CAP} characters")
        if kind == "halt":
            d.halted, d.reason = True, message or "halted by hook"
            if self.permission:
                d.decision, d.explicit = "deny", True
            self.stopped = True
        elif self.permission:
            outcome = self._permission(b, r, kind, message, outcome)
        else:
            if kind in ("deny", "block"):
                outcome = "block"
                if self._refuse(message or "blocked by hook", f"{b.hook.name}'s block"):
                    self.stopped = self.name in BLOCK_ENDS_CHAIN
            elif kind in ("ask", "defer"):
                d.notes.append(f"{b.hook.name}: {kind} has no meaning on {self.name}; ignored")
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
        if r.claude:
            self._take_claude(b, r.claude)
        injected = 0
        if (
            r.additional_context
            and self.name not in CONTEXT_EVENTS
            and self.name not in INSTRUCTION_EVENTS
        ):
            d.notes.append(f"{b.hook.name}: context ignored, Claude reads none on {self.name}")
        elif r.additional_context:
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

    def _judgement(self, b: Binding, r: HookResult) -> HookResult | None:
        """What of a PreToolUse hook's answer counts when it judges the same call on
        another event (``Binding.follower``): a deny, halt, ask or defer, and the facts it
        attaches. An allow does not (the call was asked about for a reason PreToolUse does
        not see: a permission rule, the user's settings), nor a rewrite: Claude applied
        PreToolUse's own already, and a skill's command is never rewritten."""
        if r.decision == "allow" or r.updated_input is not None or r.additional_context:
            self.d.notes.append(
                f"{b.hook.name} (PreToolUse) judged the call on {self.name}: only a refusal "
                "or an ask of it counts there"
            )
        if r.decision in (None, "allow") and not r.annotations:
            return None
        decision = None if r.decision == "allow" else r.decision
        return HookResult(decision, r.reason, r.hint, annotations=r.annotations)

    def _permission(
        self, b: Binding, r: HookResult, kind: str | None, message: str, outcome: str
    ) -> str:
        """One answer on a permission event: deny > defer > ask > allow (Claude's order);
        a rewrite chains (PreToolUse, PermissionRequest). Returns the hook's outcome."""
        d = self.d
        name = self.name
        if kind in ("deny", "block"):
            d.decision, d.reason, d.explicit = "deny", message or "denied by hook", True
            d.deferred = False
            outcome = "deny"
            self.stopped = True
        elif kind == "defer" and name not in DEFER_EVENTS:
            d.notes.append(f"{b.hook.name}: defer has no meaning on {name}; ignored")
        elif kind in ("ask", "defer"):
            if not d.deferred:  # a defer is not undone by a later ask
                d.decision, d.explicit = "ask", True
                d.deferred = kind == "defer"
                d.reason = message or d.reason
        elif kind == "allow":
            d.explicit = True
            if d.decision == "allow" and r.reason:
                d.reason = _capped(r.reason)
        if r.updated_input is not None and not self.stopped:
            if name in _REWRITABLE:
                frozen = freeze(r.updated_input)  # the hook keeps no handle on what runs
                self.event = self.event.replace(tool_input=frozen)
                d.updated_input = frozen
                outcome = "modify" if outcome == "noop" else outcome
            elif name == "PreSkillShellCommand":  # Claude never runs a rewritten one
                d.decision, d.explicit, outcome = "deny", True, "deny"
                d.reason = (
                    f"{b.hook.name} rewrote the skill's shell command, which Claude cannot "
                    "apply (it refuses the command instead)"
                )
                self.stopped = True
            else:
                d.notes.append(f"{b.hook.name}: updated_input ignored on {name}")
        if r.updated_output is not UNSET:
            d.notes.append(f"{b.hook.name}: updated_output ignored on {name}")
        return outcome

    def _take_claude(self, b: Binding, fields: dict[str, Any]) -> None:
        """Fold a hook's Claude output fields in: only those Claude reads on this event
        (the rest are noted), several hooks' values merged as ``OUTPUT_FIELDS`` says."""
        d = self.d
        reads = OUTPUT_KEYS.get(self.name, frozenset())
        for key, value in fields.items():
            if key not in TOP_LEVEL_OUTPUT and key not in reads:
                where = ", ".join(sorted(e for e, keys in OUTPUT_KEYS.items() if key in keys))
                d.notes.append(
                    f"{b.hook.name}: {key} ignored on {self.name} (Claude reads it on {where})"
                )
                continue
            if d.claude is None:
                d.claude = {}
            if key not in d.claude:
                d.claude[key] = freeze(value)
                continue
            have = d.claude[key]
            rule = OUTPUT_FIELDS[key][1]
            if rule == "any":
                d.claude[key] = have or value
            elif rule == "every":
                d.claude[key] = have and value
            elif rule == "all":
                d.claude[key] = freeze([*have, *(v for v in value if v not in have)])
            elif rule == "join":
                d.claude[key] = f"{have}\n\n{value}"
            elif value != have:
                d.notes.append(f"{b.hook.name}: {key} ignored, an earlier hook set it")

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
        if d.claude and "updatedPermissions" in d.claude and d.decision != "allow":
            del d.claude["updatedPermissions"]  # Claude reads them with an allow only
            d.notes.append("updatedPermissions dropped: the permission was not allowed")
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
