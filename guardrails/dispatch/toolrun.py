"""A guarded tool call: its events, and how it ended (``ToolRun``).

``ToolCall`` holds the steps ``run_tool`` and ``run_tool_sync`` share (the
events they emit, how a decision or an exception ends the call), so the two
drivers differ only in awaiting. Hosts that run the tool themselves use
``ToolRun.before_run`` to end a call on its PreToolUse decision alone.
"""

from __future__ import annotations

import os
import time

from .._dataclass_free import DICT, record
from ..errors import ToolDenied, describe
from ..events import PostToolUse, PostToolUseFailure, PreToolUse
from ..results import UNSET

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from dataclasses import Field
    from typing import Any, ClassVar, Literal

    from ..results import Decision

__all__ = ["ToolCall", "ToolRun", "new_tool_use_id"]

_perf = time.perf_counter


@record()
class ToolRun:
    """How a guarded tool call ended.

    ``status`` is ``ok``, ``error`` or ``denied``. ``for_model()`` is the text
    to hand back to the model as the tool result.
    """

    if TYPE_CHECKING:
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    tool_name: str
    status: Literal["ok", "error", "denied"]
    pre: Decision
    output: Any
    error: str | None
    exception: BaseException | None
    post: Decision | None
    tool_input: dict[str, Any]
    #: the output is a stored result replayed by a hook (e.g. idempotency); the tool did not run
    replayed: bool

    def __init__(
        self,
        tool_name: str,
        status: Literal["ok", "error", "denied"],
        pre: Decision,
        output: Any = None,
        error: str | None = None,
        exception: BaseException | None = None,
        post: Decision | None = None,
        tool_input: dict[str, Any] = DICT,
        replayed: bool = False,
    ) -> None:
        self.tool_name = tool_name
        self.status = status
        self.pre = pre
        self.output = output
        self.error = error
        self.exception = exception
        self.post = post
        self.tool_input = {} if tool_input is DICT else tool_input
        self.replayed = replayed

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def denied(self) -> bool:
        return self.status == "denied"

    @property
    def reason(self) -> str | None:
        return self.pre.reason if self.denied else None

    @property
    def additional_context(self) -> str | None:
        parts = [d.additional_context for d in (self.pre, self.post) if d is not None]
        text = "\n\n".join(p for p in parts if p)
        return text or None

    def for_model(self) -> str:
        if self.denied:
            body = f"Denied: {self.reason}"
        elif self.status == "error":
            body = f"Error: {self.error}"
        else:
            body = self.output if isinstance(self.output, str) else repr(self.output)
        if self.post is not None and self.post.blocked and self.post.reason:
            body = f"{body}\n\n{self.post.reason}"  # PostToolUse feedback for the model
        ctx = self.additional_context
        return f"{body}\n\n{ctx}" if ctx else body

    @staticmethod
    def before_run(pre: Decision) -> ToolRun | None:
        """How a call ends on its PreToolUse decision alone: denied, answered with a result a
        hook replayed (idempotency), or ``None`` when the tool should run. For hosts that
        run the tool themselves, as ``run_tool`` does."""
        if pre.decision == "allow" and not pre.halted:
            return None
        name, tool_input = pre.event.tool_name, pre.event.tool_input
        replay = (pre.annotations or {}).get("replay")
        if isinstance(replay, dict) and "output" in replay and not pre.halted:
            output = replay["output"]  # the stored result of an identical call
            return ToolRun(name, "ok", pre, output, tool_input=tool_input, replayed=True)
        return ToolRun(name, "denied", pre, tool_input=tool_input)

    def unwrap(self) -> Any:
        """The output, or raise: ``ToolDenied`` when denied, the tool's own error when it failed."""
        if self.denied:
            raise ToolDenied(self.tool_name, self.reason or "denied", self.pre)
        if self.exception is not None:
            raise self.exception
        return self.output


class ToolCall:
    """The steps of one guarded call that do not depend on awaiting."""

    __slots__ = ("final", "pre", "pre_event", "started")

    def __init__(
        self,
        tool_name: str,
        tool_input: dict[str, Any],
        tool_use_id: str | None,
        fields: dict[str, Any],
    ) -> None:
        self.pre_event = PreToolUse(
            tool_name=tool_name,
            tool_input=tool_input,  # frozen (copied) before any hook sees it
            tool_use_id=tool_use_id or new_tool_use_id(),
            **fields,
        )
        self.final: dict[str, Any] = {}
        self.pre: Decision | None = None
        self.started = 0.0

    def before_run(self, pre: Decision) -> ToolRun | None:
        """``None``: run the tool with ``self.final`` now (the clock starts)."""
        self.pre = pre
        done = ToolRun.before_run(pre)
        if done is None:
            self.final = pre.tool_input or {}
            self.started = _perf()
        return done

    def post(self, out: Any) -> PostToolUse:
        pre = self.pre_event
        return PostToolUse(
            session_id=pre.session_id,
            cwd=pre.cwd,
            agent_id=pre.agent_id,
            agent_type=pre.agent_type,
            tool_name=pre.tool_name,
            tool_input=self.final,
            tool_response=out,
            tool_use_id=pre.tool_use_id,
            duration_ms=(_perf() - self.started) * 1000,
        )

    def failure(self, exc: BaseException, interrupt: bool = False) -> PostToolUseFailure:
        pre = self.pre_event
        return PostToolUseFailure(
            session_id=pre.session_id,
            cwd=pre.cwd,
            agent_id=pre.agent_id,
            agent_type=pre.agent_type,
            tool_name=pre.tool_name,
            tool_input=self.final,
            tool_use_id=pre.tool_use_id,
            error=describe(exc),
            is_interrupt=interrupt or None,
            duration_ms=(_perf() - self.started) * 1000,
        )

    def failed(self, exc: Exception, post: Decision) -> ToolRun:
        assert self.pre is not None
        name = self.pre_event.tool_name
        return ToolRun(name, "error", self.pre, None, describe(exc), exc, post, self.final)

    def finished(self, out: Any, post: Decision) -> ToolRun:
        assert self.pre is not None
        if post.updated_output is not UNSET:
            out = post.updated_output
        return ToolRun(self.pre_event.tool_name, "ok", self.pre, out, None, None, post, self.final)


def new_tool_use_id() -> str:
    """A fresh Claude-style tool_use id (``toolu_`` and 24 hex digits)."""
    return "toolu_" + os.urandom(12).hex()
