"""What a session remembers holds across ``hookrails hook`` processes (docs/design.md §7).

Claude Code runs every hook event in a new process, and the hooks of parallel tool calls
in parallel processes. A halt ("later calls are denied until the next prompt") and the
turn's injection budget live in the ledger's ``session_state``, settled in the
transaction that records each event. Each test runs real processes, one after another
and started together.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests._db import rows, value

pytestmark = pytest.mark.slow  # every test runs `hookrails hook` processes

HOOK = [sys.executable, "-m", "guardrails", "hook"]
SID = "7d2c1f4e-0000-4000-8000-000000000001"
BUDGET = 30_000

AGENT = """\
name: stateful
hooks:
  PreToolUse:
    - matcher: "Bash(halt*)"
      hooks: [state_hooks:halt]
    - matcher: "Bash(wait*)"
      hooks: [{use: state_hooks:wait, timeout: 60}]
    - matcher: Bash
      hooks: [state_hooks:mark]
  PostToolUse:
    - hooks: [state_hooks:big]
"""

HOOKS = """\
import os, time
from guardrails import HookResult

def halt(event, ctx):
    return HookResult.halt("stop now")

def mark(event, ctx):
    open(os.path.join(event.cwd, "ran-" + event.tool_use_id), "w").close()

def wait(event, ctx):
    # inside its hooks: the session was read (not halted); wait until the test says go
    open(os.path.join(event.cwd, "started-" + event.tool_use_id), "w").close()
    deadline = time.monotonic() + 50
    while not os.path.exists(os.path.join(event.cwd, "go")) and time.monotonic() < deadline:
        time.sleep(0.01)

def big(event, ctx):
    return HookResult.inject("x" * 10000)
"""


@pytest.fixture
def project(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    (tmp_path / "agent.yaml").write_text(AGENT)
    (tmp_path / "state_hooks.py").write_text(HOOKS)
    return tmp_path


def _env(project: Path) -> dict[str, str]:
    dropped = ("PYTHONDONTWRITEBYTECODE", "HOOKRAILS_LEDGER")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PYTHONPYCACHEPREFIX"] = str(project / "pycache")
    env["HOOKRAILS_CACHE_DIR"] = str(project / "cache")
    return env


def _start(project: Path, event: dict[str, Any], ledger: bool = True) -> subprocess.Popen[bytes]:
    args = ["--config", str(project / "agent.yaml")]
    args += ["--ledger", str(project / "ledger.db")] if ledger else ["--no-ledger"]
    proc = subprocess.Popen(
        [*HOOK, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=project,
        env=_env(project),
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"session_id": SID, "cwd": str(project), **event}).encode())
    proc.stdin.close()
    return proc


def _answer(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.read(), proc.stderr.read()
    assert proc.wait(60) == 0 and not err, err
    answer: dict[str, Any] = json.loads(out)
    return answer


def _hook(project: Path, event: dict[str, Any], ledger: bool = True) -> dict[str, Any]:
    return _answer(_start(project, event, ledger))


def _pre(command: str, call: str) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_use_id": call}  # fmt: skip


def _post(call: str) -> dict[str, Any]:
    return {"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_input": {"command": "ls"},
            "tool_response": "ok", "tool_use_id": call}  # fmt: skip


PROMPT = {"hook_event_name": "UserPromptSubmit", "prompt": "go on"}


def _verdict(answer: dict[str, Any]) -> tuple[str | None, str | None]:
    spec = answer.get("hookSpecificOutput", {})
    return spec.get("permissionDecision"), spec.get("permissionDecisionReason")


def _context(answer: dict[str, Any]) -> int:
    return len(answer.get("hookSpecificOutput", {}).get("additionalContext", ""))


HALTED = ("deny", "the agent was halted: stop now")


# --- halt --------------------------------------------------------------------------------------


def test_a_halt_denies_later_calls_until_the_next_prompt(project: Path) -> None:
    _hook(project, PROMPT)
    halting = _hook(project, _pre("halt", "t1"))
    assert (_verdict(halting), halting["continue"]) == (("deny", "stop now"), False)
    later = _hook(project, _pre("ls -la", "t2"))
    assert (_verdict(later), later["continue"]) == (HALTED, False)
    assert not (project / "ran-t2").exists()  # denied at once: its hooks never ran
    _hook(project, PROMPT)
    assert _verdict(_hook(project, _pre("ls", "t3"))) == (None, None)
    assert (project / "ran-t3").exists()
    calls = rows(project / "ledger.db", "SELECT tool_call_id, decision FROM tool_calls ORDER BY id")
    assert [(c["tool_call_id"], c["decision"]) for c in calls] == [
        ("t1", "deny"), ("t2", "deny"), ("t3", "allow")
    ]  # fmt: skip


def test_siblings_inside_their_hooks_when_the_halt_lands_are_denied(project: Path) -> None:
    """Four sibling calls read the session (not halted) and wait in their hooks; a fifth
    halts and exits; then the siblings finish. Each is recorded after the halt, so each
    answer is a denial (their hooks ran: their runs are recorded)."""
    _hook(project, PROMPT)
    siblings = [_start(project, _pre("wait", f"w{i}")) for i in range(4)]
    deadline = time.monotonic() + 60
    while not all((project / f"started-w{i}").exists() for i in range(4)):
        assert time.monotonic() < deadline, "the siblings never reached their hooks"
        assert all(p.poll() is None for p in siblings)
        time.sleep(0.01)
    assert _verdict(_hook(project, _pre("halt", "t1"))) == ("deny", "stop now")
    (project / "go").touch()
    assert [_verdict(_answer(p)) for p in siblings] == [HALTED] * 4
    ledger = project / "ledger.db"
    runs = "SELECT count(*) FROM hook_runs WHERE tool_call_id LIKE 'w%' AND hook LIKE '%wait'"
    assert value(ledger, runs) == 4
    assert value(ledger, "SELECT count(*) FROM tool_calls WHERE decision = 'allow'") == 0


def test_siblings_started_with_the_halt_are_ordered_by_their_records(project: Path) -> None:
    """Started together, a sibling may be decided before the halt (allowed: it was allowed
    before the halt existed) or after it (denied); its record says what it was answered.
    Nothing recorded before the halt is denied. A sibling allowed before the halt's marker
    existed may have been journaled and imported after the halt's row, so after the halt
    an allowed record is one answered allow, never one answered halted."""
    _hook(project, PROMPT)
    procs = [_start(project, _pre("halt" if i == 2 else "ls", f"t{i}")) for i in range(6)]
    answers = {f"t{i}": _answer(p) for i, p in enumerate(procs)}
    calls = rows(project / "ledger.db", "SELECT id, tool_call_id, decision FROM tool_calls")
    assert len(calls) == 6
    halt_id = next(c["id"] for c in calls if c["tool_call_id"] == "t2")
    for c in calls:
        if c["tool_call_id"] == "t2":
            continue
        halted = _verdict(answers[c["tool_call_id"]]) == HALTED
        assert (c["decision"] == "deny") == halted, (c, halt_id)
        if c["id"] < halt_id:  # recorded before the halt: it was allowed
            assert not halted, (c, halt_id)


def test_a_new_prompt_id_ends_the_halt_without_a_prompt_event(project: Path) -> None:
    """`hookrails claude install` binds only the events a definition has hooks for (here no
    UserPromptSubmit); Claude Code names the prompt on every event, and the next prompt's
    first event starts its turn. A late event of the halted prompt does not end it."""

    def pre(command: str, call: str, prompt: str) -> dict[str, Any]:
        return {**_pre(command, call), "prompt_id": prompt}

    assert _verdict(_hook(project, pre("halt", "t1", "p1"))) == ("deny", "stop now")
    assert _verdict(_hook(project, pre("ls", "t2", "p1"))) == HALTED
    assert _verdict(_hook(project, pre("ls", "t3", "p2"))) == (None, None)
    assert _verdict(_hook(project, pre("halt", "t4", "p3"))) == ("deny", "stop now")
    assert _verdict(_hook(project, pre("ls", "t5", "p2"))) == HALTED  # late: p3 is halted
    assert _verdict(_hook(project, pre("ls", "t6", "p3"))) == HALTED


# --- the injection budget ----------------------------------------------------------------------


def test_the_turns_budget_holds_across_processes_one_after_another(project: Path) -> None:
    _hook(project, PROMPT)
    assert [_context(_hook(project, _post(f"p{i}"))) for i in range(5)] == [10_000] * 3 + [0, 0]
    _hook(project, PROMPT)  # a new turn: a fresh budget
    assert _context(_hook(project, _post("p5"))) == 10_000
    ledger = project / "ledger.db"
    assert value(ledger, "SELECT sum(injected_chars) FROM hook_runs") == BUDGET + 10_000
    assert value(ledger, "SELECT turn || ':' || injected_chars FROM session_state") == "2:10000"


def test_the_budget_is_the_prompts_without_a_prompt_event(project: Path) -> None:
    sizes = [_context(_hook(project, {**_post(f"p{i}"), "prompt_id": prompt}))
             for i, prompt in enumerate(("a", "a", "a", "a", "b"))]  # fmt: skip
    assert sizes == [10_000, 10_000, 10_000, 0, 10_000]


def test_processes_started_together_never_inject_over_the_budget(project: Path) -> None:
    _hook(project, PROMPT)
    procs = [_start(project, _post(f"p{i}")) for i in range(5)]
    sizes = sorted(_context(_answer(p)) for p in procs)
    assert sizes == [0, 0, 10_000, 10_000, 10_000]
    ledger = project / "ledger.db"
    assert value(ledger, "SELECT sum(injected_chars) FROM hook_runs") == BUDGET
    assert value(ledger, "SELECT injected_chars FROM session_state") == BUDGET


def test_without_a_ledger_each_process_has_its_own_budget(project: Path) -> None:
    """Documented: with ``--no-ledger`` nothing is shared, so each process starts afresh."""
    sizes = [_context(_hook(project, _post(f"p{i}"), ledger=False)) for i in range(4)]
    assert sizes == [10_000] * 4
    assert _verdict(_hook(project, _pre("halt", "t1"), ledger=False)) == ("deny", "stop now")
    assert _verdict(_hook(project, _pre("ls", "t2"), ledger=False)) == (None, None)


# --- built-ins that count across processes from the ledger --------------------------------------

BUILTINS = """\
name: counting
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [{use: tool_budget, with: {limits: {Bash: 2}, warn_at: null}}]
  Stop:
    - hooks: [{use: completion_promise, with: {promise: DONE, max_iterations: 3}}]
"""


def test_builtins_count_across_processes_from_the_ledger(project: Path) -> None:
    """``tool_budget`` counts the session's recorded calls; ``completion_promise`` its
    recorded blocks: each event a new process, as under Claude Code."""
    (project / "agent.yaml").write_text(BUILTINS)
    verdicts = [_verdict(_hook(project, _pre("ls", f"t{i}")))[0] for i in range(3)]
    assert verdicts == [None, None, "deny"]
    stop = {"hook_event_name": "Stop", "last_assistant_message": "still working"}
    answers = [_hook(project, {**stop, "stop_hook_active": i > 0}) for i in range(3)]
    assert [a.get("decision") for a in answers] == ["block", "block", None]
    assert "Iteration 3 of 3" in answers[1]["reason"]
    assert "after 3 iterations without the completion promise" in answers[2]["systemMessage"]


def test_the_stop_block_cap_holds_across_processes(project: Path) -> None:
    """The Guard's cap of 8 blocked stops in a row, counted from the recorded stops."""
    (project / "agent.yaml").write_text(
        "name: stopper\nhooks:\n  Stop:\n    - hooks: [{use: deny, with: {reason: keep going}}]\n"
    )
    stop = {"hook_event_name": "Stop", "last_assistant_message": "done?"}
    answers = [_hook(project, {**stop, "stop_hook_active": i > 0}) for i in range(9)]
    assert [a.get("decision") for a in answers] == ["block"] * 8 + [None]


GATES = """\
name: gates
hooks:
  TaskCompleted:
    - hooks: [{use: require_artifacts, with: {paths: [CHANGELOG.md], max_retries: 2}}]
  TeammateIdle:
    - hooks: [{use: completion_promise, with: {promise: DONE, max_iterations: 3}}]
  TaskCreated:
    - hooks: [{use: require_artifacts, with: {paths: [PLAN.md], max_retries: 1}}]
"""

#: the events as CLI 2.1.332 builds them (tests/fixtures/claude_payloads), one teammate
TASK = {"task_id": "7", "task_subject": "Write the changelog", "teammate_name": "docs",
        "team_name": "release", "agent_id": "docs@release"}  # fmt: skip


@pytest.mark.parametrize(
    ("event", "fields", "answers"),
    [
        ("TaskCompleted", TASK, ["block", "block", None, "block"]),
        ("TeammateIdle", {"teammate_name": "qa", "agent_id": "qa@release"},
         ["block", "block", None, "block"]),
        ("TaskCreated", TASK, ["block", None, "block", None]),
    ],
)  # fmt: skip
def test_task_and_teammate_gates_cap_their_blocks_across_processes(
    project: Path, event: str, fields: dict[str, Any], answers: list[str | None]
) -> None:
    """Each event a new ``hookrails hook`` process: the gate's retries are counted from the
    ledger, it lets go after them (saying so), then counts afresh."""
    (project / "agent.yaml").write_text(GATES)
    transcript = project / "teammate.jsonl"
    said = {"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}}
    transcript.write_text(json.dumps(said) + "\n")
    sent = {"hook_event_name": event, "transcript_path": str(transcript), **fields}
    got = [_hook(project, sent) for _ in answers]
    assert [a.get("decision") for a in got] == answers
    let_through = got[answers.index(None)]
    assert "letting" in let_through["systemMessage"]
    recorded = rows(
        project / "ledger.db",
        "SELECT e.agent_id, h.outcome FROM events AS e JOIN hook_runs AS h ON h.event_id = e.id "
        "WHERE e.event = ? ORDER BY e.id",
        event,
    )
    assert [r["agent_id"] for r in recorded] == [fields["agent_id"]] * len(answers)
    assert [r["outcome"] for r in recorded] == [a or "allow" for a in answers]
