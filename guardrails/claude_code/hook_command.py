"""``hookrails hook``: answer one Claude Code hook event by the command protocol.

Claude Code writes the event's JSON to stdin and reads the exit code:

* exit 0: stdout is the merged :class:`~guardrails.Decision` as Claude hook JSON
  (``Decision.to_claude()``; a deny or a block is in that JSON); WorktreeCreate's
  stdout is the new worktree's path, as text, which is how Claude reads it, and
  PreCompact's (unless refused) the compaction instructions its hooks give, as text
  (Claude adds that stdout, JSON or not, to the instructions the summary follows);
* exit 2 with one line on stderr: the event could not be decided and fails
  closed (PreToolUse: the tool does not run; UserPromptSubmit: the prompt is
  erased; Stop and SubagentStop: the agent keeps going; ``REFUSALS`` says what
  each event's refusal does);
* exit 1 with one line on stderr: the event could not be decided and fails
  open (Claude shows the line and goes ahead).

What "could not be decided" covers: unreadable stdin, an event Claude Code does
not have, a missing or invalid definition, a hook module that fails to
import, a crash anywhere (a hook's ``SystemExit`` included), and no answer
within the definition's ``event_budget`` (a watchdog answers instead). How it
fails: PreToolUse always closed, so a crash never lets a tool run; another event
Claude lets a hook refuse closed when one of its matchers has ``on_failure:
block`` (the default for UserPromptSubmit, UserPromptExpansion and
PreSkillShellCommand), open when all of them continue, and by the default of
docs/design.md §5 when its matchers cannot be read; an event Claude cannot block
(Notification, SessionStart, ...) always open. A PermissionRequest that fails
closed exits 0 with its deny as JSON: Claude ignores exit 2 there
(``failure_policy.failure_exit``). When stdin cannot be read, the event is the
``--event`` the installer wrote into the command, and unknown without it: then it
fails closed, since it may be a PreToolUse. An event name Claude Code does not
have fails open: no definition can bind it. A hook that fails inside a readable
definition is the Guard's business as everywhere else: its matcher's
``on_failure`` shapes the decision.

Start-up cost is the point of this module's shape: the console entry calls
:func:`main` without importing click, the definition comes from the compiled
cache (``_defcache``, no PyYAML or pydantic), only the event's hooks are
imported, and the ledger opens with stdlib ``sqlite3`` when its file is at the
current schema.
"""

from __future__ import annotations

import json
import os
import sys
import time

from ..errors import describe, one_line
from . import hook_setup

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any, NoReturn

    from ..definition.model import AgentDefinition
    from ..events import Event
    from ..ledger.journal import JournalLedger
    from ..ledger.sqlite import Ledger

__all__ = ["USAGE", "HookEscape", "HookOptions", "finish", "main", "parse_args", "run"]

USAGE = (
    "usage: hookrails hook --config FILE [--event NAME] [--ledger FILE | --no-ledger] "
    "[--covers TAG] [--record-only [--except MATCHER]] [--protect-settings] < event.json"
)


class HookOptions:
    """The command line of ``hookrails hook``."""

    __slots__ = (
        "config",
        "covers",
        "event",
        "except_matcher",
        "ledger",
        "no_ledger",
        "protect_settings",
        "record_only",
    )

    def __init__(
        self,
        config: str | None = None,
        *,
        event: str | None = None,
        ledger: str | None = None,
        no_ledger: bool = False,
        covers: str | None = None,
        record_only: bool = False,
        except_matcher: str | None = None,
        protect_settings: bool = False,
    ) -> None:
        self.config = config
        #: ConfigChange runs ``protect_guard_settings`` (``hookrails claude install``'s default)
        self.protect_settings = protect_settings
        self.event = event
        self.ledger = ledger
        self.no_ledger = no_ledger
        #: the tag of the plan the handler was written for (``install_plan.coverage_tag``)
        self.covers = covers
        #: record the event, decide nothing (``record_only``)
        self.record_only = record_only
        #: with ``record_only``: the deciding handler's Claude matcher, which records itself
        self.except_matcher = except_matcher


class _Undecided(Exception):
    """The event cannot be decided; ``message`` says why, in one line."""

    def __init__(self, message: str, *, unknown_event: bool = False) -> None:
        super().__init__(message)
        self.unknown_event = unknown_event


class _State:
    """What is known so far, for the failure policy (filled as the run goes)."""

    __slots__ = ("deadline_at", "definition", "event", "options", "payload", "stdout_fd")

    def __init__(self, options: HookOptions) -> None:
        self.options = options
        #: the real stdout while hooks run (their prints go to stderr): the watchdog's answer
        self.stdout_fd = 1
        self.event: str | None = None  # canonical event name
        self.payload: Event | None = None
        self.definition: AgentDefinition | None = None
        #: when the watchdog answers (``time.monotonic``): first the load's, then the event's
        self.deadline_at = 0.0


def parse_args(argv: list[str]) -> HookOptions:
    """Read the options of :data:`USAGE` (no argparse: it costs a hook process
    milliseconds). Raises ``ValueError`` with the usage problem."""
    opts = HookOptions()
    it = iter(argv)
    for arg in it:
        name, eq, value = arg.partition("=")
        slot = _VALUED.get(name)
        if slot is not None:
            if not eq:
                value = next(it, "")
            if not value:
                raise ValueError(f"{name} needs a value")
            setattr(opts, slot, value)
        elif arg == "--no-ledger":
            opts.no_ledger = True
        elif arg == "--record-only":
            opts.record_only = True
        elif arg == "--protect-settings":
            opts.protect_settings = True
        else:
            raise ValueError(f"unexpected argument {arg!r}")
    if opts.config is None:
        raise ValueError("--config is required")
    if opts.ledger and opts.no_ledger:
        raise ValueError("--ledger and --no-ledger exclude each other")
    if opts.except_matcher is not None and not opts.record_only:
        raise ValueError("--except goes with --record-only")
    return opts


#: the options that take a value, and the ``HookOptions`` slot each fills
_VALUED = {
    "--config": "config",
    "-c": "config",
    "--event": "event",
    "-e": "event",
    "--ledger": "ledger",
    "-l": "ledger",
    "--covers": "covers",
    "--except": "except_matcher",
}


#: :func:`main` runs: the process ends with :func:`finish` (``os._exit``) once answered
_ENDS_PROCESS = False


def main(argv: list[str] | None = None) -> int:
    """Decide the event on stdin; print the answer; return the exit code. Never raises.

    For the process's own use (the console script): the exits a hook could take stay
    closed to the end (see :func:`_contain_exits`); the caller ends with :func:`finish`."""
    global _ENDS_PROCESS
    args = sys.argv[1:] if argv is None else argv
    _ENDS_PROCESS = True
    _contain_exits()
    try:
        options = parse_args(args)
    except ValueError as exc:  # still read stdin: the event decides how this fails
        return _run(HookOptions(event=_event_arg(args)), None, f"{exc} ({USAGE})")
    return _run(options, None, None, detach=True)


def finish(code: int) -> NoReturn:
    """End the hook process with ``code`` once the answer is out: flushed, and without
    waiting for threads a hook left running (a non-daemon thread would keep the process
    alive past the answer until Claude's timeout)."""
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105  # not contextlib.suppress: contextlib costs a hook ~0.5 ms
            stream.flush()
        except (OSError, ValueError):
            pass
    _REAL_EXIT(code)


def _event_arg(argv: list[str]) -> str | None:
    """``--event`` from a command line that did not parse, for the failure policy."""
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in ("--event", "-e"):
            return value if eq else (argv[i + 1] if i + 1 < len(argv) else None)
    return None


def run(options: HookOptions, stdin: bytes | None = None) -> int:
    """Decide one event (``stdin``: the payload, else read from ``sys.stdin``); print the
    answer and return the exit code. Never raises: a crash fails by the policy. The exits a
    hook could take are closed while it decides (and reopened after, for an embedding
    process)."""
    restore = _contain_exits()
    try:
        return _run(options, stdin, None)
    finally:
        restore()


#: seconds the definition may take to load (hook modules imported) before the watchdog
#: answers; then the event's own deadline (``failure_policy.deadline``) counts from the start
LOAD_LIMIT = 10.0
#: ``os._exit`` as it was before any hook ran: the watchdog and :func:`finish` use it
_REAL_EXIT = os._exit
#: the ways out of a process a hook could take by accident, each a failed hook instead
_EXIT_ROUTES = (
    "_exit",
    "abort",
    "execv",
    "execve",
    "execl",
    "execle",
    "execlp",
    "execlpe",
    "execvp",
    "execvpe",
    "fexecve",
)


class HookEscape(SystemExit):
    """A hook tried to leave the hook process (``os._exit``, ``os.exec*``, ``os.abort``):
    that would end it with no answer, which Claude reads as an allow. It is a failed hook
    instead (the dispatcher catches ``SystemExit``)."""


def _contain_exits() -> Any:
    """Replace the process-leaving calls of ``os`` (and ``posix``) with ones that raise
    :class:`HookEscape`; returns a function that puts them back. In-process hooks are
    trusted code (docs/design.md §9): this closes the accidental routes, not a determined
    one (a signal, ``ctypes``)."""
    import posix

    saved: list[tuple[Any, str, Any]] = []
    for module in (os, posix):
        for name in _EXIT_ROUTES:
            real = getattr(module, name, None)
            if real is None or getattr(real, "_hookrails_contained", False):
                continue

            def blocked(*args: Any, _name: str = name) -> NoReturn:
                shown = ", ".join(map(repr, args))
                raise HookEscape(f"os.{_name}({shown}) inside a hook: the process cannot be left")

            blocked._hookrails_contained = True  # type: ignore[attr-defined]
            saved.append((module, name, real))
            setattr(module, name, blocked)

    def restore() -> None:
        for module, name, real in saved:
            setattr(module, name, real)

    return restore


def _run(
    options: HookOptions, stdin: bytes | None, problem: str | None, *, detach: bool = False
) -> int:
    if options.record_only and problem is None:
        from .record_only import detach_writer, record

        try:
            raw = sys.stdin.buffer.read() if stdin is None else stdin
        except (OSError, ValueError) as exc:
            return _answer(1, "", one_line(f"hookrails: cannot read stdin: {describe(exc)}"))
        if detach and detach_writer():  # the parent: answered now, the child records
            return _answer(0, "{}", "")
        held = _hold_stdout()
        try:
            answer = record(options, raw)
        finally:
            _release_stdout(held)
        return _answer(*answer)
    state = _State(options)
    held = _hold_stdout()
    if held[1] is not None:
        state.stdout_fd = held[1]
    try:
        answer = _decide(state, stdin, problem)
    except _Undecided as exc:
        answer = _failure(state, str(exc), unknown_event=exc.unknown_event)
    except BaseException as exc:  # a crash, a hook's SystemExit, Ctrl-C: never an allow
        answer = _failure(state, f"hookrails crashed: {describe(exc)}")
    _release_stdout(held)
    return _answer(*answer)


def _hold_stdout() -> tuple[Any, int | None]:
    """Until the answer, what hooks print (``print``, a shell's ``echo``) goes to stderr:
    Claude reads stdout as JSON only when it is nothing else, and a garbled deny allows."""
    real = sys.stdout
    saved: int | None = None
    try:
        real.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
    except (OSError, ValueError, AttributeError):  # no fd 1 to speak of: Python level only
        if saved is not None:
            os.close(saved)
        saved = None
    sys.stdout = sys.stderr
    return real, saved


def _release_stdout(held: tuple[Any, int | None]) -> None:
    real, saved = held
    try:  # not contextlib.suppress: contextlib costs a hook process half a millisecond
        sys.stderr.flush()
        real.flush()  # what a hook wrote to sys.__stdout__ belongs to stderr too
    except (OSError, ValueError):
        pass
    if saved is not None:
        try:
            os.dup2(saved, 1)
            os.close(saved)
        except OSError:
            pass
    sys.stdout = real


# --- deciding -------------------------------------------------------------------------


def _decide(state: _State, stdin: bytes | None, problem: str | None) -> tuple[int, str, str]:
    """The answer for a decided event; raises ``_Undecided`` (or anything, on a crash)."""
    from ..events import known_event_name

    options = state.options
    if options.event:
        state.event = known_event_name(options.event)
    raw = sys.stdin.buffer.read() if stdin is None else stdin
    if problem is not None:  # a bad command line: the payload only tells which event failed
        import contextlib

        with contextlib.suppress(_Undecided):
            _payload(raw, state)
        raise _Undecided(problem)
    payload = _payload(raw, state)
    from ..errors import DefinitionError, EventError
    from ..events import Event

    try:
        event = Event.from_claude(payload)
    except EventError as exc:
        from .failure_policy import salvage_event

        assert state.event is not None
        state.payload = salvage_event(payload, state.event)  # so the failure is recorded
        raise _Undecided(f"invalid {payload['hook_event_name']} hook input: {exc}") from None
    state.payload = event
    assert options.config is not None
    # armed before the definition loads: a hook module whose import hangs is answered too
    started = time.monotonic()
    state.deadline_at = started + LOAD_LIMIT
    watchdog = _watchdog(state, started)
    try:
        try:
            from ..definition.cache import load_definition

            events = None if options.protect_settings else hook_setup.events_of(state.event)
            definition = load_definition(options.config, events)
        except DefinitionError as exc:
            raise _Undecided(f"cannot load the definition: {exc}") from None
        state.definition = definition
        if options.protect_settings and state.event == "ConfigChange":
            hook_setup.guard_settings(definition)
        stale = hook_setup.stale(options, definition, state.event) if options.covers else None
        if stale is not None and state.event == "PreToolUse":
            raise _Undecided(stale)
        from .failure_policy import deadline, encode

        assert state.event is not None
        state.deadline_at = started + deadline(definition, state.event)  # from the process start
        relayed = _relayed(options, definition, raw, state, stale)
        if relayed is not None:
            return relayed
        ledger = _ledger(options, definition)
        from ..dispatch.guard import Guard

        # check=False: schemas are compiled by the call that needs them (a broken one fails that
        # call closed), not at load for every event of a one-event process
        guard = Guard(definition, ledger=False, check=False)
        guard.ledger = ledger  # type: ignore[assignment]  # a JournalLedger stands for a Ledger
        decision = guard.emit_sync(event)  # recorded in the ledger too
        answer = decision.to_claude()
        if stale is not None:  # decided, and the user told the install is out of date
            said = answer.get("systemMessage")
            stale = f"hookrails: {stale}"
            answer["systemMessage"] = f"{said}\n{stale}" if said else stale
        try:
            out = encode(answer)  # strict: Claude would drop NaN or a repr
        except ValueError as exc:
            raise _Undecided(f"the hooks' answer is not valid JSON: {exc}") from None
        fallback = ""  # when stdout cannot take the answer, a refusal still refuses
        if decision.denied or decision.blocked or decision.halted:
            fallback = decision.reason or "blocked by hookrails"
        if ledger is not None:
            # the record is journaled, or committed (in the WAL); when the process ends with
            # os._exit, the checkpoint and WAL delete a close would do are left to the next writer
            ledger.close(checkpoint=not _ENDS_PROCESS)
        if state.event == "WorktreeCreate":  # a command hook answers the path, as text
            return hook_setup.worktree_answer(decision, fallback)
        if state.event == "PreCompact" and not fallback:
            # Claude adds a PreCompact hook's whole stdout to the compaction's instructions,
            # JSON included ("{}"): the instructions as text, or nothing
            return 0, decision.additional_context or "", ""
        return 0, out, fallback
    finally:
        watchdog.release()  # cancels it, whichever way this ends


def _payload(raw: bytes, state: _State) -> dict[str, Any]:
    """The stdin JSON object with a known ``hook_event_name`` (``state.event`` set)."""
    try:
        payload = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise _Undecided(f"stdin is not a JSON hook event ({describe(exc)})") from None
    if not isinstance(payload, dict):
        raise _Undecided(f"stdin is not a JSON object (got {type(payload).__name__})")
    name = payload.get("hook_event_name")
    if name is None and state.options.event:
        name = payload["hook_event_name"] = state.options.event
    if not isinstance(name, str):
        raise _Undecided("stdin has no hook_event_name")
    from ..events import known_event_name

    event = known_event_name(name)
    expected = known_event_name(state.options.event) if state.options.event else None
    if expected is not None and event != expected:  # decided by --event's policy, not stdin's
        raise _Undecided(
            f"stdin's hook_event_name {name!r} does not match --event {state.options.event}"
        )
    if event is None:
        from ..events import EVENT_NAMES

        raise _Undecided(
            f"event {name!r} is not a Claude Code hook event hookrails knows (it knows "
            f"{', '.join(EVENT_NAMES)} and Stop); remove it from the hooks in settings.json",
            unknown_event=True,
        )
    state.event = event
    return payload


def _ledger(options: HookOptions, definition: AgentDefinition) -> Ledger | JournalLedger | None:
    """The ledger to record into: ``--ledger`` > ``$HOOKRAILS_LEDGER`` > the definition's
    ``ledger:`` > ``.hookrails/ledger.db``; none with ``--no-ledger``. One that cannot be
    opened is reported on stderr and the event is still decided."""
    if options.no_ledger:
        return None
    try:
        return _journal_or_ledger(options.ledger, definition)
    except Exception as exc:
        _stderr(f"hookrails: the ledger is not recording this event: {describe(exc)}")
        return None


def _open_ledger(location: str | None, definition: AgentDefinition | None) -> Ledger:
    """A ledger for this process: a PostgreSQL one only spools here (``relay``)."""
    from ..ledger.common import is_url, resolve_ledger_path
    from ..ledger.sqlite import Ledger

    if is_url(resolve_ledger_path(location, definition)):
        from ..ledger.postgres_spool import SpoolOnlyLedger

        return SpoolOnlyLedger(location, definition=definition)
    return Ledger(location, definition=definition)


def _journal_or_ledger(location: str | None, definition: AgentDefinition) -> Ledger | JournalLedger:
    """A SQLite file's events that need no session state are journaled (``ledger.journal``:
    the file is opened, and ``sqlite3`` imported, only when something needs it)."""
    from ..ledger.common import is_url, resolve_ledger_path

    if is_url(resolve_ledger_path(location, definition)):
        return _open_ledger(location, definition)
    from ..ledger.journal import JournalLedger

    return JournalLedger(location, definition=definition)


def _relayed(
    options: HookOptions, definition: AgentDefinition, raw: bytes, state: _State, stale: str | None
) -> tuple[int, str, str] | None:
    """With a PostgreSQL ledger, this machine's ``hookrails serve`` decides (``relay``)."""
    from ..ledger.common import is_url, resolve_ledger_path

    if options.no_ledger or state.event in (None, "WorktreeCreate"):
        return None
    location = resolve_ledger_path(options.ledger, definition)
    if not is_url(location):
        return None
    from .relay import relay

    assert state.event is not None and options.config is not None
    return relay(location, raw, state.event, options.config, state.deadline_at, stale)


# --- failing ---------------------------------------------------------------------------


def _failure(state: _State, message: str, *, unknown_event: bool = False) -> tuple[int, str, str]:
    """The answer for an undecidable event: exit 2 (closed) or 1 (open), one stderr line
    (a PermissionRequest that fails closed: exit 0 and the JSON deny, ``failure_exit``)."""
    from .failure_policy import encode, failure_exit, undecided_output, verdict

    closed = not unknown_event and _fails_closed(state)
    line = one_line(f"hookrails: {message}; {verdict(state.event, closed)}")
    if not unknown_event:
        _record_failure(state, line, closed)
    code = failure_exit(state.event, closed)
    if code == 0:  # PermissionRequest: Claude ignores exit 2, the refusal is the JSON deny
        _stderr(line)  # (for the user's debug log; Claude reads only stdout here)
        return 0, encode(undecided_output(state.event, line, closed)), line
    return code, "", line


def _fails_closed(state: _State) -> bool:
    """The shared policy (``_policy``), from the loaded definition, else from the file read
    as plain data (it may be invalid); an event not known at all fails closed."""
    from .failure_policy import fails_closed, fails_closed_with

    event = state.event
    if event is None or event == "PreToolUse" or state.definition is not None:
        return fails_closed(state.definition, event, unknown=True)
    try:
        values = hook_setup.declared_on_failures(state.options.config, event)
    except Exception:  # the policy of last resort: the event's default
        values = []
    return fails_closed_with(event, values)


def _record_failure(state: _State, line: str, closed: bool) -> None:
    """Best effort: put the failed event in the ledger (when the payload was read), so a
    broken setup shows in ``hookrails ledger tail``, not only on Claude's screen."""
    event = state.payload
    options = state.options
    if event is None or options.no_ledger:
        return
    try:
        from ..definition.model import AgentDefinition
        from ..dispatch.guard import Guard
        from .failure_policy import record_undecided

        definition = state.definition or AgentDefinition(name="hookrails")
        with _open_ledger(_failure_ledger(state), state.definition) as ledger:
            record_undecided(
                ledger, Guard(definition, ledger=False, check=False), event, line, closed
            )
    except BaseException:  # the answer matters more than its record
        pass


def _failure_ledger(state: _State) -> str | None:
    """``--ledger``; else, when the definition did not load and ``$HOOKRAILS_LEDGER`` is
    unset, the file's ``ledger:`` key read as plain data; else ``None`` (the usual order)."""
    options = state.options
    if options.ledger or state.definition is not None or os.environ.get("HOOKRAILS_LEDGER"):
        return options.ledger
    try:
        data = hook_setup.plain_data(options.config)
    except Exception:
        return None
    ledger = data.get("ledger") if isinstance(data, dict) else None
    if not isinstance(ledger, str) or not ledger or options.config is None:
        return None
    from ..ledger.common import is_url

    if is_url(ledger):  # a PostgreSQL ledger: no folder to resolve it against
        return ledger
    return os.path.join(os.path.dirname(os.path.abspath(options.config)), ledger)


def _watchdog(state: _State, started: float) -> Any:
    """Answer for a hook (or a hook module's import) that never returns: at
    ``state.deadline_at`` (which may move once the definition is known), fail by the policy
    and exit, before Claude's own timeout could let the action through. Returns a held lock:
    releasing it cancels the watchdog. A bare ``_thread`` thread (daemonic, as
    ``threading.Timer`` was made): ``threading`` costs a hook process 0.7 ms."""
    import _thread

    cancelled = _thread.allocate_lock()
    cancelled.acquire()

    def watch() -> None:
        while True:
            left = state.deadline_at - time.monotonic()
            if left <= 0:
                break
            if cancelled.acquire(timeout=left):
                return  # the decision came first
        limit = round(state.deadline_at - started, 3)
        code, out, line = _failure(state, f"no decision within {limit:g}s (the event's deadline)")
        try:
            if out:  # a PermissionRequest refused: the JSON deny on the real stdout
                os.write(state.stdout_fd, (out + "\n").encode("ascii"))
            else:
                os.write(2, (line + "\n").encode("utf-8", "replace"))
        finally:
            _REAL_EXIT(code)

    _thread.start_new_thread(watch, ())
    return cancelled


# --- output ----------------------------------------------------------------------------


def _answer(code: int, out: str, err: str) -> int:
    """Print the answer. For exit 0, ``err`` is the refusal to fall back on (exit 2) when
    stdout cannot be written; otherwise it is the one stderr line."""
    if code == 0:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
            return 0
        except (OSError, ValueError):
            if not err:
                return 0
            code, err = 2, one_line(f"hookrails: {err}")
    _stderr(err)
    return code


def _stderr(line: str) -> None:
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
