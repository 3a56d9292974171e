"""Gates and records on the newer events, through the real Claude Code CLI 2.1.332 (offline):
TaskCreated and TaskCompleted gated by ``require_artifacts`` (the task tools, which
``CLAUDE_CODE_ENABLE_TODO_TOOLS=1`` turns on).

Every run installs the definition with ``hookrails claude install`` (command hooks, one
process per event) and reads the ledger those processes wrote. TeammateIdle needs a team
of teammate processes, which the CLI starts only with agent teams in a terminal: it is
covered by hook processes with its real payload (``tests/processes/test_hook_state.py``).
StopFailure too (``tests/processes/test_hook_events.py``): the CLI runs its hooks without
waiting for them, and neither a ``-p`` run nor a streaming session that met a scripted 429
or 529 (``guardrails.testing.APIError``, ``CLAUDE_CODE_MAX_RETRIES=0``) left a row.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from guardrails.testing import MessagesRequest, tool_use
from tests._claude_cli import CliRun, run_claude
from tests._db import rows

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def install(tmp_path: Path, definition: str) -> tuple[dict[str, Any], dict[str, str], Path]:
    """``hookrails claude install`` in ``tmp_path/project``: the settings, the env the hook
    processes need, and the ledger they write."""
    project = tmp_path / "project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "agent.yaml").write_text(definition, encoding="utf-8")
    hook_env = {"HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")}
    env = {**os.environ, **hook_env}
    env.pop("HOOKRAILS_LEDGER", None)
    done = subprocess.run(
        [sys.executable, "-m", "guardrails", "claude", "install", "--config", "agent.yaml"],
        cwd=project, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    return settings, hook_env, project / "ledger.db"


# --- TaskCreated, TaskCompleted ---------------------------------------------------------------

TASKS_YAML = """\
name: tasks
ledger: ledger.db
hooks:
  TaskCreated:
    - hooks: [{use: require_artifacts, with: {paths: [PLAN.md]}}]
  TaskCompleted:
    - hooks: [{use: require_artifacts, with: {paths: [CHANGELOG.md]}}]
"""


def tasks_script(cwd: Path) -> Any:
    """Load the task tools, create a task (refused until PLAN.md exists), complete it
    (refused until CHANGELOG.md exists)."""

    def write(name: str) -> dict[str, Any]:
        return tool_use("Write", {"file_path": str(cwd / name), "content": "x\n"})

    def update(request: MessagesRequest) -> dict[str, Any]:
        created = re.findall(r"Task #(\w+) created successfully", request.text())
        return tool_use("TaskUpdate", {"taskId": created[-1], "status": "completed"})

    steps = [
        lambda r: tool_use("ToolSearch", {"query": "select:TaskCreate,TaskUpdate"}),
        lambda r: tool_use("TaskCreate", {"subject": "Write the changelog", "description": "d"}),
        lambda r: write("PLAN.md"),
        lambda r: tool_use("TaskCreate", {"subject": "Write the changelog", "description": "d"}),
        update,
        lambda r: write("CHANGELOG.md"),
        update,
    ]

    def script(request: MessagesRequest) -> Any:
        return steps[request.turn](request) if request.turn < len(steps) else "Done."

    return script


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> tuple[CliRun, Path]:
    tmp = tmp_path_factory.mktemp("tasks")
    settings, env, db = install(tmp, TASKS_YAML)
    run = run_claude(
        tasks_script(tmp / "project"), tmp, settings=settings,
        env={**env, "CLAUDE_CODE_ENABLE_TODO_TOOLS": "1"},
        allowed_tools=["ToolSearch", "TaskCreate", "TaskUpdate", "Write"],
    )  # fmt: skip
    return run, db


def results(run: CliRun) -> list[str]:
    """The text of every tool result the model got, in order."""
    last = run.requests[-1]
    out = []
    for block in last.tool_results():
        content = block.get("content")
        if isinstance(content, list):
            content = "\n".join(b.get("text", "") for b in content if isinstance(b, dict))
        out.append(str(content))
    return out


def test_a_task_is_not_created_until_its_artifact_exists(tasks: tuple[CliRun, Path]) -> None:
    run, db = tasks
    got = results(run)
    assert "was not created" in got[1] and "PLAN.md missing" in got[1]
    assert "created successfully" in got[3]
    created = rows(
        db, "SELECT decision, reason FROM events WHERE event = 'TaskCreated' ORDER BY id"
    )
    assert [r["decision"] for r in created] == ["block", "allow"]
    assert "Report found: PLAN.md" in created[1]["reason"]


def test_a_task_is_not_completed_until_its_artifact_exists(tasks: tuple[CliRun, Path]) -> None:
    run, db = tasks
    got = results(run)
    assert "is not marked completed" in got[4] and "CHANGELOG.md missing" in got[4]
    assert "CHANGELOG.md missing" not in got[6]
    completed = rows(
        db,
        "SELECT payload ->> 'task_id' AS task, payload ->> 'task_subject' AS subject, decision "
        "FROM events WHERE event = 'TaskCompleted' ORDER BY id",
    )
    assert [(r["subject"], r["decision"]) for r in completed] == [
        ("Write the changelog", "block"),
        ("Write the changelog", "allow"),
    ]
    assert completed[0]["task"] == completed[1]["task"]
