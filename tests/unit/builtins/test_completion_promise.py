"""``completion_promise``: the "keep going until done" loop, through real ``agent_stop`` calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, DefinitionError, Guard, HookMatcher, Ledger, Session
from guardrails.builtins import CompletionPromise
from tests._guards import build_guard

DONE = "All tests pass. <promise>DONE</promise>"


def make_guard(hook: CompletionPromise, ledger: Ledger | None = None) -> Guard:
    return build_guard({"AgentStop": [hook]}, ledger=ledger)


def blocked(g: Guard | Session, *messages: str | None, **fields: Any) -> list[bool]:
    return [g.sync.agent_stop(m, **fields).blocked for m in messages]


def test_stops_are_blocked_until_the_last_message_holds_the_promise() -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=5))
    assert blocked(g, "Fixed the parser.", "Added tests.", DONE) == [True, True, False]


def test_the_block_reason_gives_the_iteration_and_how_to_finish() -> None:
    d = make_guard(CompletionPromise("DONE", max_iterations=5)).sync.agent_stop("Working on it.")
    assert d.reason == (
        "The task is not finished yet. Keep working on it.\n\n"
        "Iteration 2 of 5. When the task is completely done and checked, end your reply with "
        "<promise>DONE</promise>. Do not write it before then."
    )
    assert d.system_messages == [
        "completion_promise: iteration 2 of 5 (to stop, the agent writes <promise>DONE</promise>)"
    ]


def test_message_is_fed_back_as_the_task() -> None:
    hook = CompletionPromise("DONE", message="Port every module in src/ to Rust.")
    reason = make_guard(hook).sync.agent_stop("Ported two.").reason or ""
    assert reason.startswith("Port every module in src/ to Rust.\n\nIteration 2 of 5.")


@pytest.mark.parametrize(
    ("message", "kept"),
    [
        ("<promise>DONE</promise>", True),
        ("Everything works.\n<promise> DONE </promise>", True),
        ("<promise>done</promise>", False),
        ("I am not DONE yet", False),
        ("<promise>DONE soon</promise>", False),
        ("", False),
    ],
)
def test_by_default_only_the_tagged_promise_counts(message: str, kept: bool) -> None:
    assert CompletionPromise("DONE").kept(message) is kept


def test_a_multi_word_promise_tolerates_other_whitespace() -> None:
    hook = CompletionPromise("ALL TESTS PASS")
    assert hook.kept("<promise>ALL  TESTS\nPASS</promise>")


def test_untagged_the_bare_text_anywhere_counts() -> None:
    g = make_guard(CompletionPromise("SHIP IT", tagged=False))
    assert blocked(g, "almost there", "ok, SHIP IT.") == [True, False]


@pytest.mark.parametrize("max_iterations", [1, 2, 5, 9])
def test_after_max_iterations_the_stop_goes_through(max_iterations: int) -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=max_iterations))
    outcome = blocked(g, *["still working"] * max_iterations)
    assert outcome == [True] * (max_iterations - 1) + [False]


def test_giving_up_is_said_in_a_system_message_not_by_the_guards_cap() -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=9))
    for _ in range(8):
        g.sync.agent_stop("still working")
    last = g.sync.agent_stop("still working")
    assert not last.blocked
    assert last.system_messages == [
        "completion_promise: letting the agent stop after 9 iterations without the completion "
        "promise <promise>DONE</promise> (max_iterations=9)."
    ]
    assert "stop-block-cap" not in [r.hook for r in last.runs]


def test_the_count_starts_again_after_the_loop_ends() -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=3))
    assert blocked(g, "a", DONE, "b", "c", "d", "e") == [True, False, True, True, False, True]


def test_each_session_counts_its_own_iterations() -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=2))
    assert blocked(g.session("a"), "x") == [True]
    assert blocked(g.session("b"), "x") == [True]
    assert blocked(g.session("a"), "x") == [False]


def test_subagents_are_counted_apart() -> None:
    hook = CompletionPromise("DONE", max_iterations=2)
    g = Guard(AgentDefinition(hooks={"SubagentStop": [HookMatcher(hooks=[hook])]}))

    def stop(agent: str) -> bool:
        return g.sync.subagent_stop(agent, "worker", last_assistant_message="x").blocked

    assert [stop("a1"), stop("a2"), stop("a1"), stop("a2")] == [True, True, False, False]


def test_stop_hook_active_counts_as_an_iteration() -> None:
    """The host continues because a stop hook blocked: that turn was an iteration."""
    g = make_guard(CompletionPromise("DONE", max_iterations=2))
    assert blocked(g, "still working", stop_hook_active=True) == [False]


def test_stop_hook_active_does_not_end_the_loop_early() -> None:
    g = make_guard(CompletionPromise("DONE", max_iterations=4))
    first = blocked(g, "a")
    rest = blocked(g, "b", "c", "d", stop_hook_active=True)
    assert first + rest == [True, True, True, False]


def test_with_a_ledger_the_count_survives_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "l.db"
    first = make_guard(CompletionPromise("DONE", max_iterations=3), Ledger(db))
    assert blocked(first.session("s1"), "a", "b") == [True, True]
    second = make_guard(CompletionPromise("DONE", max_iterations=3), Ledger(db))
    d = second.session("s1").sync.agent_stop("c", stop_hook_active=True)
    assert not d.blocked and "after 3 iterations" in d.system_messages[0]


def test_without_last_assistant_message_the_transcript_is_read(tmp_path: Path) -> None:
    transcript = tmp_path / "session.jsonl"
    records = [
        {"type": "user", "message": {"role": "user", "content": "fix it"}},
        {
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": DONE}]},
        },
        {"type": "system", "subtype": "stop_hook_summary"},
    ]
    transcript.write_text("".join(json.dumps(r) + "\n" for r in records))
    g = make_guard(CompletionPromise("DONE"))
    assert blocked(g, None, transcript_path=str(transcript)) == [False]


def test_without_a_message_or_a_readable_transcript_the_stop_is_blocked(tmp_path: Path) -> None:
    g = make_guard(CompletionPromise("DONE"))
    assert blocked(g, None, transcript_path=str(tmp_path / "missing.jsonl")) == [True]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"promise": ""}, "promise must be a non-empty string"),
        ({"promise": 5}, "promise must be a non-empty string"),
        ({"max_iterations": 0}, "max_iterations must be an integer from 1 to 9"),
        ({"max_iterations": 10}, "the Guard lets a stop through after 8 consecutive blocks"),
        ({"max_iterations": "5"}, "max_iterations must be an integer from 1 to 9"),
        ({"message": ""}, "message must be a non-empty string or None"),
        ({"tagged": "yes"}, "tagged must be true or false"),
    ],
)
def test_bad_configuration_is_a_value_error_naming_the_parameter(
    kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as exc:
        CompletionPromise(**kwargs)
    assert message in str(exc.value)


def test_declared_by_name_in_a_file_uses_the_defaults(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("hooks:\n  Stop:\n    - hooks: [completion_promise]\n", encoding="utf-8")
    g = Guard(path)
    assert blocked(g, "working", "<promise>DONE</promise>") == [True, False]


def test_declared_with_params_in_a_file_uses_them(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  AgentStop:\n    - hooks:\n        - use: completion_promise\n"
        "          with: {promise: SHIPPED, max_iterations: 2}\n",
        encoding="utf-8",
    )
    assert blocked(Guard(path), "working", "working") == [True, False]


def test_a_bad_parameter_in_a_file_is_a_definition_error(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text(
        "hooks:\n  AgentStop:\n    - hooks:\n        - use: completion_promise\n"
        "          with: {max_iterations: 50}\n",
        encoding="utf-8",
    )
    with pytest.raises(DefinitionError) as exc:
        AgentDefinition.from_file(path)
    assert str(path) in str(exc.value) and "max_iterations must be an integer" in str(exc.value)


def test_the_ready_instance_has_the_defaults() -> None:
    from guardrails.builtins.stop import completion_promise

    assert (completion_promise.token, completion_promise.max_iterations) == (
        "<promise>DONE</promise>",
        5,
    )
