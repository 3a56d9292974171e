"""What the host-adapter tests share: a Bash-like tool that records its calls, and a Guard.

Each framework wraps :func:`bash` with its own decorator (``function_tool``, ``tool``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from guardrails import Guard, Ledger
from tests._guards import build_guard

BASH_SCHEMA = {
    "type": "object",
    "properties": {"command": {"type": "string"}},
    "required": ["command"],
    "additionalProperties": False,
    "examples": [{"command": "ls -la"}],
}


def bash(calls: list[str], fail: bool = False) -> Callable[[str], str]:
    """A ``bash`` tool function: records each command it runs (a denied call adds none)."""

    def bash(command: str) -> str:
        """Run a shell command."""
        calls.append(command)
        if fail:
            raise RuntimeError(f"{command}: exploded")
        return f"ran: {command}"

    return bash


def ledger_guard(tmp_path: Path, hooks: dict[str, list[Any]], **kwargs: Any) -> Guard:
    """A Guard for the ``bash`` tool with ``hooks`` (event -> hook functions), recording into
    ``tmp_path/ledger.db``."""
    tools = {"bash": {"schema": BASH_SCHEMA, "primary_arg": "command"}}
    ledger = Ledger(tmp_path / "ledger.db")
    return build_guard(hooks, name="ops", tools=tools, ledger=ledger, **kwargs)
