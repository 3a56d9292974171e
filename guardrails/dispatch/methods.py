"""The per-event methods (``pre_tool_use``, ``agent_stop``, ...), written once.

Each builds its typed event and hands it to ``self.emit``. ``Session`` and
``Guard`` have an async ``emit``, so their methods return awaitables; the sync
facade's ``emit`` returns the Decision itself. One mixin serves all three, so
the nine signatures cannot drift apart.
"""

from __future__ import annotations

from ..events import (
    AgentStop,
    PostToolUse,
    PostToolUseFailure,
    PreToolUse,
    SessionEnd,
    SessionStart,
    SubagentStart,
    SubagentStop,
    UserPromptSubmit,
)

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, Generic, TypeVar

    from ..events import Event

    R = TypeVar("R")

    class _Emitter(Generic[R]):
        def emit(self, event: Event) -> R: ...

else:

    class _Emitter:
        """At run time a plain base: ``EventMethods[X]`` needs no ``typing``."""

        __slots__ = ()

        def __class_getitem__(cls, item: object) -> type:
            return cls


__all__ = ["AsyncEventMethods", "EventMethods", "SyncEventMethods"]


class EventMethods(_Emitter["R"]):
    """One method per event; ``R`` is what ``emit`` returns (a Decision, or an awaitable)."""

    __slots__ = ()

    def pre_tool_use(self, tool_name: str, tool_input: dict[str, Any], **fields: Any) -> R:
        return self.emit(PreToolUse(tool_name=tool_name, tool_input=tool_input, **fields))

    def post_tool_use(
        self, tool_name: str, tool_input: dict[str, Any], tool_response: Any, **fields: Any
    ) -> R:
        return self.emit(
            PostToolUse(
                tool_name=tool_name, tool_input=tool_input, tool_response=tool_response, **fields
            )
        )

    def post_tool_use_failure(
        self, tool_name: str, tool_input: dict[str, Any], error: str, **fields: Any
    ) -> R:
        return self.emit(
            PostToolUseFailure(tool_name=tool_name, tool_input=tool_input, error=error, **fields)
        )

    def user_prompt_submit(self, prompt: str, **fields: Any) -> R:
        return self.emit(UserPromptSubmit(prompt=prompt, **fields))

    def subagent_start(self, agent_id: str, agent_type: str, **fields: Any) -> R:
        return self.emit(SubagentStart(agent_id=agent_id, agent_type=agent_type, **fields))

    def subagent_stop(self, agent_id: str, agent_type: str, **fields: Any) -> R:
        return self.emit(SubagentStop(agent_id=agent_id, agent_type=agent_type, **fields))

    def agent_stop(self, last_assistant_message: str | None = None, **fields: Any) -> R:
        return self.emit(AgentStop(last_assistant_message=last_assistant_message, **fields))

    def session_start(self, source: str = "startup", **fields: Any) -> R:
        return self.emit(SessionStart(source=source, **fields))

    def session_end(self, reason: str = "other", **fields: Any) -> R:
        return self.emit(SessionEnd(reason=reason, **fields))


if TYPE_CHECKING:
    from collections.abc import Coroutine

    from ..results import Decision

    #: Session's and Guard's: ``await guard.pre_tool_use(...)``
    AsyncEventMethods = EventMethods[Coroutine[Any, Any, Decision]]
    #: the sync facade's: ``guard.sync.pre_tool_use(...)``
    SyncEventMethods = EventMethods[Decision]
else:
    AsyncEventMethods = SyncEventMethods = EventMethods
