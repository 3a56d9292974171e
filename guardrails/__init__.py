"""hookrails: declarative, matcher-based guardrails for LLM agents.

``import guardrails`` stays light (Claude Code spawns a process per hook):
names load on first use, and pydantic, jsonschema and sqlite-utils are
imported only by the features that need them.
"""

from __future__ import annotations

from ._version import __version__ as __version__

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

#: the public names, each with the module that defines it: ``__all__`` and the lazy
#: imports come from this one table (a test holds the TYPE_CHECKING imports below to it)
_WHERE: dict[str, str] = {
    "AgentDefinition": "definition.model",
    "HookMatcher": "definition.model",
    "ToolSpec": "definition.model",
    "Hook": "definition.hook_refs",
    "claude_hook": "definition.hook_refs",
    "Guard": "dispatch.guard",
    "HookContext": "dispatch.session",
    "Session": "dispatch.session",
    "ToolRun": "dispatch.toolrun",
    "Decision": "results",
    "HookResult": "results",
    "HookRun": "results",
    "ModelContext": "results",
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
    "LedgerError": "errors",
    "LocatedError": "errors",
    "OutputError": "errors",
    "RunBlocked": "errors",
    "ServeError": "errors",
    "SettingsError": "errors",
    "ToolDenied": "errors",
    "TranscriptError": "errors",
    "UnmatchedToolWarning": "errors",
    "Ledger": "ledger.sqlite",
    "LedgerReader": "ledger.reader",
    "ApprovalRequest": "approvers",
    "CallbackApprover": "approvers",
    "TerminalApprover": "approvers",
    "always_allow": "approvers",
    "always_deny": "approvers",
}

__all__ = sorted([*_WHERE, "__version__"])

if TYPE_CHECKING:  # the same table, spelled out for type checkers (``X as X``: re-exported)
    from .approvers import ApprovalRequest as ApprovalRequest
    from .approvers import CallbackApprover as CallbackApprover
    from .approvers import TerminalApprover as TerminalApprover
    from .approvers import always_allow as always_allow
    from .approvers import always_deny as always_deny
    from .definition.hook_refs import Hook as Hook
    from .definition.hook_refs import claude_hook as claude_hook
    from .definition.model import AgentDefinition as AgentDefinition
    from .definition.model import HookMatcher as HookMatcher
    from .definition.model import ToolSpec as ToolSpec
    from .dispatch.guard import Guard as Guard
    from .dispatch.session import HookContext as HookContext
    from .dispatch.session import Session as Session
    from .dispatch.toolrun import ToolRun as ToolRun
    from .errors import DefinitionError as DefinitionError
    from .errors import EventError as EventError
    from .errors import GuardrailsError as GuardrailsError
    from .errors import HookFailure as HookFailure
    from .errors import LedgerError as LedgerError
    from .errors import LocatedError as LocatedError
    from .errors import OutputError as OutputError
    from .errors import RunBlocked as RunBlocked
    from .errors import ServeError as ServeError
    from .errors import SettingsError as SettingsError
    from .errors import ToolDenied as ToolDenied
    from .errors import TranscriptError as TranscriptError
    from .errors import UnmatchedToolWarning as UnmatchedToolWarning
    from .events import AgentStop as AgentStop
    from .events import Event as Event
    from .events import PostToolUse as PostToolUse
    from .events import PostToolUseFailure as PostToolUseFailure
    from .events import PreToolUse as PreToolUse
    from .events import SessionEnd as SessionEnd
    from .events import SessionStart as SessionStart
    from .events import SubagentStart as SubagentStart
    from .events import SubagentStop as SubagentStop
    from .events import UserPromptSubmit as UserPromptSubmit
    from .ledger.reader import LedgerReader as LedgerReader
    from .ledger.sqlite import Ledger as Ledger
    from .results import Decision as Decision
    from .results import HookResult as HookResult
    from .results import HookRun as HookRun
    from .results import ModelContext as ModelContext


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
