"""Fixed-answer hooks, the building blocks of a declarative policy.

``{matcher: "Bash(rm -rf *)", hooks: [{use: deny, with: {reason: ...}}]}``
needs no Python at all.
"""

from __future__ import annotations

from .._event_table import PERMISSION_EVENTS
from ..results import HookResult

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

__all__ = ["Allow", "Ask", "Deny", "Inject", "allow", "ask", "deny"]


class Deny:
    """Deny every matching call with ``reason`` (and ``hint``)."""

    hook_name = "deny"
    #: its PreToolUse judgement holds on PermissionRequest and PreSkillShellCommand too
    judges_calls = True

    def __init__(self, reason: str = "denied by policy", hint: str | None = None) -> None:
        self.reason = reason
        self.hint = hint

    def __call__(self, event: Any, ctx: Any) -> HookResult:
        if event.event_name in PERMISSION_EVENTS:
            return HookResult.deny(self.reason, hint=self.hint)
        return HookResult.block(self.reason)


class Ask:
    """Send every matching call to the approver (or the host's permission prompt)."""

    hook_name = "ask"
    #: its PreToolUse judgement holds on PermissionRequest and PreSkillShellCommand too
    judges_calls = True

    def __init__(self, reason: str = "this call needs approval") -> None:
        self.reason = reason

    def __call__(self, event: Any, ctx: Any) -> HookResult:
        return HookResult.ask(self.reason)


class Allow:
    """Explicitly allow: the host skips its own permission prompt for matching calls."""

    hook_name = "allow"

    def __init__(self, reason: str | None = None) -> None:
        self.reason = reason

    def __call__(self, event: Any, ctx: Any) -> HookResult:
        return HookResult.allow(self.reason)


class Inject:
    """Add fixed context for the model, e.g. a house rule on every prompt."""

    hook_name = "inject"

    def __init__(self, text: str) -> None:
        if not isinstance(text, str) or not text:
            raise ValueError("text must be a non-empty string")
        self.text = text

    def __call__(self, event: Any, ctx: Any) -> HookResult:
        return HookResult.inject(self.text)


deny = Deny()
ask = Ask()
allow = Allow()
