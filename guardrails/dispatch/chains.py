"""Bindings, the per-(event, subject) chain cache, and the merge of hook results.

Everything about ordering is settled when the Guard is built: bindings are
sorted by (priority, declaration order) once, and the bindings for an
(event, subject, agent, tenant) are computed once and cached, so dispatch is a
dict lookup and one small loop (pluggy's shape).
"""

from __future__ import annotations

from ..definition.hook_refs import Hook
from ..definition.matchers import ArgPredicate
from ..definition.model import DEFAULT_ON_FAILURE, DEFAULT_TIMEOUT, AgentDefinition, HookMatcher
from ..events import TOOL_EVENTS, Event
from ..results import UNSET, Decision, HookResult, HookRun, Injection

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, Final

    from .guard import Session

__all__ = ["INJECTION_CAP", "STOP_BLOCK_CAP", "Binding", "ChainIndex", "Merge"]

INJECTION_CAP: Final = 10_000
STOP_BLOCK_CAP: Final = 8
_STOP_EVENTS: Final = frozenset({"AgentStop", "SubagentStop"})
_FAILURE_KINDS: Final = frozenset({"error", "timeout", "invalid", "refused"})
#: events where a block (or a deny) ends the chain: later hooks cannot undo it
_BLOCK_ENDS_CHAIN: Final = frozenset({"UserPromptSubmit", "AgentStop", "SubagentStop"})


class Binding:
    """One hook of one matcher, with its effective priority, timeout and failure policy."""

    __slots__ = (
        "fn",
        "hook",
        "index",
        "is_async",
        "label",
        "matcher",
        "on_failure",
        "order",
        "priority",
        "timeout",
    )

    def __init__(
        self, event: str, matcher: HookMatcher, hook: Hook, order: tuple[int, int], index: int
    ) -> None:
        self.matcher = matcher
        self.hook = hook
        self.fn = hook.fn
        self.is_async = hook.is_async
        self.priority = matcher.priority
        self.order = order
        self.index = index
        self.timeout = float(hook.timeout or matcher.timeout or DEFAULT_TIMEOUT)
        self.on_failure = matcher.on_failure or DEFAULT_ON_FAILURE.get(event, "continue")
        self.label = matcher.label

    def __repr__(self) -> str:
        return f"Binding({self.hook.name!r}, matcher={self.label!r}, priority={self.priority})"


Chain = tuple[tuple[Binding, ArgPredicate | None], ...]


class ChainIndex:
    """Sorted bindings per event, and the cache of chains per subject."""

    _MAX_CACHE: Final = 4096

    def __init__(self, definition: AgentDefinition) -> None:
        self.definition = definition
        self.bindings: dict[str, list[Binding]] = {}
        self.all: list[Binding] = []
        for event, matchers in definition.hooks.items():
            entries: list[Binding] = []
            for mi, matcher in enumerate(matchers):
                for hi, hook in enumerate(matcher.resolved):
                    entries.append(Binding(event, matcher, hook, (mi, hi), 0))
            entries.sort(key=lambda b: (b.priority, b.order))
            for b in entries:
                b.index = len(self.all)
                self.all.append(b)
            self.bindings[event] = entries
        self._cache: dict[tuple[str, str, str, str | None], tuple[Chain, bool]] = {}

    def lookup(
        self, event_name: str, subject: str, agent: str, tenant: str | None
    ) -> tuple[Chain, bool]:
        key = (event_name, subject, agent, tenant)
        hit = self._cache.get(key)
        if hit is None:
            hit = self._compute(event_name, subject, agent, tenant)
            if len(self._cache) >= self._MAX_CACHE:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def _compute(
        self, event_name: str, subject: str, agent: str, tenant: str | None
    ) -> tuple[Chain, bool]:
        arg_of = self.definition.arg_of if event_name in TOOL_EVENTS else _no_args
        chain: list[tuple[Binding, ArgPredicate | None]] = []
        for b in self.bindings.get(event_name, ()):
            m = b.matcher
            if m.agent_globs is not None and not any(g.fullmatch(agent) for g in m.agent_globs):
                continue
            if m.tenant_globs is not None and (
                tenant is None or not any(g.fullmatch(tenant) for g in m.tenant_globs)
            ):
                continue
            r = m.pattern.specialize(subject, arg_of)
            if r is False:
                continue
            chain.append((b, None if r is True else r))
        return tuple(chain), any(b.is_async for b, _ in chain)


def _no_args(tool: str) -> None:
    return None


class Merge:
    """Folds hook results into one Decision, in order, applying the DESIGN §3 rules."""

    __slots__ = ("budget", "d", "event", "name", "session", "stopped")

    def __init__(self, event: Event, session: Session, budget: int) -> None:
        self.event = event
        self.name = event.event_name
        self.session = session
        self.d = Decision(event)
        self.stopped = False
        self.budget = budget

    def skip(self, b: Binding) -> None:
        self.d._raw.append((b, "skipped", 0.0, None, 0))

    def fail(self, b: Binding, kind: str, message: str, seconds: float) -> None:
        d = self.d
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

    def apply(self, b: Binding, r: Any, seconds: float) -> None:
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
        if kind == "halt":
            d.halted, d.reason = True, r.message or "halted by hook"
            if self.name == "PreToolUse":
                d.decision, d.explicit = "deny", True
            self.stopped = True
        elif self.name == "PreToolUse":
            if kind in ("deny", "block"):
                d.decision, d.reason, d.explicit = "deny", r.message or "denied by hook", True
                outcome = "deny"
                self.stopped = True
            elif kind == "ask":
                d.decision, d.explicit = "ask", True
                d.reason = r.message or d.reason
            elif kind == "allow":
                d.explicit = True
                if d.decision == "allow" and r.reason:
                    d.reason = r.reason
            if r.updated_input is not None and not self.stopped:
                self.event = self.event.replace(tool_input=r.updated_input)
                d.updated_input = r.updated_input
                outcome = "modify" if outcome == "noop" else outcome
        else:
            if kind in ("deny", "block"):
                d.blocked, d.reason = True, r.message or "blocked by hook"
                outcome = "block"
                self.stopped = self.name in _BLOCK_ENDS_CHAIN
            elif kind == "ask":
                d.notes.append(f"{b.hook.name}: ask has no meaning on {self.name}; ignored")
            elif kind == "allow" and r.reason and not d.blocked:
                d.reason = r.reason  # e.g. "Report found: report.md" on a stop
            if r.updated_output is not UNSET:
                if self.name == "PostToolUse":
                    self.event = self.event.replace(tool_response=r.updated_output)
                    d.updated_output = r.updated_output
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
            d.system_messages.append(r.system_message)
        if r.annotations:
            if d.annotations is None:
                d.annotations = {}
            d.annotations.update(r.annotations)
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
        d.injections.append(Injection(b.hook.name, text, truncated))
        return len(text)

    def finish(self) -> Decision:
        d = self.d
        if self.name in _STOP_EVENTS:
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
