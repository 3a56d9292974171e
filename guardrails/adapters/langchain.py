"""LangChain v1: a Guard as an ``AgentMiddleware`` for ``create_agent``.

    from guardrails.adapters.langchain import GuardrailsMiddleware

    agent = create_agent(model, tools=[bash], middleware=[GuardrailsMiddleware(guard)])

What maps to what (the Guard decides; this module only translates):

- ``wrap_tool_call`` / ``awrap_tool_call`` run each call through ``Session.run_tool``.
  PreToolUse comes first: deny (or an ``ask`` the Guard's approver does not allow)
  returns a ``ToolMessage`` with the reason and hint, ``status="error"``, and the tool
  never runs; a rewrite calls the handler with the rewritten ``args``.
- After the handler: a ``ToolMessage`` with ``status="error"`` (LangChain's answer to
  bad arguments, or a ``ToolErrorMiddleware`` placed after this one) is a
  ``PostToolUseFailure`` whose error is its content; an exception is a
  ``PostToolUseFailure`` and is raised again, as LangChain does without us; anything
  else is a ``PostToolUse`` whose ``tool_response`` is the message content.
  ``updated_output`` replaces the content; injected context (pre and post) and a
  PostToolUse block reason are appended to it. A tool returning a ``Command`` is
  handled through the ``ToolMessage`` in its update.
- ``before_agent``: UserPromptSubmit with the last human message. Block or halt: the
  agent ends at once with an ``AIMessage`` giving the reason; context: a
  ``HumanMessage`` after the prompt.
- ``after_agent``: AgentStop with the last AI message. Block: the reason goes back as
  a ``HumanMessage`` and ``jump_to: model`` resumes the loop; the Guard lets a stop
  through after 8 consecutive blocks, so it cannot loop forever.
- ``before_model``: once any event halted the session, the agent ends before its
  next model call (a halt ends the agent, as ``continue: false`` does in Claude).

Sessions: the ``session_id`` you pass, else the LangGraph ``thread_id`` (a
checkpointed conversation is one session), else one per invocation (with
SessionStart and SessionEnd). Not expressed: SubagentStart/SubagentStop (a LangChain
subagent is its own graph: give it its own middleware), and ``agent_type``.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Final, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.runtime import Runtime
from langgraph.types import Command

from ..guard import Guard, Session, ToolRun
from ..results import UNSET, Decision

__all__ = ["GuardrailsMiddleware"]

_SESSION: Final = "hookrails_session_id"
_ENDED: Final = "hookrails_ended"


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
        return _halt_check(self._session(state, _thread(runtime)))

    @hook_config(can_jump_to=["end"])
    async def abefore_model(
        self, state: GuardrailsState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        return _halt_check(self._session(state, _thread(runtime)))

    # --- the stop -------------------------------------------------------------------------------

    @hook_config(can_jump_to=["model"])
    def after_agent(self, state: GuardrailsState, runtime: Runtime[Any]) -> dict[str, Any] | None:
        session = self._session(state, _thread(runtime))
        d = None
        if not (state.get(_ENDED) or session.halted):
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
        if not (state.get(_ENDED) or session.halted):
            d = await session.agent_stop(**_stop_fields(state, session))
        update = _after_stop(d)
        if update is None and self._owned(runtime):
            await session.session_end("other")
        return update

    # --- tools ----------------------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        session = self._session(request.state, _config_thread(request))
        box: list[ToolMessage | Command[Any]] = []

        def run(**final: Any) -> Any:
            result = handler(_with_args(request, final))
            box.append(result)
            return _response(result, call.get("id"))

        ran = session.run_tool_sync(
            call["name"], dict(call["args"]), run, tool_use_id=call.get("id")
        )
        return _answer(ran, box, call)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        call = request.tool_call
        session = self._session(request.state, _config_thread(request))
        box: list[ToolMessage | Command[Any]] = []

        async def run(**final: Any) -> Any:
            result = await handler(_with_args(request, final))
            box.append(result)
            return _response(result, call.get("id"))

        ran = await session.run_tool(
            call["name"], dict(call["args"]), run, tool_use_id=call.get("id")
        )
        return _answer(ran, box, call)


# --- translation helpers ------------------------------------------------------------------------


def _thread(runtime: Runtime[Any]) -> str | None:
    info = getattr(runtime, "execution_info", None)
    return getattr(info, "thread_id", None)


def _config_thread(request: ToolCallRequest) -> str | None:
    config = getattr(request.runtime, "config", None) or {}
    thread = (config.get("configurable") or {}).get("thread_id")
    return str(thread) if thread else None


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


def _halt_check(session: Session) -> dict[str, Any] | None:
    if session.halted is None:
        return None
    return {
        _ENDED: True,
        "jump_to": "end",
        "messages": [AIMessage(content=f"Halted: {session.halted}")],
    }


def _stop_fields(state: GuardrailsState, session: Session) -> dict[str, Any]:
    return {
        "last_assistant_message": _last_text(state["messages"], AIMessage),
        "stop_hook_active": bool(session.stop_blocks.get("")),
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


def _response(result: Any, call_id: str | None) -> Any:
    """What post hooks see as ``tool_response``; an error message becomes a failure."""
    message = _message(result, call_id)
    if message is None:
        return None
    if message.status == "error":
        raise ToolError(_text_of(message.content))
    return message.content


def _answer(
    ran: ToolRun, box: list[ToolMessage | Command[Any]], call: Any
) -> ToolMessage | Command[Any]:
    call_id = call.get("id") or ran.pre.event.tool_use_id
    if ran.denied:  # the tool never ran
        return ToolMessage(
            content=ran.for_model(), name=call["name"], tool_call_id=call_id, status="error"
        )
    extras = (
        [ran.post.reason] if ran.post is not None and ran.post.blocked and ran.post.reason else []
    )
    if ran.additional_context:
        extras.append(ran.additional_context)
    if not box:
        if ran.replayed:  # a hook answered with an identical call's stored result
            return ToolMessage(
                content=_joined(_as_content(ran.output), extras),
                name=call["name"],
                tool_call_id=call_id,
            )
        assert ran.exception is not None
        raise ran.exception
    result = box[-1]
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
