"""The records the red-team corpora are made of, and the rules every corpus obeys.

An :class:`Evasion` is one command a guard must stop. Its ``cls`` says what the
guards owe it:

* ``visible``: everything the command would run, and every path it would touch,
  can be read from the line itself by a reader who knows the standard Unix tools
  (quoting, wrappers, ``find -exec``, ``trap``, brace expansion, ``cd`` before a
  relative path, a literal script fed to a shell ...). It must be denied.
* ``opaque``: part of what runs is computed at run time or written in another
  language (a variable as the command name, ``eval`` of computed text, a
  substitution feeding an interpreter, ``python -c``, a glob as the command name,
  nesting past the analyser's limit). It must be denied as opaque: the deny reason
  names what could not be seen (one of ``unseen``, compared case-insensitively);
  with ``opaque: ask`` it is asked (or denied by a rule that sees it), never
  allowed.

Commands may hold two placeholders, replaced before a guard sees them:
``@ROOT@`` (the sandbox project, the event's ``cwd``) and ``@HOME@`` (the home
directory of the process that evaluates). ``cwd`` moves the event's working
directory below the project (``"sub"``): the project root is still ``@ROOT@``
(the Guard's ``cwd`` and ``CLAUDE_PROJECT_DIR``).

A ``protected_write`` case names its ``target`` (a path under the project) and is
executed in a throwaway sandbox (``tests/redteam/sandbox.py``) to prove the write
really happens; ``needs`` lists the programs that run needs.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from guardrails.builtins.shell.syntax import MAX_DEPTH

__all__ = [
    "CATEGORIES",
    "CLASSES",
    "NESTING_MARKS",
    "TOO_DEEP",
    "Benign",
    "Evasion",
    "benign",
    "check_corpus",
    "group",
    "nest_bash_c",
    "nest_eval",
    "nest_substitutions",
]

#: how a deny reason names nesting past the analyser's depth limit
NESTING_MARKS = ("nesting", "nested", "deep", "deeper", "depth", "level", "levels")
#: one more level than the analyser follows (``syntax.MAX_DEPTH``): the nesting cases go past it
TOO_DEEP = MAX_DEPTH + 1
#: what a red-team case tries to do
CATEGORIES = ("delete", "download_exec", "protected_write", "exfiltration")
#: what the guards owe it (see the module docstring)
CLASSES = ("visible", "opaque")
_ID_RE = re.compile(r"[a-z0-9][a-z0-9.-]*")


@dataclass(frozen=True, slots=True)
class Evasion:
    """One red-team command: what it does, how it hides, what a guard owes it."""

    id: str
    command: str
    category: str
    cls: str
    technique: str
    note: str
    unseen: tuple[str, ...] = ()
    target: str = ""
    cwd: str = ""
    needs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Benign:
    """One command a careful reviewer would let run, and where it was found."""

    command: str
    source: str
    cwd: str = ""


def group(
    category: str,
    cls: str,
    technique: str,
    note: str,
    commands: Iterable[str | tuple[str, str]],
    *,
    unseen: Sequence[str] = (),
    target: str = "",
    cwd: str = "",
    needs: Sequence[str] = (),
) -> list[Evasion]:
    """The variants of one technique, numbered ``<technique>-<n>`` from 1.

    A variant is a command, or ``(command, target)`` when the variants of a
    protected-path group write different files.
    """
    out: list[Evasion] = []
    for n, item in enumerate(commands, 1):
        command, aim = (item, target) if isinstance(item, str) else item
        out.append(
            Evasion(
                f"{technique}-{n}",
                command,
                category,
                cls,
                technique,
                note,
                tuple(unseen),
                aim,
                cwd,
                tuple(needs),
            )
        )
    return out


def benign(source: str, commands: Iterable[str], cwd: str = "") -> list[Benign]:
    """Benign commands from one source (a repository, or ``everyday``)."""
    return [Benign(c, source, cwd) for c in commands]


def nest_substitutions(depth: int, inner: str) -> str:
    """``echo $(echo $(... inner ...))``: ``inner`` inside ``depth`` levels of ``$(...)``."""
    text = inner
    for _ in range(depth):
        text = f"echo $({text})"
    return text


def nest_eval(depth: int, inner: str) -> str:
    """``eval eval ... inner``: each ``eval`` re-reads the words after it as a script."""
    return "eval " * depth + inner


def nest_bash_c(depth: int, inner: str) -> str:
    """``bash -c 'eval eval ... inner'``: one shell, then ``depth - 1`` evals."""
    return "bash -c " + shlex.quote(nest_eval(depth - 1, inner))


def check_corpus(cases: Sequence[Evasion]) -> None:
    """Raise ``ValueError`` on a malformed corpus: ids unique, fields in range."""
    seen: set[str] = set()
    for case in cases:
        where = f"{case.id!r}"
        if not _ID_RE.fullmatch(case.id) or case.id in seen:
            raise ValueError(f"{where}: ids are unique slugs")
        seen.add(case.id)
        if case.category not in CATEGORIES or case.cls not in CLASSES:
            raise ValueError(f"{where}: unknown category or class")
        if not case.command.strip() or not case.note:
            raise ValueError(f"{where}: a case needs a command and a note")
        if (case.cls == "opaque") != bool(case.unseen):
            raise ValueError(f"{where}: opaque cases (only) name what a guard cannot see")
        if (case.category == "protected_write") != bool(case.target):
            raise ValueError(f"{where}: protected-path cases (only) name their target")
