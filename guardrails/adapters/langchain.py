"""LangChain v1: a Guard as an ``AgentMiddleware`` for ``create_agent``.

    from guardrails.adapters.langchain import GuardrailsMiddleware

    agent = create_agent(model, tools=[bash], middleware=[GuardrailsMiddleware(guard)])

What maps to what (the Guard decides; this module only translates):

- ``wrap_tool_call`` / ``awrap_tool_call`` run each call through the Guard, as
  ``Session.run_tool`` does. PreToolUse comes first: deny (or an ``ask`` the Guard's
  approver does not allow) returns a ``ToolMessage`` with the reason and hint,
  ``status="error"``, and the tool never runs; a rewrite calls the handler with the
  rewritten ``args``.
- After the handler: a ``ToolMessage`` with ``status="error"`` (LangChain's answer to
  bad arguments, or a ``ToolErrorMiddleware`` placed after this one) is a
  ``PostToolUseFailure`` whose error is its content; an exception is a
  ``PostToolUseFailure`` and is raised again, as LangChain does without us; anything
  else is a ``PostToolUse`` whose ``tool_response`` is the message content.
  ``updated_output`` replaces the content; injected context (pre and post) and a
  PostToolUse block reason are appended to it. A tool returning a ``Command`` is
  handled through the ``ToolMessage`` in its update.
- ``langgraph.types.interrupt()`` inside a tool is a pause, not a failure: no post
  event runs and the call stays ``pending``. On resume LangGraph runs the tool again
  from its start, so the same call id meets PreToolUse again and then finishes as
  usual (an idempotency claim recognises its own call). A ``ParentCommand`` (a
  subgraph tool handing control to the parent graph) ends the call as a PostToolUse.
- ``before_agent``: UserPromptSubmit with the last human message. Block or halt: the
  agent ends at once with an ``AIMessage`` giving the reason; context: a
  ``HumanMessage`` after the prompt.
- ``after_agent``: AgentStop with the last AI message. Block: the reason goes back as
  a ``HumanMessage`` and ``jump_to: model`` resumes the loop; the Guard lets a stop
  through after 8 consecutive blocks, so it cannot loop forever.
- A halt ends the agent, as ``continue: false`` does in Claude: a call of the same
  batch decided after it is not run (``interrupted``), and ``before_model`` ends the
  agent before its next model call. Calls of the batch already running when the halt
  lands may finish.

The first call of a tool that no PreToolUse, PostToolUse or PostToolUseFailure
matcher of the definition can match (``bash`` where it says ``Bash``) gives an
:class:`~guardrails.UnmatchedToolWarning`, once per tool and middleware.

Sessions: the ``session_id`` you pass, else the LangGraph ``thread_id`` (a
checkpointed conversation is one session), else one per invocation (with
SessionStart and SessionEnd). Not expressed: SubagentStart/SubagentStop (a LangChain
subagent is its own graph: give it its own middleware), and ``agent_type``.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Final, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.errors import GraphBubbleUp, ParentCommand
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from .. import Guard, Session, ToolRun
from ..definition.coverage import warn_unmatched_tools
from ..dispatch.threads import in_thread
from ..events import PostToolUse, PostToolUseFailure, PreToolUse
from ..results import UNSET, Decision

__all__ = ["GuardrailsMiddleware"]

_SESSION: Final = "hookrails_session_id"
_ENDED: Final = "hookrails_ended"

_Result = ToolMessage | Command[Any]


class GuardrailsState(AgentState[Any]):
    """The agent state plus this invocation's session and whether a hook ended it."""

    hookrails_session_id: NotRequired[Annotated[str, UntrackedValue, PrivateStateAttr]]
    hookrails_ended: NotRequired[Annotated[bool, UntrackedValue, PrivateStateAttr]]


class ToolError(Exception):
    """The tool answered with an error ``ToolMessage``; its content is the error."""


class GuardrailsMiddleware(AgentMiddleware[GuardrailsState, Any, Any]):
    """Run a :class:`~guardrails.Guard` around a LangChain v1 agent's tools, prompt and stop.

    ``session_id`` fixes the session; otherwise the thread, else the invocation, is one.
    """

    state_schema = GuardrailsState

    def __init__(self, guard: Guard, *, session_id: str | None = None) -> None:
        super().__init__()
        self.guard = guard
        self.session_id = session_id
        self._fallback = str(uuid.uuid4())  # a call outside create_agent's state (a ToolNode)
        self._checked: set[str] = set()  # tool names already checked against the definition

    def _check_tool(self, name: str) -> None:
        """The first call of each tool: warn if no tool matcher of the definition can match
        it (the middleware learns the agent's tools only from their calls)."""
        if name not in self._checked:
            self._checked.add(name)
            warn_unmatched_tools(self.guard.definition, [name])

    # --- sessions -------------------------------------------------------------------------

    def _fixed(self, thread_id: str | None) -> str | None:
        return self.session_id or thread_id

    def _start(self, runtime: Runtime[Any]) -> tuple[Session, bool]:
        """This invocation's session, and whether it is ours to start and end."""
        fixed = self._fixed(_thread(runtime))
        return self.guard.session(fixed or str(uuid.uuid4())), fixed is None

    def _session(self, state: Any, thread_id: str | None) -> Session:
        sid = state.get(_SESSION) if isinstance(state, dict) else None
        return self.guard.session(sid or self._fixed(thread_id) or self._fallback)

    def _owned(self, runtime: Runtime[Any]) -> bool:
        return self._fixed(_thread(runtime)) is None

    # --- the prompt ---------------------------------------------------------------------------

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: GuardrailsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session, owned = self._start(runtime)
        if owned:
            session.sync.session_start("startup")
        prompt = _last_text(state["messages"], HumanMessage)
        d = None if prompt is None else session.sync.user_prompt_submit(prompt)
        return _after_prompt(session, d)

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(
        self, state: GuardrailsState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        session, owned = self._start(runtime)
        if owned:
            await session.session_start("startup")
        prompt = _last_text(state["messages"], HumanMessage)
        d = None if prompt is None else await session.user_prompt_submit(prompt)
        return _after_prompt(session, d)

    # --- a halt ends the agent before its next model call ---------------------------------

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: GuardrailsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        return _halt_check(self._session(state, _thread(runtime)).known_halt())

    @hook_config(can_jump_to=["end"])
    async def abefore_model(
        self, state: GuardrailsState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        session = self._session(state, _thread(runtime))
        return _halt_check(await in_thread(session.known_halt))  # may read the ledger

    # --- the stop -------------------------------------------------------------------------------

    @hook_config(can_jump_to=["model"])
    def after_agent(self, state: GuardrailsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._session(state, _thread(runtime))
        d = None
        if not (state.get(_ENDED) or session.known_halt()):
            d = session.sync.agent_stop(**_stop_fields(state, session))
        update = _after_stop(d)
        if update is None and self._owned(runtime):
            session.sync.session_end("other")
        return update

    @hook_config(can_jump_to=["model"])
    async def aafter_agent(
        self, state: GuardrailsState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        session = self._session(state, _thread(runtime))
        d = None
        if not (state.get(_ENDED) or await in_thread(session.known_halt)):
            d = await session.agent_stop(**_stop_fields(state, session))
        update = _after_stop(d)
        if update is None and self._owned(runtime):
            await session.session_end("other")
        return update

    # --- tools ----------------------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], _Result],
    ) -> _Result:
        self._check_tool(request.tool_call["name"])
        session = self._session(request.state, _config_thread(request))
        event = _pre_event(session, request)
        pre = session.emit_sync(event, owner=True)  # this process runs the tool
        early = _early(session, pre)
        if early is not None:
            if early.post is None and early.status == "error":  # halted meanwhile
                session.emit_sync(_interrupted(event, early))
            return _answer(early, None, request.tool_call)
        final = pre.tool_input or {}
        t0 = time.perf_counter()
        try:
            result = handler(_with_args(request, final))
        except GraphBubbleUp as exc:  # an interrupt pauses the call; it runs again on resume
            if isinstance(exc, ParentCommand):
                session.emit_sync(_post(event, final, exc.args[0], t0))
            raise
        except Exception as exc:
            post = session.emit_sync(_failure(event, final, exc, t0))
            return _answer(_failed(pre, post, final, exc), None, request.tool_call)
        except BaseException as exc:  # Ctrl-C: finish the row as interrupted, then let it go
            session.emit_sync(_failure(event, final, exc, t0, interrupt=True))
            raise
        outcome = _outcome(event, final, result, t0)
        post = session.emit_sync(outcome)
        return _answer(_ran(pre, post, final, outcome), result, request.tool_call)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[_Result]],
    ) -> _Result:
        self._check_tool(request.tool_call["name"])
        session = self._session(request.state, _config_thread(request))
        event = _pre_event(session, request)
        pre = await session.emit(event, owner=True)
        early = _early(session, pre)
        if early is not None:
            if early.post is None and early.status == "error":  # halted meanwhile
                await session.emit(_interrupted(event, early))
            return _answer(early, None, request.tool_call)
        final = pre.tool_input or {}
        t0 = time.perf_counter()
        try:
            result = await handler(_with_args(request, final))
        except GraphBubbleUp as exc:  # an interrupt pauses the call; it runs again on resume
            if isinstance(exc, ParentCommand):
                await session.emit(_post(event, final, exc.args[0], t0))
            raise
        except Exception as exc:
            post = await session.emit(_failure(event, final, exc, t0))
            return _answer(_failed(pre, post, final, exc), None, request.tool_call)
        except BaseException as exc:  # cancelled: finish the row without awaiting, then go
            session.emit_sync(_failure(event, final, exc, t0, interrupt=True))
            raise
        outcome = _outcome(event, final, result, t0)
        post = await session.emit(outcome)
        return _answer(_ran(pre, post, final, outcome), result, request.tool_call)


# --- sessions -------------------------------------------------------------------------------


def _thread(runtime: Runtime[Any]) -> str | None:
    """The run's thread id: ``Runtime.execution_info`` (None without a checkpointer), or,
    on a langgraph before 1.1.3 (no ``execution_info``), the ``thread_id`` of the config
    the node runs under (there, a thread id passed without a checkpointer counts too)."""
    info = _execution_info(runtime)
    if info is not None:
        thread = getattr(info, "thread_id", None)
        return None if thread is None else str(thread)
    return _context_thread()


def _execution_info(runtime: Runtime[Any]) -> Any:
    return getattr(runtime, "execution_info", None)  # langgraph 1.1.3 and later


def _context_thread() -> str | None:
    from langgraph.config import get_config

    try:
        config = get_config()
    except RuntimeError:  # outside a runnable context
        return None
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


def _config_thread(request: ToolCallRequest) -> str | None:
    config = getattr(request.runtime, "config", None) or {}
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


# --- tool events ------------------------------------------------------------------------------


def _pre_event(session: Session, request: ToolCallRequest) -> PreToolUse:
    call = request.tool_call
    return PreToolUse(
        session_id=session.session_id,
        cwd=session.cwd,
        tool_name=call["name"],
        tool_input=dict(call["args"]),
        tool_use_id=call.get("id") or "toolu_" + uuid.uuid4().hex[:24],
    )


def _early(session: Session, pre: Decision) -> ToolRun | None:
    """How the call ends without its handler: denied, answered by a replayed result, or
    (allowed, but another call of the batch halted the agent meanwhile) not run."""
    early = ToolRun.before_run(pre)
    if early is None and session.halted is not None:
        error = f"Halted: the agent was halted before the call ran: {session.halted}"
        event = pre.event
        return ToolRun(event.tool_name, "error", pre, error=error, tool_input=event.tool_input)
    return early


def _fields(pre: PreToolUse, final: dict[str, Any], t0: float | None) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "session_id": pre.session_id,
        "cwd": pre.cwd,
        "tool_name": pre.tool_name,
        "tool_input": final,
        "tool_use_id": pre.tool_use_id,
    }
    if t0 is not None:
        fields["duration_ms"] = (time.perf_counter() - t0) * 1000
    return fields


def _failure(
    pre: PreToolUse,
    final: dict[str, Any],
    exc: BaseException,
    t0: float,
    *,
    interrupt: bool = False,
) -> PostToolUseFailure:
    error = f"{type(exc).__name__}: {exc}"
    fields = _fields(pre, final, t0)
    return PostToolUseFailure(error=error, is_interrupt=interrupt or None, **fields)


def _interrupted(pre: PreToolUse, run: ToolRun) -> PostToolUseFailure:
    return PostToolUseFailure(
        error=run.error or "", is_interrupt=True, **_fields(pre, run.tool_input, None)
    )


def _post(pre: PreToolUse, final: dict[str, Any], result: Any, t0: float) -> PostToolUse:
    message = _message(result, pre.tool_use_id)
    response = None if message is None else message.content
    return PostToolUse(tool_response=response, **_fields(pre, final, t0))


def _outcome(
    pre: PreToolUse, final: dict[str, Any], result: Any, t0: float
) -> PostToolUse | PostToolUseFailure:
    """The post event for the handler's answer; an error message is a failure."""
    message = _message(result, pre.tool_use_id)
    if message is not None and message.status == "error":
        return _failure(pre, final, ToolError(_text_of(message.content)), t0)
    return _post(pre, final, result, t0)


def _failed(pre: Decision, post: Decision, final: dict[str, Any], exc: Exception) -> ToolRun:
    name = pre.event.tool_name
    return ToolRun(name, "error", pre, None, f"{type(exc).__name__}: {exc}", exc, post, final)


def _ran(
    pre: Decision, post: Decision, final: dict[str, Any], outcome: PostToolUse | PostToolUseFailure
) -> ToolRun:
    name = pre.event.tool_name
    if isinstance(outcome, PostToolUseFailure):
        return ToolRun(name, "error", pre, None, outcome.error, None, post, final)
    output = outcome.tool_response if post.updated_output is UNSET else post.updated_output
    return ToolRun(name, "ok", pre, output, None, None, post, final)


# --- translation helpers ------------------------------------------------------------------------


def _after_prompt(session: Session, d: Decision | None) -> dict[str, Any]:
    update: dict[str, Any] = {_SESSION: session.session_id}
    if d is None:
        return update
    if d.blocked or d.halted:
        reason = d.reason or "blocked by hook"
        return {
            **update,
            _ENDED: True,
            "jump_to": "end",
            "messages": [AIMessage(content=f"Prompt blocked: {reason}")],
        }
    if d.additional_context:
        update["messages"] = [HumanMessage(content=d.additional_context)]
    return update


def _halt_check(halted: str | None) -> dict[str, Any] | None:
    if halted is None:
        return None
    return {
        _ENDED: True,
        "jump_to": "end",
        "messages": [AIMessage(content=f"Halted: {halted}")],
    }


def _stop_fields(state: GuardrailsState, session: Session) -> dict[str, Any]:
    return {
        "last_assistant_message": _last_text(state["messages"], AIMessage),
        "stop_hook_active": session.stop_hook_active,
    }


def _after_stop(d: Decision | None) -> dict[str, Any] | None:
    if d is None or not d.blocked:
        return None
    return {"jump_to": "model", "messages": [HumanMessage(content=d.reason or "Keep working.")]}


def _last_text(messages: list[AnyMessage], kind: type[AnyMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, kind):
            return _text_of(message.content)
    return None


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for part in content or ():
        if isinstance(part, str):
            parts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            parts.append(part["text"])
    return "\n".join(parts)


def _with_args(request: ToolCallRequest, args: dict[str, Any]) -> ToolCallRequest:
    if args == request.tool_call["args"]:
        return request
    return request.override(tool_call={**request.tool_call, "args": args})


def _message(result: Any, call_id: str | None) -> ToolMessage | None:
    """The ToolMessage answering this call: the result, or the one in a Command's update."""
    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, Command) and isinstance(result.update, dict):
        for m in result.update.get("messages") or ():
            if isinstance(m, ToolMessage) and m.tool_call_id == call_id:
                return m
    return None


def _answer(ran: ToolRun, result: _Result | None, call: Any) -> _Result:
    """What the agent gets: the handler's result amended by the post event, or our own
    message when the handler did not run; a tool exception is raised again."""
    call_id = call.get("id") or ran.pre.event.tool_use_id
    if ran.denied or (result is None and ran.status == "error" and ran.exception is None):
        return ToolMessage(
            content=ran.for_model(), name=call["name"], tool_call_id=call_id, status="error"
        )
    extras = (
        [ran.post.reason] if ran.post is not None and ran.post.blocked and ran.post.reason else []
    )
    if ran.additional_context:
        extras.append(ran.additional_context)
    if result is None:
        if ran.replayed:  # a hook answered with an identical call's stored result
            return ToolMessage(
                content=_joined(_as_content(ran.output), extras),
                name=call["name"],
                tool_call_id=call_id,
            )
        assert ran.exception is not None
        raise ran.exception
    message = _message(result, call_id)
    if message is None:
        return result
    rewritten = ran.post is not None and ran.post.updated_output is not UNSET
    if not rewritten and not extras:
        return result
    content = _as_content(ran.output) if rewritten else message.content
    amended = message.model_copy(update={"content": _joined(content, extras)})
    if result is message:
        return amended
    assert isinstance(result, Command) and isinstance(result.update, dict)
    messages = [amended if m is message else m for m in result.update["messages"]]
    return dataclasses.replace(result, update={**result.update, "messages": messages})


def _as_content(value: Any) -> Any:
    if isinstance(value, str | list):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _joined(content: Any, extras: list[str]) -> Any:
    if not extras:
        return content
    if isinstance(content, list):
        return [*content, *({"type": "text", "text": e} for e in extras)]
    return "\n\n".join([str(content), *extras])
