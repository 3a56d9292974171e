"""What a ``hookrails hook`` process settles around its decision: which events' hooks it
loads, the settings guard ``--protect-settings`` binds, whether its install is stale, the
answer shape of WorktreeCreate, and the declared failure policy when the definition did
not load. Kept apart from :mod:`.hook_command` so that module stays readable in one sitting.
"""

from __future__ import annotations

from ..errors import one_line

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..definition.model import AgentDefinition
    from .hook_command import HookOptions

__all__ = [
    "declared_on_failures",
    "events_of",
    "guard_settings",
    "plain_data",
    "stale",
    "worktree_answer",
]


def guard_settings(definition: AgentDefinition) -> None:
    """Bind ``protect_guard_settings`` first on ConfigChange, failing closed (what
    ``--protect-settings`` asks: ``hookrails claude install`` writes it by default),
    unless the definition binds it there itself."""
    from ..definition.install_plan import (
        SETTINGS_GUARD,
        SETTINGS_GUARD_MATCHER,
        binds_settings_guard,
    )
    from ..definition.model import HookMatcher

    if binds_settings_guard(definition):
        return
    guard = HookMatcher(
        hooks=[SETTINGS_GUARD], on_failure="block", priority=0, name=SETTINGS_GUARD_MATCHER
    )
    definition.hooks["ConfigChange"] = [guard, *(definition.hooks.get("ConfigChange") or [])]


def events_of(event: str | None) -> tuple[str, ...] | None:
    """The events whose hooks deciding ``event`` needs: its own, and PreToolUse's for a
    tool call asked about another way (``JUDGED_AS_TOOL_CALLS``: its judges judge it)."""
    if event is None:
        return None
    from ..dispatch.chains import JUDGED_AS_TOOL_CALLS

    return (event, "PreToolUse") if event in JUDGED_AS_TOOL_CALLS else (event,)


def stale(options: HookOptions, definition: AgentDefinition, event: str | None) -> str | None:
    """Why the handler is out of date (``--covers`` is not the tag of the plan ``install``
    would write now: a matcher changed, so some calls may not reach hookrails), or None."""
    from ..definition.install_plan import coverage_tag, plan_event
    from ..events import event_class

    if event is None:
        return None
    wire = event_class(event).wire_name
    plan = plan_event(wire, definition.hooks.get(event) or (), definition.arg_of)
    if coverage_tag(plan) == options.covers:
        return None
    return (
        f"the Claude Code hooks for {wire} were installed for other matchers than "
        f"{options.config} has now, so calls it guards may not reach hookrails; run "
        f"`hookrails claude install --config {options.config}` again"
    )


def worktree_answer(decision: Any, refusal: str) -> tuple[int, str, str]:
    """WorktreeCreate: Claude reads a command hook's stdout as the new worktree's path and
    fails the creation on any other exit than 0 (so a refusal exits 2 with its reason)."""
    if refusal:
        return 2, "", one_line(f"hookrails: {refusal}")
    path = (decision.claude or {}).get("worktreePath", "")
    return 0, path, ""


def declared_on_failures(config: str | None, event: str) -> list[str | None]:
    """Each matcher's declared ``on_failure`` for ``event`` in the file read as plain data."""
    data = plain_data(config)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return []
    names = ("AgentStop", "Stop") if event == "AgentStop" else (event,)
    out: list[str | None] = []
    for name in names:
        matchers = hooks.get(name)
        for m in matchers if isinstance(matchers, list) else []:
            value = m.get("on_failure") if isinstance(m, dict) else None
            out.append(value if value in ("block", "continue") else None)
    return out


def plain_data(config: str | None) -> Any:
    """The definition file parsed without validation (best effort, for the policy: only
    reached when the definition did not load, so the loader's imports cost nothing)."""
    if not config:
        return None
    from pathlib import Path

    from ..definition.file_format import parse_file

    return parse_file(Path(config))[0]
