"""``require_artifacts`` and ``completion_promise`` as gates on TaskCreated, TaskCompleted
and TeammateIdle (beside the stops): a block keeps the work going with the reason, and
the blocks are counted, and capped, per session, event and agent, across Guards that
share a ledger (what separate ``hookrails hook`` processes do).

Payloads are the Claude 2.1.332 corpus (``tests/fixtures/claude_payloads``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Decision, Guard, HookMatcher, Ledger
from guardrails.builtins import CompletionPromise, RequireArtifacts
from guardrails.builtins.stop import GATE_EVENTS
from guardrails.events import Event
from tests._paths import FIXTURES_DIR

#: event -> the words its block reason starts with (the corpus payload's subject)
LEADS = {
    "TaskCompleted": "Task 7 (Write the changelog) is not marked completed. ",
    "TaskCreated": "Task 'Write the changelog' was not created. ",
    "TeammateIdle": "Teammate qa keeps working instead of going idle. ",
}
NEW = list(LEADS)


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{name}.json").read_text(encoding="utf-8")
    )
    return {**data, **changes}


def guard(hook: Any, cwd: Path, ledger: Ledger | None = None) -> Guard:
    hooks = {e: [HookMatcher(hooks=[hook])] for e in ("AgentStop", *NEW)}
    return Guard(AgentDefinition(name="gates", hooks=hooks), ledger=ledger or False, cwd=str(cwd))


def emit(g: Guard, name: str, cwd: Path, **changes: Any) -> Decision:
    return g.emit_sync(Event.from_claude(payload(name, cwd=str(cwd), **changes)))


def transcript(tmp_path: Path, text: str) -> str:
    path = tmp_path / "t.jsonl"
    record = {"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}}
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    return str(path)


def test_the_gates_cover_the_stops_and_the_task_and_teammate_events() -> None:
    assert {"AgentStop", "SubagentStop", *NEW} == GATE_EVENTS


@pytest.mark.parametrize("name", NEW)
def test_a_missing_artifact_blocks_with_what_the_block_does(name: str, tmp_path: Path) -> None:
    d = emit(guard(RequireArtifacts(paths=["REPORT.txt"]), tmp_path), name, tmp_path)
    assert d.blocked and d.to_claude()["decision"] == "block"
    assert d.reason == (
        f"{LEADS[name]}Retry required: REPORT.txt missing.\nCreate or fix what is missing "
        f"(paths are relative to {tmp_path}), then finish. Retry 1 of 3."
    )


@pytest.mark.parametrize("name", NEW)
def test_a_present_artifact_lets_it_through(name: str, tmp_path: Path) -> None:
    (tmp_path / "REPORT.txt").write_text("done")
    d = emit(guard(RequireArtifacts(paths=["REPORT.txt"]), tmp_path), name, tmp_path)
    assert not d.blocked and d.reason == "Report found: REPORT.txt (4 B)"


@pytest.mark.parametrize(
    ("name", "where"),
    [
        ("TaskCompleted", "write <promise>DONE</promise> in the message that marks it completed"),
        ("TaskCreated", "write <promise>DONE</promise> in a message before you create it"),
        ("TeammateIdle", "end your reply with <promise>DONE</promise>"),
    ],
)
def test_completion_promise_reads_the_transcript_and_says_where_to_promise(
    name: str, where: str, tmp_path: Path
) -> None:
    g = guard(CompletionPromise("DONE", max_iterations=5), tmp_path)
    d = emit(g, name, tmp_path, transcript_path=transcript(tmp_path, "still on it"))
    assert d.blocked and (d.reason or "").startswith(LEADS[name])
    assert f"Iteration 2 of 5. When the task is completely done and checked, {where}." in (
        d.reason or ""
    )
    kept = transcript(tmp_path, "All checked. <promise>DONE</promise>")
    assert not emit(g, name, tmp_path, transcript_path=kept).blocked


@pytest.mark.parametrize("name", NEW)
@pytest.mark.parametrize("kind", ["require_artifacts", "completion_promise"])
def test_the_cap_holds_across_guards_sharing_a_ledger(name: str, kind: str, tmp_path: Path) -> None:
    """Each event in a Guard of its own, as each ``hookrails hook`` process is: the
    third block is never given, the gate lets go and says so."""
    db = tmp_path / "ledger.db"
    path = transcript(tmp_path, "still on it")

    def hook() -> Any:
        if kind == "require_artifacts":
            return RequireArtifacts(paths=["REPORT.txt"], max_retries=2)
        return CompletionPromise("DONE", max_iterations=3)

    outcomes = []
    for _ in range(4):
        d = emit(guard(hook(), tmp_path, Ledger(db)), name, tmp_path, transcript_path=path)
        outcomes.append(d.blocked)
        if not d.blocked:
            assert d.system_messages and kind in d.system_messages[0]
    assert outcomes == [True, True, False, True]  # let through, then counting starts over


@pytest.mark.parametrize("name", NEW)
def test_blocks_are_counted_per_event_and_per_agent(name: str, tmp_path: Path) -> None:
    """A stop's blocks do not spend a task gate's retries, nor one teammate's another's."""
    db = tmp_path / "ledger.db"

    def once(event: str, **changes: Any) -> bool:
        g = guard(RequireArtifacts(paths=["REPORT.txt"], max_retries=1), tmp_path, Ledger(db))
        return emit(g, event, tmp_path, **changes).blocked

    assert once("Stop", stop_hook_active=False)
    assert once(name, agent_id="a1")  # not the stop's second block
    assert once(name, agent_id="a2")  # another agent: its own first block
    assert not once(name, agent_id="a1")  # a1's second: the cap of 1 lets it through


@pytest.mark.parametrize("name", NEW)
def test_without_a_ledger_the_count_is_the_guards(name: str, tmp_path: Path) -> None:
    g = guard(RequireArtifacts(paths=["REPORT.txt"], max_retries=2), tmp_path)
    assert [emit(g, name, tmp_path).blocked for _ in range(3)] == [True, True, False]


@pytest.mark.parametrize("name", ["SessionStart", "PostToolBatch", "Notification"])
def test_other_events_are_left_alone(name: str, tmp_path: Path) -> None:
    hook = RequireArtifacts(paths=["REPORT.txt"])
    g = Guard(AgentDefinition(hooks={name: [HookMatcher(hooks=[hook])]}), ledger=False)
    d = emit(g, name, tmp_path)
    assert [r.outcome for r in d.runs] == ["noop"] and not d.blocked
