"""ProtectPaths: keep the agent from changing secrets and repository internals.

Covers the file-editing tools (``Write``, ``Edit``, ``MultiEdit`` by
``file_path``, ``NotebookEdit`` by ``notebook_path``), declared tools whose
primary argument is a path and that declare side effects, and shell commands:
every path a parsed command changes (redirections, ``tee``, ``cp``/``mv``/``ln``/
``install`` destinations and ``mv`` sources, ``rm``/``touch``/``mkdir``/``truncate``
operands, ``sed -i``/``perl -i`` files, ``dd of=``, ``curl -o`` ...), resolved
against the directory the line's own ``cd`` moved to. Reading is allowed:
keeping secrets out of the model's context is a different hook's job
(``redact_secrets``). Permission changes (``chmod 600 id_rsa``) are allowed too.

Globs follow the matcher path rules: a relative glob is anchored at the
event's ``cwd``, an absolute one (or ``~/...``) is used as is; ``**`` crosses
directories; ``dir/**`` also covers ``dir`` itself (so ``rm -rf .git`` is
caught). A glob starting with ``!`` un-protects what earlier globs protect
(the last matching glob wins, as in ``.gitignore``). ``..`` and symlinks are
resolved on both sides (``os.path.realpath`` of the path and of ``cwd``; a
path that does not exist yet resolves through its existing parent), and the
path is checked both as written and as resolved: a link named ``.env`` and a
link pointing at ``.env`` are both protected.
"""

from __future__ import annotations

import glob as _glob
import os
import posixpath
import string
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..definition.matchers import BUILTIN_PRIMARY_ARGS
from ..results import HookResult
from .shell.classify import Command, classify, command_of

__all__ = ["DEFAULT_PROTECTED_PATHS", "ProtectPaths", "protect_paths"]

#: secrets (env files, keys) anywhere in the project, and the repository's own database
DEFAULT_PROTECTED_PATHS: Final = (
    "**/.env*",
    "!**/.env*.{example,sample,template,dist}",
    "**/*.pem",
    "**/id_rsa*",
    "**/id_dsa*",
    "**/id_ecdsa*",
    "**/id_ed25519*",
    ".git/**",
)

_READ_TOOLS: Final = frozenset(
    {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite"}
)
_SHELL_TOOLS: Final = frozenset({"Bash", "bash", "Shell", "shell"})
_FIELDS: Final = frozenset({"path", "glob", "tool"})
_DEFAULT_HINT: Final = (
    "Protected paths hold secrets or the repository's internals. Leave this file unchanged "
    "and carry on without it; if it really must change, ask the user to make the change."
)


class _PathRule:
    __slots__ = ("negate", "rules", "source")

    def __init__(self, source: str) -> None:
        from ..definition.matchers import ArgRule
        from ..errors import DefinitionError

        self.source = source
        self.negate = source.startswith("!")
        body = source[1:] if self.negate else source
        if not body.strip():
            raise ValueError(f"empty glob {source!r}")
        globs = [body]
        if body.endswith("/**") and len(body) > 3:
            globs.append(body[:-3])  # the directory itself
        try:
            self.rules = [ArgRule(g) for g in globs]
        except DefinitionError as exc:
            raise ValueError(exc.message) from None

    def matches(self, path: str, cwd: str) -> bool:
        return any(r.matches(path, "path", cwd) for r in self.rules)


class ProtectPaths:
    """Deny tool calls that would change a protected path.

    ``paths``: globs (default ``DEFAULT_PROTECTED_PATHS``: ``**/.env*`` except
    ``.env*.example``/``.sample``/``.template``/``.dist``, ``**/*.pem``, SSH
    private keys ``**/id_{rsa,dsa,ecdsa,ed25519}*``, and ``.git/**``).
    ``message``: the deny reason, with optional ``{path}``, ``{glob}`` and
    ``{tool}`` fields; ``hint``: the advice that follows it.
    """

    hook_name = "protect_paths"
    DEFAULT_PATHS = DEFAULT_PROTECTED_PATHS

    def __init__(
        self,
        paths: Sequence[str] | None = None,
        message: str | None = None,
        hint: str | None = None,
    ) -> None:
        if paths is None:
            paths = DEFAULT_PROTECTED_PATHS
        if isinstance(paths, str | bytes) or not isinstance(paths, list | tuple):
            raise TypeError(f"paths must be a list of globs, got {type(paths).__name__}")
        if not paths:
            raise ValueError("paths must name at least one glob")
        self.paths = tuple(paths)
        self._rules: list[_PathRule] = []
        for i, glob in enumerate(paths):
            if not isinstance(glob, str):
                raise TypeError(f"paths[{i}] must be a string, got {type(glob).__name__}")
            try:
                self._rules.append(_PathRule(glob))
            except ValueError as exc:
                raise ValueError(f"paths[{i}]: {exc}") from None
        if message is not None:
            if not isinstance(message, str) or not message.strip():
                raise ValueError("message must be a non-empty string")
            fields = {f for _, f, _, _ in string.Formatter().parse(message) if f is not None}
            unknown = sorted(fields - _FIELDS)
            if unknown:
                raise ValueError(
                    f"message has unknown field {{{unknown[0]}}}; use {{path}}, {{glob}}, {{tool}}"
                )
        if hint is not None and not isinstance(hint, str):
            raise TypeError(f"hint must be a string, got {type(hint).__name__}")
        self.message = message
        self.hint = _DEFAULT_HINT if hint is None else hint

    def protected_by(self, path: str, cwd: str) -> str | None:
        """The glob that protects ``path`` (absolute, or relative to ``cwd``), or ``None``."""
        cwd = posixpath.normpath(os.path.abspath(cwd))
        lexical = posixpath.normpath(posixpath.join(cwd, path))
        real_cwd = os.path.realpath(cwd)
        for candidate, anchor in ((lexical, cwd), (os.path.realpath(lexical), real_cwd)):
            verdict: str | None = None
            for rule in self._rules:
                if rule.matches(candidate, anchor):
                    verdict = None if rule.negate else rule.source
            if verdict is not None:
                return verdict
        return None

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        tool_input = getattr(event, "tool_input", None)
        if not isinstance(tool_input, dict):
            return None
        cwd = event.cwd or os.getcwd()
        tool = event.tool_name
        for path, base, cmd in self._candidates(event, ctx, tool_input, cwd):
            # resolved against where the command runs, protected relative to the event cwd
            glob = self.protected_by(posixpath.join(base, path), cwd)
            if glob is None:
                continue
            shown = _shown(posixpath.join(base, path), cwd)
            if self.message is not None:
                reason = self.message.format(path=shown, glob=glob, tool=tool)
            elif cmd is None:
                reason = f"{tool} on {shown} denied: it is a protected path (matches {glob!r})."
            else:
                reason = (
                    f"Command denied: {_display(cmd)} changes {shown}, a protected path "
                    f"(matches {glob!r})."
                )
            return HookResult.deny(reason, hint=self.hint)
        return None

    def _candidates(
        self, event: Any, ctx: Any, tool_input: dict[str, Any], cwd: str
    ) -> Iterator[tuple[str, str, Command | None]]:
        """``(path as written, directory it is relative to, command or None)`` per changed path."""
        tool = event.tool_name
        if tool in _READ_TOOLS:
            return
        builtin = BUILTIN_PRIMARY_ARGS.get(tool)  # the matchers' table: Write -> file_path, ...
        key = builtin[0] if builtin is not None and builtin[1] == "path" else None
        definition = getattr(ctx, "definition", None)
        spec = (getattr(definition, "tools", None) or {}).get(tool)
        if key is None and spec is not None and spec.arg_kind == "path" and _writes(spec):
            key = spec.primary_arg
        if key is not None:
            value = tool_input.get(key)
            if isinstance(value, str) and value:
                yield posixpath.expanduser(value), cwd, None
            return
        shell = tool in _SHELL_TOOLS or (spec is not None and spec.primary_arg == "command")
        command = command_of(event, ctx) if shell else None
        if command is None:
            return
        for cmd in classify(command).commands:
            base = cwd if not cmd.cwd else posixpath.join(cwd, cmd.cwd)
            for target in cmd.targets:
                for path in _expand(target, base):
                    yield path, base, cmd
            for source in cmd.sources:  # cp x dir: dir/x, when dir is a directory
                name = posixpath.basename(source.rstrip("/"))
                for target in cmd.targets:
                    full = posixpath.join(base, posixpath.expanduser(target))
                    if os.path.isdir(full):
                        yield posixpath.join(full, name), base, cmd


def _writes(spec: Any) -> bool:
    """Does a declared tool change things (``side_effects``, or MCP hints saying so)?"""
    if spec.side_effects:
        return True
    hints = spec.annotations or {}
    return hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True


def _expand(target: str, base: str) -> list[str]:
    """The path as written (``~`` and ``$VAR`` expanded), plus what a glob in it matches now."""
    path = posixpath.expanduser(target)
    if "$" in path:
        path = os.path.expandvars(path)
    found = [path]
    if any(c in path for c in "*?["):
        found.extend(_glob.glob(posixpath.join(base, path), include_hidden=True)[:1000])
    return found


def _shown(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it is under it, else absolute."""
    path = posixpath.normpath(path)
    cwd = posixpath.normpath(cwd)
    if path == cwd:
        return "."
    if path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _display(cmd: Command) -> str:
    import shlex

    if not cmd.argv:
        return "a redirection"
    text = shlex.join(cmd.argv)
    return repr(text if len(text) <= 120 else text[:117] + "...")


protect_paths = ProtectPaths()
