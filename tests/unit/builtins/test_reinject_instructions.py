"""``reinject_instructions`` and the definition's ``instructions``: the standing rules reach
the model at SessionStart and the compaction at PreCompact, on the channels Claude reads.

Driven through real Guards with the Claude payload corpus; the real CLI run is
``tests/e2e/test_claude_events.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, DefinitionError, Guard, HookMatcher, HookResult
from guardrails.builtins import ReinjectInstructions, reinject_instructions
from guardrails.definition.model import INSTRUCTIONS_CAP
from guardrails.events import Event
from tests._paths import FIXTURES_DIR

RULES = "Never push to main. Run the tests before you say done."


def payload(name: str, **changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (FIXTURES_DIR / "claude_payloads" / f"{name}.json").read_text(encoding="utf-8")
    )
    return {**data, **changes}


def guard(hook: Any = reinject_instructions, **definition: Any) -> Guard:
    events = ("SessionStart", "PreCompact", "PostCompact")
    hooks = {e: [HookMatcher(hooks=[hook])] for e in events}
    return Guard(
        AgentDefinition(hooks=hooks, **{"instructions": RULES, **definition}), ledger=False
    )


@pytest.mark.parametrize(
    ("event", "changes", "where"),
    [
        ("SessionStart", {"source": "compact"}, "additionalContext"),
        ("SessionStart", {"source": "startup"}, "additionalContext"),
        ("SessionStart", {"source": "clear"}, "additionalContext"),
        ("PreCompact", {"trigger": "auto"}, "systemMessage"),
        ("PreCompact", {"trigger": "manual"}, "systemMessage"),
        ("PostCompact", {}, None),
    ],
)
def test_the_instructions_go_where_claude_reads_them(
    event: str, changes: dict[str, Any], where: str | None
) -> None:
    d = guard().emit_sync(Event.from_claude(payload(event, **changes)))
    out = d.to_claude()
    if where is None:  # PostCompact: Claude reads no answer
        assert out == {} and not d.injections
        return
    text = out.get("systemMessage") or out.get("hookSpecificOutput", {}).get(where, "")
    assert RULES in text
    assert [(r.hook, r.outcome) for r in d.runs] == [("reinject_instructions", "inject")]


def test_pre_compact_asks_the_summary_to_keep_them_word_for_word() -> None:
    d = guard().emit_sync(Event.from_claude(payload("PreCompact")))
    assert "word for word" in (d.additional_context or "")


def test_text_given_to_the_hook_replaces_the_definitions() -> None:
    d = guard(ReinjectInstructions(text="Answer in French."), instructions=None).emit_sync(
        Event.from_claude(payload("SessionStart", source="compact"))
    )
    assert "Answer in French." in (d.additional_context or "")


def test_nothing_to_reinject_fails_the_load_at_the_instructions() -> None:
    with pytest.raises(DefinitionError, match="instructions"):
        guard(instructions=None)


def test_without_the_load_check_the_hook_fails_by_its_on_failure() -> None:
    """``hookrails hook`` builds its Guard with check=False: the hook then fails, recorded."""
    g = Guard(
        AgentDefinition(hooks={"SessionStart": [HookMatcher(hooks=[reinject_instructions])]}),
        ledger=False,
        check=False,
    )
    d = g.emit_sync(Event.from_claude(payload("SessionStart", source="compact")))
    assert [r.outcome for r in d.runs] == ["error"] and not d.injections


def test_a_block_on_pre_compact_is_not_mixed_with_instructions() -> None:
    def no(event: Any, ctx: Any) -> HookResult:
        return HookResult.block("not during the review")

    hooks = {"PreCompact": [HookMatcher(hooks=[reinject_instructions, no])]}
    d = Guard(AgentDefinition(hooks=hooks, instructions=RULES), ledger=False).emit_sync(
        Event.from_claude(payload("PreCompact"))
    )
    out = d.to_claude()
    assert (out["decision"], out["reason"]) == ("block", "not during the review")
    assert "systemMessage" not in out


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "non-empty"),
        ("   ", "non-empty"),
        (42, "non-empty"),
        ("x" * (INSTRUCTIONS_CAP + 1), "over the 9,000"),
    ],
)
def test_bad_instructions_are_one_located_error(value: Any, problem: str) -> None:
    with pytest.raises(DefinitionError, match=problem) as caught:
        AgentDefinition(instructions=value)
    assert "instructions" in str(caught.value)


def test_instructions_load_from_a_file_and_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from guardrails.definition.cache import load_definition

    monkeypatch.setenv("HOOKRAILS_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "agent.yaml"
    path.write_text(
        "name: a\ninstructions: |\n  Never push to main.\n"
        "hooks:\n  SessionStart:\n    - hooks: [reinject_instructions]\n",
        encoding="utf-8",
    )
    first = load_definition(str(path))  # the full load, stored
    again = load_definition(str(path), ("SessionStart",))  # from the cache
    assert first.instructions == again.instructions == "Never push to main.\n"


def test_a_typo_in_the_key_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "agent.yaml"
    path.write_text("name: a\ninstruction: x\n", encoding="utf-8")
    with pytest.raises(DefinitionError) as caught:
        AgentDefinition.from_file(path)
    assert "instruction" in str(caught.value) and ":2" in str(caught.value)
