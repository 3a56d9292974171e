"""Built-in hooks: small callable classes, each with a ready snake_case instance.

``ProtectPaths(paths=[...])`` configures one; ``protect_paths`` is the ready
instance with defaults. In a definition file: ``protect_paths`` or
``{use: protect_paths, with: {paths: [...]}}``. Modules load only when used, so
``import guardrails`` stays light.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

#: declarative name -> (module under guardrails.builtins, class). The one table: the
#: ``BUILTINS`` references, the lazy exports and ``__all__`` all come from it.
_TABLE: dict[str, tuple[str, str]] = {
    "allow": ("static", "Allow"),
    "ask": ("static", "Ask"),
    "deny": ("static", "Deny"),
    "inject": ("static", "Inject"),
    "schema_guardrail": ("schema.guardrail", "SchemaGuardrail"),
    "schema_nudge": ("nudge", "SchemaNudge"),
    "idempotency_guard": ("idempotency.guard", "IdempotencyGuard"),
    "bash_side_effects": ("shell.classify", "BashSideEffects"),
    "deny_commands": ("shell.deny", "DenyCommands"),
    "protect_paths": ("paths", "ProtectPaths"),
    "tool_budget": ("budget", "ToolBudget"),
    "redact_secrets": ("budget", "RedactSecrets"),
    "require_artifacts": ("stop", "RequireArtifacts"),
    "completion_promise": ("stop", "CompletionPromise"),
    "skill_discovery": ("skills", "SkillDiscovery"),
}
#: built-ins whose class needs arguments, so there is no ready instance to export
_NO_INSTANCE = frozenset({"inject", "require_artifacts"})

#: declarative name -> ``module:ClassName``; the class's defaults give the ready instance
BUILTINS: dict[str, str] = {
    name: f"{__name__}.{module}:{cls}" for name, (module, cls) in _TABLE.items()
}
#: public attribute -> module that defines it (classes and ready instances)
_EXPORTS: dict[str, str] = {
    **{cls: module for module, cls in _TABLE.values()},
    **{name: module for name, (module, _) in _TABLE.items() if name not in _NO_INSTANCE},
}

__all__ = sorted(["BUILTINS", *_EXPORTS])

if TYPE_CHECKING:  # the same table, spelled out for type checkers (``X as X``: re-exported)
    from .budget import RedactSecrets as RedactSecrets
    from .budget import ToolBudget as ToolBudget
    from .budget import redact_secrets as redact_secrets
    from .budget import tool_budget as tool_budget
    from .idempotency.guard import IdempotencyGuard as IdempotencyGuard
    from .idempotency.guard import idempotency_guard as idempotency_guard
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
