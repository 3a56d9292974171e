"""openai-agents: a Guard as tool guardrails, run hooks, and a run loop that honours stop hooks.

    from guardrails.adapters.openai_agents import guard_tools, run

    agent = Agent(name="ops", tools=guard_tools(guard, [bash, write_file]))
    result = await run(guard, agent, "tidy the repo")
    # or: await Runner.run(agent, "tidy the repo", hooks=GuardrailsRunHooks(guard))

What maps to what (the Guard decides; this module only translates):

- ``PreToolUse`` is a tool input guardrail. allow: ``allow``; deny, or an ``ask`` the
  Guard's approver does not allow: ``reject_content`` with the reason and hint (the
  tool never runs, the model reads why); halt: ``raise_exception`` (the SDK raises
  ``ToolInputGuardrailTripwireTriggered``, ``output_info`` is our Decision).
- A rewrite (``updated_input``) cannot be expressed by a guardrail. ``guard_tools``
  therefore also wraps each tool's ``on_invoke_tool`` and feeds the tool the rewritten
  arguments. The bare guardrails of ``tool_guardrails`` cannot, so they refuse a
  rewritten call and tell the model the rewritten input to call with (ledger:
  ``error``), rather than run the input the hook meant to change.
- ``PostToolUse`` / ``PostToolUseFailure``: in ``guard_tools``, the wrapped invoker
  emits them and returns the output with ``updated_output`` and every injected context
  (and a PostToolUse block reason) applied; the tool's own output guardrails run on that.
  Both forms install a failure formatter that records the exception and then answers as
  the tool's own failure policy would, so a failed call is a ``PostToolUseFailure``
  with the real exception. A call the SDK times out is ``interrupted`` under
  ``guard_tools``; the bare output guardrail reads the SDK's timeout message as an
  output. A halt on a post event raises :class:`RunBlocked` (an ``AgentsException``,
  so the SDK lets it through unwrapped).
- ``GuardrailsRunHooks`` (a ``RunHooks``): ``SessionStart`` and ``UserPromptSubmit``
  at the start of a run, ``AgentStop`` in ``on_agent_end``, ``SessionEnd`` after it.
  A RunHooks cannot change the input or keep a finished run going: a blocked prompt or
  a halt raises ``RunBlocked``; prompt context is recorded but cannot reach the model;
  a blocked stop is recorded and kept in ``last_stop``. ``run()`` does the rest: it
  emits the prompt event itself (context goes in as a developer message) and, while
  the Guard blocks the stop, runs the agent again on its history plus the reason as a
  user message (the Guard lets a stop through after 8 consecutive blocks).

Calls allowed but never run: the SDK may drop a call after our guardrail allowed it
(a sibling's halt tears the batch down, a person rejects it under ``needs_approval``,
a later guardrail rejects it). Such a call is finished as an interrupted
``PostToolUseFailure`` (ledger: ``interrupted``, so an idempotency claim is released)
when the SDK's task for it ends, when a rejection for it shows up, at ``on_agent_end``,
and when ``run()`` fails. A call paused for approval stays ``pending`` until the run
resumes; on resume it keeps the decision (and rewrite) made before the pause.

Sessions: one ``Runner.run`` is one session (keyed by the run's ``Usage`` object, which
every context of a run shares), unless a ``session_id`` is passed; one ``run()`` is one
session across its re-runs. A run resumed from a ``RunState`` has a new ``Usage``: pass
a ``session_id`` to keep it in the same session. Every call reaches the ledger once,
keyed by its ``call_id``: denied calls as ``denied``, the rest ``ok``, ``error`` or
``interrupted``.

Not guarded: hosted tools (web search, file search, code interpreter, image
generation, hosted MCP, tool search, a shell in a hosted container) run at OpenAI and
pass through ``guard_tools`` as they are. Tools that run on this machine without tool
guardrails (``ShellTool`` with a local executor, ``LocalShellTool``, ``ApplyPatchTool``,
``ComputerTool``, ``CustomTool``) make ``guard_tools`` raise ``TypeError`` unless named
in ``unguarded``. The tools the SDK builds from ``mcp_servers`` each turn never pass
through ``guard_tools``. ``ask`` is settled by the Guard's approver, not by the SDK's
``needs_approval`` interruptions. No SubagentStart/SubagentStop: handoffs stay in one
run (``agent_type`` on every event is the acting agent's name).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import Any, Final

from agents import (
    Agent,
    CodeInterpreterTool,
    FileSearchTool,
    FunctionTool,
    HostedMCPTool,
    ImageGenerationTool,
    ProgrammaticToolCallingTool,
    RunHooks,
    Runner,
    RunResult,
    ShellTool,
    Tool,
    ToolInputGuardrail,
    ToolOutputGuardrail,
    ToolSearchTool,
    WebSearchTool,
)
from agents.run_context import AgentHookContext

from .. import Guard
from ..definition.coverage import warn_unmatched_tools
from ..results import Decision
from ._openai_rails import CANCELLED, ENDED, Rails, RunBlocked, as_text, runs_of

__all__ = ["GuardrailsRunHooks", "RunBlocked", "guard_tools", "run", "tool_guardrails"]

#: tools OpenAI runs on its side: nothing of theirs executes here
_HOSTED: Final = (
    CodeInterpreterTool,
    FileSearchTool,
    HostedMCPTool,
    ImageGenerationTool,
    ProgrammaticToolCallingTool,
    ToolSearchTool,
    WebSearchTool,
)


def _hosted(tool: Any) -> bool:
    if isinstance(tool, _HOSTED):
        return True
    if not isinstance(tool, ShellTool):
        return False
    environment: dict[str, Any] = dict(tool.environment or {})
    return bool(environment.get("type", "local") != "local")


# --- the public API -------------------------------------------------------------------------


def guard_tools(
    guard: Guard,
    tools: Sequence[Tool],
    *,
    session_id: str | None = None,
    unguarded: Iterable[str] = (),
) -> list[Tool]:
    """Guarded copies of the function tools in ``tools``.

    Each copy carries our PreToolUse input guardrail (after the tool's own, so a call
    they reject is not recorded as pending) and an ``on_invoke_tool`` that runs the
    rewritten input and emits the post events. ``session_id`` fixes the session;
    otherwise each ``Runner.run`` is one (see ``GuardrailsRunHooks`` and ``run``).

    Hosted tools (web and file search, code interpreter, image generation, hosted MCP,
    tool search, a shell in a hosted container) run at OpenAI, beyond any guard here:
    they pass through as they are. A tool that runs on this machine but has no tool
    guardrails (a local ``ShellTool``, ``LocalShellTool``, ``ApplyPatchTool``,
    ``ComputerTool``, ``CustomTool``) raises ``TypeError``, so it cannot slip through
    unguarded by accident: guard its executor yourself (``guard.run_tool``) and name it
    in ``unguarded`` to pass it through.

    A guarded tool that no PreToolUse, PostToolUse or PostToolUseFailure matcher of the
    definition can match (``bash`` where the definition says ``Bash``) gets an
    :class:`~guardrails.UnmatchedToolWarning`, once per tool.
    """
    rails = Rails(guard, session_id, wraps=True)
    passed = set(unguarded)
    out: list[Tool] = []
    guarded: list[str] = []
    for tool in tools:
        if tool.name in passed or _hosted(tool):
            out.append(tool)
        elif isinstance(tool, FunctionTool):
            out.append(rails.attach(tool))
            guarded.append(tool.name)
        else:
            raise TypeError(
                f"guard_tools cannot guard {type(tool).__name__} {tool.name!r}: it runs on "
                "this machine and the SDK gives it no tool guardrails. Guard its executor "
                f"yourself (guard.run_tool) and pass unguarded=({tool.name!r},)"
            )
    warn_unmatched_tools(guard.definition, guarded)
    return out


def tool_guardrails(
    guard: Guard, tool: FunctionTool, *, session_id: str | None = None
) -> tuple[ToolInputGuardrail[Any], ToolOutputGuardrail[Any]]:
    """The PreToolUse input guardrail and the PostToolUse output guardrail for ``tool``.

    Attach both to that tool (``tool.tool_input_guardrails = [pre]``,
    ``tool.tool_output_guardrails = [post]``). ``tool`` gets a failure formatter that
    records its exceptions (then answers as its own policy would), so the output
    guardrail tells a failure from an output. Without ``guard_tools``'s invoker the
    guardrails cannot apply a rewritten input (the call is refused) nor tell a timeout
    from an output (see the module docs). Warns as ``guard_tools`` does when no tool
    matcher of the definition can match ``tool``.
    """
    if not isinstance(tool, FunctionTool):
        raise TypeError(f"tool_guardrails needs a FunctionTool, not {type(tool).__name__}")
    rails = Rails(guard, session_id, wraps=False)
    rails.prepare(tool)
    warn_unmatched_tools(guard.definition, [tool.name])
    return rails.input, rails.output


class GuardrailsRunHooks(RunHooks[Any]):
    """Prompt, stop and session events for ``Runner.run(..., hooks=GuardrailsRunHooks(guard))``.

    ``session_id`` fixes the session (and then no SessionStart/SessionEnd is sent:
    the session outlives the run); otherwise each run is a session. ``prompts=False``
    leaves the prompt event to the caller (``run`` does). ``last_stop`` is the latest
    AgentStop decision: a RunHooks cannot keep a finished run going, ``run`` can.
    """

    def __init__(
        self, guard: Guard, *, session_id: str | None = None, prompts: bool = True
    ) -> None:
        self.guard = guard
        self.session_id = session_id
        self.prompts = prompts
        self.last_stop: Decision | None = None
        self._runs = runs_of(guard)
        self._seen: list[weakref.ref[Any]] = []  # the Usage of each run these hooks saw

    def _usages(self) -> list[Any]:
        return [u for ref in self._seen if (u := ref()) is not None]

    async def on_agent_start(self, context: AgentHookContext[Any], agent: Agent[Any]) -> None:
        session, first = self._runs.session(context, self.session_id)
        if not first:
            return  # a handoff: the same run, the same prompt
        self._seen.append(weakref.ref(context.usage))
        owned = self.session_id is None
        if owned:
            await session.session_start("startup", agent_type=agent.name)
        if not self.prompts:
            return
        prompt = _prompt(context.turn_input)
        if prompt is None:
            return
        d = await session.user_prompt_submit(prompt, agent_type=agent.name)
        if d.blocked or d.halted:
            if owned:
                await session.session_end("prompt_input_exit", agent_type=agent.name)
            raise RunBlocked("UserPromptSubmit", d.reason or "blocked", d)

    async def on_agent_end(
        self, context: AgentHookContext[Any], agent: Agent[Any], output: Any
    ) -> None:
        session, _ = self._runs.session(context, self.session_id)
        self._runs.settle_rejections(context)
        self._runs.finish_runs([context.usage], ENDED)
        self.last_stop = await session.agent_stop(
            as_text(output),
            stop_hook_active=session.stop_hook_active,
            agent_type=agent.name,
        )
        if self.session_id is None:
            await session.session_end("other", agent_type=agent.name)


async def run(
    guard: Guard,
    agent: Agent[Any],
    input: str | list[Any],
    *,
    session_id: str | None = None,
    **runner_kwargs: Any,
) -> RunResult:
    """``Runner.run`` under the Guard, with the prompt and stop events honoured.

    The prompt event runs first (blocked: :class:`RunBlocked`, the agent never starts;
    context: added as a developer message). While the Guard blocks the stop, the agent
    runs again on its history plus the reason as a user message. Other keyword
    arguments go to ``Runner.run`` (``hooks`` is ours). When a run fails, the calls it
    allowed but never ran are finished as interrupted before the error goes on.
    """
    if "hooks" in runner_kwargs:
        raise TypeError("run() passes its own GuardrailsRunHooks; use Runner.run for your own")
    owned = session_id is None
    session = guard.session(session_id)
    hooks = GuardrailsRunHooks(guard, session_id=session.session_id, prompts=False)
    items: str | list[Any] = input
    name = agent.name
    if owned:
        await session.session_start("startup", agent_type=name)
    try:
        prompt = _prompt([{"role": "user", "content": input}] if isinstance(input, str) else input)
        if prompt is not None:
            d = await session.user_prompt_submit(prompt, agent_type=name)
            if d.blocked or d.halted:
                raise RunBlocked("UserPromptSubmit", d.reason or "blocked", d)
            if d.additional_context:
                items = [*_as_items(input), {"role": "developer", "content": d.additional_context}]
        while True:
            hooks.last_stop = None
            result = await Runner.run(agent, items, hooks=hooks, **runner_kwargs)
            stop = hooks.last_stop
            if stop is None or not stop.blocked or session.halted:
                return result
            items = [*result.to_input_list(), {"role": "user", "content": stop.reason or ""}]
            agent = result.last_agent
    except BaseException:
        runs_of(guard).finish_runs(hooks._usages(), CANCELLED)
        raise
    finally:
        if owned:
            await session.session_end("other", agent_type=name)


def _as_items(input: str | list[Any]) -> list[Any]:
    return [{"role": "user", "content": input}] if isinstance(input, str) else list(input)


def _prompt(items: Sequence[Any]) -> str | None:
    """The text of the last user message in a list of input items."""
    for item in reversed(items):
        role = item.get("role") if isinstance(item, dict) else getattr(item, "role", None)
        if role != "user":
            continue
        content = item.get("content") if isinstance(item, dict) else getattr(item, "content", None)
        if isinstance(content, str):
            return content
        parts = []
        for part in content or ():
            text = part.get("text") if isinstance(part, dict) else getattr(part, "text", None)
            if isinstance(text, str):
                parts.append(text)
        return "\n".join(parts)
    return None
