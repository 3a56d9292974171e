"""The sync driver's quiet path (``loop.emit_sync``, docs/design.md §5 "timing"): without
a ledger, a quiet chain's hooks run as ``(function, context)`` pairs timed once, and an
allow every hook said nothing to is one Decision built field by field (``results.allowed``);
a chain without hooks takes no turn. Each test holds that path to what the timed loop
decides, records and guarantees. No timing is asserted."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import sys
import threading
from collections.abc import Callable
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails._dataclass_free import field_names
from guardrails._frozen import is_sealed, seal
from guardrails.dispatch import loop
from guardrails.dispatch.chains import _NOT_PLAIN, QUIET_RUNS
from guardrails.events import PermissionRequest, PostToolUse, PreToolUse, SessionEnd
from guardrails.results import UNSET, Decision, ModelContext, allowed
from tests._db import rows

# --- hooks, one behaviour each (named in the runs) ---------------------------------------


def noop(event: Any, ctx: Any) -> None:
    return None


def noop2(event: Any, ctx: Any) -> None:
    return None


def deny(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("no", hint="try ls")


def ask(event: Any, ctx: Any) -> HookResult:
    return HookResult.ask("sure?")


def defer(event: Any, ctx: Any) -> HookResult:
    return HookResult.defer("later")


def allow(event: Any, ctx: Any) -> HookResult:
    return HookResult.allow("fine")


def rewrite(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify({"command": "ls -l"})


def rewrite_output(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(output="clean")


def inject(event: Any, ctx: Any) -> HookResult:
    return HookResult.inject("remember the tests")


def block(event: Any, ctx: Any) -> HookResult:
    return HookResult.block("look again")


def halt(event: Any, ctx: Any) -> HookResult:
    return HookResult.halt("stop everything")


def raises(event: Any, ctx: Any) -> None:
    raise RuntimeError("boom")


def exits(event: Any, ctx: Any) -> None:
    sys.exit(3)


def invalid(event: Any, ctx: Any) -> int:
    return 42


def claude_dict(event: Any, ctx: Any) -> dict[str, Any]:
    return {"systemMessage": "note", "hookSpecificOutput": {"permissionDecision": "ask"}}


def annotate(event: Any, ctx: Any) -> HookResult:
    return HookResult(annotations={"intent": "read"})


def _pre(command: str = "ls", tool: str = "Bash", session: str = "s") -> PreToolUse:
    return PreToolUse(session_id=session, tool_name=tool, tool_input={"command": command})


def _post(session: str = "s") -> PostToolUse:
    return PostToolUse(
        session_id=session, tool_name="Bash", tool_input={"command": "ls"}, tool_response="raw"
    )


def _guard(event: str, *matchers: HookMatcher, **kwargs: Any) -> Guard:
    return Guard(AgentDefinition(name="quiet", hooks={event: list(matchers)}), **kwargs)


def _set_quiet(guard: Guard, runs: int) -> None:
    for s in list(guard._sessions.values()):
        for plan, _ in s._plans.values():
            plan.quiet = runs


def _quiet_path(decision: Decision) -> bool:
    """Decided by the quiet path: the chain's runs are one entry, timed together."""
    return len(decision._raw) == 1 and type(decision._raw[0][0]) is tuple


FIELDS = [n for n in field_names(Decision) if n not in ("event", "_raw")]


def _public(decision: Decision) -> dict[str, Any]:
    """What a caller and the ledger read of a Decision: every field, and each run but its
    duration (``records.py`` reads ``runs`` and the fields)."""
    out = {n: getattr(decision, n) for n in FIELDS}
    out["event"] = decision.event.to_claude()
    out["runs"] = [r._replace(duration_ms=0.0) for r in decision.runs]
    return out


# --- results.allowed ------------------------------------------------------------------------


def test_allowed_is_the_keyword_built_decision_field_by_field() -> None:
    event = _pre()
    raw: list[Any] = [("b", "noop", 0.0, None, 0)]
    fast, slow = allowed(event, raw), Decision(event, _raw=list(raw))
    assert type(fast) is Decision
    assert {n: getattr(fast, n) for n in field_names(Decision)} == {
        n: getattr(slow, n) for n in field_names(Decision)
    }
    assert fast == slow and repr(fast) == repr(slow)
    assert fast._raw is raw and fast.updated_output is UNSET
    # its lists are its own, as the constructor's are
    other = allowed(event, [])
    fast.notes.append("n")
    fast.injections.append(ModelContext("h", "t"))
    fast.system_messages.append("m")
    assert other.notes == other.injections == other.system_messages == []
    assert other.notes is not fast.notes


def test_a_decision_built_field_by_field_copies_pickles_and_converts_as_the_other() -> None:
    event = _pre()
    fast, slow = allowed(event, []), Decision(event)
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow)
    assert copy.copy(fast) == fast == pickle.loads(pickle.dumps(fast)) == slow
    changed = dataclasses.replace(fast, reason="r")
    assert type(changed) is Decision and changed.reason == "r" and changed.notes == []
    assert fast.to_claude() == slow.to_claude() == {}


# --- the quiet path decides as the timed loop: a table of outcomes --------------------------

#: (event, hooks of one matcher, on_failure) -> the quiet path's Decision must equal the timed
#: loop's (every field and every run, durations aside)
OUTCOMES: list[tuple[str, list[Callable[..., Any]], str | None]] = [
    ("PreToolUse", [noop, noop2], None),
    ("PreToolUse", [deny, noop], None),
    ("PreToolUse", [noop, deny], None),
    ("PreToolUse", [noop, noop2, deny], None),
    ("PreToolUse", [noop, ask, noop2], None),
    ("PreToolUse", [noop, defer], None),
    ("PreToolUse", [allow, noop], None),
    ("PreToolUse", [noop, rewrite, noop2], None),
    ("PreToolUse", [noop, inject], None),
    ("PreToolUse", [noop, halt, noop2], None),
    ("PreToolUse", [noop, raises, noop2], None),
    ("PreToolUse", [noop, raises, noop2], "continue"),
    ("PreToolUse", [exits, noop], None),
    ("PreToolUse", [noop, invalid], None),
    ("PreToolUse", [noop, invalid], "continue"),
    ("PreToolUse", [claude_dict, noop], None),
    ("PreToolUse", [annotate, noop], None),
    ("PostToolUse", [noop, noop2], None),
    ("PostToolUse", [noop, rewrite_output, noop2], None),
    ("PostToolUse", [block, noop], None),
    ("PostToolUse", [noop, inject], None),
    ("PostToolUse", [noop, raises], "block"),
]


def _decide(event_name: str, hooks: list[Any], on_failure: str | None, quiet: bool) -> Decision:
    guard = _guard(event_name, HookMatcher(matcher="Bash", hooks=hooks, on_failure=on_failure))
    make: Any = _pre if event_name == "PreToolUse" else _post
    guard.emit_sync(make(session="warm"))  # compiles the chain (a halt stays in that session)
    _set_quiet(guard, QUIET_RUNS if quiet else 0)
    return guard.emit_sync(make(session="s"))


@pytest.mark.parametrize(
    ("event_name", "hooks", "on_failure"),
    OUTCOMES,
    ids=[f"{e}-{'-'.join(h.__name__ for h in hs)}-{f}" for e, hs, f in OUTCOMES],
)
def test_the_quiet_path_decides_and_records_as_the_timed_loop(
    event_name: str, hooks: list[Any], on_failure: str | None
) -> None:
    timed = _decide(event_name, hooks, on_failure, quiet=False)
    quiet = _decide(event_name, hooks, on_failure, quiet=True)
    assert not _quiet_path(timed)
    assert _public(quiet) == _public(timed)
    assert len(quiet.runs) == len(hooks)  # every hook is listed, skipped ones too


def test_an_allow_nobody_spoke_to_is_taken_by_the_quiet_path() -> None:
    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[noop, noop2]))
    decisions = [guard.emit_sync(_pre()) for _ in range(QUIET_RUNS + 2)]
    assert not _quiet_path(decisions[0])
    # a quiet path run each time once quiet (on a loaded machine a run could in theory
    # exceed 5 s and start counting again: then the decision is still an allow)
    assert all(d.allowed and not d.explicit for d in decisions)
    _set_quiet(guard, QUIET_RUNS)
    d = guard.emit_sync(_pre())
    assert _quiet_path(d)
    assert [r.hook.rsplit(":", 1)[-1] for r in d.runs] == ["noop", "noop2"]


# --- with a ledger: every hook's run and duration are recorded ------------------------------


def test_with_a_ledger_a_quiet_chain_still_records_every_hook_timed(ledger_path: str) -> None:
    ledger = Ledger(ledger_path)
    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[noop, noop2]), ledger=ledger)
    calls = QUIET_RUNS + 3
    decisions = [guard.emit_sync(_pre(f"ls {i}")) for i in range(calls)]
    _set_quiet(guard, QUIET_RUNS)
    decisions.append(guard.emit_sync(_pre("ls again")))
    ledger.close()
    for d in decisions:
        assert not _quiet_path(d)  # each hook timed on its own
        assert [r.outcome for r in d.runs] == ["noop", "noop"]
    runs = rows(ledger_path, "SELECT hook, outcome, duration_ms FROM hook_runs ORDER BY id")
    assert len(runs) == 2 * (calls + 1)
    assert [r["hook"].rsplit(":", 1)[-1] for r in runs] == ["noop", "noop2"] * (calls + 1)
    assert all(r["outcome"] == "noop" and r["duration_ms"] is not None for r in runs)


# --- a chain without hooks takes no turn, and still honours a halt --------------------------


def test_a_chain_without_hooks_is_decided_while_another_event_holds_the_turn() -> None:
    entered, release = threading.Event(), threading.Event()

    def holds(event: Any, ctx: Any) -> None:
        entered.set()
        release.wait(10)

    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[holds]))
    holder = threading.Thread(target=guard.emit_sync, args=(_pre(),))
    holder.start()
    try:
        assert entered.wait(10)
        answered: list[Decision] = []
        other = threading.Thread(target=lambda: answered.append(guard.emit_sync(_pre(tool="Read"))))
        other.start()
        other.join(5)
        assert answered and answered[0].allowed  # decided without waiting for the turn
        assert guard._sessions["s"]._lock.locked()  # the Bash call still holds it
    finally:
        release.set()
        holder.join(10)


def test_a_chain_without_hooks_is_denied_in_a_halted_session() -> None:
    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[halt]))
    assert guard.emit_sync(_pre()).denied
    d = guard.emit_sync(_pre(tool="Read"))  # no hook on Read: still halted
    assert d.denied and d.halted and "halted" in (d.reason or "")


def test_a_quiet_chain_in_a_halted_session_is_denied_without_running_its_hooks() -> None:
    ran: list[str] = []

    def counts(event: Any, ctx: Any) -> None:
        ran.append(event.tool_name)

    guard = Guard(
        AgentDefinition(
            name="quiet",
            hooks={
                "PreToolUse": [
                    HookMatcher(matcher="Bash", hooks=[halt]),
                    HookMatcher(matcher="Read", hooks=[counts]),
                ]
            },
        )
    )
    guard.emit_sync(_pre(tool="Read"))
    _set_quiet(guard, QUIET_RUNS)
    assert guard.emit_sync(_pre()).denied  # halts the session
    ran.clear()
    d = guard.emit_sync(_pre(tool="Read"))
    assert d.denied and d.halted and ran == []


# --- the turn: one event at a time, re-entry, and what the quiet path leaves alone ------------


def test_a_quiet_chain_decides_one_event_at_a_time() -> None:
    def count(event: Any, ctx: Any) -> None:
        n = ctx.state.get("n", 0)
        threading.Event().wait(0.0005)  # let the other thread in, were the turn not held
        ctx.state["n"] = n + 1

    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[count]))
    guard.emit_sync(_pre())
    _set_quiet(guard, QUIET_RUNS)

    def run() -> None:
        for _ in range(40):
            guard.emit_sync(_pre())

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert guard._sessions["s"].state["n"] == 1 + 3 * 40


def test_a_hook_of_a_quiet_chain_emitting_into_its_own_session_re_enters() -> None:
    inner: list[Decision] = []

    def emits(event: Any, ctx: Any) -> None:
        if event.tool_name == "Bash":
            inner.append(ctx.guard.emit_sync(_pre(tool="Grep")))

    guard = _guard("PreToolUse", HookMatcher(matcher="Bash|Grep", hooks=[emits, noop]))
    guard.emit_sync(_pre())
    guard.emit_sync(_pre(tool="Grep"))
    _set_quiet(guard, QUIET_RUNS)
    done: list[Decision] = []
    t = threading.Thread(target=lambda: done.append(guard.emit_sync(_pre())))
    t.start()
    t.join(10)
    assert done and done[0].allowed and inner[-1].allowed  # no wait on its own turn


def named(name: str) -> Callable[[Any, Any], None]:
    def hook(event: Any, ctx: Any) -> None:
        return None

    hook.__name__ = hook.__qualname__ = name
    return hook


@pytest.mark.parametrize("fresh", [True, False], ids=["fresh-events", "emitted-again"])
def test_the_quiet_lookup_by_event_class_finds_each_subject_and_agent_its_own_chain(
    fresh: bool,
) -> None:
    """The quiet path looks a chain up by (the event's class, its subject) without building
    a key, for a new event (sealed on the way) and for one emitted again (sealed already):
    each tool, and each agent type (which never takes that lookup), still gets its own
    chain, on every pass, in any order, and after the session was let go; every event
    leaves sealed."""
    seen: list[Any] = []

    def bash(event: Any, ctx: Any) -> None:
        seen.append(ctx)

    bash.__qualname__ = "bash"
    guard = _guard(
        "PreToolUse",
        HookMatcher(matcher="Bash", hooks=[bash]),
        HookMatcher(matcher="Read", hooks=[named("read")]),
        HookMatcher(matcher="Bash", hooks=[named("workers")], agents=["work*"]),
    )
    cases: list[tuple[Callable[[], PreToolUse], list[str]]] = [
        (lambda: _pre(), ["bash"]),
        (lambda: _pre(tool="Read"), ["read"]),
        (lambda: _pre(tool="Grep"), []),
        (
            lambda: PreToolUse(
                session_id="s", tool_name="Bash", tool_input={}, agent_type="worker"
            ),
            ["bash", "workers"],
        ),
        (
            lambda: PreToolUse(
                session_id="s", tool_name="Bash", tool_input={}, agent_type="planner"
            ),
            ["bash"],
        ),
    ]
    kept = [make() for make, _ in cases]
    events = (lambda i: cases[i][0]()) if fresh else (lambda i: kept[i])
    for _ in range(2):  # (ran through the timed loop until quiet)
        for i in range(len(cases)):
            guard.emit_sync(events(i))
    _set_quiet(guard, QUIET_RUNS)
    order = [*range(len(cases)), *reversed(range(len(cases)))]
    for turn in range(3):
        if turn == 2:
            guard._sessions["s"]._forgotten()  # let go: the cached chains are rebuilt
            _set_quiet(guard, QUIET_RUNS)
        for i in order:
            event, hooks = events(i), cases[i][1]
            decision = guard.emit_sync(event)
            assert is_sealed(event)
            assert decision.allowed and (_quiet_path(decision) or not hooks), (turn, event)
            assert [r.hook.rsplit(":", 1)[1] for r in decision.runs] == hooks, (turn, event)
    assert seen[-1] in guard._sessions["s"]._ctx  # the session's own context, not a stale one


def test_events_that_do_more_than_their_hooks_say_never_take_the_quiet_path() -> None:
    assert loop._NEW_TURN | {"SessionEnd", loop._OWN_ASK} <= _NOT_PLAIN


def test_a_quiet_session_end_still_lets_the_session_go() -> None:
    guard = _guard("SessionEnd", HookMatcher(hooks=[noop]))
    for _ in range(QUIET_RUNS + 1):
        guard.emit_sync(SessionEnd(session_id="gone", reason="exit"))
        assert "gone" not in guard._sessions


def test_claude_own_ask_reaches_the_approver_on_a_quiet_chain() -> None:
    asked: list[Any] = []

    def approver(request: Any) -> str:
        asked.append(request)
        return "allow"

    guard = _guard("PermissionRequest", HookMatcher(hooks=[noop]), approver=approver)
    for _ in range(QUIET_RUNS + 2):
        guard.emit_sync(PermissionRequest(session_id="s", tool_name="Bash", tool_input={}))
    assert len(asked) == QUIET_RUNS + 2


def test_an_event_sealed_by_another_thread_while_this_one_seals_it_is_decided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sealing happens before the turn is taken: the same event object emitted on two
    threads at once must not fail the one that finds it sealed halfway."""
    event = _pre()
    real = loop.freeze

    def other_thread_seals_first(value: Any) -> Any:
        frozen = real(value)
        seal(event)  # as the other thread would, between the check and the assignment
        return frozen

    monkeypatch.setattr(loop, "freeze", other_thread_seals_first)
    guard = _guard("PreToolUse", HookMatcher(matcher="Bash", hooks=[noop]))
    d = guard.emit_sync(event)
    assert d.allowed and is_sealed(event)
