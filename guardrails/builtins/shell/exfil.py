"""The exfiltration check of ``deny_commands``: a secret's content sent to another machine.

The analyzer records, per network client, the files whose content it sends
(``Command.sends``, built by ``leaks`` from the line's data flow). This module
says which of them are secrets: a path matching the ``secrets`` globs (relative
ones anchored at the project root, like ``protect_paths``), a folder sent with a
secret in it, a value the guard cannot know that could name one. The secret
globs of the project are one list, ``SECRET_PATHS``, shared with
``protect_paths``' defaults.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Any, Final

from ..path_scan import CAP, GLOB_MAX, PathRules, glob_matches
from .records import Command, Intent, Sent
from .secrets import DEFAULT_SECRETS, SECRET_PATHS
from .values import HOLE_RE, Hole, Opaque, fill_holes, hole_index

__all__ = ["DEFAULT_SECRETS", "HINT", "SECRET_PATHS", "Leak", "SecretCheck", "shown_path"]

HINT: Final = (
    "Secrets (env files, private keys, credentials, the environment) must not leave this "
    "machine: do not retry this or a variant of it. To call an API with a key from .env, "
    'load it into the environment (`set -a; . ./.env; set +a`) and pass the variable (`-H "'
    'Authorization: Bearer $API_KEY"`), so the file itself is never sent; to send a folder, '
    "leave its secrets out (`rsync --exclude '.env*'`, a `.gitignore`); if a secret must be "
    "sent, ask the user to do it."
)
_TARGET_HINT: Final = (
    "Name the file to send plainly in the command (no variable or substitution the guard "
    "cannot follow), so the guard can see that it is not a secret."
)
_CODE_HINT: Final = (
    "Send the data with curl or another client whose arguments the guard can read, "
    "instead of inline code that reads a secret and talks to the network."
)


class Leak:
    """A secret a command sends: seen (``opaque`` is ``None``) or possibly (``opaque``)."""

    __slots__ = ("cmd", "glob", "opaque", "path")

    def __init__(self, cmd: Command, path: str, glob: str, opaque: Opaque | None = None) -> None:
        self.cmd = cmd
        self.path = path
        self.glob = glob
        self.opaque = opaque


class SecretCheck:
    """The ``secrets`` globs, compiled once, and the check of a line against them."""

    __slots__ = ("rules",)

    def __init__(self, globs: Sequence[str]) -> None:
        self.rules = PathRules(globs)

    def find(
        self, intent: Intent, cwd: str, roots: tuple[str, ...], shown: Any
    ) -> tuple[Leak | None, Leak | None]:
        """``(a secret plainly sent, else None; the first one possibly sent)``.

        ``shown(cmd, written)`` displays a command for a reason.
        """
        holes = intent.holes
        hidden: Leak | None = None
        # a line that writes git's ignore files: what they say now is not what git will read
        ignores = not any(
            posixpath.basename(t) in (".gitignore", "exclude")
            for c in intent.commands
            for t in c.targets
        )
        for cmd in intent.commands:
            for sent in cmd.sends:
                leak = self._check(sent, cmd, cwd, holes, roots, ignores)
                if leak is None:
                    continue
                if leak.opaque is None:
                    leak.opaque = self._hidden(sent, cmd, leak, roots[0], shown, intent)
                    if leak.opaque is None:
                        return leak, hidden
                hidden = hidden or leak
        return None, hidden

    def _hidden(
        self, sent: Sent, cmd: Command, leak: Leak, root: str, shown: Any, intent: Intent
    ) -> Opaque | None:
        """Why a secret the guard found sent is not plainly seen, or ``None``."""
        from .deny import _speculation, computed_reason

        what = f"{shown_path(leak.path, root)}, a secret (matches {leak.glob!r})"
        if sent.how == "code":
            program = cmd.program or "the program"
            return Opaque(
                f"{program} code that talks to the network reads {what}; the guard does not "
                f"follow what {program} code sends",
                _CODE_HINT,
            )
        if cmd.speculative:  # spelled out in an unknown program's arguments
            return _speculation(intent, cmd, shown(cmd, False))
        if cmd.written and cmd.program not in cmd.written:  # the sender itself is computed
            reason = computed_reason(cmd, shown(cmd, False))
            return Opaque(f"{reason}, which sends {what}", _TARGET_HINT)
        if sent.computed:
            return Opaque(
                f"{shown(cmd, False)} sends {what}, which {sent.computed} names only at run time",
                _TARGET_HINT,
            )
        return None

    def _check(
        self,
        sent: Sent,
        cmd: Command,
        cwd: str,
        holes: tuple[Hole, ...],
        roots: tuple[str, ...],
        ignores: bool = True,
    ) -> Leak | None:
        path = fill_holes(sent.path, holes, roots[0])
        if HOLE_RE.search(path) is not None:
            return self._unknown(path, sent, cmd, cwd, holes, roots)
        full = posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(path)))
        candidates = [full]
        if any(c in full for c in "*?["):
            matched = glob_matches(full)
            if matched is None:  # not all seen: as if one of the rest were a secret
                why = f"{cmd.program} sends what {path} matches, more than {GLOB_MAX:,} paths"
                return Leak(cmd, full, "", Opaque(why, _TARGET_HINT))
            candidates.extend(matched)
        if cmd.cwd is None and not path.startswith(("/", "~")):  # a directory not followed
            candidates.append(posixpath.join(roots[0], posixpath.basename(path)))
        for candidate in candidates:
            glob = self.rules.protected_by(candidate, roots)
            if glob is not None:
                return Leak(cmd, candidate, glob)
        for candidate in candidates:
            if os.path.isdir(candidate) and not os.path.islink(candidate):
                skip: tuple[str, ...] = sent.excludes
                keep: tuple[str, ...] = ()
                if sent.how == "git":  # git adds neither its own folder nor what it ignores
                    skip, keep = _ignored(candidate, roots[0]) if ignores else ((), ())
                    skip = (".git", *skip)
                found = self.rules.inside(candidate, roots, _skipping(skip, keep))
                if found is None:
                    continue
                if found[0] == CAP:
                    reason = Opaque(
                        f"{cmd.program} sends {shown_path(candidate, roots[0])} with what it "
                        "holds, too many entries for the guard to look for secrets in",
                        _TARGET_HINT,
                    )
                    return Leak(cmd, candidate, "", reason)
                return Leak(cmd, found[1], found[0])
        return None

    def _unknown(
        self,
        path: str,
        sent: Sent,
        cmd: Command,
        cwd: str,
        holes: tuple[Hole, ...],
        roots: tuple[str, ...],
    ) -> Leak | None:
        """A sent file with parts the guard cannot know: a listing it can look under, or
        a value that could name a secret."""
        found = [holes[hole_index(c)] for c in HOLE_RE.findall(path) if hole_index(c) < len(holes)]
        full = posixpath.normpath(posixpath.join(cwd, posixpath.expanduser(path)))
        first = HOLE_RE.search(full)
        assert first is not None
        parent = posixpath.dirname(full[: first.start()] + "x")
        listing = [h for h in found if h.kind == "paths"]
        unknown = [h for h in found if h.kind != "paths" and h.kind != "token"]
        if listing and not unknown:
            hit = self.rules.under(parent, listing[0].names, listing[0].hidden, roots)
            if hit is None:
                return None
            if hit[0] != CAP:
                return Leak(cmd, hit[1], hit[0])
            reason = Opaque(
                f"{cmd.program} sends paths under {shown_path(parent, roots[0])} it does not "
                "name, too many for the guard to look for secrets among",
                _TARGET_HINT,
            )
            return Leak(cmd, parent, "", reason)
        if not unknown:
            return None
        name = posixpath.basename(full)
        if name and HOLE_RE.search(name) is None:  # a secret's name in plain sight
            glob = self.rules.protected_by(posixpath.join(roots[0], name), roots)
            if glob is not None:
                return Leak(cmd, full, glob)
        pattern = re.compile("".join(".*" if HOLE_RE.fullmatch(c) else re.escape(c) for c in full))
        fit = self.rules.could_be(pattern, roots, parent)
        if fit is None:
            return None
        from . import opaque as why

        glob, sample = fit
        reason = Opaque(
            f"what {cmd.program} sends, {why.spell(unknown[0])}, is not known; it could be "
            f"{shown_path(sample, roots[0])}, a secret (matches {glob!r})",
            _TARGET_HINT,
        )
        return Leak(cmd, sample, glob, reason)


def _ignored(where: str, root: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The names git ignores under ``where`` and those it brings back (``!name``): the
    patterns of the ignore files there and at the root without a ``/`` inside (a pattern
    with one is left out: the check then ignores less than git)."""
    ignored: list[str] = []
    kept: list[str] = []
    files = {
        posixpath.join(root, ".gitignore"),
        posixpath.join(where, ".gitignore"),
        posixpath.join(root, ".git", "info", "exclude"),
    }
    for name in sorted(files):
        try:
            with open(name, encoding="utf-8", errors="replace") as f:
                lines = f.read(65536).splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            back = line.startswith("!")
            pattern = line.lstrip("!").removeprefix("**/").strip("/")
            if back:
                kept.append(pattern.rpartition("/")[2] or "*")  # brought back: not ignored
            elif pattern and "/" not in pattern:
                ignored.append(pattern)
    return tuple(ignored), tuple(kept)


def _skipping(skip: Sequence[str], keep: Sequence[str]) -> Callable[[str], bool] | None:
    """Leave out a name matching ``skip`` unless it matches ``keep``."""
    if not skip:
        return None
    return lambda name: (
        any(fnmatch.fnmatch(name, g) for g in skip)
        and not any(fnmatch.fnmatch(name, g) for g in keep)
    )


def shown_path(path: str, root: str) -> str:
    """``path`` relative to the project root when it is under it, else absolute."""
    path = posixpath.normpath(path)
    if path.startswith(root.rstrip("/") + "/"):
        return path[len(root.rstrip("/")) + 1 :]
    home = posixpath.expanduser("~")
    if home not in ("", "/", "~") and path.startswith(home.rstrip("/") + "/"):
        return "~" + path[len(home.rstrip("/")) :]
    return path
