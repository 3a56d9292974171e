"""Building a Guard in one call, and the agent that fills the shared ledger fixture.

:func:`build_guard` is the plain function behind the ``make_guard`` fixture
(``tests/conftest.py``), so module-level factories in test files can be thin
wrappers over it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from guardrails import AgentDefinition, Guard, HookMatcher, HookResult, Ledger

#: ``{event: [HookMatcher | hook, ...]}``, or one event's list (bound to ``event=``)
Hooks = Mapping[str, Sequence[Any]] | Sequence[Any]
LedgerOption = Ledger | str | os.PathLike[str] | bool | None


def matchers(entries: Sequence[Any]) -> list[Any]:
    """HookMatchers stay as they are; each run of bare hooks (functions, hook objects,
    ``{"command": ...}`` references) becomes one match-all HookMatcher, in place."""
    found: list[Any] = []
    loose: list[Any] = []
    for entry in entries:
        if isinstance(entry, HookMatcher):
            if loose:
                found.append(HookMatcher(hooks=loose))
                loose = []
            found.append(entry)
        else:
            loose.append(entry)
    if loose:
        found.append(HookMatcher(hooks=loose))
    return found


def build_guard(
    hooks: Hooks = (),
    *,
    event: str = "PreToolUse",
    ledger: LedgerOption = None,
    approver: Callable[..., Any] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    tenant: str | None = None,
    clock: Callable[[], float] | None = None,
    approval_timeout: float | None = None,
    session_ttl: float | None = 3600.0,
    **definition: Any,
) -> Guard:
    """A Guard over ``AgentDefinition(hooks=..., **definition)`` (``name``, ``tools``,
    ``injection_budget``, ...). Options left out keep the Guard's defaults: no ledger (given
    the clean environment), no approver, ``time.time``."""
    by_event = hooks if isinstance(hooks, Mapping) else ({event: hooks} if hooks else {})
    agent = AgentDefinition(
        hooks={name: matchers(entries) for name, entries in by_event.items()}, **definition
    )
    options: dict[str, Any] = {"ledger": ledger, "approver": approver, "tenant": tenant}
    options["session_ttl"] = session_ttl
    options["cwd"] = None if cwd is None else os.fspath(cwd)
    if clock is not None:
        options["clock"] = clock
    if approval_timeout is not None:
        options["approval_timeout"] = approval_timeout
    return Guard(agent, **options)


class GuardFactory(Protocol):
    """The type of the ``make_guard`` fixture: :func:`build_guard`'s signature."""

    def __call__(
        self,
        hooks: Hooks = (),
        *,
        event: str = "PreToolUse",
        ledger: LedgerOption = None,
        approver: Callable[..., Any] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        tenant: str | None = None,
        clock: Callable[[], float] | None = None,
        approval_timeout: float | None = None,
        session_ttl: float | None = 3600.0,
        **definition: Any,
    ) -> Guard: ...


# --- the agent behind the filled_ledger fixture ---------------------------------------------


def no_rm(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("no rm -rf", hint="Delete one file at a time.")


def noop(event: Any, ctx: Any) -> None:
    return None


def not_yet(event: Any, ctx: Any) -> HookResult:
    return HookResult.block("the summary is not written yet")


def boom(**_: Any) -> str:
    raise RuntimeError("disk on fire")


#: ``rm -rf`` is denied; every call and stop runs a hook, so hook_runs has rows
TESTER_HOOKS: dict[str, list[Any]] = {
    "PreToolUse": [HookMatcher(matcher="Bash(rm -rf *)", hooks=[no_rm]), noop],
    "PostToolUse": [noop],
    "AgentStop": [not_yet],
}
#: the second session of the filled ledger
SECOND_SESSION = "second-session"


def filling_guard(path: str | os.PathLike[str], **options: Any) -> Guard:
    """The agent ``tester`` (which fills the ledger) recording into ``path``."""
    return build_guard(TESTER_HOOKS, name="tester", ledger=Ledger(path), **options)


def fill_ledger(path: str | os.PathLike[str]) -> None:
    """What the filled_ledger fixture holds, written by a real Guard and closed: in one session
    4 calls (``Bash(ls)`` ok twice, ``Bash(rm -rf build)`` denied, ``Read(notes.txt)`` failed),
    a prompt and a blocked stop; then :data:`SECOND_SESSION` with one prompt."""
    guard = filling_guard(path)
    assert guard.ledger is not None
    try:
        guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out")
        guard.sync.run_tool("Bash", {"command": "ls"}, lambda command: "out again")
        guard.sync.run_tool("Bash", {"command": "rm -rf build"}, lambda command: "gone")
        guard.sync.run_tool("Read", {"file_path": "notes.txt"}, boom)
        guard.sync.user_prompt_submit("tidy up")
        assert guard.sync.agent_stop(last_assistant_message="done").blocked
        guard.session(SECOND_SESSION).sync.user_prompt_submit("what changed?")
    finally:
        guard.ledger.close()
