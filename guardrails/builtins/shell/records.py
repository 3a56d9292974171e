"""The classifier's answer: ``Command`` (one simple command) and ``Intent`` (a line)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from .values import HOLE_RE, Hole, Opaque, hole_index

__all__ = ["KINDS", "Command", "Intent", "Sent", "show"]

#: every kind, most severe first (``Command.kind`` is the first of its kinds in this order)
KINDS: Final = (
    "delete",
    "move",
    "git_mutation",
    "network_mutation",
    "package_install",
    "process_control",
    "file_write",
    "unknown",
    "read_only",
)
RANK: Final = {k: i for i, k in enumerate(KINDS)}
_MAX_LISTED: Final = 100  # commands listed in ``Intent.as_dict``


def show(text: str, holes: tuple[Hole, ...]) -> str:
    """``text`` with each hole written as it was in the command (``$X``, ``$(cat f)``)."""
    if not holes or HOLE_RE.search(text) is None:
        return text

    def one(m: Any) -> str:
        k = hole_index(m.group())
        return holes[k].text if k < len(holes) else "…"

    return HOLE_RE.sub(one, text)


class Sent(NamedTuple):
    """Content a command sends to another machine (``Command.sends``).

    ``path``: the file whose content is sent (joined to the directory the line moved
    to; it may hold holes; a folder is sent with what it holds, but ``excludes``);
    ``how``: ``data`` (the guard sees the content go out: an upload, a pipe, a
    substitution in a URL), ``git`` (``git add`` staged it and a push sends it: a
    folder without what git ignores) or ``code`` (the file is named in inline
    interpreter code that also talks to the network: the guard does not follow data
    inside code);
    ``computed``: ``""`` when the line names the path literally, else what names it at
    run time (the command as written, ``python3 code``).
    """

    path: str
    how: str = "data"
    computed: str = ""
    excludes: tuple[str, ...] = ()


class Command(NamedTuple):
    """One simple command the line would run (a named tuple: one is made per command
    analysed, and a tuple is the cheapest immutable record to make).

    ``argv`` is what runs once env prefixes and wrappers (``sudo``, ``env``,
    ``xargs`` ...) are peeled off and its words expanded (braces, variables the
    line sets, known substitutions; a part that cannot be known is a hole, see
    ``values``); it is empty for a bare redirection (``> file``).
    ``redirects`` are the files output redirections write (``/dev/null`` and
    ``2>&1``-style duplications are not files). ``targets`` are the paths whose
    content or existence the command changes (redirects, ``tee`` files,
    ``cp``/``mv``/``ln`` destinations, ``rm`` and ``touch`` operands, ``sed -i``
    files ...); ``sources`` are the operands a ``cp``/``mv``/``ln``/``install``
    copies from. ``cwd`` is the directory it runs in after the line's own
    ``cd``: ``""`` for the starting directory, a relative or absolute path, or
    ``None`` when it cannot be known. ``pipeline`` numbers the pipeline it
    belongs to; ``inputs`` are the indexes (in ``Intent.commands``) of the
    commands whose output it reads or runs (earlier members of its pipeline, a
    ``<(...)``, a download it executes). ``opaque`` says why part of it cannot be
    seen; ``via`` is set on a command the analyzer derived (``find / -delete``
    also stands as ``rm -rf /``); ``speculative`` marks a command an unknown
    program's arguments spell out (it may or may not run); ``mentions`` holds
    the string literals of inline code that changes files; ``written`` is the
    command of the line it comes from, as written; ``sends`` is what it sends to
    another machine (``Sent``): the files whose content its input, its words or its
    uploads carry. ``globs`` are the glob options the line turned on before it that make a
    pattern match more (``dotglob``, ``nocaseglob``, ``globstar``).
    """

    argv: tuple[str, ...]
    redirects: tuple[str, ...] = ()
    kind: str = "unknown"
    kinds: frozenset[str] = frozenset({"unknown"})
    targets: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    cwd: str | None = ""
    pipeline: int = 0
    opaque: tuple[Opaque, ...] = ()
    inputs: tuple[int, ...] = ()
    via: str | None = None
    speculative: bool = False
    mentions: tuple[str, ...] = ()
    written: str = ""
    sends: tuple[Sent, ...] = ()
    globs: frozenset[str] = frozenset()

    @property
    def program(self) -> str:
        """The program's base name (``/bin/rm`` -> ``rm``), or ``""`` for a bare redirection."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    def as_dict(self, holes: tuple[Hole, ...] = ()) -> dict[str, Any]:
        out: dict[str, Any] = {"argv": [show(a, holes) for a in self.argv], "kind": self.kind}
        if len(self.kinds) > 1:
            out["kinds"] = sorted(self.kinds, key=RANK.__getitem__)
        if self.redirects:
            out["redirects"] = [show(r, holes) for r in self.redirects]
        if self.targets:
            out["targets"] = [show(t, holes) for t in self.targets]
        if self.cwd:
            out["cwd"] = show(self.cwd, holes)
        elif self.cwd is None:
            out["cwd"] = None
        if self.opaque:
            out["opaque"] = list(self.opaque)
        if self.via:
            out["via"] = self.via
        if self.speculative:
            out["speculative"] = True
        if self.sends:
            out["sends"] = [show(s.path, holes) for s in self.sends]
        return out


@dataclass(frozen=True, slots=True)
class Intent:
    """What a command line would do: the union of its commands' kinds.

    ``kinds`` holds ``read_only`` only when nothing else is in it. ``error``
    says why the line did not parse cleanly (``unknown`` is then in ``kinds``;
    the commands parsed up to the error are still listed). ``opaque`` gives the
    reasons the line as a whole cannot be seen (a parse error, nesting past the
    parser's limit); ``holes`` is the table the commands' hole characters index.
    """

    kinds: frozenset[str]
    commands: tuple[Command, ...] = ()
    error: str | None = None
    opaque: tuple[Opaque, ...] = ()
    holes: tuple[Hole, ...] = ()

    @property
    def side_effecting(self) -> bool:
        """True when any kind other than ``read_only`` is present (``unknown`` included)."""
        return bool(self.kinds - {"read_only"})

    @property
    def is_opaque(self) -> bool:
        """Can part of the line not be seen (anywhere, or in one of its commands)?"""
        return bool(self.opaque) or any(c.opaque for c in self.commands)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``bash_side_effects`` stores in the ledger)."""
        out: dict[str, Any] = {
            "kinds": sorted(self.kinds, key=RANK.__getitem__),
            "side_effecting": self.side_effecting,
            "commands": [c.as_dict(self.holes) for c in self.commands[:_MAX_LISTED]],
        }
        if len(self.commands) > _MAX_LISTED:
            out["commands_omitted"] = len(self.commands) - _MAX_LISTED
        if self.error:
            out["error"] = self.error
        if self.opaque:
            out["opaque"] = list(self.opaque)
        return out
