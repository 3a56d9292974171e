"""A session's halt and injection budget hold across processes that share a ledger.

Each Guard here stands for one process (a Claude Code command hook is a new process per
event): its Sessions are its own memory, the ledger file is all they share. The
process-level tests (``tests/processes/test_hook_state.py``) run real ``hookrails hook``
processes; these drive the dispatch loop directly, the sync and the async path.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from guardrails import Guard, HookResult, Ledger
from guardrails.events import AgentStop, PostToolUse, PreToolUse, UserPromptSubmit
from guardrails.ledger.session_state import SessionState
from tests._guards import build_guard

SID = "s1"
BIG = "x" * 10_000


class Counter:
    """A PreToolUse hook that counts its calls (did the hooks run at all?)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, event: Any, ctx: Any) -> None:
        self.calls += 1


def _halt_on_halt(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command") == "halt":
        return HookResult.halt("stop now")
    return None


def _inject_big(event: Any, ctx: Any) -> HookResult:
    return HookResult.inject(BIG)


def _process(ledger: str | None, pre: Any = None) -> Guard:
    """A Guard as one hook process builds it: its own Sessions, the shared file."""
    hooks: dict[str, list[Any]] = {
        "PreToolUse": [_halt_on_halt] + ([pre] if pre is not None else []),
        "PostToolUse": [_inject_big],
    }
    return build_guard(hooks, ledger=False if ledger is None else ledger, name="tester")


def _pre(command: str = "ls", call: str = "t") -> PreToolUse:
    return PreToolUse(session_id=SID, tool_name="Bash", tool_input={"command": command},
                      tool_use_id=call)  # fmt: skip


def _post(call: str) -> PostToolUse:
    return PostToolUse(session_id=SID, tool_name="Bash", tool_input={"command": "ls"},
                       tool_response="ok", tool_use_id=call)  # fmt: skip


def _prompt() -> UserPromptSubmit:
    return UserPromptSubmit(session_id=SID, prompt="go on")


def _injected(guard: Guard, call: str) -> int:
    return len(guard.emit_sync(_post(call)).additional_context or "")


def test_a_halt_holds_in_a_process_that_starts_after_it(ledger_path: str) -> None:
    _process(ledger_path).emit_sync(_prompt())
    halting = _process(ledger_path).emit_sync(_pre("halt", "t1"))
    assert halting.halted and halting.denied
    counter = Counter()
    later = _process(ledger_path, counter).emit_sync(_pre("ls", "t2"))
    assert (later.denied, later.halted) == (True, True)
    assert later.reason == "the agent was halted: stop now"
    assert counter.calls == 0  # denied at once: its hooks never ran
    _process(ledger_path).emit_sync(_prompt())  # the next prompt: the halt is over
    after = _process(ledger_path, counter).emit_sync(_pre("ls", "t3"))
    assert (after.decision, after.halted, counter.calls) == ("allow", False, 1)


def test_a_sibling_decided_before_the_halt_but_recorded_after_it_is_denied(
    ledger_path: str,
) -> None:
    """The sibling read the state (not halted) and ran its hooks while another process
    halted; its record comes after the halt's, so its answer is a denial."""
    halted = threading.Event()
    started = threading.Event()

    def slow(event: Any, ctx: Any) -> None:
        started.set()
        assert halted.wait(10)

    sibling = _process(ledger_path, slow)
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(sibling.emit_sync(_pre("ls", "t2"))))
    thread.start()
    assert started.wait(10)
    assert _process(ledger_path).emit_sync(_pre("halt", "t1")).halted
    halted.set()
    thread.join(10)
    [d] = out
    assert (d.denied, d.halted, d.reason) == (True, True, "the agent was halted: stop now")
    assert d.runs and d.runs[-1].hook.endswith("slow")  # its hooks ran and are recorded


def test_the_injection_budget_is_shared_by_processes(ledger_path: str) -> None:
    injected = [_injected(_process(ledger_path), f"p{i}") for i in range(5)]
    assert injected == [10_000, 10_000, 10_000, 0, 0]
    _process(ledger_path).emit_sync(_prompt())  # a new turn: a fresh budget
    assert _injected(_process(ledger_path), "p5") == 10_000
    stop = _process(ledger_path).emit_sync(AgentStop(session_id=SID, last_assistant_message="ok"))
    assert not stop.blocked  # an AgentStop let through starts the budget over too
    assert [_injected(_process(ledger_path), f"q{i}") for i in range(4)] == [10_000] * 3 + [0]


def test_one_process_keeps_its_session_in_step_with_the_ledger(ledger_path: str) -> None:
    """A warm process (the SDK adapter, serve) reads the state once per session, then keeps
    it from what it records; a halt it holds is checked again before it denies."""
    warm = _process(ledger_path)
    assert [_injected(warm, f"p{i}") for i in range(2)] == [10_000, 10_000]
    assert _injected(_process(ledger_path), "other") == 10_000
    assert _injected(warm, "p2") == 0  # the other process took the rest
    assert warm.emit_sync(_pre("halt", "t1")).halted
    assert warm.emit_sync(_pre("ls", "t2")).halted  # its own halt
    _process(ledger_path).emit_sync(_prompt())  # another process starts the next turn
    assert warm.emit_sync(_pre("ls", "t3")).decision == "allow"
    assert _injected(warm, "p3") == 10_000


def test_without_a_ledger_the_state_is_the_process_s(ledger_path: str) -> None:
    one = _process(None)
    assert one.emit_sync(_pre("halt", "t1")).halted
    assert one.emit_sync(_pre("ls", "t2")).denied  # in one process it holds
    assert _process(None).emit_sync(_pre("ls", "t3")).decision == "allow"  # not in another
    assert [_injected(one, f"p{i}") for i in range(4)] == [10_000] * 3 + [0]
    assert _injected(_process(None), "p9") == 10_000


def test_the_async_path_holds_it_too(ledger_path: str) -> None:
    async def main() -> tuple[Any, list[int]]:
        await _process(ledger_path).emit(_pre("halt", "t1"))
        later = await _process(ledger_path).emit(_pre("ls", "t2"))
        await _process(ledger_path).emit(_prompt())
        sizes = []
        for i in range(4):
            d = await _process(ledger_path).emit(_post(f"p{i}"))
            sizes.append(len(d.additional_context or ""))
        return later, sizes

    later, sizes = asyncio.run(main())
    assert (later.denied, later.reason) == (True, "the agent was halted: stop now")
    assert sizes == [10_000] * 3 + [0]


def test_a_new_turn_started_without_an_event_reaches_the_ledger(ledger_path: str) -> None:
    """``Session.new_turn()`` (what ``hookrails replay`` calls at a user prompt) is
    written with the session's next recorded event."""
    guard = _process(ledger_path)
    session = guard.session(SID)
    assert session.sync.emit(_pre("halt", "t1")).halted
    session.new_turn()
    assert session.sync.emit(_pre("ls", "t2")).decision == "allow"
    assert guard.ledger is not None
    assert guard.ledger.session_state(SID, "tester") == SessionState(1, None, 0)
    assert _process(ledger_path).emit_sync(_pre("ls", "t3")).decision == "allow"


def test_an_unreadable_state_leaves_the_gate_in_the_record(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The read before the hooks fails: the hooks run, and the record still denies."""
    _process(ledger_path).emit_sync(_pre("halt", "t1"))
    counter = Counter()
    guard = _process(ledger_path, counter)
    assert guard.ledger is not None

    def unreadable(*args: Any) -> None:
        raise OSError("unreadable")

    monkeypatch.setattr(guard.ledger, "session_state", unreadable)
    d = guard.emit_sync(_pre("ls", "t2"))
    assert (counter.calls, d.denied, d.halted) == (1, True, True)


def test_a_halt_the_ledger_could_not_take_is_written_with_a_later_event(
    ledger_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    guard = _process(ledger_path)
    ledger = guard.ledger
    assert isinstance(ledger, Ledger)
    real = ledger.record
    monkeypatch.setattr(ledger, "record", lambda *a, **k: None)  # spooled: nothing settled
    assert guard.emit_sync(_pre("halt", "t1")).halted
    monkeypatch.setattr(ledger, "record", real)
    assert ledger.session_state(SID, "tester") is None
    # the process's own halt stands, and the next event it records writes it
    assert guard.emit_sync(_pre("ls", "t2")).denied
    held = ledger.session_state(SID, "tester")
    assert held is not None and held.halted == "stop now"
    assert _process(ledger_path).emit_sync(_pre("ls", "t3")).denied


def test_each_definition_keeps_its_own_state(ledger_path: str) -> None:
    """Two definitions recording one session into one file are two Guards' Sessions."""
    assert _process(ledger_path).emit_sync(_pre("halt", "t1")).halted
    other = build_guard([Counter()], ledger=ledger_path, name="other")
    assert other.emit_sync(_pre("ls", "t2")).decision == "allow"


def _in(event: Any, prompt: str) -> Any:
    event.prompt_id = prompt
    return event


def test_each_prompt_id_is_a_turn_without_a_prompt_event(ledger_path: str) -> None:
    """``hookrails claude install`` binds only the events a definition has hooks for, so a
    command hook may never see UserPromptSubmit; Claude Code names the prompt on every
    event (``prompt_id``), and a prompt id the ledger has not met starts a turn."""
    assert _process(ledger_path).emit_sync(_in(_pre("halt", "t1"), "p1")).halted
    assert _process(ledger_path).emit_sync(_in(_pre("ls", "t2"), "p1")).denied
    assert _process(ledger_path).emit_sync(_in(_pre("ls", "t3"), "p2")).decision == "allow"
    sizes = [len(_process(ledger_path).emit_sync(_in(_post(f"a{i}"), "p2")).additional_context
                 or "") for i in range(4)]  # fmt: skip
    assert sizes == [10_000] * 3 + [0]
    assert len(_process(ledger_path).emit_sync(_in(_post("b"), "p3")).additional_context or "")
    assert _process(ledger_path).emit_sync(_in(_pre("halt", "t4"), "p3")).halted
    # a late event of an earlier prompt is judged by the current turn and ends nothing
    assert _process(ledger_path).emit_sync(_in(_pre("ls", "t5"), "p2")).denied
    assert _process(ledger_path).emit_sync(_in(_pre("ls", "t6"), "p3")).denied
    guard = _process(ledger_path)
    assert guard.ledger is not None
    held = guard.ledger.session_state(SID, "tester")
    assert held is not None and (held.turn, held.prompt, held.earlier) == (3, "p3", ("p2", "p1"))
