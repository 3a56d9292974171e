"""What a session remembers across processes: its turn, its halt, its injection budget.

A Claude Code command hook is a new process per event, so what a :class:`Session`
keeps in memory between events (``halted``, ``turn_chars``) would be forgotten
between them. With a ledger, a store keeps it per (session, agent) and changes it
in the transaction that records the event (docs/design.md §7):

* the dispatcher describes what an event does to it (:class:`StateChange`: a new
  turn, a halt, characters of context to inject, a PreToolUse that would run, the
  event's prompt id);
* the store reads the session's :class:`SessionState` inside its write transaction,
  applies :func:`settle` (the same rules for every store), writes the result and
  returns the :class:`Settled` outcome before the transaction ends. Holding the
  write lock (SQLite: ``BEGIN IMMEDIATE``; a server store: the row locked with
  ``SELECT ... FOR UPDATE``) from the read to the write makes the claim atomic:
  two processes injecting at once never both take the last of the budget, and a
  PreToolUse recorded after a halt is denied.

**Turns.** A turn starts with a prompt (``UserPromptSubmit``, ``SessionStart``). Claude
Code also names the prompt on every event (``prompt_id``), and ``hookrails claude
install`` binds only the events a definition has hooks for, so a command hook may never
see the prompt itself: an event whose prompt id the session has not met starts its
turn too. One met before (an event of an earlier turn, arriving late) is judged by the
current turn and starts nothing, and neither does a prompt event for the current
prompt (sent again).

Plain values only, and no ``dataclasses``: the hook process imports this module.
"""

from __future__ import annotations

from .._dataclass_free import record

__all__ = [
    "EARLIER_PROMPTS",
    "JOURNALED",
    "SessionState",
    "Settled",
    "StateChange",
    "current",
    "settle",
]

#: prompt ids of earlier turns a session remembers (to know a late event for what it is)
EARLIER_PROMPTS = 16


@record(slots=True)
class SessionState:
    """A session's state as a store holds it (for one agent definition)."""

    __slots__ = ("turn", "halted", "injected", "prompt", "earlier")  # noqa: RUF023  # field order

    #: turns started so far (a prompt or a session start begins one)
    turn: int
    #: why a hook halted the agent in this turn (``None``: it was not halted)
    halted: str | None
    #: characters of context injected for the model in this turn
    injected: int
    #: the prompt id of this turn (``None``: the host named none)
    prompt: str | None
    #: the prompt ids of earlier turns, newest first (at most :data:`EARLIER_PROMPTS`)
    earlier: tuple[str, ...]

    def __init__(
        self,
        turn: int = 0,
        halted: str | None = None,
        injected: int = 0,
        prompt: str | None = None,
        earlier: tuple[str, ...] = (),
    ) -> None:
        self.turn = turn
        self.halted = halted
        self.injected = injected
        self.prompt = prompt
        self.earlier = earlier

    def next_turn(self, prompt: str | None) -> SessionState:
        """The state at the start of the next turn (``prompt``: its prompt id)."""
        earlier = self.earlier
        if self.prompt is not None and self.prompt != prompt:
            earlier = (self.prompt, *(p for p in earlier if p != prompt))[:EARLIER_PROMPTS]
        return SessionState(self.turn + 1, None, 0, prompt, earlier)


@record(slots=True, kw_only=True)
class StateChange:
    """What one event does to its session's state (built by the dispatcher)."""

    __slots__ = ("new_turn", "prompt_id", "gate", "halt", "inject", "budget", "end_turn")  # noqa: RUF023

    #: the event starts a turn (UserPromptSubmit, SessionStart): a fresh budget, no halt
    new_turn: bool
    #: the prompt the event belongs to, as the host names it (``None``: unnamed)
    prompt_id: str | None
    #: a PreToolUse that would run (allow or ask): denied when the session is halted
    gate: bool
    #: a hook halted the agent on this event: why
    halt: str | None
    #: characters of context the event's hooks would inject
    inject: int
    #: the turn's injection budget (the definition's ``injection_budget``)
    budget: int
    #: the turn's budget starts over after the event (an AgentStop let through)
    end_turn: bool

    def __init__(
        self,
        *,
        new_turn: bool = False,
        prompt_id: str | None = None,
        gate: bool = False,
        halt: str | None = None,
        inject: int = 0,
        budget: int = 0,
        end_turn: bool = False,
    ) -> None:
        self.new_turn = new_turn
        self.prompt_id = prompt_id
        self.gate = gate
        self.halt = halt
        self.inject = inject
        self.budget = budget
        self.end_turn = end_turn

    @property
    def active(self) -> bool:
        """Whether the store has anything to read or write for this event (its prompt id
        alone is not: the next event that is applies it)."""
        return (
            self.new_turn
            or self.gate
            or self.inject > 0
            or self.end_turn
            or (self.halt is not None)
        )


@record(slots=True)
class Settled:
    """What :func:`settle` decided for one event."""

    __slots__ = ("state", "changed", "refused", "granted")  # noqa: RUF023  # field order

    #: the session's state after the event (what the store keeps)
    state: SessionState
    #: ``state`` differs from what the store held: it must be written
    changed: bool
    #: the PreToolUse is denied after all: the session was halted (this is why)
    refused: str | None
    #: characters of the event's context that fit the turn's budget (``<= inject``)
    granted: int

    def __init__(
        self, state: SessionState, changed: bool, refused: str | None, granted: int
    ) -> None:
        self.state = state
        self.changed = changed
        self.refused = refused
        self.granted = granted


_NONE = SessionState()
#: what a store returns for an event it journaled (write-behind, a hook process): recorded,
#: nothing settled; journaled events change no session state, so a process's view stays
JOURNALED = Settled(_NONE, False, None, 0)


def current(
    state: SessionState | None, prompt_id: str | None, new_turn: bool = False
) -> SessionState:
    """The state an event of ``prompt_id`` is judged by: ``state`` (``None``: none yet),
    or a fresh turn when the event starts one (``new_turn``: a prompt event, unless it is
    the current prompt's; else a prompt id the session has not met)."""
    s = _NONE if state is None else state
    if prompt_id is not None and prompt_id == s.prompt:
        return s
    if new_turn or (prompt_id is not None and prompt_id not in s.earlier):
        return s.next_turn(prompt_id)
    return s


def settle(state: SessionState | None, change: StateChange) -> Settled:
    """Apply ``change`` to ``state`` (``None``: the session has no state yet), in the
    order the in-memory Session does: a new turn first (fresh budget, the halt is
    over), then the gate (a halted session's PreToolUse is refused, and injects
    nothing), the injection (cut to what is left of the budget), the halt, and an
    AgentStop's fresh budget last."""
    old = _NONE if state is None else state
    s = current(old, change.prompt_id, change.new_turn)
    halted, injected = s.halted, s.injected
    refused = halted if change.gate else None
    granted = 0
    if refused is None and change.inject > 0:
        granted = max(0, min(change.inject, change.budget - injected))
        injected += granted
    if change.halt is not None and refused is None:
        halted = change.halt
    if change.end_turn:
        injected = 0
    if s is old and halted == old.halted and injected == old.injected:
        return Settled(old, False, refused, granted)  # the usual case: a gate that passes
    return Settled(
        SessionState(s.turn, halted, injected, s.prompt, s.earlier), True, refused, granted
    )
