"""Why a command cannot be seen in full, and how to write it so that it can.

Every reason names the part the analyzer could not read (``Opaque`` is a
``str`` with a ``hint``). ``REASONS`` lists them all, for the documentation.
"""

from __future__ import annotations

from typing import Final

from .syntax import MAX_DEPTH
from .values import Hole, Opaque

__all__ = [
    "CODE_HINT",
    "REASONS",
    "code_from",
    "glob_name",
    "injected",
    "nesting",
    "parse_error",
    "spell",
    "unknown_name",
    "unknown_wrapper",
]

_PLAIN: Final = "Write the command plainly: the program and its arguments spelled out in the call."
_NAME_HINT: Final = (
    "Write the program's name literally (e.g. `rm -rf build`, not `$cmd -rf build` or "
    "`/bin/r?`). " + _PLAIN
)
CODE_HINT: Final = (
    "Put the commands themselves in the call instead of running text that is built, "
    "decoded or downloaded at run time; to run a downloaded script, save it, show it to "
    "the user and run the saved file once they have read it."
)
_WRAPPER_HINT: Final = "Run the inner command directly, without the wrapper. " + _PLAIN
_PARSE_HINT: Final = "Fix the quoting or split the command into simpler calls. " + _PLAIN

#: every reason the analyzer gives (``{}`` is filled in), with what it means
REASONS: Final = (
    (
        "the command name {word} is computed at run time ({why})",
        "a variable, `$(...)` or backticks in the program's name",
    ),
    ("the command name {word} is a glob", "`*`, `?` or `[...]` in the program's name"),
    (
        "{program} runs code it gets from {source} ({why})",
        "`bash -c`, `eval`, `source`, a "
        "shell or interpreter reading its input from a variable, a substitution, a decoder or "
        "a pipe whose text is not known",
    ),
    (
        "the code {program} runs has {part} pasted into it",
        "an unknown value inside the "
        "text of a `bash -c`/`eval` script, where it could add commands",
    ),
    (
        "{program} is not a program this guard knows; it may run `{inner}`",
        "an unknown wrapper whose arguments would match a rule",
    ),
    (
        f"the command nests deeper than {MAX_DEPTH} levels",
        "`$(...)`, backticks, `eval` and `bash -c` inside each other past the parser's limit",
    ),
    (
        "the command does not parse ({error})",
        "unbalanced quotes, parentheses or a here-document without its end",
    ),
    (
        "the value of {part} is not known ({why})",
        "a delete or write target, or the "
        "directory a command runs in, that the guard needs but cannot resolve",
    ),
    (
        "the members of the archive {archive} are not known",
        "an archive extracted into a folder that holds protected files",
    ),
)


def spell(hole: Hole) -> str:
    """``$X (not set in the command)``-style words for a hole."""
    why = hole.why or {
        "env": "an environment variable",
        "fd": "a process substitution",
        "token": "a value",
        "paths": "the paths a command lists",
        "root": "the project root",
    }.get(hole.kind, "not known")
    return f"{_short(hole.text)} ({why})"


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return "`" + (text if len(text) <= limit else text[: limit - 3] + "...") + "`"


def unknown_name(word: str, hole: Hole) -> Opaque:
    why = hole.why or ("an environment variable" if hole.kind == "env" else "not known")
    return Opaque(f"the command name {_short(word)} is computed at run time ({why})", _NAME_HINT)


def glob_name(word: str) -> Opaque:
    return Opaque(f"the command name {_short(word)} is a glob", _NAME_HINT)


def code_from(program: str, source: str, why: str) -> Opaque:
    return Opaque(f"{program} runs code it gets from {_short(source)} ({why})", CODE_HINT)


def injected(program: str, hole: Hole) -> Opaque:
    return Opaque(
        f"the code {program} runs has {spell(hole)} pasted into it, which could add commands",
        CODE_HINT,
    )


def unknown_wrapper(program: str, inner: str) -> Opaque:
    return Opaque(
        f"{program} is not a program this guard knows; it may run {_short(inner)}",
        _WRAPPER_HINT,
    )


def nesting() -> Opaque:
    return Opaque(
        f"the command nests `$(...)`, backticks, `eval` or `bash -c` deeper than {MAX_DEPTH} "
        "levels, past what the guard reads",
        _PARSE_HINT,
    )


def parse_error(error: str) -> Opaque:
    return Opaque(f"the command does not parse ({error})", _PARSE_HINT)
