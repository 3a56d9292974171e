"""A hook cannot leave ``hookrails hook`` silently with an allow.

Claude Code reads exit 0 with empty stdout as "no decision": on PreToolUse the tool
runs. Each accidental way out of the process an in-process hook could take is
either a failed hook (so the policy decides: PreToolUse denies) or harmless. A
thread a hook leaves running does not keep the process alive past its answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._db import rows

pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).parent / ("hookrails.exe" if os.name == "nt" else "hookrails")

HOOKS = """\
import os, sys, threading, time

def exit0(event, ctx):
    os._exit(0)

def exit1(event, ctx):
    os._exit(1)

def posix_exit(event, ctx):
    import posix
    posix._exit(0)

def exec_true(event, ctx):
    os.execv("/bin/true", ["true"])

def execlp_true(event, ctx):
    os.execlp("true", "true")

def abort(event, ctx):
    os.abort()

def sys_exit(event, ctx):
    sys.exit(0)

def linger(event, ctx):
    threading.Thread(target=time.sleep, args=(120,)).start()  # not a daemon

def linger_then_exit(event, ctx):
    def later():
        time.sleep(0.2)
        os._exit(0)
    threading.Thread(target=later).start()
"""

EVENT = {
    "session_id": "s1",
    "cwd": ".",
    "hook_event_name": "PreToolUse",
    "tool_name": "Bash",
    "tool_input": {"command": "ls"},
    "tool_use_id": "toolu_1",
}


def _hook(tmp_path: Path, hook: str, module_code: str = HOOKS) -> subprocess.CompletedProcess[str]:
    (tmp_path / "escapes.py").write_text(module_code, encoding="utf-8")
    config = tmp_path / "agent.yaml"
    config.write_text(
        "name: t\nledger: ledger.db\nhooks:\n  PreToolUse:\n"
        f"    - matcher: Bash\n      hooks: ['escapes:{hook}']\n",
        encoding="utf-8",
    )
    env = {**os.environ, "HOOKRAILS_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run(
        [str(SCRIPT), "hook", "--config", str(config)],
        input=json.dumps({**EVENT, "cwd": str(tmp_path)}),
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=60,  # a process kept alive by the hook would hit this: a failure
    )


@pytest.mark.parametrize(
    "hook", ["exit0", "exit1", "posix_exit", "exec_true", "execlp_true", "abort", "sys_exit"]
)
def test_a_hook_leaving_the_process_is_a_failed_hook_and_pretooluse_denies(
    tmp_path: Path, hook: str
) -> None:
    proc = _hook(tmp_path, hook)
    assert proc.returncode == 0, proc.stderr
    answer = json.loads(proc.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny"
    assert f"hook escapes:{hook} failed" in answer["permissionDecisionReason"]
    (call,) = rows(tmp_path / "ledger.db", "select status from tool_calls")
    assert call["status"] == "denied"


@pytest.mark.parametrize("hook", ["linger", "linger_then_exit"])
def test_a_thread_left_running_neither_holds_the_process_nor_takes_the_answer(
    tmp_path: Path, hook: str
) -> None:
    proc = _hook(tmp_path, hook)  # returns long before the thread would end
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}  # the hook had no opinion: allowed, and said so
    (call,) = rows(tmp_path / "ledger.db", "select status from tool_calls")
    assert call["status"] == "pending"


def test_a_hook_module_exiting_on_import_fails_closed(tmp_path: Path) -> None:
    proc = _hook(tmp_path, "exit0", module_code="import os\nos._exit(0)\n" + HOOKS)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "os._exit(0)" in proc.stderr


def test_a_hook_module_whose_import_hangs_is_answered_by_the_watchdog(tmp_path: Path) -> None:
    """The watchdog is armed before the definition loads (``LOAD_LIMIT``), not only once the
    hooks are imported: a hung import fails by the policy instead of waiting for Claude."""
    proc = _hook(tmp_path, "exit0", module_code="import time\ntime.sleep(120)\n" + HOOKS)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "no decision within 10s" in proc.stderr
