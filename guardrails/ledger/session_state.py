"""What a session remembers across processes: its turn, its halt, its injection budget.

A Claude Code command hook is a new process per event, so what a :class:`Session`
keeps in memory between events (``halted``, ``turn_chars``) would be forgotten
between them. With a ledger, a store keeps it per (session, agent) and changes it
in the transaction that records the event (docs/design.md §7):

* the dispatcher describes what an event does to it (:class:`StateChange`: a new
  turn, a halt, characters of context to inject, a PreToolUse that would run);
* the store reads the session's :class:`SessionState` inside its write transaction,
  applies :func:`settle` (the same rules for every store), writes the result and
  returns the :class:`Settled` outcome before the transaction ends. Holding the
  write lock (SQLite: ``BEGIN IMMEDIATE``; a server store: the row locked with
  ``SELECT ... FOR UPDATE``) from the read to the write makes the claim atomic:
  two processes injecting at once never both take the last of the budget, and a
  PreToolUse recorded after a halt is denied.

Plain values only, and no ``dataclasses``: the hook process imports this module.
"""

from __future__ import annotations

from .._dataclass_free import record

__all__ = ["SessionState", "Settled", "StateChange", "settle"]


@record(slots=True)
class SessionState:
    """A session's state as a store holds it (for one agent definition)."""

    __slots__ = ("turn", "halted", "injected")  # noqa: RUF023  # field order

    #: turns started so far (a prompt or a session start begins one)
    turn: int
    #: why a hook halted the agent in this turn (``None``: it was not halted)
    halted: str | None
    #: characters of context injected for the model in this turn
    injected: int

    def __init__(self, turn: int = 0, halted: str | None = None, injected: int = 0) -> None:
        self.turn = turn
        self.halted = halted
        self.injected = injected


@record(slots=True, kw_only=True)
class StateChange:
    """What one event does to its session's state (built by the dispatcher)."""

    __slots__ = ("new_turn", "gate", "halt", "inject", "budget", "end_turn")  # noqa: RUF023

    #: the event starts a turn (UserPromptSubmit, SessionStart): a fresh budget, no halt
    new_turn: bool
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
        gate: bool = False,
        halt: str | None = None,
        inject: int = 0,
        budget: int = 0,
        end_turn: bool = False,
    ) -> None:
        self.new_turn = new_turn
        self.gate = gate
        self.halt = halt
        self.inject = inject
        self.budget = budget
        self.end_turn = end_turn

    @property
    def active(self) -> bool:
        """Whether the store has anything to read or write for this event."""
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


def settle(state: SessionState | None, change: StateChange) -> Settled:
    """Apply ``change`` to ``state`` (``None``: the session has no state yet), in the
    order the in-memory Session does: a new turn first (fresh budget, the halt is
    over), then the gate (a halted session's PreToolUse is refused, and injects
    nothing), the injection (cut to what is left of the budget), the halt, and an
    AgentStop's fresh budget last."""
    before = (0, None, 0) if state is None else (state.turn, state.halted, state.injected)
    turn, halted, injected = before
    if change.new_turn:
        turn, halted, injected = turn + 1, None, 0
    refused = halted if change.gate else None
    granted = 0
    if refused is None and change.inject > 0:
        granted = max(0, min(change.inject, change.budget - injected))
        injected += granted
    if change.halt is not None and refused is None:
        halted = change.halt
    if change.end_turn:
        injected = 0
    changed = (turn, halted, injected) != before
    return Settled(SessionState(turn, halted, injected), changed, refused, granted)
