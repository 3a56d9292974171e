"""``hookrails hook --record-only``: keep the ledger whole, decide nothing, never block.

``hookrails claude install`` narrows the deciding handlers to the calls the
definition can match, so a ledger would hear of the other calls from no one,
and a call whose PreToolUse allowed it would stay ``pending`` until ``recover``
marked it ``interrupted`` although it succeeded. Record-only handlers run
``async`` (the agent never waits for them) and:

* PostToolUse / PostToolUseFailure: record the call's end (a row opened by
  PreToolUse is closed; a call no deciding handler heard gets its row), unless
  ``--except MATCHER`` says the deciding handler of the same event runs for this
  tool (by Claude's matcher rules, :func:`~.install_plan.claude_fires`): that
  one records it, with its hooks' runs;
* PostToolBatch (every call of a batch has resolved): a call of the batch whose
  row is still ``pending`` was never run by Claude (an ``ask`` that ``claude
  -p`` or the user refused, a permission rule), and becomes ``interrupted``
  with what Claude told the model. A PostToolUse recorded later (they are
  async too) sets the row right again.

It always exits 0 with ``{}`` (an async answer changes nothing anyway); what
went wrong is one line on stderr, exit 1 (Claude's non-blocking error).

The process Claude starts answers at once and leaves the writing to a child
in a session of its own (:func:`detach_writer`): Claude ends the async hooks
still running when a headless session ends (CLI 2.1.332 killed the record of a
session's last call that way), and a detached writer outlives that.
"""

from __future__ import annotations

import json
import os
import time

from ..errors import describe, one_line

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from .hook_command import HookOptions

__all__ = ["BATCH_EVENT", "NOT_RUN_PREFIX", "record"]

BATCH_EVENT = "PostToolBatch"
#: the start of the reason a row never run gets (the rest is what Claude told the model)
NOT_RUN_PREFIX = "Claude Code did not run this call"
#: characters of Claude's message kept in that reason
_MESSAGE_CAP = 500


def detach_writer() -> bool:
    """Fork a writer that outlives the hook process: ``True`` in the parent (answer and
    exit), ``False`` in the child (a new session, stdio on /dev/null: record, then exit)
    and where there is no ``fork`` (record in place)."""
    fork = getattr(os, "fork", None)
    if fork is None:  # pragma: no cover - Windows
        return False
    try:
        pid = fork()
    except OSError:
        return False  # record in place
    if pid:
        return True
    os.setsid()
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return False


def record(options: HookOptions, raw: bytes) -> tuple[int, str, str]:
    """(exit code, stdout, stderr line) for one record-only event read as ``raw``."""
    try:
        payload = json.loads(raw)
        if not isinstance(payload, dict):
            raise ValueError(f"stdin is not a JSON object (got {type(payload).__name__})")
        name = payload.get("hook_event_name") or options.event
        if name == BATCH_EVENT:
            _close_batch(options, payload)
        else:
            _record_end(options, payload, name)
    except Exception as exc:  # a record-only handler never refuses anything
        line = one_line(f"hookrails: could not record this event: {describe(exc)}")
        return 1, "", line
    return 0, "{}", ""


def _record_end(options: HookOptions, payload: dict[str, Any], name: Any) -> None:
    from ..events import Event, known_event_name

    if known_event_name(name) not in ("PostToolUse", "PostToolUseFailure"):
        raise ValueError(
            f"--record-only records PostToolUse, PostToolUseFailure and {BATCH_EVENT}, not {name!r}"
        )
    payload["hook_event_name"] = name
    tool = payload.get("tool_name")
    if options.except_matcher is not None and isinstance(tool, str):
        from ..definition.install_plan import claude_fires

        if claude_fires(options.except_matcher, tool):
            return  # the deciding handler records it
    event = Event.from_claude(payload)
    guard, ledger = _guard(options, spool=True)
    if ledger is None:
        return
    try:
        guard.emit_sync(event)  # no hooks: the call's end, recorded
    finally:
        ledger.close()


def _close_batch(options: HookOptions, payload: dict[str, Any]) -> None:
    session = payload.get("session_id")
    calls = payload.get("tool_calls")
    if not isinstance(session, str) or not isinstance(calls, list):
        raise ValueError(f"a {BATCH_EVENT} input needs session_id and tool_calls")
    ledger = _guard(options)[1]
    if ledger is None:
        return
    try:
        now = time.time()
        for call in calls:
            call_id = call.get("tool_use_id") if isinstance(call, dict) else None
            if not isinstance(call_id, str):
                continue
            said = call.get("tool_response")
            text = said if isinstance(said, str) else json.dumps(said, default=str)
            reason = f"{NOT_RUN_PREFIX}; it told the model: {text[:_MESSAGE_CAP]}"
            ledger.mark_interrupted(session, call_id, reason, now)  # only a pending row
    finally:
        ledger.close()


def _guard(options: HookOptions, *, spool: bool = False) -> tuple[Any, Any]:
    """A Guard with none of the definition's hooks (only its name, ledger and limits)
    and the ledger it records into (``None``: ``--no-ledger``). ``spool``: a PostgreSQL
    ledger only spools here, for ``serve``'s shipper (the writer opens no connection)."""
    if options.no_ledger:
        return None, None
    from ..definition.cache import load_definition
    from ..dispatch.guard import Guard
    from ..ledger.sqlite import Ledger

    assert options.config is not None
    definition = load_definition(options.config, ())  # no event's hooks: nothing imported
    if spool:
        from .hook_command import _open_ledger

        ledger = _open_ledger(options.ledger, definition)
    else:
        ledger = Ledger(options.ledger, definition=definition)
    return Guard(definition, ledger=ledger, check=False), ledger
