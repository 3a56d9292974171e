"""The store's session state (``guardrails/ledger/session_state.py``, ``sqlite_state.py``).

``settle`` is the rule every store applies; the SQLite store applies it inside the
transaction that records the event, so processes sharing a file settle one event at a
time: the turn's injection budget is claimed atomically, and a PreToolUse recorded after
a halt is denied. The state is never spooled.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from guardrails import Ledger, LedgerError
from guardrails.events import AgentStop, PostToolUse, PreToolUse, UserPromptSubmit
from guardrails.ledger.session_state import (
    EARLIER_PROMPTS,
    SessionState,
    Settled,
    StateChange,
    current,
    settle,
)
from guardrails.results import Decision, HookRun, ModelContext
from tests._db import rows, value

AGENT = "tester"
SID = "s1"

# --- settle: the rule ----------------------------------------------------------------------

S = SessionState
B = 30_000

#: (name, state held, change, (state after, changed, refused, granted))
SETTLE_CASES: list[tuple[str, SessionState | None, StateChange, tuple[Any, ...]]] = [
    ("nothing held, nothing done", None, StateChange(gate=True), (S(), False, None, 0)),
    ("a first injection", None, StateChange(inject=10_000, budget=B),
     (S(0, None, 10_000), True, None, 10_000)),
    ("cut to what is left", S(1, None, 25_000), StateChange(inject=10_000, budget=B),
     (S(1, None, B), True, None, 5_000)),
    ("nothing left", S(1, None, B), StateChange(inject=10, budget=B),
     (S(1, None, B), False, None, 0)),
    ("a budget lowered under what was used", S(1, None, 500), StateChange(inject=10, budget=100),
     (S(1, None, 500), False, None, 0)),
    ("a halt", S(1), StateChange(halt="stop"), (S(1, "stop"), True, None, 0)),
    ("a halted session's call is refused", S(1, "stop", 7), StateChange(gate=True),
     (S(1, "stop", 7), False, "stop", 0)),
    ("and injects nothing", S(1, "stop", 7), StateChange(gate=True, inject=5, budget=B),
     (S(1, "stop", 7), False, "stop", 0)),
    ("a call that would not run is not refused", S(1, "stop"), StateChange(inject=5, budget=B),
     (S(1, "stop", 5), True, None, 5)),
    ("a new turn: the halt is over, a fresh budget", S(3, "stop", B),
     StateChange(new_turn=True, gate=True, inject=4, budget=B), (S(4, None, 4), True, None, 4)),
    ("a new turn's own halt stands", S(3, "old", 9), StateChange(new_turn=True, halt="new"),
     (S(4, "new"), True, None, 0)),
    ("a first turn", None, StateChange(new_turn=True), (S(1), True, None, 0)),
    ("an AgentStop let through: the budget starts over", S(2, "stop", 900),
     StateChange(end_turn=True, inject=50, budget=B), (S(2, "stop", 0), True, None, 50)),
    # prompt ids: Claude Code names the prompt on every event
    ("an unseen prompt starts its turn", S(3, "stop", 900, "p1"),
     StateChange(prompt_id="p2", gate=True, inject=10, budget=B),
     (S(4, None, 10, "p2", ("p1",)), True, None, 10)),
    ("the current prompt's events: the same turn", S(3, "stop", 9, "p1"),
     StateChange(prompt_id="p1", gate=True), (S(3, "stop", 9, "p1"), False, "stop", 0)),
    ("a late event of an earlier turn starts nothing", S(4, "stop", 0, "p2", ("p1",)),
     StateChange(prompt_id="p1", gate=True), (S(4, "stop", 0, "p2", ("p1",)), False, "stop", 0)),
    ("the current prompt's prompt event again starts nothing", S(3, "stop", 9, "p1"),
     StateChange(new_turn=True, prompt_id="p1"), (S(3, "stop", 9, "p1"), False, None, 0)),
    ("a prompt event starts the turn of its prompt", S(3, "stop", 9, "p1"),
     StateChange(new_turn=True, prompt_id="p2"), (S(4, None, 0, "p2", ("p1",)), True, None, 0)),
    ("a prompt event the host names no prompt for", S(3, "stop", 9, "p1"),
     StateChange(new_turn=True), (S(4, None, 0, None, ("p1",)), True, None, 0)),
    ("an event naming no prompt: the current turn", S(3, "stop", 9, "p1"),
     StateChange(gate=True), (S(3, "stop", 9, "p1"), False, "stop", 0)),
    ("a first prompt", None, StateChange(prompt_id="p1", inject=1, budget=B),
     (S(1, None, 1, "p1"), True, None, 1)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("held", "change", "expected"),
    [c[1:] for c in SETTLE_CASES],
    ids=[c[0] for c in SETTLE_CASES],
)
def test_settle(held: SessionState | None, change: StateChange, expected: tuple[Any, ...]) -> None:
    assert settle(held, change) == Settled(*expected)


def test_a_session_remembers_a_bounded_number_of_earlier_prompts() -> None:
    state = S(20, None, 0, "p20", tuple(f"p{i}" for i in range(19, 19 - EARLIER_PROMPTS, -1)))
    after = settle(state, StateChange(prompt_id="p21", gate=True)).state
    assert after.prompt == "p21" and len(after.earlier) == EARLIER_PROMPTS
    assert after.earlier[:2] == ("p20", "p19") and "p4" not in after.earlier
    # an id met before is a late event: the turn stays
    assert current(after, "p19") is after
    assert current(after, "p3").turn == 22  # forgotten: taken for a new prompt


def test_current_is_the_state_an_event_is_judged_by() -> None:
    held = S(2, "stop", 500, "p1")
    assert current(held, "p1") is held
    assert current(held, None) is held
    assert current(held, "p2") == S(3, None, 0, "p2", ("p1",))
    assert current(None, "p1") == S(1, None, 0, "p1")
    assert current(None, None) == S()


def test_a_change_is_active_only_when_it_reads_or_writes() -> None:
    assert not StateChange(budget=B).active
    for kw in ({"new_turn": True}, {"gate": True}, {"halt": ""}, {"inject": 1}, {"end_turn": True}):
        assert StateChange(**kw).active, kw
    assert not StateChange(prompt_id="p1").active  # the next event that is applies it


# --- the SQLite store -------------------------------------------------------------------------


def _pre(call: str = "t1") -> Decision:
    event = PreToolUse(
        session_id=SID, cwd="/w", tool_name="Bash", tool_input={"command": "ls"}, tool_use_id=call
    )
    return Decision(event)


def _post(call: str, text: str = "", hook: str = "nudge") -> Decision:
    event = PostToolUse(
        session_id=SID, cwd="/w", tool_name="Bash", tool_input={"command": "ls"},
        tool_response="ok", tool_use_id=call,
    )  # fmt: skip
    d = Decision(event)
    if text:
        d.injections.append(ModelContext(hook, text))
        d._raw.append(HookRun(hook, "*", 100, "inject", 1.0, None, len(text)))
    return d


def _record(ledger: Ledger, d: Decision, change: StateChange | None) -> Settled | None:
    return ledger.record(d, 1_700_000_000.0, agent=AGENT, tenant=None, change=change)


def _inject(n: int) -> StateChange:
    return StateChange(inject=n, budget=B)


def test_state_is_kept_per_session_and_agent(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        assert ledger.session_state(SID, AGENT) is None
        prompt = Decision(UserPromptSubmit(session_id=SID, cwd="/w", prompt="go"))
        assert _record(ledger, prompt, StateChange(new_turn=True)) == Settled(S(1), True, None, 0)
        settled = _record(ledger, _post("t1", "x" * 100), _inject(100))
        assert settled is not None and settled.state == S(1, None, 100)
        assert ledger.session_state(SID, AGENT) == S(1, None, 100)
        assert ledger.session_state(SID, "another definition") is None
        assert ledger.session_state("s2", AGENT) is None
    [row] = rows(ledger_url, "SELECT * FROM session_state")
    assert (row["turn"], row["halted"], row["injected_chars"]) == (1, None, 100)
    assert row["turn_started_at"] == "2023-11-14T22:13:20.000Z" == row["updated_at"]


def test_prompt_ids_are_kept_with_the_state(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        for n, prompt in enumerate(("p1", "p2", "p3")):
            d = _post(f"t{n}", "x")
            d.event.prompt_id = prompt
            _record(ledger, d, StateChange(prompt_id=prompt, inject=1, budget=B))
        assert ledger.session_state(SID, AGENT) == S(3, None, 1, "p3", ("p2", "p1"))
    assert value(ledger_url, "SELECT earlier_prompts FROM session_state") == '["p2", "p1"]'


def test_no_change_reads_and_writes_nothing(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        assert _record(ledger, _post("t1"), None) is None
        assert _record(ledger, _post("t2"), StateChange(budget=B)) is None
    assert value(ledger_url, "SELECT count(*) FROM session_state") == 0
    assert value(ledger_url, "SELECT count(*) FROM tool_calls") == 2


def test_a_call_recorded_after_a_halt_is_denied_with_its_rows(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        _record(ledger, Decision(UserPromptSubmit(session_id=SID, prompt="go")),
                StateChange(new_turn=True))  # fmt: skip
        _record(ledger, _post("t0"), StateChange(halt="the budget is spent"))
        d = _pre("t1")
        d.injections.append(ModelContext("hint", "context"))
        d._raw.append(HookRun("hint", "*", 100, "inject", 1.0, None, 7))
        settled = _record(ledger, d, StateChange(gate=True, inject=7, budget=B))
    assert settled is not None and settled.refused == "the budget is spent"
    assert (d.decision, d.halted, d.injections) == ("deny", True, [])
    assert d.reason == "the agent was halted: the budget is spent"
    [call] = rows(ledger_url, "SELECT decision, status, reason FROM tool_calls WHERE "
                  "tool_call_id = 't1'")  # fmt: skip
    assert call == {"decision": "deny", "status": "denied", "reason": d.reason}
    assert value(ledger_url, "SELECT injected_chars FROM hook_runs WHERE hook = 'hint'") == 0


def test_context_over_the_budget_left_is_cut_in_the_rows_too(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        _record(ledger, _post("t1", "a" * 25_000, "first"), _inject(25_000))
        d = _post("t2", "b" * 10_000, "second")
        settled = _record(ledger, d, _inject(10_000))
    assert settled is not None and settled.granted == 5_000
    assert [(c.hook, len(c.text), c.truncated) for c in d.injections] == [("second", 5_000, True)]
    assert "second: context cut to the turn's remaining budget (5000)" in d.notes
    assert rows(ledger_url, "SELECT hook, injected_chars FROM hook_runs ORDER BY id") == [
        {"hook": "first", "injected_chars": 25_000},
        {"hook": "second", "injected_chars": 5_000},
    ]


def test_an_agent_stop_let_through_starts_the_budget_over(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        _record(ledger, _post("t1", "a" * 100), _inject(100))
        stop = Decision(AgentStop(session_id=SID, last_assistant_message="done"))
        settled = _record(ledger, stop, StateChange(end_turn=True, budget=B))
        assert settled is not None and ledger.session_state(SID, AGENT) == S(0, None, 0)


def test_a_halt_is_stored_redacted(ledger_url: str) -> None:
    secret = "sk-ant-" + "a1B2" * 10
    with Ledger(ledger_url) as ledger:
        settled = _record(ledger, _post("t1"), StateChange(halt=f"leaked {secret}"))
        held = ledger.session_state(SID, AGENT)
    assert settled is not None and held is not None and held == settled.state
    assert (
        held.halted is not None and secret not in held.halted and held.halted.startswith("leaked")
    )


def test_lone_surrogates_in_the_session_id_are_keyed_as_their_escapes(ledger_url: str) -> None:
    sid = "s-\ud800"
    event = UserPromptSubmit(session_id=sid, prompt="go")
    with Ledger(ledger_url) as ledger:
        settled = ledger.record(Decision(event), 1.0, agent=AGENT, tenant=None,
                                change=StateChange(new_turn=True, halt="x"))  # fmt: skip
        assert settled is not None and ledger.degraded is None
        assert ledger.session_state(sid, AGENT) == S(1, "x")
    assert value(ledger_url, "SELECT session_id FROM session_state") == "s-\\ud800"
    assert value(ledger_url, "SELECT session_id FROM events") == "s-\\ud800"


def test_concurrent_writers_never_grant_more_than_the_budget(ledger_url: str) -> None:
    """Four Ledgers (four connections, as four processes) claim 10,000 characters each,
    five times, at once, against a 30,000 budget: exactly 30,000 are granted (SQLite: the
    write lock; PostgreSQL: the session's row locked, FOR UPDATE)."""
    path = ledger_url
    Ledger(path).close()  # the schema, once
    granted: list[int] = []
    lock = threading.Lock()
    start = threading.Barrier(4)

    def writer(n: int) -> None:
        with Ledger(path) as ledger:
            start.wait()
            for i in range(5):
                settled = _record(ledger, _post(f"w{n}-{i}", "x" * 10_000), _inject(10_000))
                assert settled is not None
                with lock:
                    granted.append(settled.granted)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(granted) == B and len(granted) == 20
    assert value(path, "SELECT sum(injected_chars) FROM hook_runs") == B
    assert value(path, "SELECT injected_chars FROM session_state") == B


# --- when the file cannot be written: the state stays the process's ---------------------------


def test_a_degraded_ledger_settles_nothing_and_spools_the_rows(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-folder"
    folder.write_text("")  # a file where the folder should be: cannot be opened, as root too
    with Ledger(str(folder / "ledger.db")) as ledger:
        assert ledger.degraded is not None
        with pytest.raises(LedgerError, match="cannot be read"):
            ledger.session_state(SID, AGENT)
        d = _post("t1", "x" * 10)
        assert _record(ledger, d, _inject(10)) is None
        assert [c.text for c in d.injections] == ["x" * 10]  # the process's own cut stands


def _hinted_pre(call: str) -> Decision:
    d = _pre(call)
    d.injections.append(ModelContext("hint", "h" * 10_000))
    d._raw.append(HookRun("hint", "*", 100, "inject", 1.0, None, 10_000))
    return d


#: (name, the decision, its change, the state its first attempt reads, what the decision
#: and its rows say after that attempt: (decision, injected chars))
RETRIED: list[tuple[str, Any, StateChange, SessionState, tuple[str, int]]] = [
    ("context cut", lambda: _post("t1", "x" * 10_000), _inject(10_000), S(1, None, 25_000),
     ("allow", 5_000)),
    ("a halted session's call refused", lambda: _hinted_pre("t1"),
     StateChange(gate=True, inject=10_000, budget=B), S(1, "stop", 0), ("deny", 0)),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "change", "first_read", "after"), [c[1:] for c in RETRIED], ids=[c[0] for c in RETRIED]
)
def test_an_event_settled_again_after_a_rollback_writes_the_decision_as_answered(
    ledger_path: str,
    make: Any,
    change: StateChange,
    first_read: SessionState,
    after: tuple[str, int],
) -> None:
    """The first transaction changes the decision (cut, or refused) and rolls back; the
    next attempt reads another state (the budget an event of the same rolled-back batch
    had used is free again): the decision stays as answered, and so do its rows and the
    state written (a batch written again one by one)."""
    import sqlite3

    from guardrails.ledger.sqlite_state import Settle
    from guardrails.ledger.sqlite_write import transaction

    d = make()
    with Ledger(ledger_path) as ledger:
        rows_ = ledger._rows
    ops = rows_.ops(d, 1_700_000_000.0, agent=AGENT, tenant=None)

    reads = [first_read, None]

    class Reads(Settle):
        """Reads ``first_read``, then the file's nothing."""

        __slots__ = ()

        def read(self, conn: Any, session_id: str, agent: str) -> SessionState | None:
            return reads.pop(0)

    settle = Reads(rows_, d, change, 1_700_000_000.0, AGENT, None, None, ops)
    conn = sqlite3.connect(ledger_path, isolation_level=None)
    try:
        with pytest.raises(RuntimeError):
            transaction(conn, ops, _failing_after(settle), False)
        decided = (d.decision, sum(len(c.text) for c in d.injections))
        assert decided == after
        transaction(conn, ops, settle, False)  # the original rows, as a retry passes them
    finally:
        conn.close()
    assert (d.decision, sum(len(c.text) for c in d.injections)) == after
    [call] = rows(ledger_path, "SELECT decision FROM tool_calls")
    assert call["decision"] == after[0]
    injected = rows(ledger_path, "SELECT injected_chars AS n FROM hook_runs WHERE hook != ''")
    assert [r["n"] for r in injected] == [after[1]]
    state = rows(ledger_path, "SELECT injected_chars AS n FROM session_state")
    assert [r["n"] for r in state] == ([after[1]] if after[1] else [])


def _failing_after(settle: Any) -> Any:
    """``settle``, then a failure: its transaction rolls back."""

    def call(conn: Any, ops: Any) -> Any:
        settle(conn, ops)
        raise RuntimeError("the batch failed")

    return call


def test_a_failed_write_returns_none_and_spools_the_decision_as_answered(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that fails after the state refused the call: what is spooled is the denial
    the caller answers, and nothing is settled."""
    with Ledger(ledger_path) as ledger:
        _record(ledger, _post("t0"), StateChange(halt="stop"))
        import guardrails.ledger.sqlite_write as sqlite_mod

        real = sqlite_mod.execute

        def full(conn: Any, ops: Any) -> None:
            real(conn, ops)
            raise sqlite_mod.sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(sqlite_mod, "execute", full)
        d = _pre("t1")
        assert _record(ledger, d, StateChange(gate=True)) is None
        monkeypatch.setattr(sqlite_mod, "execute", real)
        assert d.denied and ledger.degraded is not None
        ledger.recover()
        assert ledger.session_state(SID, AGENT) == S(0, "stop")  # the spool holds no state
    assert value(ledger_path, "SELECT decision FROM tool_calls WHERE tool_call_id = 't1'") == "deny"


def test_prune_deletes_state_not_touched_since_the_cutoff(ledger_url: str) -> None:
    from guardrails.ledger.admin import prune_ledger

    with Ledger(ledger_url) as ledger:
        for sid, at in (("old", 1_600_000_000.0), ("new", 1_800_000_000.0)):
            d = Decision(UserPromptSubmit(session_id=sid, prompt="go"))
            ledger.record(d, at, agent=AGENT, tenant=None, change=StateChange(new_turn=True))
    report = prune_ledger(ledger_url, before="2025-01-01")
    assert report.deleted["session_state"] == 1
    assert [r["session_id"] for r in rows(ledger_url, "SELECT session_id FROM session_state")] == [
        "new"
    ]


def test_prune_takes_a_file_from_before_session_state(tmp_path: Path) -> None:
    import sqlite3

    from guardrails.ledger.admin import prune_ledger
    from guardrails.ledger.migrations import migrations, statements

    path = str(tmp_path / "v3.db")
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in migrations()[:3]:
        for stmt in statements(migration.sql):
            conn.execute(stmt)
    conn.execute("PRAGMA user_version = 3")
    conn.close()
    report = prune_ledger(path, keep_days=1)
    assert "session_state" not in report.deleted and "tool_calls" in report.deleted
