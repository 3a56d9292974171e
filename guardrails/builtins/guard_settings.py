"""``protect_guard_settings``: a ConfigChange that would switch hookrails off is blocked.

Claude Code fires ConfigChange when a settings file changes during a session, and a
block keeps the change out of the session. An agent that can write files could
otherwise take its own guard away: delete hookrails' handlers from
``.claude/settings.json``, narrow their ``matcher``, add an ``if``, drop ``onFailure:
block``, point ``--config`` at another definition, or set ``disableAllHooks``.

Stateless (a command hook is a new process per event): the settings Claude reads for
the project (the user's ``settings.json``, the project's ``settings.json`` and
``settings.local.json``, and the changed file as it is now) must still hold, for
every event ``hookrails claude install`` writes a deciding handler for
(:func:`~guardrails.definition.install_plan.deciding_plans`), a hookrails handler
that hears at least the calls the install's does: for this definition, not
``async`` or ``--record-only`` or ``once``, its group's ``matcher`` the plan's or
every one, its ``if`` the plan's or none, ``onFailure: block`` where the install
writes it, and the plan's ``--covers`` tag. Whatever it cannot read or parse
counts as weakened (the reason names the file and what was wrong). A definition
without a file (built in Python) has no handlers to check: then only
``disableAllHooks`` is refused.
"""

from __future__ import annotations

import json
import os
import posixpath
import shlex

from ..definition.install_plan import (
    NARROWED_EVENTS,
    SETTINGS_GUARD,
    binds_settings_guard,
    coverage_tag,
    deciding_plans,
    is_ours,
)
from ..definition.undecided import settings_timeout
from ..results import HookResult

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..definition.install_plan import EventPlan
    from ..definition.model import AgentDefinition

__all__ = ["ProtectGuardSettings", "protect_guard_settings"]

#: settings keys that turn every hook (or every hook but the managed ones) off
_SWITCHES = ("disableAllHooks", "allowManagedHooksOnly")
#: the ``hookrails hook`` flag that makes its ConfigChange handler run this guard
FLAG = "--protect-settings"
_HINT = (
    "Settings that remove or narrow hookrails' hooks are not applied. If the change is "
    "intended, a human makes it and runs `hookrails claude install` again."
)


class ProtectGuardSettings:
    """Block a ConfigChange that removes or weakens hookrails' own Claude Code hooks.

    Bind it on ConfigChange (``hookrails claude install`` does so by default, with
    ``onFailure: block``). ``hint``: the advice after the reason.
    """

    hook_name = SETTINGS_GUARD

    def __init__(self, hint: str | None = None) -> None:
        if hint is not None and not isinstance(hint, str):
            raise TypeError(f"hint must be a string, got {type(hint).__name__}")
        self.hint = _HINT if hint is None else hint

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        try:
            records = getattr(ctx, "ledger", None) is not None
            problems = weakened(event, getattr(ctx, "definition", None), records=records)
        except Exception as exc:  # what it cannot judge counts against the change
            problems = [f"the settings could not be checked ({type(exc).__name__}: {exc})"]
        if not problems:
            return None
        return HookResult.block(
            "This settings change would switch hookrails' guard off or weaken it: "
            + "; ".join(problems)
            + ". "
            + self.hint
        )


protect_guard_settings = ProtectGuardSettings()


def weakened(event: Any, definition: AgentDefinition | None, *, records: bool = False) -> list[str]:
    """Why the settings as they are now (after ``event``'s change) weaken hookrails'
    hooks; empty when they do not. ``records``: this guard's own process records into a
    ledger, so the install keeps one and a handler with ``--no-ledger`` is weakened."""
    source = getattr(event, "source", None)
    if source == "skills":
        return []  # a skill changed, not a settings file
    changed = getattr(event, "file_path", None) or None
    project = _project(changed, event)
    files = _settings_files(project)
    if changed is not None:
        changed = os.path.abspath(changed)
        if changed not in files:
            files.append(changed)
    problems: list[str] = []
    handlers: list[tuple[str, Any, dict[str, Any], str]] = []
    unreadable: list[str] = []
    for path in files:
        data, problem = _read(path)
        if problem is not None:
            if path == changed:
                problems.append(f"cannot read the changed file {path} ({problem})")
            else:
                unreadable.append(f"{path} ({problem})")
            continue
        for key in _SWITCHES:
            if data.get(key) is True:
                problems.append(f"{path} sets {key}: true")
        handlers.extend(_handlers(data, path))
    config = getattr(definition, "source", None)
    if definition is None or not config:
        return problems
    # a definition that binds this guard on ConfigChange itself needs no flag to run it
    needs_flag = not binds_settings_guard(definition, own_only=True)
    # an http install (guard bound in the definition, run by `serve`) has only http handlers;
    # in a command install an http handler stands where a command one was written
    commands = _in_hook_process() or any(
        h[2].get("type") == "command" and is_ours(h[2]) for h in handlers
    )
    expected = _Expected(
        config, project, needs_flag, records, settings_timeout(definition), commands
    )
    for plan, closed in deciding_plans(definition, protect_settings=True):
        ours = [h for h in handlers if h[0] == plan.event and is_ours(h[2])]
        found = [_shortfall(plan, closed, m, h, path, expected) for _, m, h, path in ours]
        if any(f is None for f in found):
            continue
        if found:
            problems.append(f"{plan.event}: {found[0]}")
        else:
            problems.append(f"{plan.event}: no hookrails handler is left")
    if problems and unreadable:
        problems.append("could not read " + ", ".join(unreadable))
    return problems


def _project(changed: str | None, event: Any) -> str:
    """The project folder: the one whose ``.claude`` holds the changed file, else
    ``$CLAUDE_PROJECT_DIR``, else the event's ``cwd``."""
    if changed is not None:
        folder = posixpath.dirname(os.path.abspath(changed))
        if posixpath.basename(folder) == ".claude":
            parent = posixpath.dirname(folder)
            user = posixpath.dirname(_user_settings())
            if folder != user:
                return parent
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    return os.path.abspath(env or getattr(event, "cwd", None) or os.getcwd())


def _user_settings() -> str:
    folder = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    return os.path.join(os.path.abspath(folder), "settings.json")


def _settings_files(project: str) -> list[str]:
    claude = os.path.join(project, ".claude")
    return [
        _user_settings(),
        os.path.join(claude, "settings.json"),
        os.path.join(claude, "settings.local.json"),
    ]


def _read(path: str) -> tuple[dict[str, Any], str | None]:
    """The file's settings, or why they cannot be read; a missing file holds none."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, exc.strerror or str(exc)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {}, "not UTF-8 text"
    if not text.strip():
        return {}, None
    try:
        data = json.loads(text, parse_constant=_not_json)  # Claude refuses NaN, Infinity
    except (ValueError, RecursionError) as exc:
        return {}, f"not valid JSON: {exc}"
    if not isinstance(data, dict):
        return {}, "not a JSON object"
    hooks = data.get("hooks")
    if hooks is not None and not isinstance(hooks, dict):
        return {}, "its hooks are not an object of events"
    return data, None


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _handlers(data: dict[str, Any], path: str) -> list[tuple[str, Any, dict[str, Any], str]]:
    """(event, group matcher, handler, file) for every handler in the file."""
    out: list[tuple[str, Any, dict[str, Any], str]] = []
    for event, groups in (data.get("hooks") or {}).items():
        for group in groups if isinstance(groups, list) else ():
            if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
                continue
            for handler in group["hooks"]:
                if isinstance(handler, dict):
                    out.append((event, group.get("matcher"), handler, path))
    return out


class _Expected:
    """What every handler ``install`` writes for this definition shares."""

    __slots__ = ("commands", "config", "needs_flag", "project", "records", "timeout")

    def __init__(
        self,
        config: str,
        project: str,
        needs_flag: bool,
        records: bool,
        timeout: int,
        commands: bool,
    ) -> None:
        self.commands = commands
        self.config = config
        self.project = project
        self.needs_flag = needs_flag
        self.records = records
        self.timeout = timeout


def _in_hook_process() -> bool:
    """This process is a command hook (``hookrails hook``, or ``-m guardrails hook``)."""
    import sys

    return sys.argv[1:2] == ["hook"]


#: the ``hookrails hook`` options ``install`` writes: those that take a value, and flags
_VALUED = frozenset({"--config", "-c", "--event", "-e", "--covers"})
_FLAGS = frozenset({"--protect-settings", "--no-ledger"})


def _shortfall(
    plan: EventPlan,
    closed: bool,
    matcher: Any,
    handler: dict[str, Any],
    path: str,
    expected: _Expected,
) -> str | None:
    """Why ``handler`` (in a group with ``matcher``) hears fewer events, or decides less,
    than the one ``install`` writes for ``plan``; ``None`` when it is at least as strong.
    What install never writes (another program, another option, shell around the
    command, an http handler in its place) counts as weakened: it cannot be judged."""
    where = f"the hookrails handler in {path}"
    if handler.get("async") or handler.get("asyncRewake"):
        return f"{where} runs async, so it cannot refuse"
    if handler.get("once"):
        return f"{where} runs once only"
    if matcher not in (None, "", "*") and matcher != plan.matcher:
        wanted = "every one" if plan.matcher is None else repr(plan.matcher)
        return f"{where} has matcher {matcher!r}, not {wanted}"
    condition = handler.get("if")
    if condition is not None and condition != plan.condition:
        return f"{where} has if {condition!r}, which lets fewer calls reach it"
    if closed and handler.get("onFailure") != "block":
        return f"{where} lost onFailure: block (a hook that cannot run would let it through)"
    timeout = handler.get("timeout", expected.timeout)
    if type(timeout) not in (int, float) or timeout < expected.timeout:
        return f"{where} has timeout {timeout!r}, shorter than install's {expected.timeout} s"
    if handler.get("type") == "http":
        if not expected.commands:
            return None  # an http install: the server holds the definition
        return f"{where} is an http handler where install wrote a command: its server decides"
    command = _command(handler)
    if command is None:
        return f"{where} has a command that cannot be read"
    program, args = command
    if not _our_program(program):
        return f"{where} runs {' '.join(program)!r}, not this installation of hookrails"
    problem = _unexpected(args)
    if problem is not None:
        return f"{where} {problem}"
    if "--no-ledger" in args and expected.records:
        return f"{where} records nothing (--no-ledger), though the install keeps a ledger"
    event = _value(args, "--event", "-e")
    if event is not None and event != plan.event:
        return f"{where} decides {event}, not {plan.event}"
    named = _value(args, "--config", "-c")
    if named is None or not _same_file(named, expected.config, expected.project):
        return f"{where} runs another definition ({named or 'none named'}), not {expected.config}"
    if plan.event in NARROWED_EVENTS and _value(args, "--covers") != coverage_tag(plan):
        return f"{where} was written for other matchers (--covers)"
    if plan.event == "ConfigChange" and expected.needs_flag and FLAG not in args:
        return f"{where} no longer runs {SETTINGS_GUARD} ({FLAG} is gone)"
    return None


def _command(handler: dict[str, Any]) -> tuple[list[str], list[str]] | None:
    """(the program's words, the ``hook`` arguments) of a command handler, exec or shell
    form; ``None`` when it cannot be read."""
    command = handler.get("command")
    if not isinstance(command, str):
        return None
    args = handler.get("args")
    if isinstance(args, list):
        if not all(isinstance(a, str) for a in args) or args[:1] != ["hook"]:
            return None
        return [command], args[1:]
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if "hook" not in words:
        return None
    at = words.index("hook")
    return words[:at], words[at + 1 :]


def _our_program(program: list[str]) -> bool:
    """The program is this installation of hookrails: its script (next to this Python,
    the one running now, or ``hookrails`` on the PATH resolving to one of those), or this
    Python with ``-m guardrails``. Another file named ``hookrails`` is not."""
    import shutil
    import sys

    def real(path: str | None) -> str | None:
        return os.path.realpath(os.path.expanduser(path)) if path else None

    here = os.path.dirname(sys.executable)
    scripts = {real(os.path.join(here, name)) for name in ("hookrails", "hookrails.exe")}
    if posixpath.basename(sys.argv[0]).startswith("hookrails"):
        scripts.add(real(sys.argv[0]))
    if len(program) == 1:
        name = program[0]
        found = name if "/" in name or os.sep in name else shutil.which(name)
        return found is not None and real(found) in scripts
    return program[1:] == ["-m", "guardrails"] and real(program[0]) == real(sys.executable)


def _unexpected(args: list[str]) -> str | None:
    """What in ``args`` install never writes (another option, shell syntax), as the end
    of a sentence; ``None`` when there is nothing."""
    i = 0
    while i < len(args):
        name, eq, _ = args[i].partition("=")
        if name in _VALUED:
            i += 1 if eq else 2
            if i > len(args):
                return f"has {name} without a value"
        elif args[i] in _FLAGS:
            i += 1
        else:
            return f"runs with {args[i]!r}, which install does not write"
    return None


def _value(args: list[str], *names: str) -> str | None:
    for i, arg in enumerate(args):
        name, eq, value = arg.partition("=")
        if name in names:
            return value if eq else (args[i + 1] if i + 1 < len(args) else "")
    return None


def _same_file(named: str, config: str, project: str) -> bool:
    for var in ("${CLAUDE_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR"):
        named = named.replace(var, project)
    if not os.path.isabs(named):
        named = os.path.join(project, named)
    return os.path.realpath(named) == os.path.realpath(config)
