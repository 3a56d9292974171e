"""Bindings and the per-(event, subject) chain cache.

Everything about ordering is settled when the Guard is built: bindings are
sorted by (priority, declaration order) once, and the bindings for an
(event, subject, agent, tenant) are computed once and cached, so dispatch is a
dict lookup and one small loop (pluggy's shape).
"""

from __future__ import annotations

from ..definition.hook_refs import Hook
from ..definition.matchers import ArgPredicate
from ..definition.model import DEFAULT_ON_FAILURE, DEFAULT_TIMEOUT, AgentDefinition, HookMatcher
from ..events import TOOL_EVENTS

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Final

    from ..events import Event

__all__ = ["Binding", "Chain", "ChainIndex"]


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

    def for_event(self, event: Event, tenant: str | None) -> tuple[Chain, bool]:
        """The chain for ``event`` and whether it holds an async hook: a dict lookup once the
        (event, subject, agent, tenant) was seen (the hot path)."""
        agent = self.definition.name
        field_ = event.subject_field
        subject = agent if field_ is None else getattr(event, field_)
        if type(subject) is not str:
            subject = ""
        key = (event.event_name, subject, event.agent_type or agent, tenant)
        hit = self._cache.get(key)
        return self.lookup(*key) if hit is None else hit

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
