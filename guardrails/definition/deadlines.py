"""How long Claude Code and hookrails wait for an event's answer, from the definition.

Apart from the failure policy (``claude_code.failure_policy``) so that what reads a
definition without being a Claude host (``protect_guard_settings``) can ask too.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from .model import AgentDefinition

__all__ = ["DEADLINE_GRACE", "SETTINGS_GRACE", "deadline", "settings_timeout"]

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
