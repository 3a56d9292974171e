"""Hook objects: Python callables, Claude SDK callbacks, command and http hooks.

Every hook is called as ``hook(event, ctx)``; ``resolve_hook`` turns the
declarative forms (built-in name, ``module:function``, ``{use|command|http}``)
into a :class:`Hook` once, at load time.
"""

from __future__ import annotations

import json
import os
import re
import sys

from ..errors import DefinitionError, HookFailure, describe, one_line

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..events import Event
    from .model import AgentDefinition

__all__ = [
    "JUDGED_AS_TOOL_CALLS",
    "CommandHook",
    "Hook",
    "HttpHook",
    "claude_hook",
    "import_from_folder",
    "judged_events",
    "judges_calls",
    "resolve_hook",
]

_CO_COROUTINE = 0x0080
_HTTP_URL = r"https?://\S+"
_REF_KEYS = {
    "use": {"use", "with", "name", "timeout"},
    "command": {"command", "name", "timeout", "privileged"},
    "http": {"http", "name", "timeout", "privileged", "headers"},
}


def is_async_callable(fn: Any) -> bool:
    """True for ``async def`` functions and objects whose ``__call__`` is one.

    Checks the code flag directly: importing ``inspect`` or ``asyncio`` here
    would cost a hook process tens of milliseconds.
    """
    target = getattr(fn, "__func__", fn)
    code = getattr(target, "__code__", None)
    if code is None:
        call = type(fn).__dict__.get("__call__") or getattr(type(fn), "__call__", None)  # noqa: B004
        code = getattr(call, "__code__", None)
    return bool(code is not None and code.co_flags & _CO_COROUTINE)


def hook_name(fn: Any) -> str:
    """``module:qualname`` for user code; an explicit ``hook_name`` attribute wins."""
    explicit = getattr(fn, "hook_name", None)
    if isinstance(explicit, str) and explicit:
        return explicit
    name = getattr(fn, "__qualname__", None)
    if name is None or (name == type(fn).__qualname__ and not isinstance(fn, type)):
        name = getattr(fn, "name", None) or type(fn).__name__
    module = getattr(fn, "__module__", None) or getattr(type(fn), "__module__", "")
    if module and not module.startswith("guardrails") and module != "__main__":
        return f"{module}:{name}"
    return str(name)


#: events about a tool call that run another way than PreToolUse (Claude's permission
#: dialog; a skill's inline shell command): the PreToolUse hooks that judge a call by its
#: name and input (:func:`judges_calls`) judge it there too, after the event's own hooks
#: (docs/design.md §5), so no path lets through what PreToolUse would deny
JUDGED_AS_TOOL_CALLS = frozenset({"PermissionRequest", "PreSkillShellCommand"})


def judges_calls(fn: object) -> bool:
    """Whether a hook judges a tool call by its name and input alone, with no side
    effect (no claim, no count): its PreToolUse judgement then holds wherever the same
    call is asked about. Built-ins say so with ``judges_calls = True`` (``deny``, ``ask``,
    ``deny_commands``, ``protect_paths``, ``bash_side_effects``); a hook of your own may
    too."""
    return getattr(fn, "judges_calls", False) is True


def judged_events(definition: AgentDefinition) -> frozenset[str]:
    """The events of :data:`JUDGED_AS_TOOL_CALLS` that the definition's PreToolUse judges
    hear (every one, when a PreToolUse hook judges calls; none otherwise): a host
    registers them (``hookrails claude install`` writes a PreSkillShellCommand handler)
    even when the definition binds them no hook of their own."""
    for m in definition.hooks.get("PreToolUse") or ():
        if any(judges_calls(h.fn) for h in m.resolved):
            return JUDGED_AS_TOOL_CALLS
    return frozenset()


class Hook:
    """A resolved hook, with what the dispatcher needs to know settled up front."""

    __slots__ = ("config", "fn", "is_async", "kind", "name", "privileged", "timeout")

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        *,
        config: dict[str, Any] | None = None,
        privileged: bool = True,
        kind: str = "python",
        timeout: float | None = None,
    ) -> None:
        if not callable(fn):
            raise DefinitionError(f"hook {fn!r} is not callable", expected="a callable hook")
        self.fn = fn
        self.name = name or hook_name(fn)
        self.config = config or {}
        self.privileged = privileged
        self.kind = kind
        self.timeout = timeout
        self.is_async = is_async_callable(fn)

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, kind={self.kind!r})"


class _ClaudeHook:
    __slots__ = ("fn", "hook_name")

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.hook_name = hook_name(fn)

    def __call__(self, event: Event, ctx: Any) -> Any:
        return self.fn(event.to_claude(), getattr(event, "tool_use_id", None), {"signal": None})


class _AsyncClaudeHook(_ClaudeHook):
    __slots__ = ()

    async def __call__(self, event: Event, ctx: Any) -> Any:
        return await self.fn(
            event.to_claude(), getattr(event, "tool_use_id", None), {"signal": None}
        )


def claude_hook(fn: Callable[..., Any]) -> _ClaudeHook:
    """Run a claude-agent-sdk callback ``(input_data, tool_use_id, context) -> dict`` unchanged.

    The callback gets the Claude wire payload; its dict result is read with
    ``HookResult.from_claude``.
    """
    return _AsyncClaudeHook(fn) if is_async_callable(fn) else _ClaudeHook(fn)


def _claude_output(text: str, event: Event, source: str) -> Any:
    text = text.strip()
    if not text:
        return None
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise HookFailure("invalid", f"{source} printed invalid JSON: {exc}") from None
    return None  # plain text: Claude logs it; context injection needs a privileged hook


def _block_result(event: Event, reason: str) -> Any:
    """A command hook's exit 2, as Claude reads it on this event: a refusal where Claude
    lets a hook refuse, else its stderr shown to the user (PermissionRequest and the
    events Claude cannot block ignore exit 2)."""
    from .._event_table import PERMISSION_EVENTS, REFUSALS
    from ..results import HookResult

    name = event.event_name
    if name == "PermissionRequest" or name not in REFUSALS:
        return HookResult(system_message=reason)
    if name in PERMISSION_EVENTS:
        return HookResult.deny(reason)
    return HookResult.block(reason)


class CommandHook:
    """Claude Code's command protocol: event JSON on stdin, exit 2 blocks, JSON on stdout."""

    def __init__(self, command: str, *, base_dir: str | None = None) -> None:
        if not command.strip():
            raise DefinitionError("command hook has an empty command", expected="a shell command")
        self.command = command
        self.base_dir = base_dir
        self.hook_name = f"command:{command}"

    def __call__(self, event: Event, ctx: Any) -> Any:
        timeout = getattr(ctx, "timeout", None) or 600.0
        env = dict(os.environ)
        if event.cwd:
            env.setdefault("CLAUDE_PROJECT_DIR", event.cwd)
        cwd = self.base_dir if self.base_dir and os.path.isdir(self.base_dir) else None
        import subprocess  # lazy: ~4 ms that a hook process pays only when it runs one

        # its own process group, so a timeout kills the command's children too
        proc = subprocess.Popen(
            self.command,
            shell=True,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=cwd,
            env=env,
            start_new_session=os.name == "posix",
        )
        try:
            stdout, stderr = proc.communicate(json.dumps(event.to_claude()), timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            raise HookFailure("timeout", f"command did not finish within {timeout:g}s") from None
        if proc.returncode == 2:
            return _block_result(event, stderr.strip() or "blocked by command hook")
        if proc.returncode != 0:
            last = (stderr.strip().splitlines() or [""])[-1]
            raise HookFailure("error", f"command exited {proc.returncode}: {last}".rstrip(": "))
        return _claude_output(stdout, event, "command")


def _kill_group(proc: Any) -> None:
    import signal

    try:
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            proc.kill()
    except OSError:
        pass
    proc.communicate()


class HttpHook:
    """POST the event as JSON and read a Claude hook output from the response body."""

    def __init__(self, url: str, *, headers: dict[str, str] | None = None) -> None:
        if not re.fullmatch(_HTTP_URL, url):
            raise DefinitionError(
                f"http hook URL {url!r} is not http(s)", expected="an http:// or https:// URL"
            )
        self.url = url
        self.headers = headers or {}
        self.hook_name = f"http:{url}"

    def __call__(self, event: Event, ctx: Any) -> Any:
        import urllib.error
        import urllib.request

        timeout = getattr(ctx, "timeout", None) or 600.0
        headers = {"Content-Type": "application/json"}
        headers.update({k: os.path.expandvars(v) for k, v in self.headers.items()})
        req = urllib.request.Request(
            self.url, data=json.dumps(event.to_claude()).encode(), headers=headers, method="POST"
        )
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                body = resp.read().decode("utf-8", "replace")
        except urllib.error.HTTPError as exc:
            raise HookFailure("error", f"http hook answered {exc.code}") from None
        except TimeoutError:
            raise HookFailure("timeout", f"http hook did not answer within {timeout:g}s") from None
        except OSError as exc:
            raise HookFailure("error", f"http hook unreachable: {exc}") from None
        return _claude_output(body, event, "http hook")


def _describe(exc: BaseException) -> str:
    """An ImportError's message already says what is missing; others get their type."""
    if isinstance(exc, ImportError):
        return one_line(exc) or type(exc).__name__
    if isinstance(exc, SystemExit):
        return f"it raised SystemExit({exc.code!r})"
    return describe(exc)


def _import_absolute(module_name: str) -> Any:
    """``importlib.import_module(module_name)`` without importing ``importlib`` (and the
    ``warnings`` it loads: half a millisecond a hook process pays). ``__import__`` takes
    the same path for an absolute name; a relative one goes to ``importlib`` to fail."""
    if module_name.startswith("."):
        import importlib

        return importlib.import_module(module_name)
    __import__(module_name)
    return sys.modules[module_name]


def _import_from(folder: str, module_name: str) -> Any:
    """Import with ``folder`` first on ``sys.path`` (removed again afterwards)."""
    sys.path.insert(0, folder)
    try:
        return _import_absolute(module_name)
    finally:
        sys.path.remove(folder)


def _location(origin: str | None, search: Any) -> str | None:
    where = origin or next(iter(search or ()), None)
    return os.path.realpath(where) if isinstance(where, str) else None


def import_from_folder(module_name: str, base_dir: str | None) -> Any:
    """Import ``module_name``, preferring a module that sits in ``base_dir``.

    A module beside the definition wins over the rest of ``sys.path``, and over a
    same-named module already imported for another definition: two folders may
    each hold their own ``hooks.py``. In that case the module is imported fresh
    and the earlier one is left in ``sys.modules``.
    """
    if not base_dir:
        return _import_absolute(module_name)
    import importlib.machinery

    top = module_name.partition(".")[0]
    finder = sys.path_importer_cache.get(base_dir)
    if finder is not None and hasattr(finder, "invalidate_caches"):
        finder.invalidate_caches()  # the folder may have changed since it was listed
    spec = importlib.machinery.PathFinder.find_spec(top, [base_dir])
    if spec is None or not spec.has_location:  # not beside the file (or a namespace dir)
        return _import_absolute(module_name)
    cached = sys.modules.get(top)
    here = _location(spec.origin, None)
    if (
        cached is None
        or _location(getattr(cached, "__file__", None), getattr(cached, "__path__", None)) == here
    ):
        return _import_from(base_dir, module_name)

    def family() -> list[str]:
        return [k for k in sys.modules if k == top or k.startswith(top + ".")]

    saved = {k: sys.modules.pop(k) for k in family()}
    try:
        return _import_from(base_dir, module_name)
    finally:
        for k in family():
            del sys.modules[k]
        sys.modules.update(saved)


def _import_ref(ref: str, base_dir: str | None = None) -> Any:
    module_name, _, attr = ref.partition(":")
    if not module_name or not attr:
        raise DefinitionError(f"bad hook reference {ref!r}", expected="'package.module:function'")
    try:
        obj: Any = import_from_folder(module_name, base_dir)
    except (Exception, SystemExit) as exc:
        # a module that fails to import in any way is a bad reference; one that calls
        # sys.exit() on import too: it must not end `hookrails check` (exit 0, silent), a
        # hook process or a host
        why = _describe(exc)
        if isinstance(exc, SystemExit):
            why = f"importing {why}; a hook module must not exit"
        raise DefinitionError(
            f"cannot import module {module_name!r} for hook {ref!r}: {why}",
            expected="an importable 'package.module:function'",
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise DefinitionError(
                f"module {module_name!r} has no attribute {attr!r}",
                expected="an importable 'package.module:function'",
            ) from None
    return obj


def _target(name: str, base_dir: str | None = None) -> Any:
    if ":" in name:
        return _import_ref(name, base_dir)
    from .builtin_names import BUILTINS

    path = BUILTINS.get(name)
    if path is None:
        raise DefinitionError(
            f"unknown hook {name!r}",
            expected=f"a built-in ({', '.join(sorted(BUILTINS))}) or 'package.module:function'",
        )
    return _import_ref(path)  # never from base_dir: a folder there must not shadow guardrails


def _build(target: Any, params: dict[str, Any], ref: str) -> Hook:
    if isinstance(target, type):
        try:
            instance = target(**params)
        except (Exception, SystemExit) as exc:  # whatever the class objects to: bad config
            why = one_line(exc) if isinstance(exc, TypeError | ValueError) else _describe(exc)
            raise DefinitionError(
                f"cannot configure {ref!r}: {why}",
                loc=("with",) if params else (),
                expected="the parameters it accepts",
            ) from None
        return Hook(instance)
    if params and not callable(target):
        raise DefinitionError(f"{ref!r} is not callable", expected="a hook function or class")
    return Hook(target, config=params)


def _check_ref(ref: dict[str, Any], kind: str) -> None:
    unknown = sorted(set(ref) - _REF_KEYS[kind], key=str)
    if unknown:
        raise DefinitionError(
            f"unknown key {unknown[0]!r} in a {kind} hook",
            loc=(str(unknown[0]),),
            expected=", ".join(sorted(_REF_KEYS[kind])),
        )
    timeout = ref.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0
    ):
        raise DefinitionError(
            f"timeout must be a positive number, got {timeout!r}",
            loc=("timeout",),
            expected="seconds > 0",
        )
    value = ref[kind]
    if not isinstance(value, str) or not value.strip():
        raise DefinitionError(f"{kind!r} must be a non-empty string", loc=(kind,))
    name = ref.get("name")
    if name is not None and not isinstance(name, str):
        raise DefinitionError(f"name must be a string, got {name!r}", loc=("name",))
    if not isinstance(ref.get("privileged", False), bool):
        raise DefinitionError(
            f"privileged must be true or false, got {ref['privileged']!r}", loc=("privileged",)
        )
    headers = ref.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise DefinitionError(
            "headers must map header names to strings", loc=("headers",), expected="{name: value}"
        )


def resolve_hook(ref: Any, *, base_dir: str | None = None) -> Hook:
    """Turn any accepted hook form into a :class:`Hook`, or raise ``DefinitionError``.

    ``base_dir`` is the definition file's folder: ``module:function`` references
    import a module there first, and command hooks run there.
    """
    if isinstance(ref, Hook):
        return ref
    if isinstance(ref, str):
        return _build(_target(ref, base_dir), {}, ref)
    if isinstance(ref, dict):
        kinds = [k for k in _REF_KEYS if k in ref]
        if len(kinds) != 1:
            raise DefinitionError(
                "a hook mapping needs exactly one of 'use', 'command' or 'http'",
                expected="{use: name, with: {...}}, {command: '...'} or {http: 'url'}",
            )
        kind = kinds[0]
        _check_ref(ref, kind)
        value: str = ref[kind]
        timeout = ref.get("timeout")
        if kind == "use":
            params = ref.get("with") or {}
            if not isinstance(params, dict):
                raise DefinitionError("'with' must be a mapping", loc=("with",))
            hook = _build(_target(value, base_dir), params, value)
            hook.timeout = timeout
            if ref.get("name"):
                hook.name = ref["name"]
            return hook
        try:
            fn: Any = (
                CommandHook(value, base_dir=base_dir)
                if kind == "command"
                else HttpHook(value, headers=ref.get("headers"))
            )
        except DefinitionError as exc:
            raise exc.within(kind) from None
        return Hook(
            fn,
            ref.get("name") or fn.hook_name,
            privileged=ref.get("privileged", False),
            kind=kind,
            timeout=timeout,
        )
    if callable(ref):
        return Hook(ref)
    raise DefinitionError(
        f"cannot use {ref!r} as a hook",
        expected="a callable, a built-in name, 'module:function' or a use/command/http mapping",
    )
