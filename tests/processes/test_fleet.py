"""A fleet on one PostgreSQL ledger (issue #12 §3): 8 processes stand for 8 machines.

Each process (:mod:`tests.processes._fleet_worker`) has its own Guard and connection pool
over TCP to the throwaway cluster. They race for the same idempotency keys (each calls
every key once, in orders that stay close together) and write 20,000 calls: every key
runs exactly once, every call has its one row (none lost, none twice), every claim ends
completed. Then a process is killed inside a call: its claim holds until its lease runs
out, then one other machine takes the key over and runs it, once.
"""

from __future__ import annotations

import collections
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._db import rows, value
from tests._paths import REPO
from tests.processes import _fleet_worker

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="needs SIGKILL"),
]

MACHINES = 8
KEYS = 2_500  # each machine calls each key once: 20,000 calls


def start(url: str, out: Path, name: str, mode: str, arg: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.processes._fleet_worker",
            url,
            str(out),
            name,
            mode,
            str(arg),
        ],
        cwd=REPO,
        stderr=subprocess.PIPE,
    )


def finish(procs: dict[str, subprocess.Popen[bytes]], timeout: float) -> None:
    try:
        for name, proc in procs.items():
            _, err = proc.communicate(timeout=timeout)
            assert proc.returncode == 0, f"{name}: {err.decode(errors='replace')[-2000:]}"
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def wait_for(path: Path, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1].decode(errors="replace")[-2000:]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.02)


def test_eight_machines_race_20000_calls_then_one_dies_mid_call(
    postgres_url: str, tmp_path: Path
) -> None:
    procs = {f"m{i}": start(postgres_url, tmp_path, f"m{i}", "race", KEYS) for i in range(MACHINES)}
    (tmp_path / "go").touch()
    t0 = time.monotonic()
    finish(procs, timeout=240)
    elapsed = time.monotonic() - t0

    calls = [
        line.split()
        for name in procs
        for line in (tmp_path / f"{name}.calls").read_text().splitlines()
    ]
    runs = collections.Counter(
        int(line) for name in procs for line in (tmp_path / f"{name}.runs").read_text().split()
    )
    outcomes = collections.Counter(c[2] for c in calls)
    print(
        f"\nfleet: {len(calls)} calls over {KEYS} keys by {MACHINES} processes in "
        f"{elapsed:.1f} s; outcomes {dict(outcomes)}"
    )
    assert len(calls) == MACHINES * KEYS
    assert sorted(runs) == list(range(KEYS)) and set(runs.values()) == {1}  # once per key
    assert outcomes["ran"] == KEYS
    assert set(outcomes) <= {"ran", "replayed", "denied"}

    stored = rows(postgres_url, "SELECT tool_call_id, status FROM tool_calls")
    ids = collections.Counter(r["tool_call_id"] for r in stored)
    assert len(stored) == MACHINES * KEYS  # 0 lost ...
    assert set(ids.values()) == {1}  # ... 0 twice ...
    assert set(ids) == {c[0] for c in calls}  # ... and each is a call a machine made
    assert value(postgres_url, "SELECT count(*) FROM tool_calls WHERE status = 'pending'") == 0
    keys = rows(postgres_url, "SELECT state, count(*) AS n FROM idempotency_keys GROUP BY state")
    assert [(k["state"], k["n"]) for k in keys] == [("completed", KEYS)]

    # a machine dies inside a call: the claim holds for its lease, then one machine takes over
    held = start(postgres_url, tmp_path, "dying", "hold", KEYS)
    wait_for(tmp_path / "dying.holding", held)
    held.send_signal(signal.SIGKILL)
    held.wait()
    killed_at = time.monotonic()
    takers = {f"t{i}": start(postgres_url, tmp_path, f"t{i}", "takeover", KEYS) for i in range(2)}
    finish(takers, timeout=90)
    ran = [
        float((tmp_path / f"{n}.ran").read_text())
        for n in takers
        if (tmp_path / f"{n}.ran").exists()
    ]
    taken = [
        line.split() for n in takers for line in (tmp_path / f"{n}.calls").read_text().splitlines()
    ]
    print(
        f"takeover: ran {ran[0] - killed_at:.2f} s after the kill "
        f"(lease {_fleet_worker.LEASE:g} s); {len(taken)} calls by the takers"
    )
    assert len(ran) == 1  # one machine ran it; the other replayed its result
    assert {c[2] for c in taken} <= {"ran", "replayed", "denied"}
    assert [c[2] for c in taken].count("ran") == 1
    key = rows(
        postgres_url,
        "SELECT state, tool_call_id FROM idempotency_keys WHERE tool_call_id NOT LIKE 'm%'",
    )
    assert [k["state"] for k in key] == ["completed"]
    assert key[0]["tool_call_id"].startswith("t")
    dying = rows(postgres_url, "SELECT status FROM tool_calls WHERE tool_call_id = 'dying-0'")
    assert [r["status"] for r in dying] == ["pending"]  # until recover --older-than marks it
    assert os.path.exists(tmp_path / "dying.holding")
