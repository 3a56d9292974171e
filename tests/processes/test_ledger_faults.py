"""Ledger faults that need other processes (issue #10 §3): a writer killed after its file
or WAL was deleted or replaced, a newer schema said once per process on stderr, and a
``recover`` killed halfway. Each ends in recorded rows or a spool a later recover takes.

The in-process cases are in ``tests/unit/ledger/test_faults.py`` and ``test_moved.py``.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from guardrails import AgentDefinition, Guard, Ledger
from guardrails.ledger.migrations import migrations
from tests._db import records, rows, value
from tests._paths import REPO

pytestmark = pytest.mark.slow

needs_signals = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")
LATEST = len(migrations())

WRITER = """\
import sys, time
from guardrails import AgentDefinition, Guard, Ledger

path, before, after = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
guard = Guard(AgentDefinition(name="writer"), ledger=Ledger(path))

def calls(prefix, n):
    for i in range(n):
        run = guard.sync.run_tool("echo", {"i": i}, lambda i: i, tool_use_id=f"toolu_{prefix}_{i}")
        assert run.ok

calls("before", before)
print("ready", flush=True)
sys.stdin.readline()  # the parent breaks the file now
calls("after", after)
print("done", flush=True)
time.sleep(600)  # killed here: no clean close, no checkpoint on close
"""


@contextmanager
def writer(db: str, before: int, after: int) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, db, str(before), str(after)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=60)


def _remove(*suffixes: str) -> Callable[[str, Path], None]:
    def fault(db: str, tmp: Path) -> None:
        for suffix in suffixes:
            os.remove(db + suffix)

    return fault


def _replace(db: str, tmp: Path) -> None:
    other = str(tmp / "other.db")
    Ledger(other).close()
    os.replace(other, db)


#: (id, the fault, whether the calls before it must stay in the file at the path)
FAULTS = [
    ("wal-deleted", _remove("-wal"), True),
    ("db-deleted", _remove(""), False),
    ("replaced", _replace, False),
]


@needs_signals
@pytest.mark.parametrize(("id_", "fault", "kept"), FAULTS, ids=[f[0] for f in FAULTS])
def test_a_writer_killed_after_its_file_was_broken_loses_nothing(
    tmp_path: Path, id_: str, fault: Callable[[str, Path], None], kept: bool
) -> None:
    """Before: a deleted WAL lived on only in the writer's handles, so once the writer was
    killed its commits were gone; a deleted or replaced file took every later call with it."""
    db = str(tmp_path / "ledger.db")
    with writer(db, 5, 30) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline().strip() == "ready", proc.stderr
        fault(db, tmp_path)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "done"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    with Ledger(db) as ledger:
        report = ledger.recover()
    assert report.rejected == 0
    found = {r["tool_call_id"]: r["status"] for r in rows(db, "SELECT * FROM tool_calls")}
    assert {found.get(f"toolu_after_{i}") for i in range(30)} == {"ok"}
    if kept:  # a deleted or replaced file may keep them too: the writer writes again what
        # it committed since its last look at the file (at most a millisecond's worth)
        assert all(f"toolu_before_{i}" in found for i in range(5))
    assert value(db, "PRAGMA integrity_check") == "ok"


NEWER = """\
from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
import sys

path = sys.argv[1]
prompts = AgentDefinition(hooks={"UserPromptSubmit": [HookMatcher(hooks=[lambda e, c: None])]})
for n in range(3):
    with Ledger(path) as ledger:
        guard = Guard(prompts, ledger=ledger)
        for i in range(5):
            assert guard.sync.run_tool("echo", {"i": i}, lambda i: i).ok
        assert guard.sync.user_prompt_submit("hi").allowed
print("guarded", flush=True)
"""


def _newer_file(db: str) -> None:
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {LATEST + 1}")
    conn.close()


def test_a_newer_schema_is_said_once_per_process_on_stderr(tmp_path: Path) -> None:
    """Before: nothing was recorded and nothing spooled (the Ledger raised); in a hook
    process one stderr line per event said the event was not recorded."""
    db = str(tmp_path / "ledger.db")
    _newer_file(db)
    proc = subprocess.run(
        [sys.executable, "-c", NEWER, db], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "guarded"
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr  # 3 Ledgers, 33 records: said once
    assert f"schema version {LATEST + 1}" in lines[0] and db + ".spool.jsonl" in lines[0]
    assert "newer hookrails" in lines[0]
    spooled = records(db + ".spool.jsonl")
    assert len(spooled) == 3 * (5 * 2 + 1)
    assert value(db, "PRAGMA user_version") == LATEST + 1  # never written


def test_a_hook_process_on_a_newer_schema_decides_spools_and_says_it_once(
    tmp_path: Path,
) -> None:
    """``hookrails hook`` (one process per event, as Claude Code runs it)."""
    db = str(tmp_path / "ledger.db")
    _newer_file(db)
    config = tmp_path / "agent.yaml"
    config.write_text("name: t\nhooks:\n  PreToolUse:\n    - hooks: [{use: allow}]\n")
    event = json.loads((REPO / "tests/fixtures/claude_payloads/PreToolUse.json").read_text())
    event["cwd"] = str(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("HOOKRAILS_")}
    env["PYTHONPATH"] = str(REPO)  # this checkout's guardrails, whatever is installed
    for n in range(2):
        event["tool_use_id"] = f"toolu_hook_{n}"
        proc = subprocess.run(
            [sys.executable, "-m", "guardrails", "hook", "--config", str(config), "--ledger", db],
            input=json.dumps(event),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "allow"
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and "newer" in lines[0], proc.stderr
    assert len(records(db + ".spool.jsonl")) == 2


KILLED_RECOVER = """\
import os, sys
from guardrails import Ledger
from guardrails.ledger import sqlite_write

path = sys.argv[1]
done = 0
real = sqlite_write.execute

def execute_then_die(conn, ops):
    global done
    real(conn, ops)
    done += 1
    if done == 25:
        os._exit(9)  # killed halfway through the import, before its COMMIT

sqlite_write.execute = execute_then_die  # recover's, looked up when it runs
with Ledger(path) as ledger:
    ledger.recover()
"""


def test_a_recover_killed_halfway_is_resumed_once(tmp_path: Path) -> None:
    """The killed recover leaves ``<spool>.importing`` and commits nothing; the next one
    imports every record exactly once, with what was spooled meanwhile."""
    db = str(tmp_path / "ledger.db")
    ledger = Ledger(db)
    try:
        guard = Guard(AgentDefinition(), ledger=ledger)
        assert ledger._conn is not None
        ledger._conn.execute("PRAGMA query_only = ON")
        for i in range(40):
            guard.sync.run_tool("echo", {"i": i}, lambda i: i, tool_use_id=f"toolu_{i}")
        ledger._conn.execute("PRAGMA query_only = OFF")
        proc = subprocess.run(
            [sys.executable, "-c", KILLED_RECOVER, db], capture_output=True, timeout=120, cwd=REPO
        )
        assert proc.returncode == 9, proc.stderr
        spool = ledger.spool_path
        assert os.path.exists(spool + ".importing") and not os.path.exists(spool)
        assert value(db, "SELECT count(*) FROM tool_calls") == 0  # nothing half-imported
        ledger._conn.execute("PRAGMA query_only = ON")
        guard.sync.run_tool("echo", {"i": 40}, lambda i: i, tool_use_id="toolu_40")
        ledger._conn.execute("PRAGMA query_only = OFF")
        report = ledger.recover()
    finally:
        ledger.close()
    assert (report.imported, report.rejected) == (82, 0)
    assert value(db, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 41
    assert not os.path.exists(spool + ".importing")
