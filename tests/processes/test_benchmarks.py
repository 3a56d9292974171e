"""`make bench` keeps working: its sections are code nobody else runs, so a change to what
they measure (a statement's parameters, a renamed module) would break them unseen.

The quick sections run whole (their figures are printed, never asserted); every section's
module is imported, so the slow ones at least load against the current code.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "benchmarks" / "run.py"

pytestmark = pytest.mark.slow

#: sections that finish in seconds; the rest (throughput, 1M-row queries, PostgreSQL)
#: take minutes and are only imported below
QUICK = ["dispatch", "rules_scaling", "ledger_call", "schema_guardrail_bench"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RUN), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("section", QUICK)
def test_a_quick_section_runs_to_its_end(section: str) -> None:
    proc = _run(section)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"[{section}:" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


def test_every_section_is_known_to_the_runner() -> None:
    code = (
        "import sys; sys.path.insert(0, 'benchmarks'); import run; "
        "print(' '.join(s.__name__ for s in run.SECTIONS))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    names = set(proc.stdout.split())
    assert set(QUICK) <= names
    assert {"ledger_throughput", "ledger_queries", "serve_latency", "postgres_call"} <= names
