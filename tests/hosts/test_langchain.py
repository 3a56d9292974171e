"""The LangChain v1 middleware against the real ``create_agent`` graph and a scripted chat model.

No network and no key: ``ScriptedChat`` is LangChain's ``GenericFakeChatModel`` with
tool binding, and it keeps every request so a test reads what the model was sent next.
Core cases run through both ``invoke`` (sync hooks) and ``ainvoke`` (async hooks).
"""

from __future__ import annotations

import asyncio
import gc
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.errors import ParentCommand
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from guardrails import (
    AgentDefinition,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    UnmatchedToolWarning,
    always_allow,
)
from guardrails.adapters import langchain as langchain_adapter
from guardrails.adapters.langchain import _SESSION, GuardrailsMiddleware
from guardrails.builtins import (
    CompletionPromise,
    idempotency_guard,
    schema_guardrail,
    schema_nudge,
)
from guardrails.testing import RecordingHook
from tests._db import rows
from tests._hosts import bash, ledger_guard


class ScriptedChat(GenericFakeChatModel):
    """Answers with the scripted messages in order and records each request."""

    requests: list[list[BaseMessage]] = []

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.requests.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


def _model(*replies: AIMessage | str) -> ScriptedChat:
    return ScriptedChat(messages=iter(replies))


def _calls_tool(*calls: tuple[str, dict[str, Any]]) -> AIMessage:
    return AIMessage(
        content="",
        tool_calls=[{"name": n, "args": a, "id": f"call_{i}"} for i, (n, a) in enumerate(calls)],
    )


def _bash(calls: list[str], fail: bool = False) -> BaseTool:
    return tool(bash(calls, fail))


_guard = ledger_guard


def _invoke(
    model: ScriptedChat,
    tools: list[BaseTool],
    guard: Guard,
    prompt: str = "go",
    mode: str = "sync",
    middleware: Sequence[AgentMiddleware[Any, Any, Any]] = (),
    **kwargs: Any,
) -> list[BaseMessage]:
    mw = [GuardrailsMiddleware(guard), *middleware]
    agent = create_agent(model, tools=tools, middleware=mw, **kwargs.pop("agent", {}))
    state = {"messages": [HumanMessage(prompt)]}
    out = (
        agent.invoke(state, **kwargs)
        if mode == "sync"
        else asyncio.run(agent.ainvoke(state, **kwargs))
    )
    return list(out["messages"])


def _tool_messages(messages: list[BaseMessage]) -> dict[str, ToolMessage]:
    return {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}


def _calls(tmp_path: Path) -> list[dict[str, Any]]:
    return rows(
        tmp_path / "ledger.db",
        "select session_id, tool_call_id, status, decision, final_arguments, error_message "
        "from tool_calls order by started_at, tool_call_id",
    )


def _deny_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm "):
        return HookResult.deny("rm is not allowed", hint="Move the file to ./trash instead.")
    return None


def _ask(event: Any, ctx: Any) -> HookResult:
    return HookResult.ask("touches production")


def _halt(event: Any, ctx: Any) -> HookResult:
    return HookResult.halt("the budget is spent")


def _crash(event: Any, ctx: Any) -> None:
    raise RuntimeError("hook crashed")


MODES = ["sync", "async"]
DENYING: dict[str, Callable[..., Any]] = {
    "deny": _deny_rm,
    "ask without approver": _ask,
    "halt": _halt,
    "failing hook": _crash,
}


# --- PreToolUse ----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("path", sorted(DENYING))
def test_a_denied_call_never_runs_and_the_model_reads_why(
    tmp_path: Path, mode: str, path: str
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [DENYING[path]]})
    model = _model(_calls_tool(("bash", {"command": "rm -rf build"})), "ok")
    messages = _invoke(model, [_bash(calls)], guard, mode=mode)
    assert calls == []
    answer = _tool_messages(messages)["call_0"]
    assert answer.status == "error" and str(answer.content).startswith("Denied: ")
    assert [(r["tool_call_id"], r["status"]) for r in _calls(tmp_path)] == [("call_0", "denied")]


def test_the_denial_carries_the_reason_and_the_hint(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    model = _model(_calls_tool(("bash", {"command": "rm -rf build"})), "ok")
    _invoke(model, [_bash([])], guard)
    told = model.requests[1][-1]
    assert isinstance(told, ToolMessage)
    assert told.content == "Denied: rm is not allowed\nMove the file to ./trash instead."


@pytest.mark.parametrize("mode", MODES)
def test_an_allowed_call_runs_and_the_model_reads_its_output(tmp_path: Path, mode: str) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    model = _model(_calls_tool(("bash", {"command": "ls"})), "ok")
    _invoke(model, [_bash(calls)], guard, mode=mode)
    assert calls == ["ls"]
    told = model.requests[1][-1]
    assert isinstance(told, ToolMessage) and told.content == "ran: ls" and told.status == "success"


def test_an_approver_settles_an_ask(tmp_path: Path) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_ask]}, approver=always_allow)
    _invoke(_model(_calls_tool(("bash", {"command": "deploy"})), "ok"), [_bash(calls)], guard)
    assert calls == ["deploy"]


def _dry_run(event: Any, ctx: Any) -> HookResult | None:
    command = event.tool_input.get("command", "")
    if command.startswith("terraform apply") and "--dry-run" not in command:
        return HookResult.modify(input={"command": command + " --dry-run"})
    return None


@pytest.mark.parametrize("mode", MODES)
def test_a_rewrite_runs_the_rewritten_input(tmp_path: Path, mode: str) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_dry_run]})
    model = _model(_calls_tool(("bash", {"command": "terraform apply"})), "ok")
    messages = _invoke(model, [_bash(calls)], guard, mode=mode)
    assert calls == ["terraform apply --dry-run"]
    assert _tool_messages(messages)["call_0"].content == "ran: terraform apply --dry-run"
    assert _calls(tmp_path)[0]["final_arguments"] == '{"command": "terraform apply --dry-run"}'


def test_a_schema_denial_reaches_the_model_with_the_instruction_and_an_example(
    tmp_path: Path,
) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [schema_guardrail]})
    model = _model(_calls_tool(("bash", {"cmd": "ls"})), "ok")
    _invoke(model, [_bash(calls)], guard)
    told = str(model.requests[1][-1].content)
    assert calls == []
    assert "bash input does not match its schema" in told
    assert "Call bash again with input that matches its schema" in told
    assert 'Example of a valid input: {"command": "ls -la"}' in told


# --- post events ----------------------------------------------------------------------------------


def _nudge(event: Any, ctx: Any) -> HookResult:
    return HookResult.inject("Tip: prefer ls -la.")


def _shorten(event: Any, ctx: Any) -> HookResult:
    return HookResult.modify(output="[output withheld]")


@pytest.mark.parametrize("mode", MODES)
def test_a_post_nudge_reaches_the_model_after_the_output(tmp_path: Path, mode: str) -> None:
    guard = _guard(tmp_path, {"PostToolUse": [_nudge]})
    model = _model(_calls_tool(("bash", {"command": "ls"})), "ok")
    _invoke(model, [_bash([])], guard, mode=mode)
    assert model.requests[1][-1].content == "ran: ls\n\nTip: prefer ls -la."


def test_updated_output_replaces_the_content(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PostToolUse": [_shorten]})
    model = _model(_calls_tool(("bash", {"command": "ls"})), "ok")
    _invoke(model, [_bash([])], guard)
    assert model.requests[1][-1].content == "[output withheld]"


def test_a_tool_error_message_is_a_failure_and_gets_the_schema_nudge(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PostToolUseFailure": [schema_nudge]})
    model = _model(_calls_tool(("bash", {"cmd": "ls"})), "ok")  # LangChain rejects the args
    _invoke(model, [_bash([])], guard)
    told = model.requests[1][-1]
    assert isinstance(told, ToolMessage) and told.status == "error"
    assert "command: Field required" in str(told.content)  # LangChain's own message
    assert 'Example of a valid input: {"command": "ls -la"}' in str(told.content)  # our nudge
    assert [r["status"] for r in _calls(tmp_path)] == ["error"]


def test_a_tool_exception_is_recorded_and_raised_again(tmp_path: Path) -> None:
    failure = RecordingHook()
    guard = _guard(tmp_path, {"PostToolUseFailure": [failure]})
    model = _model(_calls_tool(("bash", {"command": "make"})), "ok")
    with pytest.raises(RuntimeError, match="make: exploded"):
        _invoke(model, [_bash([], fail=True)], guard)
    assert [e.error for e in failure.events] == ["RuntimeError: make: exploded"]
    assert [(r["status"], r["error_message"]) for r in _calls(tmp_path)] == [
        ("error", "make: exploded")
    ]


def test_a_command_result_gets_the_nudge_in_its_tool_message(tmp_path: Path) -> None:
    @tool
    def remember(note: str) -> Command[Any]:
        """Remember a note."""
        return Command(update={"messages": [ToolMessage("noted", tool_call_id="call_0")]})

    guard = _guard(tmp_path, {"PostToolUse": [_nudge]})
    model = _model(_calls_tool(("remember", {"note": "x"})), "ok")
    messages = _invoke(model, [remember], guard)
    assert _tool_messages(messages)["call_0"].content == "noted\n\nTip: prefer ls -la."


# --- tools no matcher of the definition matches ---------------------------------------------------


def _matching(*matchers: str | None) -> Guard:
    """A Guard whose only tool matchers are ``matchers`` (PreToolUse), recording nothing."""
    hooks = {"PreToolUse": [HookMatcher(matcher=m, hooks=[_deny_rm]) for m in matchers]}
    return Guard(AgentDefinition(name="ops", hooks=hooks), ledger=False)


def _warned(guard: Guard, mode: str, turns: int = 1) -> list[str]:
    """The UnmatchedToolWarning messages of one agent that calls ``bash`` twice in each of
    ``turns`` turns."""
    calls: list[str] = []
    replies = [
        AIMessage(
            content="",
            tool_calls=[
                {"name": "bash", "args": {"command": c}, "id": f"call_{t}_{c}"}
                for c in ("ls", "pwd")
            ],
        )
        for t in range(turns)
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _invoke(_model(*replies, "done"), [_bash(calls)], guard, mode=mode)
    assert sorted(calls) == sorted(["ls", "pwd"] * turns)  # a warning, not a refusal
    return [str(w.message) for w in caught if issubclass(w.category, UnmatchedToolWarning)]


@pytest.mark.parametrize("mode", MODES)
def test_the_first_call_of_a_tool_no_matcher_matches_warns_once(tmp_path: Path, mode: str) -> None:
    assert _warned(_matching("Read|Write"), mode, turns=2) == [
        "tool 'bash' matches no matcher of definition 'ops'; "
        "no PreToolUse, PostToolUse or PostToolUseFailure hook runs for it"
    ]


@pytest.mark.parametrize("matcher", ["Bash", "Bash(git *)"])
def test_a_tool_named_but_for_case_is_called_out(tmp_path: Path, matcher: str) -> None:
    assert _warned(_matching(matcher), "sync") == [
        "tool 'bash' matches no matcher of definition 'ops'; the definition names 'Bash' "
        "(tool names are case-sensitive)"
    ]


@pytest.mark.parametrize("matchers", [["bash"], ["b*"], ["Read", "!Read"], ["*"], [""], [None]])
def test_no_warning_for_a_tool_a_matcher_matches(
    tmp_path: Path, matchers: list[str | None]
) -> None:
    assert _warned(_matching(*matchers), "async") == []


# --- the ledger -----------------------------------------------------------------------------------


def test_every_call_reaches_the_ledger_once_with_its_status(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"PreToolUse": [_deny_rm]})
    model = _model(
        _calls_tool(
            ("bash", {"command": "rm -rf /"}), ("bash", {"command": "ls"}), ("bash", {"cmd": "x"})
        ),
        "ok",
    )
    _invoke(model, [_bash([])], guard)
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
    _invoke(_model(_calls_tool(("bash", {"command": "ls"})), "ok"), [_bash([])], guard)
    assert [e.tool_use_id for e in pre.events] == [e.tool_use_id for e in post.events] == ["call_0"]
    assert post.events[0].tool_response == "ran: ls"


# --- sessions -----------------------------------------------------------------------------------


def test_each_invocation_is_a_session_and_a_thread_is_one(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {})
    for n in range(2):
        model = _model(
            AIMessage("", tool_calls=[{"name": "bash", "args": {"command": "ls"}, "id": f"a{n}"}]),
            "ok",
        )
        _invoke(model, [_bash([])], guard)
    saver = InMemorySaver()
    for n in range(2):
        model = _model(
            AIMessage("", tool_calls=[{"name": "bash", "args": {"command": "ls"}, "id": f"t{n}"}]),
            "ok",
        )
        config = {"configurable": {"thread_id": "thread-7"}}
        _invoke(model, [_bash([])], guard, agent={"checkpointer": saver}, config=config)
    sessions = {r["tool_call_id"]: r["session_id"] for r in _calls(tmp_path)}
    assert sessions["a0"] != sessions["a1"]
    assert sessions["t0"] == sessions["t1"] == "thread-7"
    ended = rows(
        tmp_path / "ledger.db", "select session_id from sessions where ended_at is not null"
    )
    assert {r["session_id"] for r in ended} == {sessions["a0"], sessions["a1"]}


# --- prompt, halt and stop -----------------------------------------------------------------------


def _block_prompt(event: Any, ctx: Any) -> HookResult | None:
    return HookResult.block("no deploys on Friday") if "deploy" in event.prompt else None


@pytest.mark.parametrize("mode", MODES)
def test_a_blocked_prompt_ends_the_agent_with_the_reason(tmp_path: Path, mode: str) -> None:
    guard = _guard(
        tmp_path,
        {"UserPromptSubmit": [_block_prompt], "AgentStop": [lambda e, c: HookResult.block("x")]},
    )
    model = _model("deploying")
    messages = _invoke(model, [_bash([])], guard, prompt="deploy it", mode=mode)
    assert model.requests == []
    assert isinstance(messages[-1], AIMessage)
    assert messages[-1].content == "Prompt blocked: no deploys on Friday"


def test_prompt_context_reaches_the_model_after_the_prompt(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"UserPromptSubmit": [lambda e, c: HookResult.inject("Use make.")]})
    model = _model("ok")
    _invoke(model, [_bash([])], guard, prompt="build it")
    assert [(type(m).__name__, m.content) for m in model.requests[0]] == [
        ("HumanMessage", "build it"),
        ("HumanMessage", "Use make."),
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_halt_ends_the_agent_before_its_next_model_call(tmp_path: Path, mode: str) -> None:
    guard = _guard(tmp_path, {"PreToolUse": [_halt]})
    model = _model(_calls_tool(("bash", {"command": "ls"})), "never asked")
    messages = _invoke(model, [_bash([])], guard, mode=mode)
    assert len(model.requests) == 1
    assert messages[-1].content == "Halted: the budget is spent"


@pytest.mark.parametrize("mode", MODES)
def test_a_halt_ends_the_agent_after_the_guard_let_its_session_go(
    tmp_path: Path, mode: str
) -> None:
    """The halt is in the ledger, not in the Session the Guard let go: the check before the
    model's next call reads it there (and the stop is not run for a halted session)."""
    from langgraph.runtime import Runtime

    guard = _guard(tmp_path, {"PreToolUse": [_halt]}, session_ttl=0.0)
    assert guard.session("T").sync.pre_tool_use("bash", {"command": "ls"}).halted
    assert "T" in guard.sweep_sessions() + guard.sweep_sessions()
    gc.collect()
    mw, state, runtime = GuardrailsMiddleware(guard), {_SESSION: "T", "messages": []}, Runtime()
    if mode == "sync":
        update = mw.before_model(state, runtime)  # type: ignore[arg-type]
        stop = mw.after_agent(state, runtime)  # type: ignore[arg-type]
    else:
        update = asyncio.run(mw.abefore_model(state, runtime))  # type: ignore[arg-type]
        stop = asyncio.run(mw.aafter_agent(state, runtime))  # type: ignore[arg-type]
    assert update is not None and update["jump_to"] == "end"
    assert update["messages"][0].content == "Halted: the budget is spent"
    assert stop is None
    assert guard.ledger is not None
    assert guard.ledger.reader.session_stop_decisions("T") == []


@pytest.mark.parametrize("mode", MODES)
def test_the_stop_hook_holds_the_agent_until_the_promise_appears(tmp_path: Path, mode: str) -> None:
    guard = _guard(tmp_path, {"AgentStop": [CompletionPromise("DONE", max_iterations=5)]})
    model = _model("halfway", "still going", "finished <promise>DONE</promise>")
    messages = _invoke(model, [_bash([])], guard, mode=mode)
    assert len(model.requests) == 3
    sent_back = model.requests[1][-1]
    assert isinstance(sent_back, HumanMessage) and "<promise>DONE</promise>" in sent_back.content
    assert messages[-1].content == "finished <promise>DONE</promise>"
    stops = rows(
        tmp_path / "ledger.db", "select decision from events where event = 'AgentStop' order by id"
    )
    assert [s["decision"] for s in stops] == ["block", "block", "allow"]


def test_the_guards_block_cap_ends_a_stop_hook_that_never_lets_go(tmp_path: Path) -> None:
    guard = _guard(tmp_path, {"AgentStop": [lambda e, c: HookResult.block("keep going")]})
    model = _model(*[f"try {n}" for n in range(9)])
    messages = _invoke(model, [_bash([])], guard)
    assert len(model.requests) == 9  # 8 consecutive blocks, then the Guard lets it stop
    assert messages[-1].content == "try 8"


def _halt_rm(event: Any, ctx: Any) -> HookResult | None:
    if event.tool_input.get("command", "").startswith("rm "):
        return HookResult.halt("no rm, stop everything")
    return None


async def _decided_after_the_halt(event: Any, ctx: Any) -> None:
    """Holds the other calls' PreToolUse until the ``rm`` call has halted the session."""
    for _ in range(5000):
        if ctx.session.halted:
            return
        await asyncio.sleep(0.001)


def test_a_call_decided_after_a_sibling_halted_never_runs(tmp_path: Path) -> None:
    calls: list[str] = []
    guard = _guard(tmp_path, {"PreToolUse": [_halt_rm, _decided_after_the_halt]})
    model = _model(
        _calls_tool(
            ("bash", {"command": "rm -rf /"}),
            ("bash", {"command": "ls"}),
            ("bash", {"command": "make"}),
        ),
        "never asked",
    )
    messages = _invoke(model, [_bash(calls)], guard, mode="async")  # the calls run concurrently
    assert calls == []
    found = {r["tool_call_id"]: r["status"] for r in _calls(tmp_path)}
    # the Guard runs one event of a session at a time, so the siblings are decided after
    # the halt and denied by it (without that lock, the adapter's re-check interrupts them)
    assert found["call_0"] == "denied"
    assert found["call_1"] in ("denied", "interrupted") and found["call_2"] in (
        "denied",
        "interrupted",
    )
    told = _tool_messages(messages)["call_1"]
    assert told.status == "error" and "halted" in str(told.content)


# --- interrupt() inside a tool --------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_an_interrupt_in_a_tool_pauses_the_call_and_resume_finishes_it(
    tmp_path: Path, mode: str
) -> None:
    post, failure = RecordingHook(), RecordingHook()
    definition = AgentDefinition(
        name="ops",
        tools={"deploy": {"side_effects": True}},
        hooks={
            "PreToolUse": [HookMatcher(hooks=[idempotency_guard])],
            "PostToolUse": [HookMatcher(hooks=[idempotency_guard, post])],
            "PostToolUseFailure": [HookMatcher(hooks=[idempotency_guard, failure])],
        },
    )
    guard = Guard(definition, ledger=Ledger(tmp_path / "ledger.db"))
    deployed: list[str] = []

    @tool
    def deploy(env: str) -> str:
        """Deploy to an environment, once a person confirms."""
        if not interrupt({"confirm": env}):
            return "not confirmed"
        deployed.append(env)
        return f"deployed {env}"

    model = _model(_calls_tool(("deploy", {"env": "prod"})), "done")
    agent = create_agent(
        model,
        tools=[deploy],
        middleware=[GuardrailsMiddleware(guard)],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "t1"}}

    def step(value: Any) -> Any:
        if mode == "sync":
            return agent.invoke(value, config)
        return asyncio.run(agent.ainvoke(value, config))

    paused = step({"messages": [HumanMessage("deploy")]})
    assert paused["__interrupt__"]  # the graph waits for the person
    assert [r["status"] for r in _calls(tmp_path)] == ["pending"]  # paused, not failed
    step(Command(resume=True))
    assert deployed == ["prod"]  # the resumed call was not refused as already running
    assert failure.events == []
    assert [e.tool_response for e in post.events] == ["deployed prod"]
    assert [(r["tool_call_id"], r["status"]) for r in _calls(tmp_path)] == [("call_0", "ok")]


def test_a_tool_handing_over_to_the_parent_graph_ends_the_call_as_done(tmp_path: Path) -> None:
    post, failure = RecordingHook(), RecordingHook()
    guard = _guard(tmp_path, {"PostToolUse": [post], "PostToolUseFailure": [failure]})

    @tool
    def handover(note: str) -> str:
        """Hand the conversation over to the parent graph."""
        update = {"messages": [ToolMessage("handed over", tool_call_id="call_0")]}
        raise ParentCommand(Command(graph=Command.PARENT, goto="after", update=update))

    inner = create_agent(
        _model(_calls_tool(("handover", {"note": "x"})), "never asked"),
        tools=[handover],
        middleware=[GuardrailsMiddleware(guard)],
    )
    outer = StateGraph(MessagesState)
    outer.add_node("agent", inner)
    outer.add_node("after", lambda state: {"messages": [AIMessage("the parent took over")]})
    outer.add_edge(START, "agent")
    outer.add_edge("after", END)
    out = outer.compile().invoke({"messages": [HumanMessage("go")]})
    assert out["messages"][-1].content == "the parent took over"
    assert failure.events == []
    assert [e.tool_response for e in post.events] == ["handed over"]
    assert [r["status"] for r in _calls(tmp_path)] == ["ok"]


# --- the thread id on an older langgraph ---------------------------------------------------------


def test_the_thread_id_falls_back_to_the_config_without_execution_info() -> None:
    from langchain_core.runnables import RunnableLambda
    from langgraph.runtime import Runtime

    bare = Runtime()  # execution_info is None, as on a langgraph before 1.1.3
    read = RunnableLambda(lambda _: langchain_adapter._thread(bare))
    assert read.invoke(None, {"configurable": {"thread_id": "t9"}}) == "t9"
    assert langchain_adapter._thread(bare) is None  # outside a run: no thread


def test_a_thread_is_one_session_on_a_langgraph_without_execution_info(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(langchain_adapter, "_execution_info", lambda runtime: None)
    guard = _guard(tmp_path, {})
    saver = InMemorySaver()
    for n in range(2):
        model = _model(
            AIMessage("", tool_calls=[{"name": "bash", "args": {"command": "ls"}, "id": f"t{n}"}]),
            "ok",
        )
        config = {"configurable": {"thread_id": "thread-8"}}
        _invoke(model, [_bash([])], guard, agent={"checkpointer": saver}, config=config)
    assert {r["session_id"] for r in _calls(tmp_path)} == {"thread-8"}


# --- the framework internals the adapter reaches into -------------------------------------------
# Each check names one private (or recent) piece of LangChain / LangGraph the middleware relies
# on, so an upgrade that moves it fails here, saying what broke, rather than weakening the guard.


class _Probe(AgentMiddleware[Any, Any, Any]):
    """Records what the middleware hooks are given."""

    def __init__(self) -> None:
        super().__init__()
        self.runtimes: list[Any] = []
        self.requests: list[Any] = []

    def before_agent(self, state: Any, runtime: Any) -> None:
        self.runtimes.append(runtime)

    def wrap_tool_call(self, request: Any, handler: Any) -> Any:
        self.requests.append(request)
        return handler(request)


def _probe_run(tmp_path: Path) -> tuple[_Probe, Any, dict[str, Any]]:
    probe = _Probe()
    guard = _guard(tmp_path, {})
    agent = create_agent(
        _model(_calls_tool(("bash", {"command": "ls"})), "ok"),
        tools=[_bash([])],
        middleware=[GuardrailsMiddleware(guard), probe],
        checkpointer=InMemorySaver(),
    )
    config: Any = {"configurable": {"thread_id": "probe-thread"}}
    out = agent.invoke({"messages": [HumanMessage("go")]}, config)
    return probe, agent.get_state(config).values, out


def _private_state(tmp_path: Path) -> None:
    _, saved, out = _probe_run(tmp_path)
    for key in ("hookrails_session_id", "hookrails_ended"):
        assert key not in out, f"{key} leaked into the agent's output (PrivateStateAttr)"
        assert key not in saved, f"{key} was checkpointed (UntrackedValue)"


def _execution_info(tmp_path: Path) -> None:
    probe, _, _ = _probe_run(tmp_path)
    assert probe.runtimes[0].execution_info.thread_id == "probe-thread"


def _tool_runtime_config(tmp_path: Path) -> None:
    probe, _, _ = _probe_run(tmp_path)
    request = probe.requests[0]
    assert request.runtime.config["configurable"]["thread_id"] == "probe-thread"
    assert request.override(tool_call={**request.tool_call, "args": {}}).tool_call["args"] == {}


def _interrupt_bubbles_up(tmp_path: Path) -> None:
    from langgraph.errors import GraphBubbleUp, GraphInterrupt, ParentCommand

    assert issubclass(GraphInterrupt, GraphBubbleUp) and issubclass(ParentCommand, GraphBubbleUp)


REACH_INS: dict[str, tuple[str, Callable[[Path], None]]] = {
    "langchain PrivateStateAttr + langgraph UntrackedValue": (
        "keeping the session id out of the output and the checkpoint",
        _private_state,
    ),
    "langgraph Runtime.execution_info.thread_id": (
        "the thread as the session (a fallback reads the config)",
        _execution_info,
    ),
    "ToolCallRequest.runtime.config and .override": (
        "the session of a call, and a rewritten input",
        _tool_runtime_config,
    ),
    "langgraph.errors.GraphBubbleUp": (
        "telling an interrupt from a failure",
        _interrupt_bubbles_up,
    ),
}


@pytest.mark.parametrize("name", sorted(REACH_INS))
def test_the_framework_internals_the_middleware_relies_on_are_still_there(
    tmp_path: Path, name: str
) -> None:
    purpose, check = REACH_INS[name]
    try:
        check(tmp_path)
    except Exception as exc:
        pytest.fail(
            f"LangChain/LangGraph changed {name}, which guardrails.adapters.langchain relies "
            f"on for {purpose}: {type(exc).__name__}: {exc}. Adapt the middleware first."
        )
