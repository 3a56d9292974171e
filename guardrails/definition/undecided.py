"""An event that cannot be decided, from the definition: how long it may take
(:func:`deadline`, Claude's handler ``timeout``) and whether it then refuses
(:func:`fails_closed`). The policy every Claude host shares, apart from the hosts
(``claude_code.failure_policy``) and from the install planner, so that a hook process and
``protect_guard_settings`` ask it without loading either.
"""

from __future__ import annotations

from .._event_table import ON_FAILURE_EVENTS, REFUSALS

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Iterable

    from .model import AgentDefinition

__all__ = [
    "DEADLINE_GRACE",
    "SETTINGS_GRACE",
    "canonical",
    "deadline",
    "fails_closed",
    "fails_closed_with",
    "on_failure_counts",
    "settings_timeout",
]

#: seconds beyond the Guard's own worst case (hooks start within ``event_budget``, the
#: last one may run its whole timeout) for the ledger write and scheduling
DEADLINE_GRACE = 1.0
#: seconds Claude waits beyond the longest deadline: a hook process starts and loads the
#: definition before its watchdog runs (a cold cache imports pydantic and the hooks)
SETTINGS_GRACE = 5.0


def deadline(definition: AgentDefinition, event_name: str) -> float:
    """Seconds deciding ``event_name`` may take before it is answered as undecided.

    The Guard starts hooks within ``event_budget``; the last one may then run its
    whole timeout (its own, else its matcher's, else ``DEFAULT_TIMEOUT``). So: the
    budget, plus the longest such timeout among the event's hooks, plus
    :data:`DEADLINE_GRACE`. A late answer therefore only ever replaces a hook
    that overran its own timeout. (An approver's time is the host's to add.)
    """
    from ..events import known_event_name
    from .model import DEFAULT_TIMEOUT

    name = known_event_name(event_name) or event_name
    longest = 0.0
    for m in definition.hooks.get(name) or ():
        for hook in m.resolved:
            longest = max(longest, float(hook.timeout or m.timeout or DEFAULT_TIMEOUT))
    return float(definition.event_budget) + longest + DEADLINE_GRACE


def settings_timeout(definition: AgentDefinition) -> int:
    """The ``timeout`` (whole seconds) for Claude's handlers: longer than every event's
    :func:`deadline` by :data:`SETTINGS_GRACE`, so our own watchdog always answers first."""
    import math

    from ..events import EVENT_NAMES

    longest = max(deadline(definition, name) for name in EVENT_NAMES)
    return math.ceil(longest + SETTINGS_GRACE)


def canonical(name: str | None) -> str | None:
    """The event's canonical name (``Stop`` is ``AgentStop``), ``None`` when unknown."""
    from ..events import known_event_name  # lazy: a hook process may not need events yet

    return known_event_name(name)


def fails_closed(
    definition: AgentDefinition | None, event_name: str | None, *, unknown: bool = False
) -> bool:
    """Whether ``event_name`` refuses (deny, block) when it cannot be decided.

    PreToolUse: always. Another event: when any matcher bound to it has the
    effective ``on_failure: block`` (its own, else the event's default); an
    event the definition does not bind (or no definition, when it did not load)
    follows the default (``DEFAULT_ON_FAILURE``). ``unknown`` answers for an
    event that is not one of hookrails' or is not known at all (``None``: the
    input could not be read, so it may be a PreToolUse).
    """
    name = canonical(event_name)
    if name is None:
        return unknown
    matchers = definition.hooks.get(name) if definition is not None else None
    return fails_closed_with(name, [m.on_failure for m in matchers or ()])


def fails_closed_with(event_name: str, on_failures: Iterable[str | None]) -> bool:
    """:func:`fails_closed` from the matchers' declared ``on_failure`` values (``None``:
    unset), for a caller that read them without loading the definition."""
    from .model import DEFAULT_ON_FAILURE

    name = canonical(event_name) or event_name
    if name == "PreToolUse":
        return True
    if name not in REFUSALS:
        return False
    default = DEFAULT_ON_FAILURE.get(name, "continue")
    values = list(on_failures)
    if not values:
        return default == "block"
    return any((v or default) == "block" for v in values)


def on_failure_counts(event_name: str | None) -> bool:
    """Whether Claude honours a handler's ``onFailure: block`` on ``event_name`` (a hook
    that could not run counts as a refusal there); elsewhere Claude ignores it."""
    return canonical(event_name) in ON_FAILURE_EVENTS
