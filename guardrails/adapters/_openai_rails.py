"""The machinery under :mod:`guardrails.adapters.openai_agents`'s tool guardrails.

Per Guard, :class:`Runs` knows each ``Runner.run``'s session and the calls
between their PreToolUse and post event; :class:`Rails` is one Guard's input
guardrail, output guardrail and tool wrapper (``guard_tools`` attaches it,
``tool_guardrails`` hands out its two guardrails). What maps to what is told in
the public module's docs.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import inspect
import json
import time
import weakref
from collections.abc import Iterable, Sequence
from typing import Any, Final

from agents import (
    FunctionTool,
    RunContextWrapper,
    ToolApprovalItem,
    ToolGuardrailFunctionOutput,
    ToolInputGuardrail,
    ToolInputGuardrailData,
    ToolOutputGuardrail,
    ToolOutputGuardrailData,
)
from agents.exceptions import AgentsException
from agents.tool import (
    maybe_invoke_function_tool_failure_error_function,
    set_function_tool_failure_error_function,
)
from agents.tool_context import ToolContext

from .. import Guard, Session, ToolRun, errors
from ..errors import describe
from ..events import PostToolUse, PostToolUseFailure, PreToolUse
from ..results import UNSET, Decision

__all__ = ["CANCELLED", "ENDED", "Rails", "RunBlocked", "Runs", "as_text", "runs_of"]

_PRE_NAME: Final = "hookrails_pre_tool_use"
_POST_NAME: Final = "hookrails_post_tool_use"
#: the error that finishes an allowed call that never ran, by why it did not
CANCELLED: Final = "Cancelled: the run stopped before the call ran"
_REJECTED: Final = "Rejected: the call was not approved, so it never ran"
ENDED: Final = "NotRun: the run ended before the call ran"


class RunBlocked(errors.RunBlocked, AgentsException):
    """A hook blocked the prompt or halted the agent on a post event.

    Also an ``AgentsException``, so the SDK raises it as it is from a tool instead of
    wrapping it in ``UserError``; ``except guardrails.errors.RunBlocked`` catches it too.
    """


# --- which session a run belongs to, and the calls in flight ----------------------------


@dataclasses.dataclass
class _Call:
    """A call our guardrail allowed that no invoker or output guardrail has taken yet."""

    session: Session  # the session that decided it (events about it go there)
    tool_name: str
    pre: Decision
    tool_input: dict[str, Any]
    run: weakref.ref[Any]  # the ``Usage`` of the run that decided it


_Key = tuple[str, str]  # (session id, call id)


class Runs:
    """Per Guard: the session of each ``Runner.run`` and the calls between pre and post."""

    def __init__(self, guard: Guard) -> None:
        self._guard = weakref.ref(guard)
        self._sessions: dict[int, tuple[weakref.ref[Any], Session]] = {}
        self.calls: dict[_Key, _Call] = {}
        self.errors: dict[_Key, BaseException] = {}  # keyed by the current run's session

    def session(self, ctx: RunContextWrapper[Any], session_id: str | None) -> tuple[Session, bool]:
        """The run's session, and whether this is the first time the run is seen.

        Every context of one run (agent hooks, tool contexts) shares its ``Usage``
        object, so its identity names the run.
        """
        guard = self._guard()
        if guard is None:  # pragma: no cover - the rails hold their Guard
            raise RuntimeError("the Guard is gone")
        usage = ctx.usage
        key = id(usage)
        hit = self._sessions.get(key)
        if hit is not None and hit[0]() is usage:
            return (hit[1] if session_id is None else guard.session(session_id)), False
        session = guard.session(session_id)

        def forget(ref: weakref.ref[Any], key: int = key) -> None:
            current = self._sessions.get(key)
            if current is not None and current[0] is ref:
                del self._sessions[key]

        self._sessions[key] = (weakref.ref(usage, forget), session)
        return session, True

    # --- calls in flight ------------------------------------------------------------------

    def find(self, session: Session, ctx: ToolContext[Any]) -> tuple[_Key, _Call] | None:
        """This call's entry; in a run resumed after an approval, the one the paused run made."""
        key = (session.session_id, ctx.tool_call_id)
        call = self.calls.get(key)
        if call is not None:
            return key, call
        if ctx.is_tool_approved(ctx.tool_name, ctx.tool_call_id):
            for k, c in self.calls.items():
                if k[1] == ctx.tool_call_id:
                    return k, c
        return None

    def take(self, session: Session, ctx: ToolContext[Any]) -> _Call | None:
        found = self.find(session, ctx)
        if found is None:
            return None
        del self.calls[found[0]]
        return found[1]

    def hold(self, key: _Key, call: _Call) -> None:
        """Keep the call until an invoker takes it; finish it if the SDK drops it."""
        self.calls[key] = call
        task = asyncio.current_task()  # the SDK runs each call (guardrails, tool) in a task
        if task is not None:
            task.add_done_callback(functools.partial(self._dropped, key, call))

    def _dropped(self, key: _Key, call: _Call, task: asyncio.Task[Any]) -> None:
        """The call's task ended and nobody took the call: it never ran (or, for the bare
        guardrails, it failed and the tool wanted the failure to end the run)."""
        if self.calls.get(key) is not call:
            return
        if _paused(task):
            return  # paused for approval: the resumed run takes it
        error = self.errors.pop(key, None)
        if error is not None:
            self.finish(key, call, describe(error), interrupt=False)
        else:
            self.finish(key, call, CANCELLED)

    def finish(self, key: _Key, call: _Call, error: str, *, interrupt: bool = True) -> None:
        """Finish a call that never ran. Without awaiting: the run around it is often
        being torn down, and a cancelled await would leave the row pending."""
        if self.calls.get(key) is call:
            del self.calls[key]
        call.session.emit_sync(_event(call, key[1], error, interrupt=interrupt))

    def settle_rejections(self, ctx: RunContextWrapper[Any]) -> None:
        """Finish every held call this run's approvals reject (the SDK never runs it)."""
        for key, call in list(self.calls.items()):
            if ctx.is_tool_approved(call.tool_name, key[1]) is False:
                self.finish(key, call, _REJECTED)

    def finish_runs(self, usages: Sequence[Any], error: str) -> None:
        """Finish every held call these runs decided."""
        for key, call in list(self.calls.items()):
            if any(call.run() is u for u in usages):
                self.finish(key, call, error)


_RUNS: weakref.WeakKeyDictionary[Guard, Runs] = weakref.WeakKeyDictionary()


def runs_of(guard: Guard) -> Runs:
    runs = _RUNS.get(guard)
    if runs is None:
        runs = _RUNS[guard] = Runs(guard)
    return runs


# --- the guardrails and the wrapped invoker ---------------------------------------------


class Rails:
    """One Guard's PreToolUse guardrail, PostToolUse guardrail and tool wrapper."""

    def __init__(self, guard: Guard, session_id: str | None, *, wraps: bool) -> None:
        self.session_id = session_id
        self.wraps = wraps  # tools get our invoker, which applies rewrites and emits post events
        self.runs = runs_of(guard)
        self.input: ToolInputGuardrail[Any] = ToolInputGuardrail(self._pre, name=_PRE_NAME)
        self.output: ToolOutputGuardrail[Any] = ToolOutputGuardrail(self._post, name=_POST_NAME)

    def _session(self, ctx: RunContextWrapper[Any]) -> Session:
        return self.runs.session(ctx, self.session_id)[0]

    async def _pre(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        session = self._session(ctx)
        runs = self.runs
        runs.settle_rejections(ctx)
        found = runs.find(session, ctx)
        if found is not None:  # guardrails can run twice for one call (before approval, at run)
            runs.hold(*found)
            return ToolGuardrailFunctionOutput.allow(output_info=found[1].pre)
        pre = await _decide(session, ctx, data.agent)
        if pre.halted:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=pre)
        if pre.decision != "allow":
            return ToolGuardrailFunctionOutput.reject_content(_denied(ctx.tool_name, pre), pre)
        call = _Call(session, ctx.tool_name, pre, pre.tool_input or {}, weakref.ref(ctx.usage))
        if session.halted is not None:  # a sibling call halted the agent meanwhile
            runs.finish((session.session_id, ctx.tool_call_id), call, _halted(session))
            return ToolGuardrailFunctionOutput.reject_content(_not_run(session), pre)
        if pre.updated_input is not None and not self.wraps:
            return await self._unapplied_rewrite(session, ctx, call)
        runs.hold((session.session_id, ctx.tool_call_id), call)
        return ToolGuardrailFunctionOutput.allow(output_info=pre)

    async def _unapplied_rewrite(
        self, session: Session, ctx: ToolContext[Any], call: _Call
    ) -> ToolGuardrailFunctionOutput:
        """Running the input a hook meant to change would be worse than not running it."""
        rewritten = json.dumps(call.tool_input, ensure_ascii=False)
        error = (
            "a hook rewrote the input, and this tool is not wrapped by guard_tools, "
            "so the rewrite could not be applied"
        )
        await session.emit(
            _event(call, ctx.tool_call_id, f"RewriteNotApplied: {error}", interrupt=False)
        )
        message = f"Not run: {error}. Call {ctx.tool_name} again with this input: {rewritten}"
        return ToolGuardrailFunctionOutput.reject_content(message, call.pre)

    async def _post(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        ctx = data.context
        session = self._session(ctx)
        call = self.runs.take(session, ctx)
        error = self.runs.errors.pop((session.session_id, ctx.tool_call_id), None)
        target = call.session if call is not None else session
        post = await target.emit(_post_event(ctx, data.agent, call, data.output, error))
        if post.halted:
            return ToolGuardrailFunctionOutput.raise_exception(output_info=post)
        amended = _amended(data.output, post, call)
        if amended is data.output:
            return ToolGuardrailFunctionOutput.allow(output_info=post)
        return ToolGuardrailFunctionOutput.reject_content(as_text(amended), post)

    # --- the wrapped invoker and the failure formatter ----------------------------------

    def attach(self, tool: FunctionTool) -> FunctionTool:
        original = getattr(tool, "_hookrails_original", tool)
        guarded = dataclasses.replace(  # the copy rebinds the SDK's invoker to itself
            tool,
            tool_input_guardrails=[*_others(tool.tool_input_guardrails), self.input],
            tool_output_guardrails=_others(tool.tool_output_guardrails) or None,
        )
        inner = guarded.on_invoke_tool
        if isinstance(inner, _Invoker):  # guarded before: guard it afresh
            inner = inner.inner
            bind = getattr(inner, "__agents_bind_function_tool__", None)
            if callable(bind):
                inner = bind(guarded)
        guarded.on_invoke_tool = _Invoker(self, inner)
        guarded.is_enabled = _Enabled(self.runs, tool.is_enabled)
        set_function_tool_failure_error_function(guarded, self._formatter(original))
        guarded._hookrails_original = original  # type: ignore[attr-defined]
        return guarded

    def prepare(self, tool: FunctionTool) -> None:
        """The bare form: record the tool's exceptions for the output guardrail, and
        settle rejected calls each turn."""
        original = getattr(tool, "_hookrails_original", None) or copy.copy(tool)
        set_function_tool_failure_error_function(tool, self._formatter(original))
        tool.is_enabled = _Enabled(self.runs, tool.is_enabled)
        tool._hookrails_original = original  # type: ignore[attr-defined]

    def _formatter(self, original: FunctionTool) -> Any:
        """Record the exception for the post event, then answer as the tool's own policy
        would (its formatter, the SDK default, ``RunConfig.tool_error_formatter``)."""

        async def format_failure(ctx: RunContextWrapper[Any], error: Exception) -> str:
            if isinstance(ctx, ToolContext):
                key = (self._session(ctx).session_id, ctx.tool_call_id)
                self.runs.errors[key] = error
            text = await maybe_invoke_function_tool_failure_error_function(
                function_tool=original, context=ctx, error=error
            )
            if text is None:  # the tool wants failures to end the run
                raise error
            return text

        return format_failure


class _Invoker:
    """A guarded tool's ``on_invoke_tool``: runs the rewritten input, emits the post event."""

    def __init__(self, rails: Rails, inner: Any) -> None:
        self.rails = rails
        self.inner = inner

    async def __call__(self, ctx: ToolContext[Any], arguments: str) -> Any:
        runs = self.rails.runs
        session = self.rails._session(ctx)
        key = (session.session_id, ctx.tool_call_id)  # for errors: this run's session
        call = runs.take(session, ctx)
        if call is None:  # our input guardrail did not run (removed, or a resumed call)
            pre = await _decide(session, ctx, ctx.agent)
            if pre.halted:
                raise RunBlocked("PreToolUse", pre.reason or "halted", pre)
            if pre.decision != "allow":
                return _denied(ctx.tool_name, pre)
            call = _Call(session, ctx.tool_name, pre, pre.tool_input or {}, weakref.ref(ctx.usage))
        target = call.session
        if target.halted is not None:  # a sibling call halted the agent: do not start this one
            runs.finish((target.session_id, ctx.tool_call_id), call, _halted(target))
            return _not_run(target)
        if call.pre.updated_input is not None:
            arguments = json.dumps(call.tool_input, ensure_ascii=False)
            if getattr(ctx, "_function_tool_arguments", None) is not None:
                ctx._function_tool_arguments = None  # prepared from the model's arguments
        runs.errors.pop(key, None)
        t0 = time.perf_counter()
        try:
            output = await self.inner(ctx, arguments)
        except Exception as exc:  # the tool wants failures to end the run: record, re-raise
            runs.errors.pop(key, None)
            await target.emit(_post_event(ctx, ctx.agent, call, None, exc, t0))
            raise
        except asyncio.CancelledError as exc:  # finish the row without awaiting, then let it go
            runs.errors.pop(key, None)
            target.emit_sync(_post_event(ctx, ctx.agent, call, None, exc, t0))
            raise
        error = runs.errors.pop(key, None)  # set by our formatter: the SDK answered for it
        post = await target.emit(_post_event(ctx, ctx.agent, call, output, error, t0))
        if post.halted:
            raise RunBlocked(post.event_name, post.reason or "halted", post)
        return _amended(output, post, call)


class _Enabled:
    """A guarded tool's ``is_enabled``, which the SDK asks every turn: first it finishes
    the calls this run's approvals reject (the SDK answers those without running
    anything of ours), then it answers as the tool's own setting does."""

    def __init__(self, runs: Runs, inner: Any) -> None:
        self.runs = runs
        self.inner: Any = inner.inner if isinstance(inner, _Enabled) else inner

    async def __call__(self, ctx: RunContextWrapper[Any], agent: Any) -> bool:
        self.runs.settle_rejections(ctx)
        value = self.inner if isinstance(self.inner, bool) else self.inner(ctx, agent)
        if inspect.isawaitable(value):
            value = await value
        return bool(value)


def _others(guardrails: Iterable[Any] | None) -> list[Any]:
    return [g for g in guardrails or () if g.get_name() not in (_PRE_NAME, _POST_NAME)]


# --- events -------------------------------------------------------------------------------


async def _decide(session: Session, ctx: ToolContext[Any], agent: Any) -> Decision:
    """PreToolUse for this call. Cancelled meanwhile (a sibling's halt tore the batch
    down), the call is finished as interrupted: its pending row may still be written."""
    tool_input, raw = _arguments(ctx.tool_arguments)
    event = PreToolUse(
        session_id=session.session_id,
        cwd=session.cwd,
        tool_name=ctx.tool_name,
        tool_input=tool_input,
        tool_use_id=ctx.tool_call_id,
        agent_type=getattr(agent, "name", None),
    )
    if raw is not None:  # the SDK will refuse these arguments; hooks may still want to see them
        event.extra["tool_arguments"] = raw
    try:
        return await session.emit(event, owner=True)  # this process runs the tool
    except asyncio.CancelledError:
        session.emit_sync(
            PostToolUseFailure(
                tool_name=ctx.tool_name,
                tool_input=tool_input,
                tool_use_id=ctx.tool_call_id,
                agent_type=event.agent_type,
                error=CANCELLED,
                is_interrupt=True,
            )
        )
        raise


def _event(call: _Call, call_id: str, error: str, *, interrupt: bool = True) -> PostToolUseFailure:
    """The failure that finishes a call the SDK dropped (or a rewrite we refused)."""
    return PostToolUseFailure(
        tool_name=call.tool_name,
        tool_input=call.tool_input,
        tool_use_id=call_id,
        agent_type=call.pre.event.agent_type,
        error=error,
        is_interrupt=interrupt or None,
    )


def _post_event(
    ctx: ToolContext[Any],
    agent: Any,
    call: _Call | None,
    output: Any,
    error: BaseException | None,
    t0: float | None = None,
) -> PostToolUse | PostToolUseFailure:
    tool_input = call.tool_input if call is not None else _arguments(ctx.tool_arguments)[0]
    fields: dict[str, Any] = {
        "tool_name": ctx.tool_name,
        "tool_input": tool_input,
        "tool_use_id": ctx.tool_call_id,
        "agent_type": getattr(agent, "name", None),
    }
    if t0 is not None:
        fields["duration_ms"] = (time.perf_counter() - t0) * 1000
    if error is None:
        return PostToolUse(tool_response=output, **fields)
    interrupted = isinstance(error, asyncio.CancelledError) or None
    return PostToolUseFailure(error=describe(error), is_interrupt=interrupted, **fields)


def _halted(session: Session) -> str:
    return f"Halted: the agent was halted before the call ran: {session.halted}"


def _not_run(session: Session) -> str:
    return f"Not run: the agent was halted: {session.halted}"


def _arguments(raw: str) -> tuple[dict[str, Any], str | None]:
    """The arguments as a dict, and the raw text when they are not a JSON object."""
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}, raw
    return (value, None) if isinstance(value, dict) else ({}, raw)


def _denied(tool_name: str, pre: Decision) -> str:
    """What the model reads for a call that does not run: the denial, or the stored result a
    hook replayed (idempotency), as ``run_tool`` gives it."""
    run = ToolRun.before_run(pre) or ToolRun(tool_name, "denied", pre)
    return run.for_model()


def _amended(output: Any, post: Decision, call: _Call | None) -> Any:
    """What the model reads: the (rewritten) output, a post block reason, injected context.

    The output itself when nothing changed, so structured outputs keep their type.
    """
    extras = [post.reason] if post.blocked and post.reason else []
    for d in (call.pre if call is not None else None, post):
        if d is not None and d.additional_context:
            extras.append(d.additional_context)
    if post.updated_output is UNSET and not extras:
        return output
    body = output if post.updated_output is UNSET else post.updated_output
    return "\n\n".join([as_text(body), *extras])


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _paused(task: asyncio.Task[Any]) -> bool:
    """The call's task ended by pausing the run for an approval."""
    if task.cancelled() or task.exception() is not None:
        return False
    return isinstance(getattr(task.result(), "run_item", None), ToolApprovalItem)
