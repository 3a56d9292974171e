"""Command hooks on a PostgreSQL ledger (issue #12 §2): the hook process relays to this
machine's ``hookrails serve`` and never opens a connection; outages lose nothing.

One run with the real processes: ``hookrails hook`` (a process per event) in front of a
``serve`` (a thread here: a warm Guard with a pool and its shipper) in front of the
throwaway cluster. The server is stopped mid-run: an idempotency claim is denied with the
reason, the other events are decided and spooled. Then ``serve`` stops too: the hook
decides itself and spools. Both come back: the shipper ships every spooled record, and
the database holds every call, each once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrails import Guard
from guardrails.claude_code.http_server import HookServer, make_server
from guardrails.ledger.spool import spool_paths, waiting
from tests._db import rows
from tests._postgres import Cluster

pytestmark = pytest.mark.slow

DEFINITION = """\
name: team
tools:
  charge:
    side_effects: true
    idempotency: {key: [order], scope: global}
hooks:
  PreToolUse:
    - matcher: Bash
      hooks: [deny_commands]
    - matcher: charge
      hooks: [idempotency_guard]
  PostToolUse:
    - matcher: charge
      hooks: [idempotency_guard]
"""


class Serve:
    """``hookrails serve`` in a thread, as one machine runs it."""

    def __init__(self, config: Path) -> None:
        self.guard = Guard(str(config), ledger=True)
        self.server: HookServer = make_server(self.guard, "127.0.0.1", 0, None)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.server.app.close()
        assert self.guard.ledger is not None
        self.guard.ledger.close()


@pytest.fixture
def project(tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HOOKRAILS_LEDGER", postgres_url)
    (tmp_path / "agent.yaml").write_text(DEFINITION)
    yield tmp_path
    for spool in spool_paths(postgres_url):  # nothing of this test stays in the temp folder
        for path in (spool, spool + ".importing", spool + ".rejected"):
            if os.path.exists(path):
                os.remove(path)


def hook(project: Path, relay: str, payload: dict[str, Any], importtime: bool = False) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONDONTWRITE")}
    env.update(HOOKRAILS_RELAY=relay, HOOKRAILS_CACHE_DIR=str(project / "cache"))
    flags = ["-X", "importtime"] if importtime else []
    proc = subprocess.run(
        [sys.executable, *flags, "-m", "guardrails", "hook", "--config", "agent.yaml"],
        input=json.dumps(payload).encode(),
        capture_output=True,
        cwd=project,
        env=env,
        timeout=60,
    )
    out = json.loads(proc.stdout) if proc.stdout.strip() else None
    return proc.returncode, out, proc.stderr.decode()


def pre(call: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return {
        "hook_event_name": "PreToolUse",
        "session_id": "sess-1",
        "transcript_path": str(cwd / "t.jsonl"),
        "cwd": str(cwd),
        "permission_mode": "default",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_use_id": call,
    }


def post(call: str, tool: str, tool_input: dict[str, Any], cwd: Path) -> dict[str, Any]:
    return dict(
        pre(call, tool, tool_input, cwd),
        hook_event_name="PostToolUse",
        tool_response={"ok": True},
    )


def decision(out: Any) -> str | None:
    return None if out is None else out.get("hookSpecificOutput", {}).get("permissionDecision")


def reason(out: Any) -> str:
    return str(out.get("hookSpecificOutput", {}).get("permissionDecisionReason", ""))


def test_hooks_relay_through_serve_and_an_outage_of_either_loses_nothing(
    project: Path, postgres: Cluster, postgres_url: str
) -> None:
    serve = Serve(project / "agent.yaml")
    relay = serve.server.url
    try:
        # all up: the hook relays; it never imports psycopg, serve records in PostgreSQL
        code, out, err = hook(project, relay, pre("c1", "Bash", {"command": "ls"}, project), True)
        assert code == 0 and decision(out) in (None, "allow")
        assert "psycopg" not in err and "deciding here" not in err
        code, out, _ = hook(project, relay, pre("c2", "charge", {"order": 1}, project))
        assert code == 0 and decision(out) != "deny"
        code, out, _ = hook(project, relay, post("c2", "charge", {"order": 1}, project))
        assert code == 0
        code, out, _ = hook(project, relay, pre("c3", "Bash", {"command": "rm -rf /"}, project))
        assert decision(out) == "deny"
        got = rows(postgres_url, "SELECT tool_call_id, status FROM tool_calls ORDER BY 1")
        assert [(r["tool_call_id"], r["status"]) for r in got] == [
            ("c1", "pending"),
            ("c2", "ok"),
            ("c3", "denied"),
        ]

        postgres.pause()  # the database stops mid-run
        try:
            code, out, _ = hook(project, relay, pre("c4", "charge", {"order": 2}, project))
            assert code == 0 and decision(out) == "deny"  # the claim fails closed ...
            assert "idempotency store cannot be written" in reason(out)  # ... saying why
            code, out, _ = hook(project, relay, pre("c5", "Bash", {"command": "ls"}, project))
            assert code == 0 and decision(out) != "deny"  # decided; its record spools
            code, out, _ = hook(project, relay, post("c5", "Bash", {"command": "ls"}, project))
            assert code == 0
            serve.stop()  # serve stops too: the hook decides itself and spools
            code, out, err = hook(project, relay, pre("c6", "Bash", {"command": "ls"}, project))
            assert code == 0 and decision(out) != "deny" and "deciding here" in err
            code, out, err = hook(project, relay, pre("c7", "charge", {"order": 3}, project))
            assert decision(out) == "deny" and "cannot be written" in reason(out)
            code, out, err = hook(
                project, relay, pre("c8", "Bash", {"command": "rm -rf /"}, project)
            )
            assert decision(out) == "deny"
            assert any(waiting(s) for s in spool_paths(postgres_url))
        finally:
            postgres.resume()

        serve = Serve(project / "agent.yaml")  # back: its shipper ships the spool
        deadline = time.monotonic() + 30
        while any(waiting(s) for s in spool_paths(postgres_url)):
            assert time.monotonic() < deadline, "the spool was not shipped"
            time.sleep(0.1)
        got = rows(postgres_url, "SELECT tool_call_id, status FROM tool_calls ORDER BY 1")
        assert [(r["tool_call_id"], r["status"]) for r in got] == [
            ("c1", "pending"),
            ("c2", "ok"),
            ("c3", "denied"),
            ("c4", "denied"),
            ("c5", "ok"),
            ("c6", "pending"),
            ("c7", "denied"),
            ("c8", "denied"),
        ]
        assert serve.server.app.shipper is not None and serve.server.app.shipper.shipped >= 5
        # and a claim is decided again
        code, out, _ = hook(project, serve.server.url, pre("c9", "charge", {"order": 2}, project))
        assert decision(out) != "deny"
    finally:
        serve.stop()


def test_a_serve_with_another_definition_is_not_asked(
    project: Path, postgres_url: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("other") / "agent.yaml"
    other.write_text(DEFINITION.replace("name: team", "name: other"))
    serve = Serve(other)
    try:
        code, _, err = hook(
            project, serve.server.url, pre("d1", "Bash", {"command": "ls"}, project)
        )
        assert code == 0 and "another definition" in err and "deciding here" in err
        assert serve.server.app.counts["hook_calls"] == 0
    finally:
        serve.stop()
    # decided and spooled by the hook; that serve's shipper (same ledger) shipped it
    assert rows(postgres_url, "SELECT tool_call_id FROM tool_calls") == [{"tool_call_id": "d1"}]
    assert not any(waiting(s) for s in spool_paths(postgres_url))
