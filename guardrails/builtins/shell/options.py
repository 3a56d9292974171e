"""GNU-style option splitting shared by the wrapper and program tables.

Each table entry asks the same questions of its arguments (which options, which
operands, which subcommand), so the answers are computed one way, here.
"""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "Opts",
    "first",
    "has_opt",
    "opt_value",
    "program_name",
    "split_opts",
    "subcommand",
    "word_set",
]


@functools.cache
def word_set(text: str) -> frozenset[str]:
    """A set of names written as one whitespace-separated string (keeps the tables short)."""
    return frozenset(text.split())


Opts = list[tuple[str, "str | None"]]


def split_opts(
    args: Sequence[str],
    short_arg: str = "",
    long_arg: Iterable[str] = (),
    attached: str = "",
    first_operand_ends: bool = False,
) -> tuple[Opts, list[str]]:
    """Split ``args`` into options (``(name, value)``) and operands, GNU style.

    ``short_arg`` letters take a value (rest of the cluster or the next word),
    ``attached`` letters take only an attached one; ``long_arg`` options take
    the next word unless written ``--opt=value``. ``--`` ends the options;
    ``first_operand_ends`` stops at the first operand (POSIX, subcommand CLIs).
    """
    longs = frozenset(long_arg)
    opts: Opts = []
    ops: list[str] = []
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a == "--":
            ops.extend(args[i + 1 :])
            break
        if a.startswith("--") and len(a) > 2:
            name, eq, val = a.partition("=")
            if eq:
                opts.append((name, val))
            elif name in longs and i + 1 < n:
                opts.append((name, args[i + 1]))
                i += 1
            else:
                opts.append((name, None))
        elif a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                ch = a[j]
                if ch in short_arg:
                    if j + 1 < len(a):
                        opts.append(("-" + ch, a[j + 1 :]))
                    elif i + 1 < n:
                        opts.append(("-" + ch, args[i + 1]))
                        i += 1
                    else:
                        opts.append(("-" + ch, None))
                    break
                if ch in attached:
                    opts.append(("-" + ch, a[j + 1 :]))
                    break
                opts.append(("-" + ch, None))
                j += 1
        else:
            if first_operand_ends:
                ops.extend(args[i:])
                break
            ops.append(a)
        i += 1
    return opts, ops


@functools.cache
def _names(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(w for n in names for w in n.split())


def has_opt(opts: Opts, *names: str) -> bool:
    """Is any of ``names`` (each may list several, space-separated) among ``opts``?"""
    wanted = _names(names)
    return any(name in wanted for name, _ in opts)


def opt_value(opts: Opts, *names: str) -> str | None:
    """The value of the last of ``names`` given (``None`` if absent or valueless)."""
    wanted = _names(names)
    found = None
    for name, value in opts:
        if name in wanted:
            found = value
    return found


def subcommand(
    args: Sequence[str], short_arg: str = "", long_arg: Iterable[str] = ()
) -> tuple[str, list[str]]:
    """The subcommand (first operand after leading options) and the words after it."""
    _, ops = split_opts(args, short_arg, long_arg, first_operand_ends=True)
    return (ops[0], ops[1:]) if ops else ("", [])


def first(ops: Sequence[str]) -> str:
    return ops[0] if ops else ""


_VERSIONED = re.compile(r"(python|pip|pypy|pydoc)[0-9.]*")
_NAMES: dict[str, str] = {}


def program_name(word: str) -> str:
    """The program name used for lookups: base name, ``python3.12`` -> ``python``."""
    known = _NAMES.get(word)
    if known is not None:
        return known
    name = posixpath.basename(word) or word
    m = _VERSIONED.fullmatch(name)
    name = m.group(1) if m else name
    if len(_NAMES) < 4096:
        _NAMES[word] = name
    return name
