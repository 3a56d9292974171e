"""Bindings and the per-(event, subject) chain cache.

Everything about ordering is settled when the Guard is built: bindings are
sorted by (priority, declaration order) once, and the bindings for an
(event, subject, agent, tenant) are computed once and cached, so dispatch is a
dict lookup and one small loop (pluggy's shape).
"""

from __future__ import annotations

from .._event_table import LEGACY_AGENT_SUBJECT, SUBJECT_VALUES, SUBJECTS
from ..definition.hook_refs import JUDGED_AS_TOOL_CALLS, Hook, judged_events, judges_calls
from ..definition.matchers import ArgPredicate
from ..definition.model import DEFAULT_ON_FAILURE, DEFAULT_TIMEOUT, AgentDefinition, HookMatcher
from ..definition.rule_index import RuleIndex
from ..events import STOP_EVENTS, TOOL_NAME_EVENTS

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Final

    from ..events import Event

__all__ = [
    "JUDGED_AS_TOOL_CALLS",
    "QUIET_RUNS",
    "Binding",
    "Chain",
    "ChainIndex",
    "Plan",
    "judged_events",
]

#: a chain runs timed hook by hook until it answered this many times in a row within its
#: shortest limit; then it is timed once per event (docs/design.md §5, "timing")
QUIET_RUNS: Final = 8
#: events that start a turn: a fresh injection budget, and a halt is over
NEW_TURN: Final = frozenset({"UserPromptSubmit", "SessionStart"})
#: the event whose session is let go once it is decided
SESSION_END: Final = "SessionEnd"
#: the event whose undecided ask is Claude's own, for the Guard's approver
OWN_ASK: Final = "PermissionRequest"
#: events whose answer does more than its hooks say (dispatch's quiet path skips none of
#: them): a new turn, the session let go, Claude's own ask an approver may settle
_NOT_PLAIN: Final = NEW_TURN | {SESSION_END, OWN_ASK}


class Binding:
    """One hook of one matcher, with its effective priority, timeout and failure policy."""

    __slots__ = (
        "fn",
        "follower",
        "hook",
        "index",
        "is_async",
        "label",
        "legacy",
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
        #: a PreToolUse binding judging another event's tool call (``JUDGED_AS_TOOL_CALLS``):
        #: only its refusals and asks count there (``Merge.apply``)
        self.follower = False
        #: a SessionStart/SessionEnd matcher written for the agent's name: matches every event
        self.legacy = False

    def __repr__(self) -> str:
        return f"Binding({self.hook.name!r}, matcher={self.label!r}, priority={self.priority})"

    def following(self) -> Binding:
        """This PreToolUse binding as a judge of another event's tool call: the same hook,
        context and failure policy (PreToolUse's: closed), labelled where it comes from."""
        b = object.__new__(Binding)
        for name in Binding.__slots__:
            setattr(b, name, getattr(self, name))
        b.follower = True
        b.label = f"PreToolUse {self.label}"
        return b


Chain = tuple[tuple[Binding, ArgPredicate | None], ...]


class Plan:
    """A chain compiled for dispatch: its bindings in order, their argument rules tested
    together (``select``), and the shortest limit a hook of it has (its timeout, or the
    event budget): a chain that ran within it had no late hook and no hook start past the
    budget, so it needs no clock reading per hook."""

    __slots__ = (
        "bindings",
        "chain",
        "entry",
        "limit",
        "needs_async",
        "plain",
        "quiet",
        "select",
        "timed",
    )

    def __init__(self, chain: Chain, event_budget: float, event_name: str) -> None:
        self.chain = chain
        self.bindings = tuple(b for b, _ in chain)
        self.needs_async = any(b.is_async for b in self.bindings)
        #: what ``ChainIndex.lookup`` answers: the chain and whether it holds an async hook
        self.entry = (chain, self.needs_async)
        preds = [p for _, p in chain]
        self.select = None if all(p is None for p in preds) else RuleIndex(preds)
        self.limit = min([b.timeout for b in self.bindings] + [event_budget])
        #: in-time runs in a row (see ``QUIET_RUNS``); racy increments only delay the switch.
        #: A chain without hooks has nothing to time: quiet from the start
        self.quiet = 0 if self.bindings else QUIET_RUNS
        #: always timed per hook: async hooks, and stop events (their merge counts blocks)
        self.timed = self.needs_async or event_name in STOP_EVENTS
        #: an allow its hooks all said nothing to is the whole answer: no turn starts or
        #: ends with it and no approver hears it (``loop.emit_sync``'s quiet path)
        self.plain = not self.timed and event_name not in _NOT_PLAIN

    def positions(self, event: Event, start: int = 0) -> range | list[int]:
        """The chain positions ``event``'s input selects, from ``start``, in order."""
        if self.select is None:
            return range(start, len(self.bindings))
        return self.select.positions(event.tool_input, event.cwd, start)  # type: ignore[attr-defined]


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
            if event in LEGACY_AGENT_SUBJECT:
                _mark_legacy(event, entries, definition)
            entries.sort(key=lambda b: (b.priority, b.order))
            for b in entries:
                b.index = len(self.all)
                self.all.append(b)
            self.bindings[event] = entries
        judges = [b.following() for b in self.bindings.get("PreToolUse", ()) if judges_calls(b.fn)]
        #: event -> the PreToolUse bindings that judge its tool calls, after its own hooks
        self.followers: dict[str, list[Binding]] = (
            dict.fromkeys(JUDGED_AS_TOOL_CALLS, judges) if judges else {}
        )
        self._cache: dict[tuple[str, str, str, str | None], Plan] = {}

    def for_event(self, event: Event, tenant: str | None) -> tuple[Chain, bool]:
        """The chain for ``event`` and whether it holds an async hook."""
        return self.plan(*self.key(event), tenant).entry

    def key(self, event: Event) -> tuple[str, str, str]:
        """What picks ``event``'s chain besides the tenant: (event, subject, agent)."""
        agent = self.definition.name
        field_ = event.subject_field
        subject = agent if field_ is None else getattr(event, field_)
        if type(subject) is not str:
            subject = ""
        return event.event_name, subject, event.agent_type or agent

    def lookup(
        self, event_name: str, subject: str, agent: str, tenant: str | None
    ) -> tuple[Chain, bool]:
        return self.plan(event_name, subject, agent, tenant).entry

    def plan(self, event_name: str, subject: str, agent: str, tenant: str | None) -> Plan:
        """The compiled chain of (event, subject, agent, tenant), computed once."""
        key = (event_name, subject, agent, tenant)
        hit = self._cache.get(key)
        if hit is None:
            chain = self._compute(event_name, subject, agent, tenant)
            hit = Plan(chain, self.definition.event_budget, event_name)
            if len(self._cache) >= self._MAX_CACHE:
                self._cache.clear()
            self._cache[key] = hit
        return hit

    def _compute(self, event_name: str, subject: str, agent: str, tenant: str | None) -> Chain:
        arg_of = self.definition.arg_of if event_name in TOOL_NAME_EVENTS else _no_args
        chain: list[tuple[Binding, ArgPredicate | None]] = []
        for b in (*self.bindings.get(event_name, ()), *self.followers.get(event_name, ())):
            m = b.matcher
            if m.agent_globs is not None and not any(g.fullmatch(agent) for g in m.agent_globs):
                continue
            if m.tenant_globs is not None and (
                tenant is None or not any(g.fullmatch(tenant) for g in m.tenant_globs)
            ):
                continue
            r = True if b.legacy else m.pattern.specialize(subject, arg_of)
            if r is False:
                continue
            chain.append((b, None if r is True else r))
        return tuple(chain)


def _no_args(tool: str) -> None:
    return None


def legacy_matcher(event: str, matcher: HookMatcher, agent: str) -> bool:
    """Whether ``matcher`` on ``event`` (SessionStart, SessionEnd) was written for the
    subject those events had before hookrails matched them as Claude does: it matches the
    agent's name and none of the sources (reasons) Claude sends."""
    p = matcher.pattern
    if event not in LEGACY_AGENT_SUBJECT or p.match_all or p.negate:
        return False
    if p.specialize(agent, _no_args) is False:
        return False
    return all(p.specialize(v, _no_args) is False for v in SUBJECT_VALUES[event])


def _mark_legacy(event: str, entries: list[Binding], definition: AgentDefinition) -> None:
    """Keep a legacy matcher (:func:`legacy_matcher`) matching every event, and say so."""
    seen: set[int] = set()
    for b in entries:
        if not legacy_matcher(event, b.matcher, definition.name):
            continue
        b.legacy = True
        if id(b.matcher) in seen:
            continue
        seen.add(id(b.matcher))
        import warnings  # lazy: only a legacy definition pays for it

        warnings.warn(
            f"{event} matcher {b.matcher.label!r} names the agent {definition.name!r}: "
            f"{event} matchers match the {SUBJECTS[event]} Claude sends "
            f"({', '.join(SUBJECT_VALUES[event])}), so it is kept matching every {event}; "
            "scope it with agents: [...] instead",
            FutureWarning,
            stacklevel=4,
        )
