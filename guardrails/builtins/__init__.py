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
    "allow": "guardrails.builtins.static:Allow",
    "ask": "guardrails.builtins.static:Ask",
    "deny": "guardrails.builtins.static:Deny",
    "inject": "guardrails.builtins.static:Inject",
    "schema_guardrail": "guardrails.builtins.schema.guardrail:SchemaGuardrail",
    "schema_nudge": "guardrails.builtins.nudge:SchemaNudge",
    "idempotency_guard": "guardrails.builtins.idempotency.guard:IdempotencyGuard",
    "bash_side_effects": "guardrails.builtins.shell.classify:BashSideEffects",
    "deny_commands": "guardrails.builtins.shell.deny:DenyCommands",
    "protect_paths": "guardrails.builtins.paths:ProtectPaths",
    "tool_budget": "guardrails.builtins.budget:ToolBudget",
    "redact_secrets": "guardrails.builtins.budget:RedactSecrets",
    "require_artifacts": "guardrails.builtins.stop:RequireArtifacts",
    "completion_promise": "guardrails.builtins.stop:CompletionPromise",
    "skill_discovery": "guardrails.builtins.skills:SkillDiscovery",
}

#: public attribute -> module that defines it (classes and ready instances)
_EXPORTS: dict[str, str] = {
    "Allow": "static",
    "Ask": "static",
    "Deny": "static",
    "Inject": "static",
    "allow": "static",
    "ask": "static",
    "deny": "static",
    "SchemaGuardrail": "schema.guardrail",
    "schema_guardrail": "schema.guardrail",
    "SchemaNudge": "nudge",
    "schema_nudge": "nudge",
    "IdempotencyGuard": "idempotency.guard",
    "idempotency_guard": "idempotency.guard",
    "BashSideEffects": "shell.classify",
    "bash_side_effects": "shell.classify",
    "DenyCommands": "shell.deny",
    "deny_commands": "shell.deny",
    "ProtectPaths": "paths",
    "protect_paths": "paths",
    "ToolBudget": "budget",
    "RedactSecrets": "budget",
    "redact_secrets": "budget",
    "RequireArtifacts": "stop",
    "CompletionPromise": "stop",
    "SkillDiscovery": "skills",
    "tool_budget": "budget",
    "completion_promise": "stop",
    "skill_discovery": "skills",
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
