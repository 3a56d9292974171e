"""Nothing is lost (docs/design.md §7): crashes, concurrent writers, degraded mode, redaction, caps.

Subprocesses run ``sys.executable -c`` scripts against a ledger in ``tmp_path``.
Degraded-mode tests break the file in one way each, check that the Guard still
guards while its records go to the spool, then fix the cause and check that
``recover()`` imports every record.

Tests may run as root, where permission bits do not stop writes; the read-only
tests detect that and use a failure root cannot bypass (see each test).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from guardrails import (
    AgentDefinition,
    DefinitionError,
    Guard,
    HookMatcher,
    HookResult,
    Ledger,
    LedgerError,
)
from guardrails.ledger import spool_paths
from guardrails.testing import FakeClock, SpyTool

needs_signals = pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL")


# --- helpers ------------------------------------------------------------------------------


from tests._db import rows, value  # noqa: E402


@pytest.fixture(autouse=True)
def _private_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Spools that fall back to the temp folder land inside this test's tmp_path."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def _spool_lines(path: str) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# --- crash: a pending row survives SIGKILL ---------------------------------------------------

SLEEPY_TOOL = """\
import sys, time
from guardrails import AgentDefinition, Guard, Ledger
path, call_id = sys.argv[1], sys.argv[2]
guard = Guard(AgentDefinition(name="crashy"), ledger=Ledger(path))
guard.session("crash-session").sync.run_tool(
    "sleepy", {"seconds": 120}, lambda seconds: time.sleep(seconds), tool_use_id=call_id
)
"""


@contextmanager
def sleeping_tool(db: str, call_id: str) -> Iterator[subprocess.Popen[str]]:
    """A process running a guarded tool that sleeps; yielded once its pending row exists."""
    proc = subprocess.Popen(
        [sys.executable, "-c", SLEEPY_TOOL, db, call_id],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                pytest.fail(f"the tool process ended early: {proc.communicate()[1]}")
            if time.monotonic() > deadline:
                pytest.fail("no pending row within 60 s")
            if os.path.exists(db):
                try:
                    uri = f"file:{db}?mode=ro"
                    conn = sqlite3.connect(uri, uri=True)
                    try:
                        found = conn.execute(
                            "SELECT status FROM tool_calls WHERE tool_call_id = ?", (call_id,)
                        ).fetchall()
                    finally:
                        conn.close()
                    if found:
                        break
                except sqlite3.OperationalError:
                    pass  # the child is still creating the schema
            time.sleep(0.02)
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()


def _call(db: str, call_id: str) -> dict[str, Any]:
    found = rows(db, "SELECT * FROM tool_calls WHERE tool_call_id = ?", call_id)
    assert len(found) == 1
    return found[0]


@pytest.mark.slow
@needs_signals
def test_sigkill_leaves_the_pending_row_and_recover_marks_it_interrupted(ledger_path: str) -> None:
    with sleeping_tool(ledger_path, "toolu_crash") as proc:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    row = _call(ledger_path, "toolu_crash")
    assert row["status"] == "pending"  # evidence, not silence
    assert row["pid"] == proc.pid
    with Ledger(ledger_path) as ledger:
        report = ledger.recover()
    assert report.interrupted == 1
    row = _call(ledger_path, "toolu_crash")
    assert row["status"] == "interrupted"
    assert row["finished_at"] is not None
    assert "interrupted" in row["error_message"]


@pytest.mark.slow
@needs_signals
def test_recover_leaves_the_pending_row_of_a_live_process(ledger_path: str) -> None:
    with sleeping_tool(ledger_path, "toolu_alive") as proc:
        with Ledger(ledger_path) as ledger:
            report = ledger.recover()
        assert proc.poll() is None
        assert report.interrupted == 0
        assert _call(ledger_path, "toolu_alive")["status"] == "pending"


@pytest.mark.slow
@needs_signals
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/<pid>/stat")
def test_a_killed_process_nobody_reaped_yet_counts_as_dead(ledger_path: str) -> None:
    with sleeping_tool(ledger_path, "toolu_zombie") as proc:
        os.kill(proc.pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while Path(f"/proc/{proc.pid}/stat").read_text().split(")")[-1].split()[0] != "Z":
            assert time.monotonic() < deadline, "the child never became a zombie"
            time.sleep(0.01)
        with Ledger(ledger_path) as ledger:  # the zombie still answers kill(pid, 0)
            report = ledger.recover()
    assert report.interrupted == 1
    assert _call(ledger_path, "toolu_zombie")["status"] == "interrupted"


def test_older_than_marks_old_pending_rows_whatever_their_pid(ledger_path: str) -> None:
    old = FakeClock(time.time() - 3600)
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger, clock=old).session("host").sync.pre_tool_use(
            "Bash", {"command": "sleep 1000"}, tool_use_id="toolu_host_old"
        )  # the host flow: no pid, the PostToolUse never came
        Guard(AgentDefinition(), ledger=ledger).session("host").sync.pre_tool_use(
            "Bash", {"command": "ls"}, tool_use_id="toolu_host_new"
        )
        seen: list[tuple[int, str]] = []

        def tool() -> str:  # runs while its own row is pending, with this (live) pid
            for older_than in (None, 60.0):
                with Ledger(ledger_path) as other:
                    report = other.recover(older_than=older_than, now=time.time() + 600)
                seen.append((report.interrupted, _call(ledger_path, "toolu_mine")["status"]))
            return "done"

        run = Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "slow", {}, tool, tool_use_id="toolu_mine"
        )
    assert run.ok
    # without older_than: no pid is dead, nothing is marked; with it, old rows are,
    # the live process's included (``now`` is 10 minutes ahead, so all three are old)
    assert seen == [(0, "pending"), (3, "interrupted")]
    assert _call(ledger_path, "toolu_host_old")["status"] == "interrupted"
    assert _call(ledger_path, "toolu_host_new")["status"] == "interrupted"
    # the call did finish after all: its PostToolUse wins over the mark
    assert _call(ledger_path, "toolu_mine")["status"] == "ok"


def test_older_than_spares_recent_rows(ledger_path: str) -> None:
    old = FakeClock(time.time() - 3600)
    with Ledger(ledger_path) as ledger:
        Guard(AgentDefinition(), ledger=ledger, clock=old).sync.pre_tool_use(
            "Bash", {"command": "a"}, tool_use_id="toolu_old"
        )
        Guard(AgentDefinition(), ledger=ledger).sync.pre_tool_use(
            "Bash", {"command": "b"}, tool_use_id="toolu_new"
        )
        report = ledger.recover(older_than=600)
    assert report.interrupted == 1
    assert _call(ledger_path, "toolu_old")["status"] == "interrupted"
    assert _call(ledger_path, "toolu_new")["status"] == "pending"


# --- concurrency: several processes, one file ----------------------------------------------

WORKER = """\
import json, logging, sys
from guardrails import AgentDefinition, Guard, HookMatcher, Ledger

path, calls, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
messages = []

class Catch(logging.Handler):
    def emit(self, record):
        messages.append(record.getMessage())

logging.getLogger("guardrails.ledger").addHandler(Catch(logging.WARNING))

def noop(event, ctx):
    return None

definition = AgentDefinition(
    name="worker",
    hooks={
        "PreToolUse": [HookMatcher(hooks=[noop, noop])],
        "PostToolUse": [HookMatcher(hooks=[noop])],
    },
)
ledger = Ledger(path)
session = Guard(definition, ledger=ledger).session(name)
print("ready", flush=True)
sys.stdin.readline()  # start together
statuses, degraded = {}, set()
for i in range(calls):
    run = session.sync.run_tool("echo", {"i": i}, lambda i: i)
    statuses[run.status] = statuses.get(run.status, 0) + 1
    if ledger.degraded:
        degraded.add(ledger.degraded)
ledger.close()
print(json.dumps({
    "worker": name,
    "statuses": statuses,
    "degraded": sorted(degraded),
    "locked": sum("locked" in m for m in messages),
    "warnings": messages,
}))
"""

WORKERS, CALLS = 4, 2000


@pytest.mark.slow
def test_four_processes_share_one_file_without_losing_or_locking(
    ledger_path: str, _private_temp: Path
) -> None:
    with Ledger(ledger_path):
        pass  # migrated up front, as any earlier session would have
    env = {**os.environ, "TMPDIR": str(_private_temp)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, ledger_path, str(CALLS), f"worker-{n}"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for n in range(WORKERS)
    ]
    try:
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready", proc.communicate()[1]
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        summaries = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            summaries.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    for summary in summaries:
        assert summary["statuses"] == {"ok": CALLS}, summary
        assert summary["degraded"] == [], summary
        assert summary["locked"] == 0, summary
        assert summary["warnings"] == [], summary
    total = WORKERS * CALLS
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == total
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == total
    assert value(ledger_path, "SELECT count(DISTINCT tool_call_id) FROM tool_calls") == total
    assert value(ledger_path, "SELECT count(*) FROM hook_runs") == total * 3
    assert value(ledger_path, "SELECT count(*) FROM sessions") == WORKERS
    assert [s for s in spool_paths(ledger_path) if os.path.exists(s)] == []


# --- degraded mode ---------------------------------------------------------------------------


def _no_rm(event: Any, ctx: Any) -> HookResult:
    return HookResult.deny("rm is not allowed")


DEFINITION = AgentDefinition(
    name="degraded",
    hooks={
        "PreToolUse": [HookMatcher(matcher="rm", hooks=[_no_rm])],
        "UserPromptSubmit": [HookMatcher(hooks=[lambda event, ctx: None])],
    },
)
#: what _keep_guarding records: 2 allowed calls (pre + post each), 1 denial, 1 prompt
RECORDS = 6
#: a large input: with max_page_count at the file's size no record of it fits
BLOB = "x" * 20_000


def _keep_guarding(ledger: Ledger, blob: str = "") -> None:
    """The Guard decides as always: allowed tools run, denied ones do not."""
    guard = Guard(DEFINITION, ledger=ledger)
    s = guard.session("degraded-session")
    allowed = SpyTool("listed")
    for n in range(2):
        run = s.sync.run_tool("ls", {"n": n, "blob": blob}, allowed)
        assert run.ok and run.output == "listed"
    assert len(allowed.calls) == 2
    denied = SpyTool()
    run = s.sync.run_tool("rm", {"path": "/", "blob": blob}, denied)
    assert run.denied and run.reason == "rm is not allowed"
    assert denied.calls == []
    assert s.sync.user_prompt_submit("hello " + blob).allowed


def _assert_all_recorded(db: str) -> None:
    calls = rows(db, "SELECT tool_name, status FROM tool_calls ORDER BY id")
    assert calls == [
        {"tool_name": "ls", "status": "ok"},
        {"tool_name": "ls", "status": "ok"},
        {"tool_name": "rm", "status": "denied"},
    ]
    assert value(db, "SELECT count(*) FROM events WHERE event = 'UserPromptSubmit'") == 1
    assert value(db, "SELECT count(*) FROM hook_runs") == 2  # the deny and the prompt hook


def _assert_warned(caplog: pytest.LogCaptureFixture, kind: str) -> None:
    warnings = [
        r for r in caplog.records if r.name == "guardrails.ledger" and r.levelno == logging.WARNING
    ]
    assert warnings, "no warning was logged"
    assert any(f"({kind}:" in r.getMessage() for r in warnings), [r.getMessage() for r in warnings]


def _permissions_bind(tmp_path: Path) -> bool:
    """False as root (or with CAP_DAC_OVERRIDE): then chmod does not stop writes."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0o444)
    try:
        with open(probe, "a"):
            return False
    except PermissionError:
        return True
    finally:
        probe.chmod(0o644)


def test_read_only_file(ledger_path: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """chmod 0o444 where that binds; as root, ``PRAGMA query_only`` on the ledger's own
    connection, which refuses every write with SQLITE_READONLY, the error a read-only file
    gives, so the same degraded path runs (a read-only URI would need the Ledger to open
    the file itself in another way, and root ignores mode bits on open)."""
    with Ledger(ledger_path):
        pass
    files = [
        ledger_path,
        ledger_path + "-wal",
        ledger_path + "-shm",
    ]  # SQLite gives -wal and -shm the file's mode
    binds = _permissions_bind(tmp_path)
    os.chmod(ledger_path, 0o444)
    ledger = Ledger(ledger_path)
    try:
        if not binds:
            assert ledger._conn is not None
            ledger._conn.execute("PRAGMA query_only = ON")
        with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
            _keep_guarding(ledger)
        assert ledger.degraded is not None and ledger.degraded.startswith("read_only:")
        _assert_warned(caplog, "read_only")
        assert ledger.spool_path == ledger_path + ".spool.jsonl"
        assert len(_spool_lines(ledger.spool_path)) == RECORDS
        assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 0

        for path in files:  # fix the cause: the file and its -wal and -shm
            if os.path.exists(path):
                os.chmod(path, 0o644)
        report = ledger.recover()  # the same Ledger: it reopens the file
    finally:
        ledger.close()
    assert report.imported == RECORDS and report.rejected == 0
    assert ledger.degraded is None
    _assert_all_recorded(ledger_path)
    assert not os.path.exists(ledger_path + ".spool.jsonl")


def test_read_only_directory(
    tmp_path: Path, _private_temp: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """chmod 0o555 on the ledger's folder where that binds; as root, the folder is a path
    under a regular file, which no privilege can create. Either way the spool cannot sit
    beside the file and goes to the temp folder."""
    folder = tmp_path / "ledgers"
    binds = _permissions_bind(tmp_path)
    if binds:
        folder.mkdir()
        folder.chmod(0o555)
        db = str(folder / "ledger.db")
    else:
        folder.write_text("a file where a folder should be")
        db = str(folder / "sub" / "ledger.db")
    try:
        with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
            ledger = Ledger(db)  # does not raise
            _keep_guarding(ledger)
        assert ledger.degraded is not None and ledger.degraded.startswith("read_only:")
        _assert_warned(caplog, "read_only")
        spool = ledger.spool_path
        assert Path(spool).parent == _private_temp
        assert len(_spool_lines(spool)) == RECORDS
        ledger.close()
    finally:  # fix the cause
        if binds:
            folder.chmod(0o755)
        else:
            folder.unlink()
            (folder / "sub").mkdir(parents=True)
    with Ledger(db) as fixed:
        report = fixed.recover()
    assert report.imported == RECORDS and report.spools == [spool]
    _assert_all_recorded(db)
    assert not os.path.exists(spool)


def test_full_disk(ledger_path: str, caplog: pytest.LogCaptureFixture) -> None:
    """``PRAGMA max_page_count`` at the file's current size: inserts fail with SQLITE_FULL."""
    ledger = Ledger(ledger_path)
    try:
        conn = ledger._conn
        assert conn is not None
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")
        with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
            _keep_guarding(ledger, blob=BLOB)
        assert ledger.degraded is not None and ledger.degraded.startswith("full:")
        _assert_warned(caplog, "full")
        assert len(_spool_lines(ledger.spool_path)) == RECORDS
        report = ledger.recover()  # a new connection: the limit was this connection's
    finally:
        ledger.close()
    assert report.imported == RECORDS
    _assert_all_recorded(ledger_path)
    assert value(ledger_path, "SELECT min(length(tool_call_arguments)) FROM tool_calls") > len(BLOB)


def test_corrupt_file(ledger_path: str, caplog: pytest.LogCaptureFixture) -> None:
    """The Ledger opens degraded (kind ``corrupt``) instead of raising. ``recover()`` cannot
    import into a file SQLite cannot read, so it raises a LedgerError that says to move the
    file aside; the spool is kept, and recovering into a fresh file imports it."""
    Path(ledger_path).write_bytes(random.Random(1234).randbytes(16_384))
    with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
        ledger = Ledger(ledger_path)
        _keep_guarding(ledger)
    assert ledger.degraded is not None and ledger.degraded.startswith("corrupt:")
    _assert_warned(caplog, "corrupt")
    spool = ledger.spool_path
    assert spool == ledger_path + ".spool.jsonl"
    assert len(_spool_lines(spool)) == RECORDS
    with pytest.raises(LedgerError) as info:
        ledger.recover()
    assert info.value.kind == "corrupt"
    assert "move it aside" in str(info.value) and spool in str(info.value)
    assert len(_spool_lines(spool)) == RECORDS  # nothing lost
    ledger.close()

    os.replace(
        ledger_path, ledger_path + ".corrupt"
    )  # fix the cause: keep the bad file for inspection
    with Ledger(ledger_path) as fresh:
        report = fresh.recover()
    assert report.imported == RECORDS
    _assert_all_recorded(ledger_path)


@pytest.mark.slow
def test_locked_past_the_timeout(ledger_path: str, caplog: pytest.LogCaptureFixture) -> None:
    with Ledger(ledger_path):
        pass
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    ledger = Ledger(ledger_path, busy_timeout=0.1)
    try:
        with caplog.at_level(logging.WARNING, logger="guardrails.ledger"):
            _keep_guarding(ledger)
        assert ledger.degraded is not None and ledger.degraded.startswith("locked:")
        _assert_warned(caplog, "locked")
        assert len(_spool_lines(ledger.spool_path)) == RECORDS

        other.execute("ROLLBACK")  # fix the cause
        run = Guard(DEFINITION, ledger=ledger).sync.run_tool("ls", {}, SpyTool())
        assert run.ok and ledger.degraded is None  # writes go to the file again
        report = ledger.recover()
    finally:
        other.close()
        ledger.close()
    assert report.imported == RECORDS
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 3
    assert value(ledger_path, "SELECT count(*) FROM tool_calls WHERE status = 'denied'") == 1


def test_a_ledger_that_could_not_open_starts_writing_once_it_can(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long-lived Guard is not stuck on the spool: it retries opening (at most once a
    second; here at once), and what it spooled meanwhile waits for recover()."""
    monkeypatch.setattr("guardrails.ledger.sqlite._REOPEN_INTERVAL", 0.0)
    blocker = tmp_path / "state"
    blocker.write_text("a file where a folder should be")
    db = str(blocker / "ledger.db")
    ledger = Ledger(db)
    try:
        guard = Guard(DEFINITION, ledger=ledger)
        assert guard.sync.run_tool("ls", {"n": 1}, SpyTool()).ok
        assert ledger.degraded is not None and ledger.degraded.startswith("read_only:")
        blocker.unlink()  # fix the cause
        blocker.mkdir()
        assert guard.sync.run_tool("ls", {"n": 2}, SpyTool()).ok
        assert ledger.degraded is None
        assert value(db, "SELECT count(*) FROM tool_calls") == 1  # the second call
        report = ledger.recover()
    finally:
        ledger.close()
    assert report.imported == 2  # the first call's pre and post
    assert value(db, "SELECT count(*) FROM tool_calls WHERE status = 'ok'") == 2


def test_a_bad_redaction_pattern_fails_when_the_ledger_is_made(ledger_path: str) -> None:
    with pytest.raises(DefinitionError, match="invalid redaction pattern"):
        Ledger(ledger_path, redact_patterns=["acme-("])


def test_a_spooled_pre_tool_use_imported_after_its_post_keeps_the_call_finished(
    ledger_path: str,
) -> None:
    """The lock is held for the PreToolUse only: the PostToolUse reaches the file first."""
    with Ledger(ledger_path):
        pass
    other = sqlite3.connect(ledger_path, isolation_level=None)
    ledger = Ledger(ledger_path, busy_timeout=0.1)
    try:

        def tool() -> str:
            other.execute("ROLLBACK")  # released while the tool runs
            return "done"

        other.execute("BEGIN EXCLUSIVE")
        run = Guard(DEFINITION, ledger=ledger).sync.run_tool(
            "ls", {}, tool, tool_use_id="toolu_split"
        )
        assert run.ok
        assert len(_spool_lines(ledger.spool_path)) == 1  # the PreToolUse
        assert value(ledger_path, "SELECT status FROM tool_calls") == "ok"
        report = ledger.recover()
    finally:
        other.close()
        ledger.close()
    assert report.imported == 1
    row = rows(ledger_path, "SELECT status, decision, pid, tool_call_result FROM tool_calls")
    assert row == [
        {"status": "ok", "decision": "allow", "pid": os.getpid(), "tool_call_result": '"done"'}
    ]


@pytest.mark.slow
def test_recover_rejects_torn_and_foreign_lines_without_losing_the_rest(ledger_path: str) -> None:
    with Ledger(ledger_path):
        pass
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with Ledger(ledger_path, busy_timeout=0.1) as ledger:
        _keep_guarding(ledger)
        other.execute("ROLLBACK")
        other.close()
        spool = ledger.spool_path
        lines = Path(spool).read_text(encoding="utf-8").splitlines(keepends=True)
        lines.insert(2, "not a record\n")
        Path(spool).write_text("".join(lines) + '{"v": 1, "ops": [["pre", [', encoding="utf-8")
        report = ledger.recover()
    assert (report.imported, report.rejected) == (RECORDS, 2)
    _assert_all_recorded(ledger_path)
    # each rejected line is kept as it was, with why (docs/ledger.md, "Degraded mode")
    rejected = [json.loads(x) for x in Path(spool + ".rejected").read_text("utf-8").splitlines()]
    assert [r["record"] for r in rejected] == ["not a record", '{"v": 1, "ops": [["pre", [']
    assert all(r["reason"].startswith("not JSON") and r["rejected_at"] for r in rejected)


@pytest.mark.slow
def test_recover_imports_what_an_interrupted_recover_left(ledger_path: str) -> None:
    """A recover that stopped before COMMIT leaves ``<spool>.importing``: nothing of it
    reached the file, so the next recover imports it, with whatever was spooled since."""
    with Ledger(ledger_path):
        pass
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    with Ledger(ledger_path, busy_timeout=0.1) as ledger:
        _keep_guarding(ledger)
        spool = ledger.spool_path
        os.replace(spool, spool + ".importing")
        Guard(DEFINITION, ledger=ledger).session("later").sync.user_prompt_submit("again")
        assert len(_spool_lines(spool)) == 1
        other.execute("ROLLBACK")
        other.close()
        report = ledger.recover()
    assert report.imported == RECORDS + 1
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 3
    assert value(ledger_path, "SELECT count(*) FROM events") == 2
    assert not os.path.exists(spool) and not os.path.exists(spool + ".importing")


# --- redaction: secrets never reach the file --------------------------------------------------


def _secrets() -> dict[str, tuple[str, str]]:
    """kind -> (text carrying the secret, the part that must never be stored).

    Built by concatenation so no realistic secret literal sits in the repository.
    """
    pw = "hunter" + "2-" + "Sup3rS3cret"
    key_value = "k3y" + "Val-" + "9f8e7d6c5b4a"
    token = "tok" + "En-" + "8c7b6a5f4e3d2c1b"
    body = "MIIEow" + "IBAAKCAQEA" + "u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7on"
    pem = "-----BEGIN RSA " + "PRIVATE KEY-----\n" + body + "\n-----END RSA " + "PRIVATE KEY-----"
    anthropic = "sk-" + "ant-" + "api03-" + "Zx8Kq2Lm9Np4Rs7Tv1Wy" + "Ab3Cd5Ef"
    openai = "sk-" + "proj-" + "Qw3Er5Ty7Ui9Op1As2Df" + "Gh4Jk6"
    aws = "AK" + "IA" + "Q7R2T9W4Y6U1I3O5"
    github = "gh" + "p_" + "a1B2c3D4e5F6g7H8i9J0" + "k1L2m3N4o5P6q7R8"
    slack = "xo" + "xb-" + "2048-1024-" + "Qm9vZ2xlc2VjcmV0"
    custom = "acme-" + "0123456789" + "abcdef"
    return {
        "anthropic": (f"key {anthropic} here", anthropic),
        "openai": (f"OPENAI: {openai}", openai),
        "aws": (f"aws creds {aws} in use", aws),
        "github": (f"git clone https://x.test/r.git # {github}", github),
        "slack": (f"slack says {slack}", slack),
        "env_key": (f"export PAYMENTS_API_KEY={key_value} && run", key_value),
        "bearer": (f"curl -H 'Authorization: Bearer {token}' x.test", token),
        "url_password": (f"psql postgres://admin:{pw}@db.internal:5432/app", pw),
        "private_key": (f"here is the key:\n{pem}\nbye", body),
        "custom": (f"license {custom} issued", custom),
    }


SECRETS = _secrets()
CUSTOM_PATTERN = r"acme-[0-9a-f]{16}"


def _raw(db: str) -> bytes:
    data = Path(db).read_bytes()
    if os.path.exists(db + "-wal"):
        data += Path(db + "-wal").read_bytes()
    return data


@pytest.mark.parametrize("checkpoint", [False, True], ids=["in-wal", "checkpointed"])
@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secrets_never_reach_the_file(ledger_path: str, kind: str, checkpoint: bool) -> None:
    text, secret = SECRETS[kind]
    tool_input = {
        "task": {"steps": [{"shell": {"argv": ["run", f"note: {text} end"]}}, 1, None]},
        "retries": 3,
    }
    output = {"log": [{"line": f"got {text} back"}, {"rc": 0}]}
    ledger = Ledger(ledger_path, redact_patterns=[CUSTOM_PATTERN])
    try:
        run = Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
            "job", tool_input, lambda task, retries: output
        )
        assert run.ok and run.output == output  # the tool and the model see the real thing
        assert ledger._conn is not None
        if checkpoint:
            ledger._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            assert os.path.getsize(ledger_path + "-wal") == 0
        else:
            assert os.path.getsize(ledger_path + "-wal") > 0  # the rows are (still) in the WAL
        raw = _raw(ledger_path)
        assert secret.encode() not in raw
        assert b"[REDACTED:" in raw  # the rows are in these bytes, masked
    finally:
        ledger.close()
    row = rows(ledger_path, "SELECT tool_call_arguments, tool_call_result FROM tool_calls")[0]
    assert "[REDACTED:" in row["tool_call_arguments"] and "[REDACTED:" in row["tool_call_result"]
    assert json.loads(row["tool_call_arguments"])["retries"] == 3  # structure kept


def test_secrets_in_errors_reasons_and_odd_values_are_redacted(ledger_path: str) -> None:
    token = SECRETS["bearer"][1]
    pw = SECRETS["url_password"][1]
    key = SECRETS["anthropic"][1]
    github = SECRETS["github"][1]
    aws = SECRETS["aws"][1]

    def deny_with_secret(event: Any, ctx: Any) -> HookResult:
        return HookResult.deny(f"refusing to send {event.tool_input['url']}")

    def crash_with_secret(event: Any, ctx: Any) -> None:
        raise RuntimeError(f"could not check Authorization: Bearer {token}")

    class Opaque:
        def __str__(self) -> str:
            return f"Opaque(token={aws})"

    definition = AgentDefinition(
        hooks={
            "PreToolUse": [
                HookMatcher(matcher="post", hooks=[deny_with_secret]),
                HookMatcher(matcher="login", hooks=[crash_with_secret], on_failure="continue"),
            ]
        }
    )
    with Ledger(ledger_path) as ledger:
        s = Guard(definition, ledger=ledger).session("odd")
        s.sync.run_tool("post", {"url": f"https://bob:{pw}@x.test/"}, SpyTool())
        s.sync.run_tool("login", {}, SpyTool(error=PermissionError(f"bad key {key}")))
        s.sync.run_tool("fetch", {}, lambda: f"raw {github} bytes".encode())
        s.sync.run_tool("obj", {}, lambda: {"item": Opaque()})
        raw = _raw(ledger_path)
    for secret in (token, pw, key, github, aws):
        assert secret.encode() not in raw, secret
    assert value(ledger_path, "SELECT count(*) FROM tool_calls") == 4
    assert "[REDACTED:" in value(
        ledger_path, "SELECT reason FROM tool_calls WHERE tool_name = 'post'"
    )
    assert "[REDACTED:" in value(ledger_path, "SELECT error FROM hook_runs WHERE outcome = 'error'")
    assert "[REDACTED:" in value(
        ledger_path, "SELECT error_message FROM tool_calls WHERE tool_name = 'login'"
    )


def test_values_json_cannot_hold_are_stored_as_valid_json(ledger_path: str) -> None:
    outputs = [{"score": float("nan")}, {(1, 2): "tuple key"}, {"ids": {3}}, b"\x00raw"]
    with Ledger(ledger_path) as ledger:
        guard = Guard(AgentDefinition(), ledger=ledger)
        for out in outputs:
            assert guard.sync.run_tool("odd", {}, lambda out=out: out).ok
    stored = rows(
        ledger_path, "SELECT json_valid(tool_call_result) AS ok, tool_call_result FROM tool_calls"
    )
    assert len(stored) == len(outputs)
    assert all(r["ok"] == 1 for r in stored), stored
    assert "nan" in json.loads(stored[0]["tool_call_result"])


def test_the_spool_is_redacted_too(ledger_path: str) -> None:
    text, secret = SECRETS["github"]
    with Ledger(ledger_path):
        pass
    other = sqlite3.connect(ledger_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with Ledger(ledger_path, busy_timeout=0.1) as ledger:
            Guard(AgentDefinition(), ledger=ledger).sync.run_tool(
                "job", {"cmd": text}, lambda cmd: cmd
            )
            spool = Path(ledger.spool_path).read_bytes()
    finally:
        other.close()
    assert b"[REDACTED:github]" in spool
    assert secret.encode() not in spool


# --- size: long outputs are cut ----------------------------------------------------------------


def _stored(db: str, output: Any, **ledger_args: Any) -> dict[str, Any]:
    with Ledger(db, **ledger_args) as ledger:
        Guard(AgentDefinition(), ledger=ledger).sync.run_tool("big", {}, lambda: output)
    found = rows(db, "SELECT tool_call_result, result_truncated, result_bytes FROM tool_calls")
    assert len(found) == 1
    return found[0]


def _marker(stored: str, value: Any, cap: int) -> dict[str, Any]:
    """The truncation marker a capped column holds (docs/ledger.md): the size and sha256
    of the whole JSON text, and a head that fits the cap once it is a JSON string."""
    marker = json.loads(stored)
    assert set(marker) == {"_truncated", "size", "sha256", "head"}
    whole = json.dumps(value, ensure_ascii=False).encode()
    assert marker["_truncated"] is True
    assert (marker["size"], marker["sha256"]) == (len(whole), hashlib.sha256(whole).hexdigest())
    assert 0 < len(json.dumps(marker["head"], ensure_ascii=False).encode()) - 2 <= cap
    return marker


def test_outputs_over_the_default_64_kb_are_cut(ledger_path: str) -> None:
    row = _stored(ledger_path, "x" * 100_000)
    assert row["result_truncated"] == 1
    assert row["result_bytes"] == 100_002  # the JSON text: the string and its quotes
    marker = _marker(row["tool_call_result"], "x" * 100_000, 64 * 1024)
    assert marker["head"].startswith('"xxx') and len(marker["head"]) == 64 * 1024 - 1


def test_outputs_under_the_cap_are_kept_whole(ledger_path: str) -> None:
    row = _stored(ledger_path, "y" * 60_000)
    assert row["result_truncated"] == 0 and row["result_bytes"] == 60_002
    assert json.loads(row["tool_call_result"]) == "y" * 60_000


def test_a_configured_cap(ledger_path: str) -> None:
    row = _stored(ledger_path, {"lines": ["z" * 50] * 20}, max_output=256)
    assert row["result_truncated"] == 1
    assert row["result_bytes"] == len(json.dumps({"lines": ["z" * 50] * 20}))
    marker = _marker(row["tool_call_result"], {"lines": ["z" * 50] * 20}, 256)
    assert marker["head"].startswith('{"lines": ["zzz')
    assert len(json.dumps(marker["head"])) - 2 >= 256 - 1  # as much as fits, escapes counted


def test_the_cap_counts_utf8_bytes(ledger_path: str) -> None:
    row = _stored(ledger_path, "é" * 200, max_output=300)  # 202 characters, 402 bytes
    assert row["result_truncated"] == 1 and row["result_bytes"] == 402
    marker = _marker(row["tool_call_result"], "é" * 200, 300)
    assert marker["head"] == '"' + "é" * 149  # 299 bytes: a 2-byte é more would not fit


def test_an_output_exactly_at_the_cap_is_not_cut(ledger_path: str) -> None:
    row = _stored(ledger_path, "q" * 254, max_output=256)
    assert (row["result_truncated"], row["result_bytes"]) == (0, 256)


@pytest.mark.parametrize("position", [10, 60_000, 65_530])
def test_secrets_in_outputs_far_over_the_cap_are_still_masked(
    ledger_path: str, position: int
) -> None:
    """Big outputs are cut before they are redacted; a secret before or on the cut is masked."""
    secret = "ghp_" + "Q7" * 20
    text = "x" * position + " token " + secret + " " + "y" * 400_000
    row = _stored(ledger_path, {"stdout": text})
    assert row["result_truncated"] == 1 and row["result_bytes"] > 400_000
    assert secret not in row["tool_call_result"]
    assert secret[:20] not in row["tool_call_result"]


def test_a_token_in_an_http_hook_url_is_not_stored(ledger_path: str) -> None:
    token = "ghp_" + "Z9" * 20
    hook = {"http": f"http://127.0.0.1:9/hook?access_token={token}"}
    definition = AgentDefinition(
        hooks={"PreToolUse": [HookMatcher(hooks=[hook], on_failure="continue")]}
    )
    with Ledger(ledger_path) as ledger:
        Guard(definition, ledger=ledger).sync.pre_tool_use("Bash", {"command": "ls"})
    hooks = [r["hook"] for r in rows(ledger_path, "SELECT hook FROM hook_runs")]
    assert len(hooks) == 1 and token not in hooks[0]


def test_spooled_hook_runs_keep_their_link_to_the_event_row(ledger_path: str) -> None:
    definition = AgentDefinition(
        hooks={"Stop": [HookMatcher(hooks=[lambda e, c: HookResult.block("report first")])]}
    )
    with Ledger(ledger_path) as ledger:
        guard = Guard(definition, ledger=ledger)
        guard.sync.agent_stop("done")  # written to the file
        assert ledger._conn is not None
        ledger._conn.execute("PRAGMA query_only = ON")
        guard.sync.agent_stop("done again")  # spooled
        ledger._conn.execute("PRAGMA query_only = OFF")
        ledger.recover()
    linked = rows(
        ledger_path,
        "SELECT e.payload FROM hook_runs h JOIN events e ON e.id = h.event_id ORDER BY h.id",
    )
    assert [json.loads(r["payload"])["last_assistant_message"] for r in linked] == [
        "done",
        "done again",
    ]
