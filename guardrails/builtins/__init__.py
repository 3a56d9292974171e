"""Built-in hooks: small callable classes, each with a ready snake_case instance.

``ProtectPaths(paths=[...])`` configures one; ``protect_paths`` is the ready
instance with defaults. In a definition file: ``protect_paths`` or
``{use: protect_paths, with: {paths: [...]}}``. Modules load only when used, so
``import guardrails`` stays light. The names and their homes are one table,
``guardrails.definition.builtin_names``: exports and ``__all__`` come from it.
"""

from __future__ import annotations

from ..definition.builtin_names import BUILTINS as BUILTINS
from ..definition.builtin_names import NO_INSTANCE, TABLE

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

#: public attribute -> module that defines it (classes and ready instances)
_EXPORTS: dict[str, str] = {
    **{cls: module for module, cls in TABLE.values()},
    **{name: module for name, (module, _) in TABLE.items() if name not in NO_INSTANCE},
}

__all__ = sorted(["BUILTINS", *_EXPORTS])

if TYPE_CHECKING:  # the same table, spelled out for type checkers (``X as X``: re-exported)
    from .budget import RedactSecrets as RedactSecrets
    from .budget import ToolBudget as ToolBudget
    from .budget import redact_secrets as redact_secrets
    from .budget import tool_budget as tool_budget
    from .guard_settings import ProtectGuardSettings as ProtectGuardSettings
    from .guard_settings import protect_guard_settings as protect_guard_settings
    from .idempotency.guard import IdempotencyGuard as IdempotencyGuard
    from .idempotency.guard import idempotency_guard as idempotency_guard
    from .instructions import ReinjectInstructions as ReinjectInstructions
    from .instructions import reinject_instructions as reinject_instructions
    from .nudge import SchemaNudge as SchemaNudge
    from .nudge import schema_nudge as schema_nudge
    from .paths import ProtectPaths as ProtectPaths
    from .paths import protect_paths as protect_paths
    from .schema.guardrail import SchemaGuardrail as SchemaGuardrail
    from .schema.guardrail import schema_guardrail as schema_guardrail
    from .shell.classify import BashSideEffects as BashSideEffects
    from .shell.classify import bash_side_effects as bash_side_effects
    from .shell.deny import DenyCommands as DenyCommands
    from .shell.deny import deny_commands as deny_commands
    from .skills import SkillDiscovery as SkillDiscovery
    from .skills import skill_discovery as skill_discovery
    from .static import Allow as Allow
    from .static import Ask as Ask
    from .static import Deny as Deny
    from .static import Inject as Inject
    from .static import allow as allow
    from .static import ask as ask
    from .static import deny as deny
    from .stop import CompletionPromise as CompletionPromise
    from .stop import RequireArtifacts as RequireArtifacts
    from .stop import completion_promise as completion_promise


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'guardrails.builtins' has no attribute {name!r}")
    import importlib  # here: a hook process resolving `use: deny` never needs it

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
