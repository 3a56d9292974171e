"""One "machine" of the fleet test: its own Guard and connection pool over TCP.

``python -m tests.processes._fleet_worker URL OUT NAME MODE [ARG]``

* ``race KEYS``: wait for ``OUT/go``, then call the ``charge`` tool once per key of
  ``0..KEYS-1``, in an order close to every other worker's (so they race for the same
  keys), each call with its own tool-use id; ``OUT/NAME.calls`` gets one line per call
  (``call_id key outcome``), ``OUT/NAME.runs`` one line per execution of the tool;
* ``hold KEY``: claim KEY, write ``OUT/NAME.holding`` inside the tool and sleep until
  killed (the test kills this process mid-call);
* ``takeover KEY``: call KEY until the tool runs, ``OUT/NAME.calls`` as above and the
  monotonic time of the execution in ``OUT/NAME.ran``.

Idempotency is ``global`` (every machine shares the keys), keyed by the order id.
"""

from __future__ import annotations

import os
import random
import sys
import time
from typing import Any

from guardrails import AgentDefinition, Guard, HookMatcher, Ledger
from guardrails.builtins import IdempotencyGuard

TOOLS = {"charge": {"side_effects": True, "idempotency": {"key": ["order"], "scope": "global"}}}
#: seconds a claim holds against a takeover (the hold mode's, kept short for the test)
LEASE = 2.0


def guard(url: str) -> Guard:
    hook = IdempotencyGuard()
    definition = AgentDefinition(
        name="fleet",
        tools=TOOLS,
        hooks={
            "PreToolUse": [HookMatcher(hooks=[hook])],
            "PostToolUse": [HookMatcher(hooks=[hook])],
        },
    )
    return Guard(definition, ledger=Ledger(url, pool_size=2, claim_lease=LEASE))  # type: ignore[call-arg]


def order(keys: int, name: str) -> list[int]:
    """``0..keys-1`` shuffled within windows of 8: every worker is near every other's key."""
    rng = random.Random(name)
    out: list[int] = []
    for start in range(0, keys, 8):
        window = list(range(start, min(start + 8, keys)))
        rng.shuffle(window)
        out += window
    return out


def outcome(run: Any) -> str:
    if run.status == "ok":
        return "replayed" if run.replayed else "ran"
    return run.status


def race(url: str, out: str, name: str, keys: int) -> None:
    g = guard(url)
    runs = open(os.path.join(out, f"{name}.runs"), "a", buffering=1)  # noqa: SIM115
    calls = open(os.path.join(out, f"{name}.calls"), "a", buffering=1)  # noqa: SIM115

    def charge(order: int, amount: int) -> dict[str, Any]:
        runs.write(f"{order}\n")
        return {"charged": order}

    session = g.session(f"sess-{name}")
    go = os.path.join(out, "go")
    while not os.path.exists(go):
        time.sleep(0.01)
    for i, key in enumerate(order(keys, name)):
        call_id = f"{name}-{i}"
        run = session.sync.run_tool(
            "charge", {"order": key, "amount": 1}, charge, tool_use_id=call_id
        )
        calls.write(f"{call_id} {key} {outcome(run)}\n")
    g.ledger.close()  # type: ignore[union-attr]


def hold(url: str, out: str, name: str, key: int) -> None:
    g = guard(url)

    def charge(order: int, amount: int) -> dict[str, Any]:
        with open(os.path.join(out, f"{name}.holding"), "w") as fh:
            fh.write(str(time.monotonic()))
        time.sleep(3600)  # killed here, mid-call
        return {}

    g.session(f"sess-{name}").sync.run_tool(
        "charge", {"order": key, "amount": 1}, charge, tool_use_id=f"{name}-0"
    )


def takeover(url: str, out: str, name: str, key: int) -> None:
    g = guard(url)
    session = g.session(f"sess-{name}")
    calls = open(os.path.join(out, f"{name}.calls"), "a", buffering=1)  # noqa: SIM115

    def charge(order: int, amount: int) -> dict[str, Any]:
        with open(os.path.join(out, f"{name}.ran"), "w") as fh:
            fh.write(str(time.monotonic()))
        return {"charged": order}

    deadline = time.monotonic() + 30
    i = 0
    while time.monotonic() < deadline:
        call_id = f"{name}-{i}"
        run = session.sync.run_tool(
            "charge", {"order": key, "amount": 1}, charge, tool_use_id=call_id
        )
        calls.write(f"{call_id} {key} {outcome(run)}\n")
        i += 1
        if run.status == "ok":
            break
        time.sleep(0.1)
    g.ledger.close()  # type: ignore[union-attr]


def main(argv: list[str]) -> None:
    url, out, name, mode = argv[:4]
    arg = int(argv[4])
    {"race": race, "hold": hold, "takeover": takeover}[mode](url, out, name, arg)


if __name__ == "__main__":
    main(sys.argv[1:])
