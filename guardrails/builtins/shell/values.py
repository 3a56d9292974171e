"""What a word may hold at run time: literal text with *holes* where it cannot be known.

An expanded word is a plain string in which each part the analyzer could not
resolve is one private-use character (``U+E000`` + index) standing for a
``Hole`` in the line's table. Strings stay strings, so paths can be joined,
normalised and split as usual, and a guard asks each hole what it may be:

* ``any``: anything at all (an unknown variable, the output of an unknown or
  obfuscating command, a download). ``fetch`` names the download it carries.
* ``env``: a variable the line does not set (the guard reads its environment).
* ``token``: one harmless word (a number, a date, a user name: no ``/``).
* ``paths``: existing paths below the directory written before it (the output of
  ``find``/``ls``/``grep -l``, an archive's members), optionally only those whose
  names match ``names``.
* ``root``: the project's root (``$(git rev-parse --show-toplevel)``).
* ``fd``: a process substitution (``<(cmd)``): a file whose content is ``out``.

``Output`` is what a command prints: known text, a download, text decoded or
computed at run time, the output of a local program, or one of the kinds above.
It also says which files' content it carries (``reads``), so a guard can tell
when a secret's content reaches a network client (``leaks``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "HOLE_RE",
    "Hole",
    "Opaque",
    "Output",
    "Read",
    "fill_holes",
    "has_hole",
    "hole_index",
    "worst",
]

_BASE: Final = 0xE000
_LIMIT: Final = 0x1800  # private-use characters available (U+E000..U+F7FF)
HOLE_RE: Final = re.compile("[\ue000-\uf7ff]")


#: a file whose content an output carries: (its path, joined to the directory the line
#: moved to; ``""`` when the line names it literally, else what names it at run time:
#: the command as written, ``python3 code``...)
Read = tuple[str, str]


def hole_index(ch: str) -> int:
    return ord(ch) - _BASE


def has_hole(text: str) -> bool:
    return HOLE_RE.search(text) is not None


class Output:
    """What a command writes to its standard output (or a file holds).

    ``kind``: ``lit`` (``text``, which may hold holes), ``fetch`` (downloaded by
    command ``fetch``), ``obf`` (decoded or computed at run time), ``local`` (a
    local program's output or a file's content), ``any``, ``token``, ``temp``
    (a new temporary path: ``text`` is its directory), ``paths`` (``text`` is the
    directory), ``root``. ``why`` says, for messages, where it comes from.
    ``reads``: the files whose content it carries (``cat .env``, ``base64 .env``,
    ``tar -c .env``; text with holes carries what its holes' outputs carry).
    """

    __slots__ = (
        "computed",
        "fetch",
        "hidden",
        "kind",
        "names",
        "reads",
        "self_too",
        "text",
        "why",
    )

    def __init__(
        self,
        kind: str,
        text: str = "",
        why: str = "",
        fetch: int | None = None,
        names: tuple[str, ...] | None = None,
        hidden: str = "all",
        self_too: bool = False,
        computed: bool = False,
        reads: tuple[Read, ...] = (),
    ) -> None:
        self.kind = kind
        self.text = text
        self.why = why
        self.fetch = fetch
        self.names = names
        self.hidden = hidden
        self.self_too = self_too
        self.computed = computed  # text built at run time (formatted, decoded, substituted)
        self.reads = reads

    def marked(self) -> Output:
        """The same output, as text that reached its place through an expansion."""
        return Output(
            self.kind,
            self.text,
            self.why,
            self.fetch,
            self.names,
            self.hidden,
            self.self_too,
            True,
            self.reads,
        )

    def carrying(self, reads: tuple[Read, ...]) -> Output:
        """The same output, also carrying the content of ``reads``."""
        if not reads:
            return self
        merged = tuple(dict.fromkeys((*self.reads, *reads)))
        return Output(
            self.kind,
            self.text,
            self.why,
            self.fetch,
            self.names,
            self.hidden,
            self.self_too,
            self.computed,
            merged,
        )

    def __repr__(self) -> str:
        return f"Output({self.kind!r}, {self.text!r}, {self.why!r})"


#: how much each output kind hides, for combining several: the worst one wins
_RANK: Final = {
    "lit": 0,
    "token": 1,
    "temp": 1,
    "root": 1,
    "paths": 2,
    "local": 3,
    "any": 4,
    "obf": 5,
    "fetch": 6,
}


def worst(outs: list[Output]) -> Output:
    """Several outputs reaching one place: the one that hides the most (texts joined)."""
    if not outs:
        return Output("local", why="nothing known")
    top = max(outs, key=lambda o: _RANK.get(o.kind, 4))
    reads = tuple(r for o in outs for r in o.reads) if len(outs) > 1 else ()
    if top.kind != "lit":
        return top.carrying(reads)
    texts: list[str] = []
    for o in outs:
        if not texts or texts[-1] != o.text:  # a filter passing its input on repeats it
            texts.append(o.text)
    joined = "\n".join(texts)
    return Output("lit", joined, computed=any(o.computed for o in outs), reads=reads or top.reads)


class Hole:
    """One part of an expanded word that is not known before the command runs."""

    __slots__ = (
        "base", "cwd", "env", "fetch", "hidden", "kind", "names", "out", "split", "text", "why",
    )  # fmt: skip

    def __init__(
        self,
        kind: str,
        text: str,
        why: str = "",
        *,
        out: Output | None = None,
        env: str = "",
        names: tuple[str, ...] | None = None,
        hidden: str = "all",
        split: bool = False,
        base: str | None = None,
    ) -> None:
        self.kind = kind
        self.text = text  # as written: $X, $(cat f), <(curl x)
        self.why = why
        self.out = out
        self.fetch = out.fetch if out is not None and out.kind == "fetch" else None
        self.env = env
        self.names = names
        self.hidden = hidden
        self.split = split  # unquoted: word splitting may cut it into several words
        #: ``$PWD``: the folder the shell was in, relative to where the line starts (a guard
        #: that knows that folder may fill it in; to the rest it is any text)
        self.cwd: str | None = None
        #: a listing's folder (``paths``), as the command that listed it wrote it
        self.base = base

    @property
    def unknown(self) -> bool:
        """May it hold any text at all (so also shell syntax, a path, a program name)?"""
        return self.kind in ("any", "env", "fd")

    @property
    def hostile(self) -> bool:
        """Unknown text nobody on the machine chose: a variable, a download, decoded text
        (a local program's output is as trusted as the program)."""
        return self.unknown and (self.out is None or self.out.kind != "local")

    def __repr__(self) -> str:
        return f"Hole({self.kind!r}, {self.text!r})"


class Holes:
    """The holes of one line: a private-use character each."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: list[Hole] = []

    def add(self, hole: Hole) -> str:
        if len(self.table) >= _LIMIT:
            raise OverflowError("too many unknown parts")
        self.table.append(hole)
        return chr(_BASE + len(self.table) - 1)

    def of(self, text: str) -> list[Hole]:
        return [self.table[hole_index(c)] for c in HOLE_RE.findall(text)]


class Opaque(str):
    """A reason a command cannot be seen in full: the text names the hidden part;
    ``hint`` says how to write the command plainly."""

    hint: str

    def __new__(cls, text: str, hint: str) -> Opaque:
        self = super().__new__(cls, text)
        self.hint = hint
        return self


def fill_holes(
    text: str, holes: Sequence[Hole], root: str, fd: str | None = None, cwd: str | None = None
) -> str:
    """Fill what a guard can: environment variables it has, the project root, tokens,
    (``fd``) a file descriptor's path, and (``cwd``: the folder the line starts in) ``$PWD``
    where the line's ``cd``s were followed; any other hole stays, for the caller to count
    as unseen."""
    if HOLE_RE.search(text) is None:
        return text
    import os
    import posixpath

    def one(m: Any) -> str:
        k = hole_index(m.group())
        hole = holes[k] if k < len(holes) else None
        if hole is None:
            return str(m.group())
        if hole.kind == "env" and hole.env in os.environ:
            return os.environ[hole.env]
        if hole.kind == "root":
            return root
        if hole.kind == "token":
            return "x"
        if hole.kind == "fd" and fd is not None:
            return fd
        if hole.cwd is not None and cwd is not None and not text[: m.start()].strip("/"):
            # $PWD where it starts a path; after a `/` it stands for a part of one
            # (`../$(basename $PWD)`), which the guard does not work out
            return posixpath.normpath(posixpath.join(cwd, hole.cwd))
        return str(m.group())

    return HOLE_RE.sub(one, text)
