"""The openai-agents adapter against the SDK's real Runner, driven by its ScriptedModel.

No network and no key: ``agents.testing.ScriptedModel`` implements the SDK's ``Model``
interface and records every request, so each test reads what the model was sent next.
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agents import (
    Agent,
    AgentHooks,
    ApplyPatchTool,
    CodeInterpreterTool,
    ComputerTool,
    CustomTool,
    FileSearchTool,
    FunctionTool,
    HostedMCPTool,
    LocalShellTool,
    RunConfig,
    Runner,
    ShellTool,
    ToolInputGuardrailTripwireTriggered,
    UserError,
    WebSearchTool,
    function_tool,
)
from agents.exceptions import AgentsException
from agents.run_config import ToolExecutionConfig
from agents.testing import ScriptedModel, assistant_message, function_call

from guardrails import (
    AgentDefinition,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    UnmatchedToolWarning,
    always_allow,
)
from guardrails import errors as guardrails_errors
from guardrails.adapters.openai_agents import (
    GuardrailsRunHooks,
    RunBlocked,
    guard_tools,
    run,
    tool_guardrails,
)
from guardrails.builtins import CompletionPromise, idempotency_guard, schema_guardrail
from guardrails.testing import RecordingHook
from tests._db import rows
from tests._hosts import bash, ledger_guard

CONFIG = RunConfig(tracing_disabled=True)


def _bash(calls: list[str], fail: bool = False) -> FunctionTool:
    return function_tool(bash(calls, fail))


_guard = ledger_guard


def _calls(tmp_path: Path) -> list[dict[str, Any]]:
    return rows(
        tmp_path / "ledger.db",
        "select session_id, tool_call_id, status, decision, final_arguments, error_message "
        "from tool_calls order by started_at, tool_call_id",
    )


def _outputs(model: ScriptedModel, call: int = 1) -> dict[str, str]:
    """The tool results the model was sent in request ``call`` (0-based), by call id."""
    items = model.calls[call].input
    return {i["call_id"]: i["output"] for i in items if i.get("type") == "function_call_output"}


def _tool_turn(*calls: tuple[str, dict[str, Any]]) -> list[Any]:
    return [function_call(name, args, call_id=f"call_{n}") for n, (name, args) in enumerate(calls)]


def _run(agent: Agent[Any], prompt: str = "go", **kwargs: Any) -> Any:
    return asyncio.run(Runner.run(agent, prompt, run_config=CONFIG, **kwargs))


def _deny_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm "):
        return HookResult.deny("rm is not allowed", hint="Move the file to ./trash instead.")
    return None


def _dry_run(event: Any, ctx: Any) -> HookResult | None:
    command = event.tool_input.get("command", "")
    if command.startswith("terraform apply") and "--dry-run" not in command:
        return HookResult.modify(input={"command": command + " --dry-run"})
    return None


def _ask(event: Any, ctx: Any) -> HookResult:
    return HookResult.ask("touches production")


def _halt(event: Any, ctx: Any) -> HookResult:
    return HookResult.halt("the budget is spent")


def _crash(event: Any, ctx: Any) -> None:
    raise RuntimeError("hook crashed")


def _rewrite(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(input={"command": "echo safe"})


# --- PreToolUse ------------------------------------------------------------------------------


def _bare(tool: FunctionTool, guard: Guard) -> FunctionTool:
    pre, post = tool_guardrails(guard, tool)
    tool.tool_input_guardrails, tool.tool_output_guardrails = [pre], [post]
    return tool


def _wrapper_only(tool: FunctionTool, guard: Guard) -> FunctionTool:
    guarded = guard_tools(guard, [tool])[0]
    assert isinstance(guarded, FunctionTool)
    guarded.tool_input_guardrails = None  # the invoker must deny on its own
    return guarded


def _guarded(tool: FunctionTool, guard: Guard) -> FunctionTool:
    guarded = guard_tools(guard, [tool])[0]
    assert isinstance(guarded, FunctionTool)
    return guarded


ATTACH: dict[str, Callable[[FunctionTool, Guard], FunctionTool]] = {
    "guard_tools": _guarded,
    "bare guardrails": _bare,
    "invoker without guardrail": _wrapper_only,
}
DENYING = {"deny": _deny_rm, "ask without approver": _ask, "failing hook": _crash}


@pytest.mark.parametrize("attach", sorted(ATTACH))
@pytest.mark.parametrize("path", sorted(DENYING))
def test_a_denied_call_never_runs_and_the_model_reads_why(
    tmp_path: Path, attach: str, path: str
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [DENYING[path]]})
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "rm -rf build"})), [assistant_message("ok")]]
    )
    _run(Agent(name="ops", model=model, tools=[ATTACH[attach](_bash(calls), guard)]))
    assert calls == []
    assert _outputs(model)["call_0"].startswith("Denied: ")
    assert [(r["tool_call_id"], r["status"]) for r in _calls(tmp_path)] == [("call_0", "denied")]


def test_the_denial_carries_the_reason_and_the_hint(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "rm -rf build"})), [assistant_message("ok")]]
    )
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash([])])))
    assert _outputs(model)["call_0"] == (
        "Denied: rm is not allowed\nMove the file to ./trash instead."
    )


@pytest.mark.parametrize("attach", ["guard_tools", "bare guardrails"])
def test_a_halt_raises_the_sdk_tripwire_and_the_call_never_runs(
    tmp_path: Path, attach: str
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_halt]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"}))])
    agent = Agent(name="ops", model=model, tools=[ATTACH[attach](_bash(calls), guard)])
    with pytest.raises(ToolInputGuardrailTripwireTriggered) as caught:
        _run(agent)
    assert calls == []
    assert caught.value.output.output_info.reason == "the budget is spent"
    assert [r["status"] for r in _calls(tmp_path)] == ["denied"]


def test_a_duplicate_side_effect_reads_the_stored_result_and_does_not_run(tmp_path: Path) -> None:
    calls: list[str] = []
    definition = AgentDefinition(
        tools={"bash": {"side_effects": True, "primary_arg": "command"}},
        hooks={
            "PreToolUse": [HookMatcher(hooks=[idempotency_guard])],
            "PostToolUse": [HookMatcher(hooks=[idempotency_guard])],
        },
    )
    guard = Guard(definition, ledger=Ledger(tmp_path / "ledger.db"))
    deploy = {"command": "make deploy"}
    model = ScriptedModel(
        [
            [function_call("bash", deploy, call_id="first")],
            [function_call("bash", deploy, call_id="again")],
            [assistant_message("ok")],
        ]
    )
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)])))
    assert calls == ["make deploy"]
    assert _outputs(model, 2)["again"] == "ran: make deploy"  # as run_tool replays it


def test_an_allowed_call_runs_and_the_model_reads_its_output(tmp_path: Path) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)])))
    assert calls == ["ls"]
    assert _outputs(model) == {"call_0": "ran: ls"}


def test_an_approver_settles_an_ask(tmp_path: Path) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_ask]}, approver=always_allow)
    model = ScriptedModel([_tool_turn(("bash", {"command": "deploy"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)])))
    assert calls == ["deploy"]


def test_guard_tools_runs_the_rewritten_input(tmp_path: Path) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_dry_run]})
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "terraform apply"})), [assistant_message("ok")]]
    )
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)])))
    assert calls == ["terraform apply --dry-run"]
    assert _outputs(model) == {"call_0": "ran: terraform apply --dry-run"}
    assert _calls(tmp_path)[0]["final_arguments"] == '{"command": "terraform apply --dry-run"}'


def test_bare_guardrails_refuse_a_rewrite_and_tell_the_model_the_new_input(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_rewrite]})
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "rm -rf /"})), [assistant_message("ok")]]
    )
    _run(Agent(name="ops", model=model, tools=[_bare(_bash(calls), guard)]))
    assert calls == []
    assert _outputs(model)["call_0"].endswith('again with this input: {"command": "echo safe"}')
    assert [r["status"] for r in _calls(tmp_path)] == ["error"]


def test_a_schema_denial_reaches_the_model_with_the_instruction_and_an_example(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [schema_guardrail]})
    model = ScriptedModel([_tool_turn(("bash", {"cmd": "ls"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)])))
    told = _outputs(model)["call_0"]
    assert calls == []
    assert "bash input does not match its schema" in told
    assert "Call bash again with input that matches its schema" in told
    assert 'Example of a valid input: {"command": "ls -la"}' in told


# --- post events ---------------------------------------------------------------------------------


def _nudge(event: Any, ctx: Any) -> HookResult:
    return HookResult.inject("Tip: prefer ls -la.")


def _shorten(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(output="[output withheld]")


@pytest.mark.parametrize("attach", ["guard_tools", "bare guardrails"])
def test_a_post_nudge_reaches_the_model_after_the_output(tmp_path: Path, attach: str) -> None:
    guard = _guard(tmp_path, {"PostToolUse": [_nudge]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=[ATTACH[attach](_bash([]), guard)]))
    assert _outputs(model) == {"call_0": "ran: ls\n\nTip: prefer ls -la."}


@pytest.mark.parametrize("attach", ["guard_tools", "bare guardrails"])
def test_updated_output_replaces_what_the_model_reads(tmp_path: Path, attach: str) -> None:
    guard = _guard(tmp_path, {"PostToolUse": [_shorten]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=[ATTACH[attach](_bash([]), guard)]))
    assert _outputs(model) == {"call_0": "[output withheld]"}


@pytest.mark.parametrize("attach", ["guard_tools", "bare guardrails"])
def test_a_failing_tool_is_a_post_tool_use_failure_with_the_real_exception(
    tmp_path: Path, attach: str
) -> None:
    failure = RecordingHook(HookResult.inject("Check the path first."))
    guard = _guard(tmp_path, {"PostToolUseFailure": [failure]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "make"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=[ATTACH[attach](_bash([], fail=True), guard)]))
    assert [e.error for e in failure.events] == ["RuntimeError: make: exploded"]
    told = _outputs(model)["call_0"]
    assert told.startswith("An error occurred while running the tool")  # the SDK's own answer
    assert told.endswith("\n\nCheck the path first.")
    [row] = _calls(tmp_path)
    assert (row["status"], row["error_message"]) == ("error", "make: exploded")


@pytest.mark.parametrize("attach", ["guard_tools", "bare guardrails"])
def test_a_tool_that_raises_is_recorded_before_the_run_fails(tmp_path: Path, attach: str) -> None:
    guard = _guard(tmp_path, {})

    @function_tool(failure_error_function=None)
    def bash(command: str) -> str:
        """Run a shell command."""
        raise RuntimeError("no shell")

    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"}))])
    with pytest.raises(UserError, match="no shell"):  # the SDK's wrapper around it
        _run(Agent(name="ops", model=model, tools=[ATTACH[attach](bash, guard)]))
    assert [(r["status"], r["error_message"]) for r in _calls(tmp_path)] == [("error", "no shell")]


@pytest.mark.parametrize("how", ["Runner.run", "run()"])
def test_a_halt_on_a_post_event_raises_run_blocked(tmp_path: Path, how: str) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PostToolUse": [_halt]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"})), [assistant_message("ok")]])
    agent = Agent(name="ops", model=model, tools=guard_tools(guard, [_bash(calls)]))
    with pytest.raises(RunBlocked, match="the budget is spent") as caught:
        if how == "run()":
            asyncio.run(run(guard, agent, "go", run_config=CONFIG))
        else:
            _run(agent)
    assert isinstance(caught.value, guardrails_errors.RunBlocked)
    assert caught.value.event_name == "PostToolUse"
    assert calls == ["ls"]
    assert len(model.calls) == 1  # the model never saw the output


# --- calls allowed but never run -------------------------------------------------------------


def _halt_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm "):
        return HookResult.halt("no rm, stop everything")
    return None


async def _decide_make_forever(event: Any, ctx: Any) -> None:
    if event.tool_input.get("command") == "make":
        await asyncio.Event().wait()  # cancelled when the SDK tears the batch down


class _HoldMakeUntilHalted(AgentHooks[Any]):
    """Keeps the allowed ``make`` call between its guardrail and its invoker until the
    ``rm`` call has halted the session."""

    def __init__(self, guard: Guard) -> None:
        self.session = guard.session("s1")

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        if "make" in getattr(context, "tool_arguments", ""):
            for _ in range(5000):
                if self.session.halted:
                    return
                await asyncio.sleep(0.001)


@pytest.mark.parametrize("how", ["Runner.run", "GuardrailsRunHooks", "run()"])
@pytest.mark.parametrize("where", ["held before its invoker", "held in its PreToolUse"])
def test_a_halt_finishes_the_sibling_call_it_stopped_as_interrupted(
    tmp_path: Path, how: str, where: str
) -> None:
    calls: list[str] = []
    held = where == "held in its PreToolUse"
    guard = _guard(tmp_path, {"PreToolUse": [_halt_rm, *([_decide_make_forever] if held else [])]})
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "rm -rf /"}), ("bash", {"command": "make"}))]
    )
    agent = Agent(
        name="ops",
        model=model,
        tools=guard_tools(guard, [_bash(calls)], session_id="s1"),
        hooks=None if held else _HoldMakeUntilHalted(guard),
    )
    with pytest.raises(ToolInputGuardrailTripwireTriggered):
        if how == "run()":
            asyncio.run(run(guard, agent, "go", session_id="s1", run_config=CONFIG))
        elif how == "GuardrailsRunHooks":
            _run(agent, hooks=GuardrailsRunHooks(guard, session_id="s1"))
        else:
            _run(agent)
    assert calls == []
    found = {r["tool_call_id"]: r["status"] for r in _calls(tmp_path)}
    # the Guard decides one event of a session at a time: `make` is either allowed first and
    # then cancelled (interrupted), or decided after the halt (denied); it never runs
    assert found["call_0"] == "denied" and found["call_1"] in ("interrupted", "denied")


async def _only_c1_needs_approval(ctx: Any, params: dict[str, Any], call_id: str) -> bool:
    return call_id == "c1"


def _approval_config(pre_approval: bool) -> RunConfig:
    return RunConfig(
        tracing_disabled=True,
        tool_execution=ToolExecutionConfig(pre_approval_tool_input_guardrails=pre_approval),
    )


@pytest.mark.parametrize("retried", [True, False], ids=["retried", "not retried"])
def test_a_rejected_call_is_finished_and_its_identical_retry_runs(
    tmp_path: Path, retried: bool
) -> None:
    definition = AgentDefinition(
        name="ops",
        tools={"deploy": {"side_effects": True}},
        hooks={
            event: [HookMatcher(hooks=[idempotency_guard])]
            for event in ("PreToolUse", "PostToolUse", "PostToolUseFailure")
        },
    )
    guard = Guard(definition, ledger=Ledger(tmp_path / "ledger.db"))
    deployed: list[str] = []

    @function_tool(needs_approval=_only_c1_needs_approval)
    def deploy(env: str) -> str:
        """Deploy to an environment."""
        deployed.append(env)
        return f"deployed {env}"

    then = (
        [function_call("deploy", {"env": "prod"}, call_id="c2")]
        if retried
        else [assistant_message("not deployed")]
    )
    model = ScriptedModel(
        [[function_call("deploy", {"env": "prod"}, call_id="c1")], then, [assistant_message("ok")]]
    )
    agent = Agent(name="ops", model=model, tools=guard_tools(guard, [deploy], session_id="s1"))
    config = _approval_config(pre_approval=True)  # our guardrail decides before the person

    async def reject_and_resume() -> None:
        paused = await Runner.run(agent, "deploy", run_config=config)
        state = paused.to_state()
        state.reject(paused.interruptions[0])
        await Runner.run(agent, state, run_config=config)

    asyncio.run(reject_and_resume())
    found = {r["tool_call_id"]: r["status"] for r in _calls(tmp_path)}
    assert found == ({"c1": "interrupted", "c2": "ok"} if retried else {"c1": "interrupted"})
    assert deployed == (["prod"] if retried else [])


@pytest.mark.parametrize("pre_approval", [False, True], ids=["decided at run", "decided before"])
def test_an_approved_call_runs_the_rewritten_input_once(tmp_path: Path, pre_approval: bool) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_dry_run]})
    tool = dataclasses.replace(_bash(calls), needs_approval=True)
    model = ScriptedModel(
        [_tool_turn(("bash", {"command": "terraform apply"})), [assistant_message("ok")]]
    )
    agent = Agent(name="ops", model=model, tools=guard_tools(guard, [tool]))
    config = _approval_config(pre_approval)

    async def approve_and_resume() -> None:
        paused = await Runner.run(agent, "go", run_config=config)
        assert calls == [] and len(paused.interruptions) == 1
        state = paused.to_state()
        state.approve(paused.interruptions[0])
        await Runner.run(agent, state, run_config=config)  # a new Usage: another session

    asyncio.run(approve_and_resume())
    assert calls == ["terraform apply --dry-run"]
    assert _outputs(model) == {"call_0": "ran: terraform apply --dry-run"}
    [row] = _calls(tmp_path)
    assert (row["status"], row["final_arguments"]) == (
        "ok",
        '{"command": "terraform apply --dry-run"}',
    )


# --- tools guard_tools cannot guard ----------------------------------------------------------


LOCAL_TOOLS: dict[str, Callable[[], Any]] = {
    "ShellTool": lambda: ShellTool(executor=lambda request: "ran"),
    "LocalShellTool": lambda: LocalShellTool(executor=lambda request: "ran"),
    "ApplyPatchTool": lambda: ApplyPatchTool(editor=object()),  # type: ignore[arg-type]
    "ComputerTool": lambda: ComputerTool(computer=object()),  # type: ignore[arg-type]
    "CustomTool": lambda: CustomTool(
        name="raw", description="Raw input.", on_invoke_tool=lambda ctx, text: text
    ),
}
HOSTED_TOOLS: dict[str, Callable[[], Any]] = {
    "WebSearchTool": WebSearchTool,
    "FileSearchTool": lambda: FileSearchTool(vector_store_ids=["vs_1"]),
    "CodeInterpreterTool": lambda: CodeInterpreterTool(
        tool_config={"type": "code_interpreter", "container": {"type": "auto"}}
    ),
    "HostedMCPTool": lambda: HostedMCPTool(
        tool_config={"type": "mcp", "server_label": "docs", "server_url": "https://example.com"}
    ),
    "ShellTool in a hosted container": lambda: ShellTool(environment={"type": "container_auto"}),
}


@pytest.mark.parametrize("kind", sorted(LOCAL_TOOLS))
def test_guard_tools_refuses_a_local_tool_it_cannot_guard(tmp_path: Path, kind: str) -> None:
    guard = _guard(tmp_path, {})
    tool = LOCAL_TOOLS[kind]()
    with pytest.raises(TypeError, match=rf"cannot guard {kind} '{tool.name}'.*unguarded="):
        guard_tools(guard, [_bash([]), tool])
    passed = guard_tools(guard, [_bash([]), tool], unguarded=[tool.name])
    assert passed[1] is tool  # named: passed through as it is, by the caller's choice


@pytest.mark.parametrize("kind", sorted(HOSTED_TOOLS))
def test_guard_tools_passes_hosted_tools_through(tmp_path: Path, kind: str) -> None:
    tool = HOSTED_TOOLS[kind]()
    assert guard_tools(_guard(tmp_path, {}), [tool])[0] is tool


# --- tools no matcher of the definition matches ---------------------------------------------


def _matching(*matchers: str | None, tools: dict[str, Any] | None = None) -> Guard:
    """A Guard whose only tool matchers are ``matchers`` (PreToolUse), recording nothing."""
    hooks = {"PreToolUse": [HookMatcher(matcher=m, hooks=[_deny_rm]) for m in matchers]}
    return Guard(AgentDefinition(name="ops", tools=tools or {}, hooks=hooks), ledger=False)


def _unmatched(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, UnmatchedToolWarning)]


def test_guard_tools_warns_once_per_tool_no_matcher_matches() -> None:
    deploy = _bash([])
    deploy.name = "deploy"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guard_tools(_matching("Read|Write"), [deploy, _bash([]), deploy])
    assert _unmatched(caught) == [
        f"tool {name!r} matches no matcher of definition 'ops'; "
        "no PreToolUse, PostToolUse or PostToolUseFailure hook runs for it"
        for name in ("deploy", "bash")
    ]
    assert {w.filename for w in caught} == {__file__}  # it points at the guard_tools call


@pytest.mark.parametrize("matcher", ["Bash", "Bash(git *)", "Read|Bash"])
def test_a_tool_named_but_for_case_is_called_out(matcher: str) -> None:
    with pytest.warns(UnmatchedToolWarning) as caught:
        guard_tools(_matching(matcher), [_bash([])])
    assert _unmatched(caught.list) == [
        "tool 'bash' matches no matcher of definition 'ops'; the definition names 'Bash' "
        "(tool names are case-sensitive)"
    ]


def test_tool_guardrails_warns_about_an_unmatched_tool_too() -> None:
    with pytest.warns(UnmatchedToolWarning, match="tool 'bash' matches no matcher"):
        tool_guardrails(_matching("Bassh"), _bash([]))


@pytest.mark.parametrize(
    "matchers",
    [["bash"], ["ba*"], ["re:b.sh"], ["!Read"], ["Read", "bash|Write"], ["*"], [""], [None]],
)
def test_no_warning_for_a_tool_a_matcher_matches(matchers: list[str | None]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guard_tools(_matching(*matchers), [_bash([])])
        tool_guardrails(_matching(*matchers), _bash([]))
    assert _unmatched(caught) == []


def test_an_argument_rule_counts_when_the_tool_has_a_primary_argument() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guard_tools(
            _matching("bash(git *)", tools={"bash": {"primary_arg": "command"}}), [_bash([])]
        )
    assert _unmatched(caught) == []
    with pytest.warns(UnmatchedToolWarning, match=r"set tools\.bash\.primary_arg"):
        guard_tools(_matching("bash(git *)"), [_bash([])])


def test_hosted_and_unguarded_tools_are_not_checked() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        guard_tools(_matching("Read"), [WebSearchTool(), _bash([])], unguarded=["bash"])
    assert _unmatched(caught) == []


# --- the ledger -------------------------------------------------------------------------------


def test_every_call_reaches_the_ledger_once_with_its_status(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    ok, failing = _bash([]), _bash([], fail=True)
    failing.name = "flaky"
    model = ScriptedModel(
        [
            _tool_turn(
                ("bash", {"command": "rm -rf /"}),
                ("bash", {"command": "ls"}),
                ("flaky", {"command": "x"}),
            ),
            [assistant_message("ok")],
        ]
    )
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [ok, failing])))
    found = {r["tool_call_id"]: (r["status"], r["decision"]) for r in _calls(tmp_path)}
    assert found == {
        "call_0": ("denied", "deny"),
        "call_1": ("ok", "allow"),
        "call_2": ("error", "allow"),
    }
    assert len({r["session_id"] for r in _calls(tmp_path)}) == 1


def test_pre_and_post_events_share_the_call_id(tmp_path: Path) -> None:
    pre, post = RecordingHook(), RecordingHook()
    guard = _guard(tmp_path, {"PreToolUse": [pre], "PostToolUse": [post]})
    model = ScriptedModel([_tool_turn(("bash", {"command": "ls"})), [assistant_message("ok")]])
    _run(Agent(name="ops", model=model, tools=guard_tools(guard, [_bash([])])))
    assert [e.tool_use_id for e in pre.events] == [e.tool_use_id for e in post.events] == ["call_0"]
    assert post.events[0].tool_response == "ran: ls"


# --- sessions, prompt and stop ------------------------------------------------------------


def test_each_runner_run_is_one_session_unless_one_is_given(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {})
    tools = guard_tools(guard, [_bash([])])
    for n in range(2):
        model = ScriptedModel(
            [[function_call("bash", {"command": "ls"}, call_id=f"a{n}")], [assistant_message("ok")]]
        )
        _run(Agent(name="ops", model=model, tools=tools), hooks=GuardrailsRunHooks(guard))
    for n in range(2):
        model = ScriptedModel(
            [[function_call("bash", {"command": "ls"}, call_id=f"b{n}")], [assistant_message("ok")]]
        )
        hooks = GuardrailsRunHooks(guard, session_id="fixed")
        _run(Agent(name="ops", model=model, tools=tools), hooks=hooks)
    sessions = {r["tool_call_id"]: r["session_id"] for r in _calls(tmp_path)}
    assert sessions["a0"] != sessions["a1"]
    assert sessions["b0"] == sessions["b1"] == "fixed"
    ended = rows(
        tmp_path / "ledger.db", "select session_id from sessions where ended_at is not null"
    )
    assert {r["session_id"] for r in ended} == {sessions["a0"], sessions["a1"]}


def _block_prompt(event: Any, ctx: Any) -> HookResult | None:
    return HookResult.block("no deploys on Friday") if "deploy" in event.prompt else None


def test_a_blocked_prompt_stops_the_run_before_the_model_is_called(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"UserPromptSubmit": [_block_prompt]})
    for start in ("hooks", "run"):
        model = ScriptedModel([[assistant_message("deploying")]])
        agent = Agent(name="ops", model=model, tools=guard_tools(guard, [_bash([])]))
        with pytest.raises(RunBlocked, match="no deploys on Friday") as caught:
            if start == "hooks":
                _run(agent, "deploy it", hooks=GuardrailsRunHooks(guard))
            else:
                asyncio.run(run(guard, agent, "deploy it", run_config=CONFIG))
        assert caught.value.event_name == "UserPromptSubmit"
        assert model.calls == ()


def test_run_adds_prompt_context_as_a_developer_message(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"UserPromptSubmit": [lambda e, c: HookResult.inject("Use make.")]})
    model = ScriptedModel([[assistant_message("ok")]])
    asyncio.run(run(guard, Agent(name="ops", model=model), "build it", run_config=CONFIG))
    assert model.calls[0].input == [
        {"role": "user", "content": "build it"},
        {"role": "developer", "content": "Use make."},
    ]


def test_run_holds_the_agent_until_the_promise_appears(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"AgentStop": [CompletionPromise("DONE", max_iterations=5)]})
    model = ScriptedModel(
        [[assistant_message("halfway")], [assistant_message("finished <promise>DONE</promise>")]]
    )
    result = asyncio.run(run(guard, Agent(name="ops", model=model), "build it", run_config=CONFIG))
    assert result.final_output == "finished <promise>DONE</promise>"
    sent_back = model.calls[1].input[-1]
    assert sent_back["role"] == "user" and "<promise>DONE</promise>" in sent_back["content"]
    stops = rows(
        tmp_path / "ledger.db", "select decision from events where event = 'AgentStop' order by id"
    )
    assert [s["decision"] for s in stops] == ["block", "allow"]


def test_run_lets_the_stop_through_at_the_guards_block_cap(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"AgentStop": [lambda e, c: HookResult.block("keep going")]})
    model = ScriptedModel([[assistant_message(f"try {n}")] for n in range(9)])
    result = asyncio.run(run(guard, Agent(name="ops", model=model), "go", run_config=CONFIG))
    assert result.final_output == "try 8"
    assert len(model.calls) == 9  # 8 consecutive blocks, then the Guard lets it stop


def test_run_hooks_record_a_blocked_stop_but_cannot_continue_the_run(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"AgentStop": [lambda e, c: HookResult.block("not yet")]})
    hooks = GuardrailsRunHooks(guard)
    model = ScriptedModel([[assistant_message("done?")]])
    result = _run(Agent(name="ops", model=model), hooks=hooks)
    assert result.final_output == "done?"
    assert hooks.last_stop is not None and hooks.last_stop.blocked
    assert hooks.last_stop.reason == "not yet"


# --- the SDK internals the adapter reaches into ------------------------------------------------
# Each check names one private (or unpublished) piece of openai-agents the adapter relies on, so
# an SDK upgrade that moves it fails here, saying what broke, rather than weakening the guard.


def _failure_formatter_functions() -> None:
    from agents.run_context import RunContextWrapper
    from agents.tool import (
        maybe_invoke_function_tool_failure_error_function,
        set_function_tool_failure_error_function,
    )

    tool = _bash([])
    set_function_tool_failure_error_function(tool, lambda ctx, error: f"handled: {error}")
    answer = maybe_invoke_function_tool_failure_error_function(
        function_tool=tool, context=RunContextWrapper(context=None), error=RuntimeError("x")
    )
    assert asyncio.run(answer) == "handled: x"


def _bind_function_tool() -> None:
    tool = _bash([])
    bind = tool.on_invoke_tool.__agents_bind_function_tool__  # type: ignore[attr-defined]
    assert callable(bind(dataclasses.replace(tool)))


def _prepared_arguments() -> None:
    from agents.tool_context import ToolContext

    calls: list[str] = []
    tool = _bash(calls)
    invoker: Any = tool.on_invoke_tool
    ctx: ToolContext[Any] = ToolContext(
        context=None, tool_name="bash", tool_call_id="c1", tool_arguments='{"command": "a"}'
    )
    ctx._function_tool_arguments = invoker.prepare_arguments('{"command": "a"}', "bash")
    asyncio.run(invoker(ctx, '{"command": "b"}'))  # the SDK refuses other arguments...
    assert calls == []
    ctx._function_tool_arguments = None  # ...which is why the invoker clears them for a rewrite
    asyncio.run(invoker(ctx, '{"command": "b"}'))
    assert calls == ["b"]


def _tool_context() -> None:
    from agents.tool_context import ToolContext

    ctx: ToolContext[Any] = ToolContext(
        context=None, tool_name="bash", tool_call_id="c1", tool_arguments="{}"
    )
    assert (ctx.tool_name, ctx.tool_call_id, ctx.tool_arguments) == ("bash", "c1", "{}")
    assert ctx.usage is not None and ctx.is_tool_approved("bash", "c1") is None


def _approval_result() -> None:
    from agents.tool import FunctionToolResult

    fields = {f.name for f in dataclasses.fields(FunctionToolResult)}
    assert "run_item" in fields  # a paused call's task returns its ToolApprovalItem there


def _guardrail_in_the_calls_task() -> None:
    seen: list[asyncio.Task[Any] | None] = []

    @function_tool
    def bash(command: str) -> str:
        """Run a shell command."""
        return command

    async def record(data: Any) -> Any:
        from agents import ToolGuardrailFunctionOutput

        seen.append(asyncio.current_task())
        return ToolGuardrailFunctionOutput.allow()

    from agents import ToolInputGuardrail

    bash.tool_input_guardrails = [ToolInputGuardrail(record)]
    model = ScriptedModel(
        [
            _tool_turn(("bash", {"command": "a"}), ("bash", {"command": "b"})),
            [assistant_message("ok")],
        ]
    )
    _run(Agent(name="ops", model=model, tools=[bash]))
    assert len(seen) == 2 and seen[0] is not seen[1]  # one task per call: ours to watch


REACH_INS: dict[str, tuple[str, Callable[[], None]]] = {
    "agents.tool.set_function_tool_failure_error_function / "
    "maybe_invoke_function_tool_failure_error_function": (
        "the failure formatter that records a tool's exception",
        _failure_formatter_functions,
    ),
    "FunctionTool.on_invoke_tool.__agents_bind_function_tool__": (
        "guarding an already guarded tool afresh",
        _bind_function_tool,
    ),
    "ToolContext._function_tool_arguments": (
        "running a rewritten input",
        _prepared_arguments,
    ),
    "agents.tool_context.ToolContext": ("every tool event", _tool_context),
    "FunctionToolResult.run_item": ("keeping a call paused for approval", _approval_result),
    "tool input guardrails run in the call's own task": (
        "finishing calls the SDK drops",
        _guardrail_in_the_calls_task,
    ),
}


@pytest.mark.parametrize("name", sorted(REACH_INS))
def test_the_sdk_internals_the_adapter_relies_on_are_still_there(name: str) -> None:
    purpose, check = REACH_INS[name]
    try:
        check()
    except Exception as exc:
        pytest.fail(
            f"openai-agents changed {name}, which guardrails.adapters.openai_agents relies on "
            f"for {purpose}: {type(exc).__name__}: {exc}. Adapt the adapter before upgrading."
        )


def test_run_blocked_is_both_ours_and_an_sdk_exception() -> None:
    assert issubclass(RunBlocked, guardrails_errors.RunBlocked)
    assert issubclass(RunBlocked, AgentsException)  # so the SDK does not wrap it in UserError
    assert "decision" in inspect.signature(RunBlocked).parameters
