"""Built-in hooks: small callable classes, each with a ready snake_case instance.

Names here are what a YAML/TOML/JSON definition can list as a hook; modules
load only when a definition uses them, so ``import guardrails`` stays light.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BUILTINS", "Allow", "Ask", "Deny", "Inject", "allow", "ask", "deny"]

#: declarative name -> ``module:ClassName`` (the class's defaults give the ready instance)
BUILTINS: dict[str, str] = {
    "allow": "guardrails.builtins._static:Allow",
    "ask": "guardrails.builtins._static:Ask",
    "deny": "guardrails.builtins._static:Deny",
    "inject": "guardrails.builtins._static:Inject",
}

_LAZY = {
    "Allow": "Allow",
    "Ask": "Ask",
    "Deny": "Deny",
    "Inject": "Inject",
    "allow": "allow",
    "ask": "ask",
    "deny": "deny",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _static

        return getattr(_static, _LAZY[name])
    raise AttributeError(f"module 'guardrails.builtins' has no attribute {name!r}")
