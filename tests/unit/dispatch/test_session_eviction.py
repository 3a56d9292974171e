"""A long-running Guard lets idle sessions go (a claude-agent-sdk host never sends
SessionEnd), and a session that comes back behaves as in a fresh process: with a ledger
its halt and stop-block count are read from there; without one they start over."""

from __future__ import annotations

import gc
import sqlite3
import weakref
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger, Session
from guardrails.events import AgentStop, PreToolUse


def _halt_on_halt(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command") == "halt":
        return HookResult.halt("stop now")
    return None


def _block_stop(event: Any, ctx: Any) -> HookResult:
    return HookResult.block("keep going")


def _guard(ledger: Any = False, **options: Any) -> Guard:
    hooks = {
        "PreToolUse": [HookMatcher(hooks=[_halt_on_halt])],
        "Stop": [HookMatcher(hooks=[_block_stop])],
    }
    return Guard(AgentDefinition(name="evict", hooks=hooks), ledger=ledger, **options)


def _pre(sid: str, command: str = "ls", call: str = "t") -> PreToolUse:
    return PreToolUse(
        session_id=sid, tool_name="Bash", tool_input={"command": command}, tool_use_id=call
    )


def _gone(guard: Guard, sid: str) -> None:
    """Let every idle session go and make sure ``sid``'s object is really gone."""
    ref = weakref.ref(guard._sessions[sid])
    # the first sweep starts a generation after its last use, the next finds it idle
    assert sid in guard.sweep_sessions() + guard.sweep_sessions()
    gc.collect()
    assert ref() is None and sid not in guard._sessions


def test_past_the_cap_the_least_recently_used_go_first() -> None:
    guard = _guard(max_sessions=10)
    guard.emit_sync(_pre("keep"))
    for i in range(30):
        guard.emit_sync(_pre(f"s{i}"))
        guard.emit_sync(_pre("keep"))  # used all along: never the least recently used
    assert len(guard._sessions) <= 11
    assert "keep" in guard._sessions and "s29" in guard._sessions
    assert "s0" not in guard._sessions
    assert guard._default in guard._sessions.values()


def test_idle_sessions_go_after_the_ttl() -> None:
    guard = _guard(session_ttl=60.0)
    guard.emit_sync(_pre("old"))
    sweeper = guard._sweeper
    t0 = sweeper.last
    assert sweeper.sweep(guard, t0 + 30) == []  # starts a generation: "old" used before it
    guard.emit_sync(_pre("young"))
    assert sweeper.sweep(guard, t0 + 61) == []  # "old" idle for 31 s at most
    assert sweeper.sweep(guard, t0 + 95) == ["old"]  # idle since t0 + 30 at the latest
    assert "young" in guard._sessions


def test_no_idle_limit_keeps_sessions_under_the_cap() -> None:
    guard = _guard(session_ttl=None)
    guard.emit_sync(_pre("a"))
    assert guard._sweeper.sweep(guard, guard._sweeper.last + 1e9) == []


def test_a_session_whose_turn_is_held_stays() -> None:
    guard = _guard(session_ttl=0.0)
    s = guard.session("busy")
    with s._lock:
        assert "busy" not in guard.sweep_sessions()
    assert "busy" in guard.sweep_sessions()


def test_a_session_still_held_comes_back_as_the_same_object() -> None:
    """No two Session objects for one id: a caller (or a running hook) holding one gets it
    back, with its state."""
    guard = _guard(session_ttl=0.0)
    s = guard.session("held")
    s.state["k"] = 1
    assert "held" in guard.sweep_sessions()
    assert guard.session("held") is s and s.state == {"k": 1}
    assert guard.emit_sync(_pre("held")).allowed


def test_evicted_then_continued_the_halt_holds_with_a_ledger(ledger_path: str) -> None:
    guard = _guard(ledger=ledger_path, session_ttl=0.0)
    try:
        assert guard.emit_sync(_pre("a", "halt", "t1")).halted
        _gone(guard, "a")
        again = guard.emit_sync(_pre("a", "ls", "t2"))
        assert again.denied and "halted" in (again.reason or "")
    finally:
        assert guard.ledger is not None
        guard.ledger.close()


@pytest.mark.parametrize("said", [True, False], ids=["host flag", "python default"])
def test_evicted_then_continued_the_stop_block_count_holds_with_a_ledger(
    ledger_path: str, said: bool
) -> None:
    """An AgentStop made in Python (its ``stop_hook_active`` left False, or an adapter's
    guess from the new Session) reads the count from the ledger: only Claude's own payload
    saying the last stop was not blocked starts it over."""
    guard = _guard(ledger=ledger_path, session_ttl=0.0)

    def stop(i: int) -> AgentStop:
        return AgentStop(session_id="a", stop_hook_active=said and i > 0)

    try:
        for i in range(8):
            assert guard.emit_sync(stop(i)).blocked
        _gone(guard, "a")
        ninth = guard.emit_sync(stop(8))
        assert not ninth.blocked  # the cap (8) counted across the eviction
    finally:
        assert guard.ledger is not None
        guard.ledger.close()


def test_without_a_ledger_an_evicted_session_starts_over() -> None:
    """What is lost (docs/hosts.md): the halt, the stop-block count, ``ctx.state``."""
    guard = _guard(session_ttl=0.0)
    assert guard.emit_sync(_pre("a", "halt")).halted
    assert guard.emit_sync(_pre("a")).denied
    _gone(guard, "a")
    assert guard.emit_sync(_pre("a")).allowed


def test_a_halt_the_ledger_could_not_take_keeps_its_session(ledger_path: str) -> None:
    """Only the Session holds a halt its ledger could not take (the file was locked): it is
    not let go until its next recorded event wrote the halt, after which the file holds it."""
    guard = _guard(ledger=Ledger(ledger_path, busy_timeout=0.2), session_ttl=0.0)
    try:
        assert guard.emit_sync(_pre("a", "ls", "t1")).allowed
        blocker = sqlite3.connect(ledger_path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            assert guard.emit_sync(_pre("a", "halt", "t2")).halted  # spooled
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert "a" not in guard.sweep_sessions() + guard.sweep_sessions()
        assert guard.emit_sync(_pre("a", "ls", "t3")).denied  # and the halt is written now
        _gone(guard, "a")
        assert guard.emit_sync(_pre("a", "ls", "t4")).denied
    finally:
        assert guard.ledger is not None
        guard.ledger.close()


class _Racer(Session):
    """A session whose generation, each time the sweep reads it, finds another session
    started meanwhile (as by another thread)."""

    @property  # type: ignore[override]
    def _gen(self) -> int:
        n = self.guard._sessions
        n[f"late{len(n)}"] = Session(self.guard, f"late{len(n)}")
        return int(self.__dict__.get("gen", 0))

    @_gen.setter
    def _gen(self, value: int) -> None:
        self.__dict__["gen"] = value


def test_a_sweep_survives_sessions_started_while_it_runs() -> None:
    guard = _guard(session_ttl=None)
    guard._sessions["racer"] = _Racer(guard, "racer")
    guard.sweep_sessions()  # raised "dictionary changed size during iteration"
    assert guard.emit_sync(_pre("racer")).allowed


def test_a_session_looked_up_while_it_is_let_go_stays_one_object() -> None:
    """Between leaving the table and being held as gone, a lookup from another thread found
    the id in neither and made a second Session (a halt on the first was then not seen)."""
    guard = _guard(session_ttl=0.0)
    s = guard.session("a")
    found: list[Session] = []
    s._forgotten = lambda: found.append(guard.session("a"))  # type: ignore[method-assign]
    guard.sweep_sessions()
    guard.sweep_sessions()
    assert found and all(f is s for f in found)


def test_the_sweep_forgets_old_generations_while_the_default_session_idles() -> None:
    """The default session is never let go: its generation (0 when a host always names its
    sessions) held every later one in the table, each sweep scanning them all."""
    guard = _guard(max_sessions=10)
    for i in range(500):
        guard.emit_sync(_pre(f"s{i}"))
    assert len(guard._sweeper.began) < 20


@pytest.mark.parametrize("cap", [0, -1])
def test_the_cap_must_hold_one_session(cap: int) -> None:
    with pytest.raises(ValueError, match="max_sessions"):
        _guard(max_sessions=cap)
