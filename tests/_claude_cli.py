"""Run the real Claude Code CLI (bundled in the claude-agent-sdk wheel) offline, for e2e tests.

The CLI talks to a :class:`~guardrails.testing.FakeMessagesAPI` on 127.0.0.1
with a dummy key and a temporary HOME, so it runs its real tool loop,
permission checks and hooks with no network. Root may not use
``bypassPermissions``, so tools are pre-approved with ``allowed_tools``.

    run = run_claude(script, tmp_path, hooks=to_sdk_hooks(guard))
    run = run_claude(script, tmp_path, settings={"hooks": {...}})  # .claude/settings.json

Real tools really run inside ``run.cwd``: script harmless commands only.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from guardrails.testing import FakeMessagesAPI, MessagesRequest

#: seconds one CLI run may take before the test fails (a scenario takes 1-3 s)
RUN_TIMEOUT = 60.0
#: file names (the last part of the path) of the subagent Writes Claude Code 2.1.332 refuses
#: before any hook runs; ``tests/e2e/test_claude_builtin_tools.py`` holds it to the real CLI
SUBAGENT_REPORT_FILE = re.compile(r"(REPORT|SUMMARY|FINDINGS|ANALYSIS).*\.md\Z", re.IGNORECASE)


def cli_path() -> Path:
    """The CLI bundled in claude-agent-sdk; fail (never skip) when it is missing."""
    try:
        import claude_agent_sdk
    except ImportError:
        pytest.fail("claude-agent-sdk is not installed: run `make test` (pip install -e '.[dev]')")
    path = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"
    if not path.is_file():
        pytest.fail(
            f"the Claude Code CLI bundled in claude-agent-sdk is missing ({path.name} under "
            "claude_agent_sdk/_bundled): reinstall the wheel for this platform with `make test`"
        )
    return path


@dataclass
class CliRun:
    """What one CLI session did: the SDK messages, the model requests, stderr, the folders."""

    api: FakeMessagesAPI
    cwd: Path
    home: Path
    messages: list[Any] = field(default_factory=list)
    stderr: list[str] = field(default_factory=list)

    @property
    def requests(self) -> list[MessagesRequest]:
        return self.api.requests

    @property
    def result(self) -> Any:
        """The final ``ResultMessage`` (``None`` if the CLI ended without one)."""
        from claude_agent_sdk import ResultMessage

        return next((m for m in reversed(self.messages) if isinstance(m, ResultMessage)), None)

    @property
    def session_id(self) -> str | None:
        result = self.result
        return None if result is None else str(result.session_id)

    def tool_result(self, tool_use_id: str) -> dict[str, Any]:
        """The ``tool_result`` block the model received for ``tool_use_id``."""
        for request in self.requests:
            found = request.result_for(tool_use_id)
            if found is not None:
                return found
        raise AssertionError(f"the model never received a result for {tool_use_id}")

    def result_text(self, tool_use_id: str) -> str:
        block = self.tool_result(tool_use_id)
        content = block.get("content")
        if isinstance(content, list):
            return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
        return str(content or "")

    def shown(self, agent_id: str | None = None) -> str:
        """Everything the model was shown in the last request of a conversation (main thread
        by default, or the subagent ``agent_id``): results, hook context and feedback."""
        mine = [r for r in self.requests if r.agent_id == agent_id]
        if not mine:
            raise AssertionError(f"no model request for agent {agent_id!r}")
        return mine[-1].text()


def write_settings(cwd: Path, settings: dict[str, Any]) -> Path:
    """``cwd/.claude/settings.json``, read by a CLI run with ``setting_sources=["project"]``."""
    path = cwd / ".claude" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2), encoding="utf-8")
    return path


async def run_claude_async(
    script: Sequence[Any] | Callable[[MessagesRequest], Any],
    tmp_path: Path,
    *,
    hooks: dict[Any, Any] | None = None,
    settings: dict[str, Any] | None = None,
    prompt: str = "Go.",
    allowed_tools: Sequence[str] = ("Bash",),
    agents: dict[str, Any] | None = None,
    env: dict[str, str] | None = None,
    timeout: float = RUN_TIMEOUT,
    **options: Any,
) -> CliRun:
    """One CLI session with ``prompt``, answered by ``script``, in ``tmp_path/project``.

    ``hooks`` go to ``ClaudeAgentOptions.hooks`` (SDK callbacks); ``settings``
    is written to ``.claude/settings.json`` in the project and read
    (``setting_sources=["project"]``), so command and http hooks run too.
    Without it no settings file is read at all. ``env`` adds variables (for
    hook processes); other keyword arguments go to ``ClaudeAgentOptions``.
    """
    from claude_agent_sdk import ClaudeAgentOptions, query

    cli = cli_path()
    cwd = tmp_path / "project"
    home = tmp_path / "home"
    cwd.mkdir(parents=True, exist_ok=True)
    home.mkdir(parents=True, exist_ok=True)
    if settings is not None:
        write_settings(cwd, settings)
    api = FakeMessagesAPI(script)
    run = CliRun(api, cwd, home)
    with api:
        opts = ClaudeAgentOptions(
            cwd=str(cwd),
            cli_path=str(cli),
            env={**api.env(home), **(env or {})},
            setting_sources=["project"] if settings is not None else [],
            allowed_tools=list(allowed_tools),
            permission_mode="default",
            hooks=hooks,
            agents=agents,
            stderr=run.stderr.append,
            **options,
        )
        try:
            async with asyncio.timeout(timeout):
                async for message in query(prompt=prompt, options=opts):
                    run.messages.append(message)
        except TimeoutError:
            pytest.fail(f"the CLI did not finish within {timeout:g}s; stderr:\n{_tail(run)}")
    api.raise_errors()
    if run.result is None:
        pytest.fail(f"the CLI ended without a result; stderr:\n{_tail(run)}")
    return run


def run_claude(
    script: Sequence[Any] | Callable[[MessagesRequest], Any], tmp_path: Path, **kwargs: Any
) -> CliRun:
    """:func:`run_claude_async` from sync code (a test or a fixture)."""
    return asyncio.run(run_claude_async(script, tmp_path, **kwargs))


def _tail(run: CliRun, lines: int = 30) -> str:
    return "\n".join(run.stderr[-lines:])
