"""hookrails benchmarks: ``make bench`` (or ``.venv/bin/python benchmarks/run.py``).

Each section is a function in ``SECTIONS``; its docstring's first line is the
section title. Add a section by writing a function in a ``bench_*.py`` module
next to this file and appending it to ``SECTIONS``. Timings are printed, never
asserted. ``python benchmarks/run.py dispatch`` runs only the sections whose
function name contains one of the given words.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # run as a script, sections import their siblings
    sys.path.insert(0, str(HERE))

from bench_dispatch import async_dispatch, dispatch, rules_scaling  # noqa: E402
from bench_group import group_commit  # noqa: E402
from bench_hook import hook_process_cost  # noqa: E402
from bench_idempotency import idempotency_claim_bench  # noqa: E402
from bench_import import import_cost  # noqa: E402
from bench_ledger import ledger_call, ledger_throughput  # noqa: E402
from bench_memory import sessions_memory  # noqa: E402
from bench_postgres import (  # noqa: E402
    postgres_call,
    postgres_claim,
    postgres_fleet_throughput,
    relay_cost,
)
from bench_queries import ledger_queries  # noqa: E402
from bench_schema import schema_guardrail_bench  # noqa: E402
from bench_serve import serve_latency  # noqa: E402
from bench_shell import shell_guards  # noqa: E402

import guardrails  # noqa: E402

SECTIONS: list[Callable[[], None]] = [
    dispatch,
    rules_scaling,
    async_dispatch,
    import_cost,
    hook_process_cost,
    ledger_call,
    ledger_throughput,
    group_commit,
    ledger_queries,
    schema_guardrail_bench,
    idempotency_claim_bench,
    serve_latency,
    sessions_memory,
    shell_guards,
    postgres_call,
    postgres_fleet_throughput,
    postgres_claim,
    relay_cost,
]


def main(argv: list[str]) -> int:
    chosen = [s for s in SECTIONS if not argv or any(a in s.__name__ for a in argv)]
    print(
        f"hookrails {guardrails.__version__} benchmarks | Python {platform.python_version()} "
        f"({platform.python_implementation()}) | {platform.machine()} | {platform.system()}"
    )
    t_all = time.perf_counter()
    for number, section in enumerate(chosen, 1):
        title = (section.__doc__ or section.__name__).strip().splitlines()[0]
        print(f"\n{'=' * 78}\n{number}. {title}\n{'=' * 78}")
        t0 = time.perf_counter()
        section()
        print(f"\n[{section.__name__}: {time.perf_counter() - t0:.1f} s]")
    print(f"\ntotal: {time.perf_counter() - t_all:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
