"""``hookrails claude install`` / ``uninstall``: our entries in Claude Code's ``settings.json``.

``install`` adds, per event the definition binds, one handler in a matcher group
of its own. On the tool events its ``matcher`` (and on a lone ``Bash`` rule its
``if``) lets through only the calls the definition's matchers can match
(:mod:`~guardrails.definition.install_plan`): a call no hookrails matcher can
match starts no process. With a ledger (the default) record-only handlers
(``async``: the agent never waits) hear every PostToolUse and
PostToolUseFailure the deciding handlers do not, and every PostToolBatch, so
each call's row is closed: ``ok``, ``error``, or ``interrupted`` when Claude
never ran it. Everything else in the file stays as it was, and running it again
changes nothing. One settings file holds one hookrails setup: installing
replaces the hookrails entries already there (another definition, command hooks
switched to http hooks), and ``uninstall`` removes them all.

Which entries are ours: a ``command`` handler that runs ``hookrails hook`` (any
path to the script; shell form, or exec form with ``args`` starting ``hook``)
or ``<python> -m guardrails hook``, and an ``http`` handler whose URL ends with
``/v1/claude/hook``.

How a command handler names things:

* hookrails: by default the absolute path of this environment's ``hookrails``
  script, run in exec form (``command`` plus ``args``: no shell, and a Claude
  Code too old for ``args`` runs the bare script, which refuses with exit 2).
  Without the script, ``<python> -m guardrails`` in shell form. A command
  Claude cannot find exits 127, which Claude treats as a non-blocking error:
  the guard would be off without a word. ``portable=True`` writes a bare
  ``hookrails`` (found on ``PATH``), for a settings file shared through the
  repository.
* the definition: ``${CLAUDE_PROJECT_DIR}/<path>`` when a project install's
  definition lies inside the project (the file then works in any checkout),
  else its absolute path.
* ``--event <Event>``: how the event fails when stdin cannot be read.
* ``--covers <tag>`` on the tool events: the plan the handler was written for;
  ``hookrails hook`` refuses a PreToolUse when the definition now needs
  another, so an edited matcher never silently misses calls.
* ``statusMessage``: what Claude shows (to the user, and to the model in a
  blocked stop's feedback) instead of the whole command line.
* ``timeout``: ``_policy.settings_timeout``, longer than every event's deadline
  (event budget + the longest hook timeout + 1 s) by 5 s, so Claude never kills
  the hook before its own watchdog (or ``hookrails serve``'s deadline) answers.
* ``onFailure: "block"`` where the event fails closed by the policy every host
  shares (``_policy.fails_closed``: PreToolUse, and any event one of whose
  matchers blocks): then a hook Claude cannot run (exit 127), one that crashes,
  is killed or times out, and an unreachable ``hookrails serve`` block the
  action instead of letting it through (checked against Claude Code 2.1.332).

A file that is not strict JSON (``NaN``, ``Infinity``, a number too large for a
double, which would be written back as ``Infinity`` and make Claude Code ignore
the whole file), that holds a lone surrogate (``"\\ud800"``, which cannot be
written as UTF-8), or whose ``hooks`` are not shaped as Claude reads them, is
reported with its line and never written. Writes are atomic (a temporary file
beside it, then a rename).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import os
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any

from ..definition.install_plan import HOOK_ROUTE, EventPlan, is_ours, watched_files
from ..errors import DefinitionError, SettingsError

__all__ = [
    "DEFAULT_URL",
    "HOOK_ROUTE",
    "TOKEN_ENV",
    "SettingsChange",
    "install",
    "is_ours",
    "settings_path",
    "uninstall",
    "watched_files",
]

DEFAULT_URL = "http://127.0.0.1:8787" + HOOK_ROUTE
TOKEN_ENV = "HOOKRAILS_TOKEN"


@dataclass
class SettingsChange:
    """What install or uninstall did (or, with ``dry_run``, would do) to one file."""

    path: str
    before: str | None  # the file's text (None: there was no file)
    after: str  # the text written (or that would be)
    events: list[str] = field(default_factory=list)  # events hookrails is installed for
    removed: int = 0  # hookrails handlers taken out
    added: int = 0  # hookrails handlers put in
    dry_run: bool = False
    kind: str = "command"
    recorded: list[str] = field(default_factory=list)  # events with record-only handlers

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.added)

    def diff(self) -> list[str]:
        import difflib

        return [
            line.rstrip("\n")
            for line in difflib.unified_diff(
                (self.before or "").splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=self.path if self.before is not None else "/dev/null",
                tofile=self.path,
            )
        ]


def settings_path(scope: str, project_dir: str | None = None) -> str:
    """``project``: ``<project>/.claude/settings.json``; ``user``: ``settings.json`` in
    ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    if scope == "project":
        return os.path.join(os.path.abspath(project_dir or os.getcwd()), ".claude", "settings.json")
    if scope == "user":
        folder = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
            os.path.expanduser("~"), ".claude"
        )
        return os.path.join(os.path.abspath(folder), "settings.json")
    raise ValueError(f"scope must be 'project' or 'user', got {scope!r}")


#: events a warm ``hookrails serve`` needs even when nothing binds them: a prompt starts a
#: turn (a halt ends, the injection budget renews), a session's end lets it be forgotten
_SERVE_BOOKKEEPING = frozenset({"UserPromptSubmit", "SessionEnd"})
#: events a ledger needs heard once a tool event is bound: a call's end closes its row
_RECORDED = ("PostToolUse", "PostToolUseFailure")
#: the spinner text, and what Claude shows the model instead of the command line
STATUS_MESSAGE = "hookrails"


class _Setup:
    """What the definition asks of Claude Code, read once (:func:`_setup`)."""

    __slots__ = ("bound", "closed", "plans", "protect", "timeout")

    def __init__(
        self,
        bound: list[str],
        closed: set[str],
        plans: dict[str, Any],
        timeout: int,
        protect: bool = False,
    ) -> None:
        self.protect = protect  # ConfigChange runs protect_guard_settings (--protect-settings)
        self.bound = bound  # wire names of the events the definition binds, in order
        self.closed = closed  # wire names that fail closed (``_policy``)
        self.plans = plans  # wire name -> install_plan.EventPlan, for the bound events
        self.timeout = timeout


def _setup(config: str, protect_settings: bool = False) -> _Setup:
    """The bound events, those that fail closed, their plans and the handlers' ``timeout``
    (``protect_settings``: a ConfigChange handler runs ``protect_guard_settings``).

    Loading validates the whole file (every hook is imported) and fills the
    compiled-definition cache, so the first hook process is fast too.
    """
    from ..definition.cache import load_definition
    from ..definition.install_plan import deciding_plans
    from .failure_policy import settings_timeout

    definition = load_definition(config)
    bound, closed, plans = [], set(), {}
    for plan, fails_closed in deciding_plans(definition, protect_settings=protect_settings):
        bound.append(plan.event)
        plans[plan.event] = plan
        if fails_closed:
            closed.add(plan.event)
    files = watched_files(definition)
    if files:  # Claude watches only the files FileChanged's matcher names
        plans["FileChanged"] = EventPlan("FileChanged", "|".join(files))
    return _Setup(bound, closed, plans, settings_timeout(definition), protect_settings)


def plans_for(config: str) -> list[Any]:
    """The :class:`~guardrails.definition.install_plan.EventPlan` of each event ``install``
    writes command hooks for, for ``hookrails check``: which calls reach hookrails."""
    return list(_setup(config).plans.values())


def _hookrails_command(portable: bool) -> tuple[str, bool]:
    """The program to run and whether it is the ``hookrails`` script (exec form: run with
    ``args``, no shell). ``<python> -m guardrails`` is written in shell form: a Claude Code
    too old for ``args`` would run the bare command, which for the script refuses (no
    arguments: exit 2) but for Python would read the event as a program."""
    if portable:
        return "hookrails", True
    script = os.path.join(
        os.path.dirname(sys.executable), "hookrails.exe" if os.name == "nt" else "hookrails"
    )
    if os.path.isfile(script):
        return script, True
    return f"{shlex.quote(sys.executable)} -m guardrails", False


def _config_ref(config: str, scope: str, project_dir: str) -> str:
    """The definition as the handler names it: ``${CLAUDE_PROJECT_DIR}/<path>`` inside a
    project (Claude substitutes it, in ``args`` too), else the absolute path."""
    path = os.path.abspath(config)
    if scope == "project":
        rel = os.path.relpath(path, project_dir)
        if rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel):
            return "${CLAUDE_PROJECT_DIR}/" + rel.replace(os.sep, "/")
    return path


def _url(http: str) -> str:
    url = http.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"--http needs an http:// or https:// URL, got {http!r}")
    return url if url.endswith(HOOK_ROUTE) else url + HOOK_ROUTE


def _command_handler(program: tuple[str, bool], args: list[str], timeout: int) -> dict[str, Any]:
    exe, exec_form = program
    if exec_form:
        handler: dict[str, Any] = {"type": "command", "command": exe, "args": ["hook", *args]}
    else:  # shell form: the ${CLAUDE_PROJECT_DIR} reference stays outside the quotes
        words = [a if a.startswith("${CLAUDE_") else shlex.quote(a) for a in args]
        handler = {"type": "command", "command": " ".join([exe, "hook", *words])}
    handler["timeout"] = timeout
    handler["statusMessage"] = STATUS_MESSAGE
    return handler


def _records_only(group: dict[str, Any]) -> bool:
    """A record-only handler (an event may also have a deciding one: PostToolBatch, and a
    PostToolUse whose deciding handler hears some tools)."""
    handler = group["hooks"][0]
    return "--record-only" in f"{handler.get('args', '')} {handler.get('command')}"


def _group(handler: dict[str, Any], matcher: str | None = None) -> dict[str, Any]:
    return {"hooks": [handler]} if matcher is None else {"matcher": matcher, "hooks": [handler]}


def _command_groups(
    setup: _Setup, config_ref: str, program: tuple[str, bool], ledger: bool
) -> list[tuple[str, dict[str, Any]]]:
    """(event, matcher group) for each handler: the deciding ones, narrowed by their plan,
    and with a ledger the record-only ones (``async``: they cost the agent nothing)."""
    from ..definition.install_plan import NARROWED_EVENTS, coverage_tag
    from .record_only import BATCH_EVENT

    base = ["--config", config_ref]
    if not ledger:
        base.append("--no-ledger")
    out: list[tuple[str, dict[str, Any]]] = []
    for event in setup.bound:
        plan = setup.plans[event]
        args = [*base, "--event", event]
        if event in NARROWED_EVENTS:
            args += ["--covers", coverage_tag(plan)]
        if event == "ConfigChange" and setup.protect:
            args.append("--protect-settings")
        handler = _command_handler(program, args, setup.timeout)
        if plan.condition:
            handler["if"] = plan.condition
        if event in setup.closed:
            handler["onFailure"] = "block"  # a hook that cannot answer refuses, never allows
        out.append((event, _group(handler, plan.matcher)))
    if not ledger or not any(e in NARROWED_EVENTS for e in setup.bound):
        return out
    recorded = [*_RECORDED, BATCH_EVENT] if "PreToolUse" in setup.bound else list(_RECORDED)
    for event in recorded:
        plan = setup.plans.get(event)
        # a deciding PostToolUse(Failure) handler for every tool records each call's end;
        # a deciding PostToolBatch one closes no row, so its record-only twin still runs
        if plan is not None and plan.matcher is None and event != BATCH_EVENT:
            continue
        args = [*base, "--event", event, "--record-only"]
        if plan is not None and plan.matcher is not None:
            args += ["--except", plan.matcher]
        handler = _command_handler(program, args, setup.timeout)
        handler["async"] = True
        out.append((event, _group(handler)))
    return out


def _http_groups(setup: _Setup, url: str, token: bool) -> list[tuple[str, dict[str, Any]]]:
    """One http handler per event, every tool (the server is warm: a call costs it ~1 ms),
    plus the events a warm server needs (they fail open when unbound)."""
    from ..events import EVENT_NAMES, event_class

    extra = set(_SERVE_BOOKKEEPING) if setup.bound else set()
    if any(e in setup.bound for e in ("PreToolUse", *_RECORDED)):
        extra.update(_RECORDED)  # the server's ledger closes each call's row
    out: list[tuple[str, dict[str, Any]]] = []
    for name in EVENT_NAMES:
        event = event_class(name).wire_name
        if event not in setup.bound and name not in extra:
            continue
        handler: dict[str, Any] = {"type": "http", "url": url, "timeout": setup.timeout}
        if token:
            handler["headers"] = {"Authorization": f"Bearer ${TOKEN_ENV}"}
            handler["allowedEnvVars"] = [TOKEN_ENV]
        if event in setup.closed:
            handler["onFailure"] = "block"
        plan = setup.plans.get(event)  # a tool event: every call (the server is warm)
        watched = plan.matcher if plan is not None and event == "FileChanged" else None
        out.append((event, _group(handler, watched)))
    return out


def install(
    config: str,
    *,
    scope: str = "project",
    project_dir: str | None = None,
    http: str | None = None,
    token: bool = False,
    portable: bool = False,
    dry_run: bool = False,
    ledger: bool = True,
    protect_settings: bool = True,
) -> SettingsChange:
    """Put hookrails' handlers for the definition in ``config`` into the settings file.

    Command hooks (the default) run ``hookrails hook`` only for the tool calls the
    definition's matchers can match (:mod:`~guardrails.definition.install_plan`);
    with ``ledger`` (the default) record-only async handlers close every call's row.
    ``http``: a ``hookrails serve`` URL (the base or the whole ``/v1/claude/hook``);
    http handlers then replace command handlers, with ``token`` sending
    ``Authorization: Bearer $HOOKRAILS_TOKEN``. ``protect_settings`` (command hooks):
    a ConfigChange handler runs ``protect_guard_settings``, so a settings edit that
    removes or narrows these handlers is blocked (docs/builtins.md).
    """
    project = os.path.abspath(project_dir or os.getcwd())
    path = settings_path(scope, project)
    setup = _setup(config, protect_settings=protect_settings and http is None)
    if http is not None:
        wanted = _http_groups(setup, _url(http), token)
    else:
        ref = _config_ref(config, scope, project)
        wanted = _command_groups(setup, ref, _hookrails_command(portable), ledger)
    before, data = _read(path)
    removed, added = _merge(data, wanted)
    after = _dump(data, path) if removed or added else (before or "")  # unchanged: not reformatted
    kind = "http" if http is not None else "command"
    recorded = [e for e, g in wanted if _records_only(g)]
    events = list(dict.fromkeys(e for e, g in wanted if not _records_only(g)))
    change = SettingsChange(
        path, before, after, events, removed, added, dry_run, kind, list(dict.fromkeys(recorded))
    )
    if change.changed and not dry_run:
        _write(path, change.after)
    return change


def uninstall(
    *, scope: str = "project", project_dir: str | None = None, dry_run: bool = False
) -> SettingsChange:
    """Take every hookrails handler out of the settings file; nothing else changes."""
    path = settings_path(scope, project_dir)
    before, data = _read(path)
    removed, _ = _merge(data, [])
    after = _dump(data, path) if removed else (before or "")
    change = SettingsChange(path, before, after, [], removed, 0, dry_run)
    if removed and not dry_run:
        _write(path, change.after)
    return change


def _merge(data: dict[str, Any], wanted: list[tuple[str, dict[str, Any]]]) -> tuple[int, int]:
    """Remove our handlers except those identical to a wanted one, in a group with the same
    ``matcher`` (kept where they are), then append the missing groups. Groups, event lists
    and ``hooks`` emptied by us go; ones that were empty before stay. Returns (removed,
    added)."""
    hooks = data.get("hooks")
    left_over = list(wanted)
    removed = 0
    if isinstance(hooks, dict):
        for event in list(hooks):
            groups = hooks[event]
            emptied = 0
            for group in list(groups):
                handlers = group.get("hooks")
                if not isinstance(handlers, list) or not handlers:
                    continue
                left = []
                for handler in handlers:
                    if not is_ours(handler):
                        left.append(handler)
                        continue
                    match = _wanted_index(left_over, event, group.get("matcher"), handler)
                    if match is None:
                        removed += 1
                    else:
                        left.append(handler)
                        del left_over[match]
                if left:
                    group["hooks"] = left
                else:
                    groups.remove(group)
                    emptied += 1
            if emptied and not groups:
                del hooks[event]
        if removed and not hooks:
            del data["hooks"]
    if left_over:
        hooks = data.setdefault("hooks", {})
        for event, group in left_over:
            hooks.setdefault(event, []).append(copy.deepcopy(group))
    return removed, len(left_over)


def _wanted_index(
    wanted: list[tuple[str, dict[str, Any]]], event: str, matcher: Any, handler: Any
) -> int | None:
    for i, (e, group) in enumerate(wanted):
        if e == event and group.get("matcher") == matcher and group["hooks"][0] == handler:
            return i
    return None


def _dump(data: dict[str, Any], path: str) -> str:
    """The new file text: strict JSON that encodes as UTF-8, else a :class:`SettingsError`
    (``_read`` refuses such files; this catches what we would add, say a definition path
    that is not UTF-8)."""
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        text.encode("utf-8")
    except (ValueError, TypeError) as exc:  # UnicodeEncodeError is a ValueError
        raise SettingsError(
            f"the new settings cannot be written as UTF-8 JSON ({type(exc).__name__}: {exc}); "
            "nothing was written",
            file=path,
        ) from None
    return text


def _read(path: str) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when missing) and its JSON, checked where we will walk it."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise SettingsError(f"cannot read: {exc.strerror or exc}", file=path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SettingsError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x})", file=path, line=line
        ) from None
    if not text.strip():
        return text, {}  # an empty file: nothing in it to keep
    try:
        data = json.loads(text, parse_constant=_NotFinite, parse_float=_float)
    except json.JSONDecodeError as exc:
        raise SettingsError(
            f"invalid JSON: {exc.msg} (column {exc.colno})", file=path, line=exc.lineno
        ) from None
    except RecursionError:
        raise SettingsError("invalid JSON: nested too deeply", file=path) from None
    _check(data, text, path)
    return text, copy.deepcopy(data)


class _NotFinite:
    """A number the file holds that JSON cannot write back: ``NaN``, ``Infinity`` (not JSON
    at all: Claude Code rejects the file) or one too large for a double (``1e400``: Claude
    Code reads infinity, which a rewrite would spell ``Infinity``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def problem(self) -> str:
        if self.text.lstrip("-") in ("NaN", "Infinity"):
            return f"{self.text} is not JSON (Claude Code ignores a file that holds it)"
        return f"the number {self.text} is out of range (it reads as infinity, not JSON)"


def _float(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def _unwritable(data: Any) -> tuple[tuple[str | int, ...], str] | None:
    """The first place (in file order) holding what a rewrite could not write: a
    :class:`_NotFinite`, or a lone surrogate in a key or a string (``"\\ud800"``: valid
    JSON, but no UTF-8 for it). Iterative: the file may be nested deeply."""
    stack: list[tuple[tuple[str | int, ...], Any]] = [((), data)]
    while stack:
        loc, value = stack.pop()
        if loc and isinstance(loc[-1], str) and _lone_surrogate(loc[-1]):
            return loc, "a key holds a lone surrogate (\\ud800-\\udfff), which is not UTF-8"
        if isinstance(value, _NotFinite):
            return loc, value.problem()
        if isinstance(value, str) and _lone_surrogate(value):
            return loc, "a string holds a lone surrogate (\\ud800-\\udfff), which is not UTF-8"
        if isinstance(value, dict):
            stack.extend(((*loc, k), v) for k, v in reversed(value.items()))
        elif isinstance(value, list):
            stack.extend(((*loc, i), v) for i, v in reversed(list(enumerate(value))))
    return None


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _check(data: Any, text: str, path: str) -> None:
    from ..definition.file_format import json_lines

    try:
        lines = json_lines(text, path)
    except DefinitionError as exc:  # a repeated key: a rewrite would drop one of them
        raise SettingsError(
            f"{exc.path}: {exc.message} (Claude Code reads only the last one)",
            file=path,
            line=exc.line,
        ) from None

    def fail(loc: tuple[str | int, ...], message: str) -> SettingsError:
        from ..errors import format_loc

        line = next((lines[loc[:n]] for n in range(len(loc), 0, -1) if loc[:n] in lines), None)
        shown = tuple(  # a key with a lone surrogate, printable
            p.encode("utf-8", "backslashreplace").decode() if isinstance(p, str) else p for p in loc
        )
        where = f"{format_loc(shown)}: " if loc else ""
        return SettingsError(f"{where}{message}", file=path, line=line)

    found = _unwritable(data)
    if found is not None:
        raise fail(*found)
    if not isinstance(data, dict):
        raise fail((), f"expected a JSON object at the top level, got {_kind(data)}")
    hooks = data.get("hooks")
    if hooks is None:
        return
    if not isinstance(hooks, dict):
        raise fail(("hooks",), f"expected an object of event names, got {_kind(hooks)}")
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            raise fail(("hooks", event), f"expected a list of matcher groups, got {_kind(groups)}")
        for i, group in enumerate(groups):
            if not isinstance(group, dict):
                raise fail(("hooks", event, i), f"expected an object, got {_kind(group)}")
            handlers = group.get("hooks")
            if handlers is None:
                continue
            if not isinstance(handlers, list):
                raise fail(
                    ("hooks", event, i, "hooks"), f"expected a list of hooks, got {_kind(handlers)}"
                )
            for j, handler in enumerate(handlers):
                if not isinstance(handler, dict):
                    raise fail(
                        ("hooks", event, i, "hooks", j), f"expected an object, got {_kind(handler)}"
                    )


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


def _write(path: str, text: str) -> None:
    """Atomically: a temporary file beside the target, then a rename (through a symlink to
    the file it points at)."""
    target = os.path.realpath(path)
    folder = os.path.dirname(target)
    os.makedirs(folder, exist_ok=True)
    try:
        mode: int | None = os.stat(target).st_mode & 0o777
    except FileNotFoundError:
        mode = None
    tmp = os.path.join(folder, f".{os.path.basename(target)}.hookrails-{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
