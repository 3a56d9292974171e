"""The journal across processes: what ``hookrails hook`` journals is read right after it
exits, imported exactly once while processes append and import at once, and kept when an
importer is killed mid-import (``guardrails.ledger.journal``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from guardrails.ledger import journal
from guardrails.ledger.sqlite import Ledger
from tests._db import rows

pytestmark = pytest.mark.slow  # real processes

SID = "0b7f0000-0000-4000-8000-00000000000b"
AGENT = """\
name: journaled
hooks:
  PreToolUse:
    - matcher: "Bash(rm -rf *)"
      hooks: [{use: deny, with: {reason: "rm -rf is not allowed"}}]
"""

#: a process journaling ``n`` records of its own (argv: ledger, tag, n)
WRITER = """\
import sys
from guardrails.ledger.journal import append

path, tag, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
at = "2026-01-01T00:00:00.000Z"
for i in range(n):
    call = f"{tag}-{i}"
    ops = [["pre", ["s", "a", None, None, call, "Bash", "{}", "{}", "h", "deny", "no",
                    "denied", at, at, 0.0, None, None]]]
    assert append(path, ops)
"""

#: a process importing again and again until told to stop (argv: ledger, stop file)
IMPORTER = """\
import os, sys
from guardrails.ledger.sqlite import Ledger

path, stop = sys.argv[1], sys.argv[2]
with Ledger(path) as led:
    while not os.path.exists(stop):
        led.import_journal()
"""

#: an importer that stops (sleeps) in the middle of its transaction (argv: ledger, flag)
SLOW_IMPORTER = """\
import sys, time
from guardrails.ledger import journal_import, sqlite_write

path, flag = sys.argv[1], sys.argv[2]
done = []

def slow(conn, ops, rowids=None):
    sqlite_write.execute(conn, ops, rowids)
    done.append(1)
    if len(done) == 5:
        open(flag, "w").close()
        time.sleep(60)

journal_import.execute = slow
from guardrails.ledger.sqlite import Ledger
Ledger(path).close()
"""


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HOOKRAILS_LEDGER",)}
    env["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
    env["HOOKRAILS_CACHE_DIR"] = str(tmp / "cache")
    return env


def _hook(tmp: Path, command: str, call: str) -> dict[str, object]:
    event = {
        "session_id": SID,
        "cwd": str(tmp),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": call,
    }
    proc = subprocess.run(
        [sys.executable, "-m", "guardrails", "hook", "--config", str(tmp / "agent.yaml"),
         "--ledger", str(tmp / "ledger.db")],
        input=json.dumps(event).encode(), capture_output=True, env=_env(tmp), cwd=tmp, check=False,
    )  # fmt: skip
    assert proc.returncode == 0 and not proc.stderr, proc.stderr
    answer: dict[str, object] = json.loads(proc.stdout)
    return answer


def _ready(tmp: Path) -> Path:
    (tmp / "agent.yaml").write_text(AGENT)
    path = tmp / "ledger.db"
    Ledger(str(path)).close()
    return path


def test_a_hook_processs_record_is_read_right_after_it_exits(tmp_path: Path) -> None:
    path = _ready(tmp_path)
    _hook(tmp_path, "rm -rf build", "t1")
    _hook(tmp_path, "ls", "t2")
    assert journal.waiting(str(path))  # journaled, not yet in the file
    query = subprocess.run(
        [sys.executable, "-m", "guardrails", "ledger", "query", "--ledger", str(path), "-f", "json",
         "select tool_call_id, decision, status from tool_calls order by id"],
        capture_output=True, env=_env(tmp_path), check=True,
    )  # fmt: skip
    assert json.loads(query.stdout) == [
        {"tool_call_id": "t1", "decision": "deny", "status": "denied"},
        {"tool_call_id": "t2", "decision": "allow", "status": "pending"},
    ]
    _hook(tmp_path, "rm -rf dist", "t3")
    with Ledger(str(path)) as led:
        found = led.reader.query("SELECT tool_call_id FROM tool_calls ORDER BY id")
    assert [r["tool_call_id"] for r in found] == ["t1", "t2", "t3"]


def test_processes_appending_while_others_import_lose_and_double_nothing(tmp_path: Path) -> None:
    path = _ready(tmp_path)
    stop = tmp_path / "stop"
    importers = [
        subprocess.Popen([sys.executable, "-c", IMPORTER, str(path), str(stop)], env=_env(tmp_path))
        for _ in range(2)
    ]
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), f"w{w}", "150"], env=_env(tmp_path)
        )
        for w in range(4)
    ]
    try:
        assert all(p.wait(120) == 0 for p in writers)
    finally:
        stop.touch()
        for p in importers:
            assert p.wait(60) == 0
    calls = [r["tool_call_id"] for r in rows(path, "SELECT tool_call_id FROM tool_calls")]
    hook_rows = rows(path, "SELECT count(*) AS n FROM tool_calls")[0]["n"]
    assert hook_rows == 600 and len(set(calls)) == 600
    assert not journal.waiting(str(path))


def test_an_importer_killed_mid_import_loses_nothing(tmp_path: Path) -> None:
    path = _ready(tmp_path)
    writer = [sys.executable, "-c", WRITER, str(path), "k", "20"]
    subprocess.run(writer, env=_env(tmp_path), check=True)
    flag = tmp_path / "inside"
    slow = subprocess.Popen(
        [sys.executable, "-c", SLOW_IMPORTER, str(path), str(flag)], env=_env(tmp_path)
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert flag.exists()
        subprocess.run(
            [*writer[:4], "late", "5"], env=_env(tmp_path), check=True
        )  # appended while the importer holds the taken file
    finally:
        slow.send_signal(signal.SIGKILL)
        slow.wait(10)
    work = journal.journal_path(str(path))
    assert os.path.exists(work + ".importing")  # what it took waits for the next importer
    calls = [r["tool_call_id"] for r in rows(path, "SELECT tool_call_id FROM tool_calls")]
    assert sorted(calls) == sorted([f"k-{i}" for i in range(20)] + [f"late-{i}" for i in range(5)])
