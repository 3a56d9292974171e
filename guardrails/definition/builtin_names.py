"""The built-in hook names a definition may use (``use: protect_paths``), and where each lives.

Part of the definition language, so it lives here: resolving a name needs only
this table, and ``guardrails.builtins`` derives its exports from it.
"""

from __future__ import annotations

__all__ = ["BUILTINS", "NO_INSTANCE", "TABLE"]

#: declarative name -> (module under ``guardrails.builtins``, class)
TABLE: dict[str, tuple[str, str]] = {
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
    "reinject_instructions": ("instructions", "ReinjectInstructions"),
    "protect_guard_settings": ("guard_settings", "ProtectGuardSettings"),
}
#: built-ins whose class needs arguments, so there is no ready instance of that name
NO_INSTANCE = frozenset({"inject", "require_artifacts"})
#: declarative name -> ``module:ClassName``; the class's defaults give the ready instance
BUILTINS: dict[str, str] = {
    name: f"guardrails.builtins.{module}:{cls}" for name, (module, cls) in TABLE.items()
}
