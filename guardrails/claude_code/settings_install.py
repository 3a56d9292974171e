"""``hookrails claude install`` / ``uninstall``: our entries in Claude Code's ``settings.json``.

``install`` adds one handler per event the definition binds, each in a
matcher group of its own with no ``matcher`` (every tool: hookrails matches
inside). Everything else in the file stays as it was, and running it again
changes nothing. One settings file holds one hookrails setup: installing
replaces the hookrails entries already there (another definition, command
hooks switched to http hooks), and ``uninstall`` removes them all.

Which entries are ours: a ``command`` handler whose command starts with
``hookrails hook`` (any path to the script) or ``<python> -m guardrails hook``,
and an ``http`` handler whose URL ends with ``/v1/claude/hook``.

How the command names things:

* hookrails: by default the absolute path of this environment's ``hookrails``
  script (or ``<python> -m guardrails``). A command Claude cannot find exits
  127, which Claude treats as a non-blocking error: the guard would be off
  without a word. ``portable=True`` writes a bare ``hookrails`` (found on
  ``PATH``), for a settings file shared through the repository.
* the definition: ``"$CLAUDE_PROJECT_DIR"/<path>`` when a project install's
  definition lies inside the project (the file then works in any checkout),
  else its absolute path.
* ``--event <Event>``: how the event fails when stdin cannot be read.
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
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import DefinitionError, SettingsError

if TYPE_CHECKING:
    from ..definition.model import AgentDefinition

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

HOOK_ROUTE = "/v1/claude/hook"
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


def is_ours(handler: Any) -> bool:
    """A handler hookrails wrote: ``hookrails hook ...``, ``<python> -m guardrails hook
    ...``, or an http handler pointing at ``hookrails serve``."""
    if not isinstance(handler, dict):
        return False
    kind = handler.get("type")
    if kind == "http":
        url = handler.get("url")
        return isinstance(url, str) and url.rstrip("/").endswith(HOOK_ROUTE)
    command = handler.get("command")
    if kind != "command" or not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) >= 2 and words[1] == "hook":
        name = words[0].replace("\\", "/").rsplit("/", 1)[-1]
        return name in ("hookrails", "hookrails.exe")
    return words[1:4] == ["-m", "guardrails", "hook"]


#: events a warm ``hookrails serve`` needs even when nothing binds them: a prompt starts a
#: turn (a halt ends, the injection budget renews), a session's end lets it be forgotten
_SERVE_BOOKKEEPING = frozenset({"UserPromptSubmit", "SessionEnd"})


def _wire_events(
    config: str, http: bool = False
) -> tuple[list[str], set[str], int, dict[str, str]]:
    """The Claude event names to install, those whose handler gets ``onFailure: block``
    (they fail closed, ``_policy``, and Claude honours it there), the handlers'
    ``timeout`` (``_policy.settings_timeout``) and the Claude matchers to write.

    The events are those the definition binds, plus, for http hooks, the ones a
    long-lived server needs to keep its sessions right (they fail open when
    unbound: nothing there guards anything). Loading validates the whole file
    (every hook is imported) and fills the compiled-definition cache, so the
    first hook process is fast too. The one Claude matcher written is FileChanged's:
    Claude watches the files it names (:func:`watched_files`).
    """
    from ..definition.cache import load_definition
    from ..events import EVENT_NAMES
    from .failure_policy import fails_closed, on_failure_counts, settings_timeout

    definition = load_definition(config)
    events, closed = [], set()
    bound = [name for name in EVENT_NAMES if definition.hooks.get(name)]
    for name in EVENT_NAMES:
        if name not in bound and not (http and bound and name in _SERVE_BOOKKEEPING):
            continue
        wire = "Stop" if name == "AgentStop" else name
        events.append(wire)
        if name in bound and fails_closed(definition, name) and on_failure_counts(name):
            closed.add(wire)
    matchers = {}
    files = watched_files(definition)
    if files:
        matchers["FileChanged"] = "|".join(files)
    return events, closed, settings_timeout(definition), matchers


def watched_files(definition: AgentDefinition) -> list[str]:
    """The file names the definition's FileChanged matchers name: Claude watches only the
    files its FileChanged matchers list (``.envrc|.env``), so ``install`` writes them as
    the handler's matcher. A glob or a match-all matcher names none: the files to watch
    then come from a hook's ``watchPaths`` (SessionStart, CwdChanged, FileChanged)."""
    names: list[str] = []
    for m in definition.hooks.get("FileChanged") or ():
        source = m.matcher or ""
        if not source or m.pattern.match_all or m.pattern.negate or _GLOB.search(source):
            continue
        for name in source.split("|"):
            if name.strip() and name.strip() not in names:
                names.append(name.strip())
    return names


_GLOB = re.compile(r"[*?\[\]{}()!]|^re:")


def _hookrails_command(portable: bool) -> str:
    if portable:
        return "hookrails"
    script = os.path.join(
        os.path.dirname(sys.executable), "hookrails.exe" if os.name == "nt" else "hookrails"
    )
    if os.path.isfile(script):
        return shlex.quote(script)
    return f"{shlex.quote(sys.executable)} -m guardrails"


def _config_ref(config: str, scope: str, project_dir: str) -> str:
    path = os.path.abspath(config)
    if scope == "project":
        rel = os.path.relpath(path, project_dir)
        if rel != ".." and not rel.startswith(".." + os.sep) and not os.path.isabs(rel):
            return '"$CLAUDE_PROJECT_DIR"/' + shlex.quote(rel.replace(os.sep, "/"))
    return shlex.quote(path)


def _url(http: str) -> str:
    url = http.rstrip("/")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"--http needs an http:// or https:// URL, got {http!r}")
    return url if url.endswith(HOOK_ROUTE) else url + HOOK_ROUTE


def install(
    config: str,
    *,
    scope: str = "project",
    project_dir: str | None = None,
    http: str | None = None,
    token: bool = False,
    portable: bool = False,
    dry_run: bool = False,
) -> SettingsChange:
    """Put hookrails' handlers for the definition in ``config`` into the settings file.

    ``http``: a ``hookrails serve`` URL (the base or the whole ``/v1/claude/hook``);
    http handlers then replace command handlers, with ``token`` sending
    ``Authorization: Bearer $HOOKRAILS_TOKEN``.
    """
    project = os.path.abspath(project_dir or os.getcwd())
    path = settings_path(scope, project)
    events, closed, timeout, matchers = _wire_events(config, http is not None)
    wanted: dict[str, dict[str, Any]] = {}
    for event in events:
        if http is not None:
            handler: dict[str, Any] = {"type": "http", "url": _url(http), "timeout": timeout}
            if token:
                handler["headers"] = {"Authorization": f"Bearer ${TOKEN_ENV}"}
                handler["allowedEnvVars"] = [TOKEN_ENV]
        else:
            command = (
                f"{_hookrails_command(portable)} hook "
                f"--config {_config_ref(config, scope, project)} --event {event}"
            )
            handler = {"type": "command", "command": command, "timeout": timeout}
        if event in closed:
            handler["onFailure"] = "block"  # a hook that cannot answer refuses, never allows
        wanted[event] = handler
    before, data = _read(path)
    removed, added = _merge(data, wanted, matchers)
    after = _dump(data, path) if removed or added else (before or "")  # unchanged: not reformatted
    kind = "http" if http is not None else "command"
    change = SettingsChange(path, before, after, events, removed, added, dry_run, kind)
    if change.changed and not dry_run:
        _write(path, change.after)
    return change


def uninstall(
    *, scope: str = "project", project_dir: str | None = None, dry_run: bool = False
) -> SettingsChange:
    """Take every hookrails handler out of the settings file; nothing else changes."""
    path = settings_path(scope, project_dir)
    before, data = _read(path)
    removed, _ = _merge(data, {})
    after = _dump(data, path) if removed else (before or "")
    change = SettingsChange(path, before, after, [], removed, 0, dry_run)
    if removed and not dry_run:
        _write(path, change.after)
    return change


def _merge(
    data: dict[str, Any],
    wanted: dict[str, dict[str, Any]],
    matchers: dict[str, str] | None = None,
) -> tuple[int, int]:
    """Remove our handlers except one identical to ``wanted[event]`` in a group with the
    matcher ``matchers[event]`` (kept where it is), then append the missing ones. Groups,
    event lists and ``hooks`` emptied by us go; ones that were empty before stay.
    Returns (removed, added)."""
    matchers = matchers or {}
    hooks = data.get("hooks")
    kept: set[str] = set()
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
                    elif (
                        event not in kept
                        and handler == wanted.get(event)
                        and group.get("matcher") == matchers.get(event)
                    ):
                        left.append(handler)
                        kept.add(event)
                    else:
                        removed += 1
                if left:
                    group["hooks"] = left
                else:
                    groups.remove(group)
                    emptied += 1
            if emptied and not groups:
                del hooks[event]
        if removed and not hooks:
            del data["hooks"]
    missing = [e for e in wanted if e not in kept]
    if missing:
        hooks = data.setdefault("hooks", {})
        for event in missing:
            group = {"hooks": [wanted[event]]}
            if event in matchers:
                group = {"matcher": matchers[event], **group}
            hooks.setdefault(event, []).append(group)
    return removed, len(missing)


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
