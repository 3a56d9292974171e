"""A project on disk for the shell guard tests, and the default guards' answer in it."""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

from guardrails.builtins import deny_commands, protect_paths
from guardrails.testing import make_event

__all__ = ["decide", "project"]


@functools.cache
def project() -> Path:
    """A repository with secrets: ``.git/``, ``.env``, ``keys/server.pem``, ``id_rsa``."""
    root = Path(tempfile.mkdtemp(prefix="hookrails-shell-"))
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (root / ".env").write_text("TOKEN=x\n", encoding="utf-8")
    (root / "keys").mkdir()
    (root / "keys" / "server.pem").write_text("key\n", encoding="utf-8")
    (root / "id_rsa").write_text("key\n", encoding="utf-8")
    (root / "sub").mkdir()
    (root / "src").mkdir()
    (root / "notes.txt").write_text("notes\n", encoding="utf-8")
    return root


def decide(command: str, cwd: Path | None = None) -> tuple[str, str]:
    """``deny_commands`` then ``protect_paths`` on a Bash call in the project: the decision
    (deny before ask before allow) and the reason."""
    root = project()
    old = os.environ.get("CLAUDE_PROJECT_DIR")
    os.environ["CLAUDE_PROJECT_DIR"] = str(root)
    try:
        event = make_event(
            "PreToolUse", tool_name="Bash", tool_input={"command": command}, cwd=str(cwd or root)
        )
        answers = [deny_commands(event, None), protect_paths(event, None)]
    finally:
        if old is None:
            os.environ.pop("CLAUDE_PROJECT_DIR", None)
        else:
            os.environ["CLAUDE_PROJECT_DIR"] = old
    for decision in ("deny", "ask"):
        for a in answers:
            if a is not None and a.decision == decision:
                return decision, a.reason or ""
    return "allow", ""
