"""hookrails: declarative, matcher-based guardrails for LLM agents.

``import guardrails`` stays light (Claude Code spawns a process per hook):
names load on first use, and pydantic, jsonschema and sqlite-utils are
imported only by the features that need them.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

__version__ = "0.1.0"

__all__ = [
    "AgentDefinition",
    "AgentStop",
    "ApprovalRequest",
    "CallbackApprover",
    "Decision",
    "DefinitionError",
    "Event",
    "EventError",
    "Guard",
    "GuardrailsError",
    "Hook",
    "HookContext",
    "HookFailure",
    "HookMatcher",
    "HookResult",
    "HookRun",
    "Injection",
    "Ledger",
    "LedgerError",
    "LedgerReader",
    "PostToolUse",
    "PostToolUseFailure",
    "PreToolUse",
    "Session",
    "SessionEnd",
    "SessionStart",
    "SubagentStart",
    "SubagentStop",
    "TerminalApprover",
    "ToolDenied",
    "ToolRun",
    "ToolSpec",
    "UserPromptSubmit",
    "__version__",
    "always_allow",
    "always_deny",
    "claude_hook",
]

_WHERE = {
    "AgentDefinition": "definition.model",
    "HookMatcher": "definition.model",
    "ToolSpec": "definition.model",
    "Guard": "dispatch.guard",
    "HookContext": "dispatch.guard",
    "Session": "dispatch.guard",
    "ToolRun": "dispatch.guard",
    "Decision": "results",
    "HookResult": "results",
    "HookRun": "results",
    "Injection": "results",
    "Event": "events",
    "PreToolUse": "events",
    "PostToolUse": "events",
    "PostToolUseFailure": "events",
    "UserPromptSubmit": "events",
    "SubagentStart": "events",
    "SubagentStop": "events",
    "AgentStop": "events",
    "SessionStart": "events",
    "SessionEnd": "events",
    "GuardrailsError": "errors",
    "DefinitionError": "errors",
    "EventError": "errors",
    "HookFailure": "errors",
    "ToolDenied": "errors",
    "LedgerError": "errors",
    "Ledger": "ledger.sqlite",
    "LedgerReader": "ledger.reader",
    "ApprovalRequest": "approvers",
    "CallbackApprover": "approvers",
    "TerminalApprover": "approvers",
    "always_allow": "approvers",
    "always_deny": "approvers",
    "claude_hook": "definition.hook_refs",
    "Hook": "definition.hook_refs",
}

if TYPE_CHECKING:
    from .approvers import (
        ApprovalRequest,
        CallbackApprover,
        TerminalApprover,
        always_allow,
        always_deny,
    )
    from .definition.hook_refs import Hook, claude_hook
    from .definition.model import AgentDefinition, HookMatcher, ToolSpec
    from .dispatch.guard import Guard, HookContext, Session, ToolRun
    from .errors import (
        DefinitionError,
        EventError,
        GuardrailsError,
        HookFailure,
        LedgerError,
        ToolDenied,
    )
    from .events import (
        AgentStop,
        Event,
        PostToolUse,
        PostToolUseFailure,
        PreToolUse,
        SessionEnd,
        SessionStart,
        SubagentStart,
        SubagentStop,
        UserPromptSubmit,
    )
    from .ledger.reader import LedgerReader
    from .ledger.sqlite import Ledger
    from .results import Decision, HookResult, HookRun, Injection


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'guardrails' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
