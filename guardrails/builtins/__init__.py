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

__all__ = [
    "BUILTINS",
    "Allow",
    "Ask",
    "BashSideEffects",
    "CompletionPromise",
    "Deny",
    "DenyCommands",
    "IdempotencyGuard",
    "Inject",
    "ProtectPaths",
    "RedactSecrets",
    "RequireArtifacts",
    "SchemaGuardrail",
    "SchemaNudge",
    "SkillDiscovery",
    "ToolBudget",
    "allow",
    "ask",
    "bash_side_effects",
    "completion_promise",
    "deny",
    "deny_commands",
    "idempotency_guard",
    "protect_paths",
    "redact_secrets",
    "schema_guardrail",
    "schema_nudge",
    "skill_discovery",
    "tool_budget",
]

#: declarative name -> ``module:ClassName``; the class's defaults give the ready instance
BUILTINS: dict[str, str] = {
    "allow": "guardrails.builtins._static:Allow",
    "ask": "guardrails.builtins._static:Ask",
    "deny": "guardrails.builtins._static:Deny",
    "inject": "guardrails.builtins._static:Inject",
    "schema_guardrail": "guardrails.builtins._schema:SchemaGuardrail",
    "schema_nudge": "guardrails.builtins._nudge:SchemaNudge",
    "idempotency_guard": "guardrails.builtins._idempotency:IdempotencyGuard",
    "bash_side_effects": "guardrails.builtins._shell:BashSideEffects",
    "deny_commands": "guardrails.builtins._shell:DenyCommands",
    "protect_paths": "guardrails.builtins._paths:ProtectPaths",
    "tool_budget": "guardrails.builtins._budget:ToolBudget",
    "redact_secrets": "guardrails.builtins._budget:RedactSecrets",
    "require_artifacts": "guardrails.builtins._stop:RequireArtifacts",
    "completion_promise": "guardrails.builtins._stop:CompletionPromise",
    "skill_discovery": "guardrails.builtins._skills:SkillDiscovery",
}

#: public attribute -> module that defines it (classes and ready instances)
_EXPORTS: dict[str, str] = {
    "Allow": "_static",
    "Ask": "_static",
    "Deny": "_static",
    "Inject": "_static",
    "allow": "_static",
    "ask": "_static",
    "deny": "_static",
    "SchemaGuardrail": "_schema",
    "schema_guardrail": "_schema",
    "SchemaNudge": "_nudge",
    "schema_nudge": "_nudge",
    "IdempotencyGuard": "_idempotency",
    "idempotency_guard": "_idempotency",
    "BashSideEffects": "_shell",
    "bash_side_effects": "_shell",
    "DenyCommands": "_shell",
    "deny_commands": "_shell",
    "ProtectPaths": "_paths",
    "protect_paths": "_paths",
    "ToolBudget": "_budget",
    "RedactSecrets": "_budget",
    "redact_secrets": "_budget",
    "RequireArtifacts": "_stop",
    "CompletionPromise": "_stop",
    "SkillDiscovery": "_skills",
    "tool_budget": "_budget",
    "completion_promise": "_stop",
    "skill_discovery": "_skills",
}


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
