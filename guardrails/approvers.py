"""Approvers answer ``ask`` decisions: ``allow``, ``deny`` or ``allow_always``.

An approver is any callable taking an :class:`ApprovalRequest` and returning
one of those strings (or an awaitable of one). The Guard enforces the timeout
(default answer: deny) and caches ``allow_always`` for the session.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TextIO, TypeAlias

__all__ = [
    "Answer",
    "ApprovalRequest",
    "Approver",
    "CallbackApprover",
    "TerminalApprover",
    "always_allow",
    "always_deny",
]

Answer: TypeAlias = Literal["allow", "deny", "allow_always"]
ANSWERS = frozenset({"allow", "deny", "allow_always"})


@dataclass(frozen=True)
class ApprovalRequest:
    """What the approver is asked about.

    ``event``: ``PreToolUse`` (a hook asked), or ``PermissionRequest`` (Claude Code's own
    permission dialog, which the approver answers in place of the user; ``extra`` then
    holds Claude's ``permission_suggestions``).
    """

    tool_name: str
    tool_input: dict[str, Any]
    reason: str
    session_id: str
    hooks: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)
    event: str = "PreToolUse"


Approver: TypeAlias = Callable[[ApprovalRequest], "Answer | str | Awaitable[Answer | str]"]


class CallbackApprover:
    """Adapt a predicate: ``True`` allows, ``False`` denies, a string is taken as the answer."""

    def __init__(self, fn: Callable[[ApprovalRequest], bool | str]) -> None:
        self.fn = fn

    def __call__(self, request: ApprovalRequest) -> str:
        answer = self.fn(request)
        if isinstance(answer, bool):
            return "allow" if answer else "deny"
        return answer


def always_allow(request: ApprovalRequest) -> Answer:
    """Approve everything (tests, trusted sandboxes)."""
    return "allow"


def always_deny(request: ApprovalRequest) -> Answer:
    """Refuse everything that asks: the safe unattended default."""
    return "deny"


class TerminalApprover:
    """Ask on the terminal: ``y`` allow, ``a`` allow always, anything else denies.

    With no interactive stdin it denies at once rather than hang.
    """

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin
        self.stdout = stdout

    def __call__(self, request: ApprovalRequest) -> Answer:
        stdin = self.stdin or sys.stdin
        stdout = self.stdout or sys.stderr
        if self.stdin is None and not (stdin and stdin.isatty()):
            return "deny"
        args = ", ".join(f"{k}={v!r}" for k, v in request.tool_input.items())
        stdout.write(
            f"\n{request.tool_name}({args})\n  needs approval: {request.reason}\n"
            "  [y] allow  [a] allow always  [N] deny: "
        )
        stdout.flush()
        line = stdin.readline().strip().lower()
        if line in ("y", "yes"):
            return "allow"
        if line in ("a", "always"):
            return "allow_always"
        return "deny"
