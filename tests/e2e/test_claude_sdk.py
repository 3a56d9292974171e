"""End to end: a Guard inside the real Claude Code CLI (bundled in claude-agent-sdk).

No network, no key: the CLI talks to a FakeMessagesAPI on 127.0.0.1 (see
``tests/_claude_cli.py``). Each module fixture is one CLI session whose
scripted model reacts to what it is shown; the tests read the files the real
tools wrote, what the model received, and the ledger. Commands are harmless
``echo``s into the session's temporary project folder.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger
from guardrails.adapters.claude_agent_sdk import to_sdk_hooks, translate_matcher
from guardrails.builtins import RequireArtifacts, schema_guardrail, schema_nudge
from guardrails.definition.matchers import Pattern
from guardrails.testing import FakeMessagesAPI, MessagesRequest, tool_use
from tests._claude_cli import CliRun, run_claude
from tests._db import rows

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

# --- the main thread: deny, rewrite, schema, fail closed, nudge, stop cap -----------------

DENIED = tool_use("Bash", {"command": "echo no > denied.txt"}, id="toolu_e2e_denied")
REWRITE = tool_use("Bash", {"command": "echo original > rewritten.txt"}, id="toolu_e2e_rewrite")
#: Claude Code's own schema accepts a negative timeout (it validates first, so only what it
#: accepts reaches PreToolUse); the shipped Bash schema does not
INVALID = tool_use(
    "Bash", {"command": "echo x > invalid.txt", "timeout": -1}, id="toolu_e2e_invalid"
)
CORRECTED = tool_use("Bash", {"command": "echo x > corrected.txt"}, id="toolu_e2e_corrected")
CRASH = tool_use("Bash", {"command": "echo x > crash.txt"}, id="toolu_e2e_crash")
FAILING = tool_use(
    "Bash",
    {"command": "echo '1 validation error for Deploy' >&2; exit 1"},
    id="toolu_e2e_failing",
)
CALLS = [DENIED, REWRITE, INVALID, CORRECTED, CRASH, FAILING]
STOP_REASON = "the release notes are not written yet"


def no_denied_file(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("writing denied.txt is not allowed", hint="Write allowed.txt instead.")


def rewrite_original(event: Any, ctx: Any) -> HookResult:
    command = event.tool_input["command"].replace("original", "rewritten", 1)
    return HookResult.modify(input={**event.tool_input, "command": command})


def crash(event: Any, ctx: Any) -> None:
    raise RuntimeError("the policy service is down")


def never_done(event: Any, ctx: Any) -> HookResult:
    return HookResult.block(STOP_REASON)


def main_script(request: MessagesRequest) -> Any:
    """Call the tools in order; retry the schema denial as its instruction says."""
    turn = request.turn
    if turn < 3:
        return CALLS[turn]
    if turn == 3:
        denial = request.result_for(INVALID["id"]) or {}
        if denial.get("is_error") and "Example of a valid input" in str(denial.get("content")):
            return CORRECTED
        return "the schema denial never arrived"
    if turn < len(CALLS):
        return CALLS[turn]
    return "All done."


@pytest.fixture(scope="module")
def main_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    tmp = tmp_path_factory.mktemp("main")
    db = tmp / "ledger.db"
    definition = AgentDefinition(
        name="e2e",
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="Bash(*denied.txt*)", hooks=[no_denied_file], priority=10),
                HookMatcher(matcher="Bash(*crash.txt*)", hooks=[crash], priority=10),
                HookMatcher(matcher="Bash", hooks=[schema_guardrail]),
                HookMatcher(matcher="Bash(echo original*)", hooks=[rewrite_original]),
            ],
            "PostToolUseFailure": [HookMatcher(matcher="Bash", hooks=[schema_nudge])],
            "AgentStop": [HookMatcher(hooks=[never_done])],
        },
    )
    guard = Guard(definition, ledger=Ledger(db))
    return run_claude(main_script, tmp, hooks=to_sdk_hooks(guard)), db


def test_denied_call_never_runs_and_the_model_reads_the_reason(
    main_run: tuple[CliRun, Path],
) -> None:
    run, _ = main_run
    assert not (run.cwd / "denied.txt").exists()
    result = run.tool_result(DENIED["id"])
    assert result["is_error"] is True
    assert "writing denied.txt is not allowed\nWrite allowed.txt instead." in run.result_text(
        DENIED["id"]
    )


def test_the_rewritten_input_is_what_runs(main_run: tuple[CliRun, Path]) -> None:
    run, db = main_run
    assert (run.cwd / "rewritten.txt").read_text() == "rewritten\n"
    (row,) = rows(
        db,
        "SELECT tool_call_arguments ->> 'command' AS asked, final_arguments ->> 'command' AS ran "
        "FROM tool_calls WHERE tool_call_id = ?",
        REWRITE["id"],
    )
    assert row == {
        "asked": "echo original > rewritten.txt",
        "ran": "echo rewritten > rewritten.txt",
    }


def test_a_schema_violation_returns_the_instruction_and_an_example(
    main_run: tuple[CliRun, Path],
) -> None:
    run, _ = main_run
    text = run.result_text(INVALID["id"])
    assert "$.timeout: expected a number >= 0" in text
    assert "Call Bash again with input that matches its schema" in text
    assert 'Example of a valid input: {"command": "ls -la"' in text
    assert not (run.cwd / "invalid.txt").exists()
    assert (run.cwd / "corrected.txt").exists()  # the model's corrected call ran


def test_a_hook_that_crashes_on_pre_tool_use_denies(main_run: tuple[CliRun, Path]) -> None:
    run, _ = main_run
    assert not (run.cwd / "crash.txt").exists()
    assert "the policy service is down" in run.result_text(CRASH["id"])


def test_the_nudge_after_a_failed_call_arrives_as_additional_context(
    main_run: tuple[CliRun, Path],
) -> None:
    run, _ = main_run
    after = next(r for r in run.requests if r.result_for(FAILING["id"]) is not None)
    shown = after.text()
    assert "PostToolUseFailure:Bash hook additional context:" in shown
    assert "Bash rejected its input" in shown and "Bash input fields:" in shown


def test_stop_blocking_keeps_the_agent_working_until_the_cap(
    main_run: tuple[CliRun, Path],
) -> None:
    run, db = main_run
    stops = rows(db, "SELECT decision, reason FROM events WHERE event = 'AgentStop' ORDER BY id")
    assert [s["decision"] for s in stops] == ["block"] * 8 + ["allow"]
    caps = rows(db, "SELECT count(*) AS n FROM hook_runs WHERE hook = 'stop-block-cap'")
    assert caps == [{"n": 1}]
    # each block sent the model back with the reason (CLI 2.1.332 wraps it in
    # 'Stop:Callback hook blocking error from command: "callback": ...')
    sent_back = [r for r in run.requests if STOP_REASON in r.last_text()]
    assert len(sent_back) == 8
    # ours let the ninth stop through, so the CLI's own cap (also 8) never had to
    assert run.result.subtype == "success"
    assert not any("consecutive times" in str(getattr(m, "data", "")) for m in run.messages)


def test_the_ledger_has_every_call(main_run: tuple[CliRun, Path]) -> None:
    run, db = main_run
    found = rows(db, "SELECT tool_call_id, status, session_id FROM tool_calls ORDER BY id")
    assert [(r["tool_call_id"], r["status"]) for r in found] == [
        (DENIED["id"], "denied"),
        (REWRITE["id"], "ok"),
        (INVALID["id"], "denied"),
        (CORRECTED["id"], "ok"),
        (CRASH["id"], "denied"),
        (FAILING["id"], "error"),
    ]
    assert {r["session_id"] for r in found} == {run.session_id}


# --- a subagent: scoped deny, ledger attribution, SubagentStop -------------------------------

WORKER_PROMPT = "You are the report worker."


def subagent_script(request: MessagesRequest) -> Any:
    if request.agent_id is None:  # the main thread delegates once, synchronously
        if request.turn == 0:
            return tool_use(
                "Agent",
                {
                    "description": "Write the report",
                    "prompt": "Write report.md",
                    "subagent_type": "worker",
                    "run_in_background": False,
                },
                id="toolu_e2e_agent",
            )
        return "The worker finished."
    plan = [
        tool_use("Bash", {"command": "echo no > worker_forbidden.txt"}),
        tool_use("Bash", {"command": "echo notes > notes.txt"}),
        "Finished.",
    ]
    if request.turn < len(plan):
        return plan[request.turn]
    if "report.md" in request.last_text() and not request.result_for("toolu_e2e_report"):
        return tool_use("Bash", {"command": "echo report > report.md"}, id="toolu_e2e_report")
    return "Report written."


def forbidden(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("workers may not write worker_forbidden.txt")


@pytest.fixture(scope="module")
def subagent_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    from claude_agent_sdk import AgentDefinition as SdkAgent

    tmp = tmp_path_factory.mktemp("subagent")
    db = tmp / "ledger.db"
    definition = AgentDefinition(
        name="lead",
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="Bash(*forbidden*)", hooks=[forbidden], agents=["worker"])
            ],
            "SubagentStop": [
                HookMatcher(matcher="worker", hooks=[RequireArtifacts(paths=["report.md"])])
            ],
        },
    )
    guard = Guard(definition, ledger=Ledger(db))
    agents = {
        "worker": SdkAgent(description="Writes reports", prompt=WORKER_PROMPT, tools=["Bash"])
    }
    run = run_claude(
        subagent_script,
        tmp,
        hooks=to_sdk_hooks(guard),
        agents=agents,
        allowed_tools=("Bash", "Agent"),
    )
    return run, db


def test_subagent_calls_reach_the_ledger_with_their_agent_id(
    subagent_run: tuple[CliRun, Path],
) -> None:
    run, db = subagent_run
    agent_ids = {r.agent_id for r in run.requests} - {None}
    assert len(agent_ids) == 1
    (agent_id,) = agent_ids
    calls = rows(db, "SELECT tool_name, agent_id, agent_type, status FROM tool_calls ORDER BY id")
    assert {(c["tool_name"], c["agent_id"], c["agent_type"]) for c in calls} == {
        ("Agent", None, None),
        ("Bash", agent_id, "worker"),
    }
    assert [c["status"] for c in calls if c["tool_name"] == "Bash"] == ["denied", "ok", "ok"]
    started = rows(db, "SELECT agent_id, agent_type FROM events WHERE event = 'SubagentStart'")
    assert started == [{"agent_id": agent_id, "agent_type": "worker"}]


def test_an_agent_scoped_rule_denies_inside_the_subagent(
    subagent_run: tuple[CliRun, Path],
) -> None:
    run, _ = subagent_run
    assert not (run.cwd / "worker_forbidden.txt").exists()
    (agent_id,) = {r.agent_id for r in run.requests} - {None}
    assert "workers may not write worker_forbidden.txt" in run.shown(agent_id)


def test_subagent_stop_is_sent_back_until_the_artifact_exists(
    subagent_run: tuple[CliRun, Path],
) -> None:
    run, db = subagent_run
    stops = rows(db, "SELECT decision, reason FROM events WHERE event = 'SubagentStop' ORDER BY id")
    assert [s["decision"] for s in stops] == ["block", "allow"]
    assert "report.md" in stops[0]["reason"]
    assert (run.cwd / "report.md").read_text() == "report\n"


# --- matcher translation against the CLI's own matching --------------------------------------

CLAUDE_MATCHERS = [
    None, "", "*", "Bash", "bash", "Ba", "Edit|Bash", "Edit, Bash", " Bash ", "^Bash$",
    "Ba.*", ".*sh", "sh$", "B", "[AB]a", "Bash(echo *)", "mcp__.*", "Task", "Agent",
    "Task|Edit", "^Task$", "Ta.k", "Bash-x", "|", "^(Bash|Agent)$", "B.sh",
]  # fmt: skip


def test_translated_matchers_fire_where_the_cli_fires(tmp_path: Path) -> None:
    """Register each Claude matcher as a raw SDK callback and compare with our translation."""
    from claude_agent_sdk import AgentDefinition as SdkAgent
    from claude_agent_sdk import HookMatcher as SdkMatcher

    fired: list[set[str]] = [set() for _ in CLAUDE_MATCHERS]

    def recorder(i: int) -> Any:
        async def callback(input_data: Any, tool_use_id: Any, context: Any) -> dict[str, Any]:
            fired[i].add(input_data["tool_name"])
            return {}

        return callback

    def script(request: MessagesRequest) -> Any:
        if request.agent_id is not None:
            return "Nothing to do."
        agent = {"description": "d", "prompt": "p", "subagent_type": "worker"}
        plan = [
            tool_use("Bash", {"command": "echo hi"}),
            tool_use("Agent", {**agent, "run_in_background": False}),
        ]
        return plan[request.turn] if request.turn < len(plan) else "Done."

    hooks = {"PreToolUse": [SdkMatcher(m, [recorder(i)]) for i, m in enumerate(CLAUDE_MATCHERS)]}
    run_claude(
        script,
        tmp_path,
        hooks=hooks,
        agents={"worker": SdkAgent(description="w", prompt="w", tools=["Bash"])},
        allowed_tools=("Bash", "Agent"),
    )
    cli = {m: fired[i] for i, m in enumerate(CLAUDE_MATCHERS)}
    ours = {
        m: {t for t in ("Bash", "Agent") if Pattern(translate_matcher(m)).matches_name(t)}
        for m in CLAUDE_MATCHERS
    }
    assert ours == cli
    assert cli["Task"] == {"Agent"} and cli["Ba"] == set()  # the run did call both tools


# --- the harness itself -----------------------------------------------------------------------


def _post(api: FakeMessagesAPI, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        api.base_url + path, data=json.dumps(body).encode(), method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        answer: dict[str, Any] = json.load(response)
    return answer


def test_fake_api_answers_whole_messages_and_counts_tokens() -> None:
    call = tool_use("Bash", {"command": "ls"}, id="toolu_x")
    with FakeMessagesAPI([call]) as api:
        first = _post(api, "/v1/messages", {"messages": [{"role": "user", "content": "hi"}]})
        second = _post(api, "/v1/messages", {"messages": []})
        tokens = _post(api, "/v1/messages/count_tokens", {"messages": []})
    assert (first["content"], first["stop_reason"]) == ([call], "tool_use")
    assert (second["content"][0]["text"], second["stop_reason"]) == ("Done.", "end_turn")
    assert tokens == {"input_tokens": 10}
    assert [r.last_text() for r in api.requests] == ["hi", ""]


def test_a_failing_script_ends_the_turn_and_is_kept() -> None:
    def script(request: MessagesRequest) -> Any:
        raise ValueError("no plan for this")

    with FakeMessagesAPI(script) as api:
        answer = _post(api, "/v1/messages", {"messages": []})
    assert answer["stop_reason"] == "end_turn"
    assert "no plan for this" in answer["content"][0]["text"]
    with pytest.raises(ValueError):
        api.raise_errors()


def test_project_settings_command_hooks_run(tmp_path: Path) -> None:
    hook = tmp_path / "deny_hook.py"
    hook.write_text(
        "import json, sys\n"
        "event = json.load(sys.stdin)\n"
        "if 'settings.txt' in event['tool_input'].get('command', ''):\n"
        "    print('blocked by the settings hook', file=sys.stderr)\n"
        "    sys.exit(2)\n"
    )
    command = f"{sys.executable} {hook}"
    settings = {
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": command}]}]
        }
    }
    call = tool_use("Bash", {"command": "echo x > settings.txt"}, id="toolu_e2e_settings")
    run = run_claude([call, "Done."], tmp_path, settings=settings)
    assert not (run.cwd / "settings.txt").exists()
    assert "blocked by the settings hook" in run.result_text(call["id"])
