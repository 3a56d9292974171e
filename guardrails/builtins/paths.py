"""ProtectPaths: keep the agent from changing secrets and repository internals.

Covers the file-editing tools (``Write``, ``Edit``, ``MultiEdit`` by
``file_path``, ``NotebookEdit`` by ``notebook_path``), declared tools whose
primary argument is a path and that declare side effects, and shell commands:
every path a parsed command changes (redirections, ``tee``, ``cp``/``mv``/``ln``/
``install`` destinations and ``mv`` sources, ``rm``/``touch``/``mkdir``/``truncate``
operands, ``sed -i`` files and ``sed``'s ``w`` files, editors' files, ``dd of=``,
``curl -o``, ``git config --file``, archive members, ``find -delete`` matches,
files inline interpreter code writes ...), resolved against the directory the
line's own ``cd`` moved to, through links the line itself makes. Reading is
allowed: keeping secrets out of the model's context is a different hook's job
(``redact_secrets``), and keeping them on the machine is ``deny_commands``'
(its exfiltration check). Permission changes (``chmod 600 id_rsa``) are allowed too.

Globs follow the matcher path rules, anchored at the **project root**
(``$CLAUDE_PROJECT_DIR``, else the definition file's folder, else the nearest
folder with a ``.git`` above the event's ``cwd``): a relative glob is relative
to the root, an absolute one (or ``~/...``) is used as is; ``**`` crosses
directories; ``dir/**`` also covers ``dir`` itself. A glob starting with ``!``
un-protects what earlier globs protect (the last matching glob wins). Paths
are checked as written and with symlinks resolved. What the guard cannot see
(a target computed at run time, an archive's unknown members, a command whose
name or code is computed) is the worst case: the ``opaque`` option decides.
"""

from __future__ import annotations

import copy
import fnmatch
import os
import posixpath
import re
import string
from collections.abc import Iterator, Sequence
from typing import Any, Final

from ..definition.matchers import BUILTIN_PRIMARY_ARGS
from ..results import HookResult
from .path_scan import CAP, GLOB_MAX, UNREAD, Budget, PathRules, Roots, glob_matches, resolved
from .shell.classify import Command, Intent, classify, command_of
from .shell.expand import any_case
from .shell.project import check_opaque, git_top, project_root
from .shell.records import show
from .shell.secrets import SECRET_PATHS
from .shell.values import HOLE_RE, Hole, Opaque, fill_holes, hole_index

__all__ = ["DEFAULT_PROTECTED_PATHS", "ProtectPaths", "protect_paths"]

#: secrets (env files, keys) anywhere in the project (the list ``deny_commands``' exfiltration
#: check shares), and the repository's own database
#: Claude Code's project settings hold hookrails' own hooks: a tool that rewrites them could
#: switch the guard off for the next session (``protect_guard_settings`` holds the running one)
DEFAULT_PROTECTED_PATHS: Final = (*SECRET_PATHS, ".git/**", ".claude/settings*.json")

_READ_TOOLS: Final = frozenset(
    {"Read", "Glob", "Grep", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite"}
)
_SHELL_TOOLS: Final = frozenset({"Bash", "bash", "Shell", "shell"})
_FIELDS: Final = frozenset({"path", "glob", "tool"})
_CHANGES_DIRS: Final = frozenset({"delete", "move"})
_WORD_RE: Final = re.compile(r"[^\s'\"=,;:()<>|&`]+")
_DEFAULT_HINT: Final = (
    "Protected paths hold secrets or the repository's internals. Leave this file unchanged "
    "and carry on without it; if it really must change, ask the user to make the change."
)
_TARGET_HINT: Final = (
    "Name the file plainly in the command (no variable, substitution or unknown `cd` in "
    "front of it), so the guard can see which file it changes."
)


_HELD_HINT: Final = (
    "Delete or move a smaller folder, whose entries the guard can look through, or ask the "
    "user to remove this one."
)


def _guard_files(source: str | None) -> tuple[str, ...]:
    """Globs of the files that hold the guard: the definition file ``source`` and Claude
    Code's user settings (``$CLAUDE_CONFIG_DIR``, else ``~/.claude``)."""
    folder = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(os.path.expanduser("~"), ".claude")
    found = [_literal(os.path.abspath(folder)) + "/settings*.json"]
    if source:
        found.append(_literal(os.path.realpath(source)))
    return tuple(found)


def _literal(path: str) -> str:
    """``path`` as a glob that matches only itself."""
    return _GLOB_SPECIAL.sub(r"\\\g<0>", path)


_GLOB_SPECIAL: Final = re.compile(r"[*?\[\]{}()!|@+\\]")
_GLOB_CHARS: Final = re.compile(r"[*?\[]")


class _Line(Budget):
    """One command line's walk budget, and the walks it puts off until every cheaper look of
    the line is done."""

    __slots__ = ("waiting",)

    def __init__(self) -> None:
        super().__init__()
        self.waiting: list[tuple[list[str], Command, Sequence[Hole]]] = []


class _Hit:
    """One protected path a call reaches: definite (``glob``), or not seen (``opaque``)."""

    __slots__ = ("cmd", "glob", "holes", "opaque", "path")

    def __init__(
        self,
        path: str,
        glob: str,
        cmd: Command | None,
        holes: Sequence[Hole] = (),
        opaque: Opaque | None = None,
    ) -> None:
        self.path = path
        self.glob = glob
        self.cmd = cmd
        self.holes = holes
        self.opaque = opaque


class ProtectPaths:
    """Deny tool calls that would change a protected path.

    ``paths``: globs (default ``DEFAULT_PROTECTED_PATHS``: ``**/.env*`` except
    ``.env*.example``/``.sample``/``.template``/``.dist``, ``**/*.pem``, SSH
    private keys ``**/id_{rsa,dsa,ecdsa,ed25519}*``, ``.git/**`` and Claude Code's project
    settings ``.claude/settings*.json``, which hold hookrails' own hooks; and, the guard's
    own files, the definition file and Claude Code's user ``settings*.json``).
    ``message``: the deny reason, with optional ``{path}``, ``{glob}`` and
    ``{tool}`` fields; ``hint``: the advice that follows it. ``opaque``
    (``deny``, the default; ``ask``; ``allow``): the answer when the guard
    cannot see whether a command changes a protected path (a target computed at
    run time, a command whose name or code is computed, an archive's unknown
    members extracted where protected files are). A protected path named in
    such a command is still a plain hit.
    """

    hook_name = "protect_paths"
    #: its PreToolUse judgement holds on PermissionRequest and PreSkillShellCommand too
    judges_calls = True
    DEFAULT_PATHS = DEFAULT_PROTECTED_PATHS

    def __init__(
        self,
        paths: Sequence[str] | None = None,
        message: str | None = None,
        hint: str | None = None,
        opaque: str = "deny",
    ) -> None:
        if paths is None:
            paths = DEFAULT_PROTECTED_PATHS
        if isinstance(paths, str | bytes) or not isinstance(paths, list | tuple):
            raise TypeError(f"paths must be a list of globs, got {type(paths).__name__}")
        if not paths:
            raise ValueError("paths must name at least one glob")
        self.paths = tuple(paths)
        self._rules = PathRules(paths)
        #: with the default paths, the same guard protecting the definition file and Claude
        #: Code's user settings too, per (definition file, settings folder): see _for
        self._defaults = paths is DEFAULT_PROTECTED_PATHS
        self._views: dict[tuple[str | None, ...], ProtectPaths] = {}
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
        self.opaque = check_opaque(opaque)

    def protected_by(self, path: str, root: Roots, cwd: str | None = None) -> str | None:
        """The glob that protects ``path`` (absolute, or relative to ``cwd``, by default
        ``root``), relative globs anchored at ``root``; ``None`` if none does."""
        return self._rules.protected_by(path, root, cwd)

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        tool_input = getattr(event, "tool_input", None)
        if not isinstance(tool_input, dict):
            return None
        cwd = posixpath.normpath(os.path.abspath(event.cwd or os.getcwd()))
        project = project_root(event, ctx)
        root: tuple[str, ...] = (project,)
        if cwd != project and not cwd.startswith(project.rstrip("/") + "/"):
            root = (project, git_top(cwd))  # working outside the project: its own too
        tool = event.tool_name
        hidden: _Hit | None = None
        for hit in self._for(ctx)._hits(event, ctx, tool_input, cwd, root):
            if hit.opaque is None:
                return HookResult.deny(self._reason(hit, tool, cwd), hint=self.hint)
            hidden = hidden or hit
        if hidden is None or self.opaque == "allow":
            return None
        assert hidden.opaque is not None
        verb = "denied" if self.opaque == "deny" else "needs approval"
        what = _display(hidden.cmd, hidden.holes) if hidden.cmd is not None else "the command"
        reason = (
            f"Command {verb}: the guard cannot see whether {what} changes a protected path: "
            f"{hidden.opaque}."
        )
        hint = hidden.opaque.hint
        if self.opaque == "ask":
            return HookResult.ask(f"{reason}\n{hint}")
        return HookResult.deny(reason, hint=hint)

    def _for(self, ctx: Any) -> ProtectPaths:
        """This guard, and with the default paths the one that also protects the files
        that hold the guard itself: the definition file (the next event loads it again)
        and Claude Code's user settings (hookrails' handlers when installed there). Made
        once per pair of them."""
        if not self._defaults:
            return self
        source = getattr(getattr(ctx, "definition", None), "source", None)
        env = os.environ
        key = (source, env.get("CLAUDE_CONFIG_DIR"), env.get("HOME"), os.getcwd())
        view = self._views.get(key)  # the globs are worked out (paths resolved) once
        if view is None:
            view = copy.copy(self)
            view._rules = PathRules((*self.paths, *_guard_files(source)))
            view._defaults, view._views = False, {}
            if len(self._views) >= 64:
                self._views.clear()
            self._views[key] = view
        return view

    def _reason(self, hit: _Hit, tool: str, cwd: str) -> str:
        # a protected name under a directory the line computes: shown with its words
        shown = show(_shown(hit.path, cwd), tuple(hit.holes))
        if self.message is not None:
            return self.message.format(path=shown, glob=hit.glob, tool=tool)
        if hit.cmd is None:
            return f"{tool} on {shown} denied: it is a protected path (matches {hit.glob!r})."
        return (
            f"Command denied: {_display(hit.cmd, hit.holes)} changes {shown}, a protected path "
            f"(matches {hit.glob!r})."
        )

    def _hits(
        self, event: Any, ctx: Any, tool_input: dict[str, Any], cwd: str, root: Roots
    ) -> Iterator[_Hit]:
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
                path = posixpath.join(cwd, posixpath.expanduser(value))
                glob = self.protected_by(path, root)
                if glob is not None:
                    yield _Hit(path, glob, None)
            return
        shell = tool in _SHELL_TOOLS or (spec is not None and spec.primary_arg == "command")
        command = command_of(event, ctx) if shell else None
        if command is not None:
            yield from self._shell(classify(command), command, cwd, root)

    def _shell(self, intent: Intent, command: str, cwd: str, root: Roots) -> Iterator[_Hit]:
        holes = intent.holes
        budget = _Line()  # for what the folders this line deletes or moves hold
        for reason in intent.opaque:
            yield from self._named(_WORD_RE.findall(command), cwd, root, None, holes)
            yield _Hit("", "", None, holes, reason)
        for cmd in intent.commands:
            base = _base(cmd, cwd, holes, root)
            for target in cmd.targets:
                for hit in self._target(target, base, cmd, holes, root, budget, cwd):
                    yield self._framed(hit, cmd, holes, root)
            for source in cmd.sources:  # cp x dir: dir/x, when dir is a directory
                name = posixpath.basename(source.rstrip("/"))
                for target in cmd.targets:
                    full = posixpath.join(base or cwd, posixpath.expanduser(target))
                    if not HOLE_RE.search(full) and os.path.isdir(full):
                        yield from self._target(
                            posixpath.join(full, name), base, cmd, holes, root, budget, cwd
                        )
            if cmd.mentions:
                yield from self._named(cmd.mentions, base or cwd, root, cmd, holes)
            if cmd.opaque and not cmd.speculative:
                words = [w for a in cmd.argv for w in _WORD_RE.findall(a)]
                yield from self._named(words, base or cwd, root, cmd, holes)
                yield _Hit("", "", cmd, holes, cmd.opaque[0])
        for folders, walked, walked_holes in budget.waiting:  # once nothing cheaper is found
            for hit in self._walked(folders, walked, walked_holes, root, budget):
                yield self._framed(hit, walked, walked_holes, root)

    @staticmethod
    def _framed(hit: _Hit, cmd: Command, holes: Sequence[Hole], root: Roots) -> _Hit:
        """A plain hit of a command the guard only partly sees, as the opaque answer it is."""
        if cmd.speculative and hit.opaque is None:
            hit.opaque = Opaque(
                f"{_display(cmd, holes)} is spelled out in the arguments of a "
                "program this guard does not know, which may run it",
                _TARGET_HINT,
            )
        elif cmd.written and hit.opaque is None:  # built at run time, worked out
            shown = _display(cmd, holes, False)
            hit.opaque = Opaque(
                f"{computed_reason(cmd, shown)}, which changes {_shown(hit.path, _first(root))}",
                _TARGET_HINT,
            )
        return hit

    def _named(
        self,
        words: Sequence[str],
        cwd: str,
        root: Roots,
        cmd: Command | None,
        holes: Sequence[Hole],
    ) -> Iterator[_Hit]:
        """Protected paths named outright in code or an opaque command (still plain hits)."""
        for word in words:
            if not word or HOLE_RE.search(word) or word.startswith(("-", "$")) or "://" in word:
                continue
            path = posixpath.join(cwd, posixpath.expanduser(word))
            glob = self.protected_by(path, root)
            if glob is not None:
                yield _Hit(path, glob, cmd, holes)

    def _target(
        self,
        target: str,
        base: str | None,
        cmd: Command,
        holes: Sequence[Hole],
        root: Roots,
        budget: _Line,
        cwd: str,
    ) -> Iterator[_Hit]:
        """What changing ``target`` (as the command wrote it, running in ``base``; the line
        starts in ``cwd``) reaches."""
        target = fill_holes(target, holes, _first(root), fd="/dev/fd/63", cwd=cwd)
        if base is None and not target.startswith(("/", "~")):
            yield from self._unknown(target, None, cmd, holes, root, budget)
            return
        where = base or _first(root)
        if HOLE_RE.search(target) is None:
            paths = _expand(target, where, cmd.globs)
            if paths is None:
                yield _Hit(where, "", cmd, holes, _too_many(target))
                return
            for path in paths:
                full = posixpath.normpath(posixpath.join(where, path))
                glob = self.protected_by(full, root)
                if glob is not None:
                    yield _Hit(full, glob, cmd, holes)
                elif _CHANGES_DIRS & cmd.kinds:  # a folder deleted or moved, with what it holds
                    folders = _changed(where, path, full)
                    if where != cwd and not os.path.isdir(where):  # a `cd` there fails: here
                        folders.append(posixpath.normpath(posixpath.join(cwd, path)))
                    yield from self._held(folders, cmd, holes, root, budget)
            return
        yield from self._unknown(target, where, cmd, holes, root, budget)

    def _held(
        self, folders: list[str], cmd: Command, holes: Sequence[Hole], root: Roots, budget: _Line
    ) -> Iterator[_Hit]:
        """The first protected path one of ``folders`` (deleted or moved) holds, among the
        places the globs name outright; the walks of the folders wait for the line's end
        (``rm -rf /*`` finds the project's ``.git`` before walking ``/bin``)."""
        for folder in folders:
            found = self._rules.held(folder, root, budget, walk=False)
            if found is not None:
                yield self._found(found, folder, cmd, holes, root, budget)
                return
        budget.waiting.append((folders, cmd, holes))

    def _walked(
        self, folders: list[str], cmd: Command, holes: Sequence[Hole], root: Roots, budget: _Line
    ) -> Iterator[_Hit]:
        """The first protected path one of ``folders`` holds, by walking them."""
        for folder in folders:
            found = self._rules.held(folder, root, budget, look=False)
            if found is not None:
                yield self._found(found, folder, cmd, holes, root, budget)
                return

    @staticmethod
    def _found(
        found: tuple[str, str],
        folder: str,
        cmd: Command,
        holes: Sequence[Hole],
        root: Roots,
        budget: _Line,
    ) -> _Hit:
        """A hit of :meth:`PathRules.held`: the protected path, or (past the budget) the
        folder not seen."""
        if found[0] == UNREAD:
            where = _shown(found[1], _first(root))
            if posixpath.normpath(found[1]) != posixpath.normpath(folder):
                where += f", inside {_shown(folder, _first(root))},"
            why = f"{where} cannot be read, so what it holds is not known"
            return _Hit(folder, "", cmd, holes, Opaque(why, _HELD_HINT))
        if found[0] != CAP:
            return _Hit(found[1], found[0], cmd, holes)
        why = (
            f"{_shown(folder, _first(root))} holds more than {budget.limit:,} "
            "entries, too many to look through for protected paths"
        )
        return _Hit(folder, "", cmd, holes, Opaque(why, _HELD_HINT))

    def _listed(
        self,
        parent: str,
        where: str,
        listing: Hole,
        cmd: Command,
        holes: Sequence[Hole],
        root: Roots,
        budget: _Line,
    ) -> Iterator[_Hit]:
        """What the entries a listing names under ``parent`` reach."""
        names, hidden = listing.names, listing.hidden
        hit = self._rules.under(parent, names, hidden, root)
        # where the listing lists, not a folder its names are put in (`mv {} /tmp/`)
        base = listing.base
        lists_here = base is None or fnmatch.fnmatchcase(
            parent, posixpath.normpath(posixpath.join(where, base))
        )
        if hit is None and _CHANGES_DIRS & cmd.kinds and lists_here:
            folders = self._rules.named_folders(parent, names or ("*",), hidden, budget)
            if folders is not None and names and _named_as(parent, names):
                folders.append(parent)  # find lists its start too (`find * -name 'de*'`)
            if folders is not None:  # listed folders go whole, with what they hold
                yield from self._held(folders, cmd, holes, root, budget)
                return
            hit = (CAP, parent)
        if hit is not None and hit[0] != CAP:
            yield _Hit(hit[1], hit[0], cmd, holes)
        elif hit is not None:
            why = (
                f"the paths it changes under {_shown(parent, _first(root))} are not named, and "
                "there are too many there to look through"
            )
            yield _Hit(parent, "", cmd, holes, Opaque(why, _TARGET_HINT))

    def _unknown(
        self,
        target: str,
        where: str | None,
        cmd: Command,
        holes: Sequence[Hole],
        root: Roots,
        budget: _Line,
    ) -> Iterator[_Hit]:
        """A target with parts the guard cannot know (``where=None``: nor its directory)."""
        found = [
            holes[hole_index(c)] for c in HOLE_RE.findall(target) if hole_index(c) < len(holes)
        ]
        listing = [h for h in found if h.kind == "paths"]
        unknown = [h for h in found if h.kind != "paths"]
        path = posixpath.normpath(posixpath.join(where or "/", posixpath.expanduser(target)))
        top = _first(root)
        first = HOLE_RE.search(path)
        if where is not None and listing and not unknown and first is not None:
            parent = posixpath.dirname(path[: first.start()] + "x")
            folders = glob_matches(parent) if _GLOB_CHARS.search(parent) else [parent]
            if folders is None:
                yield _Hit(parent, "", cmd, holes, _too_many(parent))
                return
            for folder in folders:
                hits = list(self._listed(folder, where, listing[0], cmd, holes, root, budget))
                if hits:
                    yield from hits
                    return
            return
        if _CHANGES_DIRS & cmd.kinds and (where is None or _in_folders(target)):
            # a folder deleted or moved from a place not known: it could be any folder
            if where is None:
                what = "the directory it runs in (after a `cd` the guard cannot follow)"
            else:
                hole = unknown[0] if unknown else found[0]
                what = f"the value of `{hole.text}`" + (f" ({hole.why})" if hole.why else "")
            verb = "deletes" if "delete" in cmd.kinds else "moves"
            reason = Opaque(
                f"{what} is not known, so the folder it {verb} could be any, with protected "
                "paths inside",
                _TARGET_HINT,
            )
            yield _Hit(path, "", cmd, holes, reason)
            return
        name = posixpath.basename(path)
        if name and not HOLE_RE.search(name):  # a protected name in plain sight
            glob = self.protected_by(posixpath.join(top, name), root)
            if glob is not None:
                yield _Hit(path, glob, cmd, holes)
                return
        body = path.lstrip("/") if where is None else path
        pattern = re.compile(
            (".*/" if where is None else "")
            + "".join(".*" if HOLE_RE.fullmatch(c) else re.escape(c) for c in body)
        )
        near = posixpath.dirname(path[: first.start()] + "x") if first and where else ""
        fit = self._rules.could_be(pattern, root, near)
        if fit is None:
            return
        glob, sample = fit
        if unknown:
            what = f"the value of `{unknown[0].text}`" + (
                f" ({unknown[0].why})" if unknown[0].why else ""
            )
        else:
            what = "the directory it runs in (after a `cd` the guard cannot follow)"
        reason = Opaque(
            f"{what} is not known, and it could make it change {_shown(sample, top)}",
            _TARGET_HINT,
        )
        yield _Hit(sample, glob, cmd, holes, reason)


def _named_as(path: str, names: Sequence[str]) -> bool:
    name = posixpath.basename(path.rstrip("/"))
    return any(fnmatch.fnmatchcase(name, n) for n in names)


def _in_folders(target: str) -> bool:
    """Whether an unknown part of ``target`` is in its folders (``$X/name``, ``/$X/name``),
    not only in its last name: the folder it names could then be anywhere."""
    first = HOLE_RE.search(target)
    return first is not None and (first.start() == 0 or "/" in target[first.start() :])


def _base(cmd: Command, cwd: str, holes: Sequence[Hole], root: Roots) -> str | None:
    """The absolute directory ``cmd`` runs in, or ``None`` when the line moved somewhere
    the guard cannot follow."""
    if cmd.cwd is None:
        return None
    if not cmd.cwd:
        return cwd
    where = fill_holes(cmd.cwd, holes, _first(root), fd="/dev/fd/63", cwd=cwd)
    if HOLE_RE.search(where):
        return None
    return posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(where)))


def _changed(where: str, path: str, full: str) -> list[str]:
    """The folders deleting or moving ``path`` (relative to ``where``; ``full``, normalised)
    reaches: ``full``; where the kernel finds it, when ``..`` follows a link (``cfg/../x`` goes
    up from the link's target, not from ``cfg``'s folder); and what a link written with a
    trailing slash leads to (``rm -rf link/`` empties the folder it points at)."""
    raw = posixpath.join(where, path)
    head, name = posixpath.split(raw.rstrip("/") or "/")
    found = [full]
    if ".." in raw.split("/"):
        physical = (
            resolved(raw) if name in ("", ".", "..") else posixpath.join(resolved(head), name)
        )
        if physical not in found:
            found.append(physical)
    if raw.endswith(("/", "/.")) and os.path.islink(raw.rstrip("/.") or "/"):
        followed = resolved(raw)
        if followed not in found:
            found.append(followed)
    return found


def computed_reason(cmd: Command, shown: str) -> str:
    from .shell.deny import computed_reason as reason

    return str(reason(cmd, shown))


def _first(root: Roots) -> str:
    return root if isinstance(root, str) else root[0]


def _writes(spec: Any) -> bool:
    """Does a declared tool change things (``side_effects``, or MCP hints saying so)?"""
    if spec.side_effects:
        return True
    hints = spec.annotations or {}
    return hints.get("readOnlyHint") is False or hints.get("destructiveHint") is True


def _expand(target: str, base: str, globs: frozenset[str] = frozenset()) -> list[str] | None:
    """The path as written (``~`` expanded), plus what a glob in it matches now, as bash
    would under the line's glob options ``globs``: hidden names only for a pattern that
    starts with ``.`` unless ``dotglob``, in any case with ``nocaseglob``, ``**`` at any
    depth with ``globstar``. ``None`` when it matches more than the guard looks at."""
    path = posixpath.expanduser(target)
    found = [path]
    if _GLOB_CHARS.search(path):
        pattern = posixpath.join(base, any_case(path) if "nocaseglob" in globs else path)
        matched = glob_matches(pattern, "globstar" in globs, "dotglob" in globs)
        if matched is None:
            return None
        found += matched
    return found


def _too_many(pattern: str) -> Opaque:
    return Opaque(
        f"{pattern} matches more than {GLOB_MAX:,} paths, too many to look through",
        _TARGET_HINT,
    )


def _shown(path: str, cwd: str) -> str:
    """``path`` relative to ``cwd`` when it is under it, else absolute."""
    path = posixpath.normpath(path)
    cwd = posixpath.normpath(cwd)
    if path == cwd:
        return "."
    if path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _display(cmd: Command | None, holes: Sequence[Hole] = (), written: bool = True) -> str:
    import shlex

    from .shell.deny import written_as

    if cmd is None or not cmd.argv:
        text = "a redirection"
    else:
        text = show(shlex.join(cmd.argv), tuple(holes))
        text = repr(text if len(text) <= 120 else text[:117] + "...")
    return text + (written_as(cmd, text) if cmd is not None and written else "")


protect_paths = ProtectPaths()
