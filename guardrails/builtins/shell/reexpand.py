"""Text bash expands a second time: arithmetic and prompt strings run the ``$(...)`` they hold.

A value the line stores in quotes (``x='a[$(rm -rf /)]'``) is inert until bash
reads it again as an expression or a prompt, and then the command inside runs:

* **arithmetic**: a variable named in ``$((...))``, ``((...))``, ``let``, ``for
  ((...))``, an indexed array's subscript, a substring's offset (``${s:x}``), an
  arithmetic test of ``[[ ]]``, a ``declare -i`` variable's values, and the
  subscript of a name given to ``read``, ``printf -v``, ``test -v``, ``declare``
  ... (``read 'a[$(cmd)]'``): bash evaluates the value as an expression, and an
  array subscript inside it is expanded, command substitution included;
* **prompt expansion**: ``${x@P}``, and the prompts ``PS0``/``PS1``/``PS2``/``PS4``
  (``set -x`` expands ``PS4`` before every command);
* **startup files**: ``BASH_ENV``/``ENV`` are expanded, then the file is sourced.

A mixin of the analyzer: the places record the text (``again``), and at the end
of the line (every value the line gives a name is known by then, as everywhere
in the analyzer) ``run_again`` reads the substitutions in each text as code, and
follows the names it holds to their values. A value only the running shell knows
is read as ``eval`` reads one: a download is a download run by a shell, decoded
or unknown text is opaque. For arithmetic the environment's own variables are
trusted (``$((COLUMNS - 2))``), as a local program's output is.
"""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Final

from .coderun import CodeRunner
from .values import HOLE_RE

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "NAME_TAKERS",
    "PROMPT_VARS",
    "STARTUP_VARS",
    "Reexpander",
    "arith_operands",
    "subscript_of",
]

#: variables whose value bash expands as a prompt string (``$(...)`` in it runs)
PROMPT_VARS: Final = frozenset({"PS0", "PS1", "PS2", "PS4"})
#: variables naming a file a shell sources at start (the value is expanded first)
STARTUP_VARS: Final = frozenset({"BASH_ENV", "ENV"})
#: builtins whose operands name variables (``NAME[SUBSCRIPT]`` evaluates SUBSCRIPT)
NAME_TAKERS: Final = frozenset(
    {"read", "printf", "test", "[", "declare", "typeset", "local", "export", "readonly",
     "unset", "mapfile", "readarray", "getopts", "wait", "let"}
)  # fmt: skip
#: builtins where only an option's value is a name (their other operands are not)
_NAME_FLAG: Final = {"printf": "-v", "test": "-v", "[": "-v", "wait": "-p"}
_SUBSCRIPTED: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\[(.*)\](?:\+?=.*)?", re.S)
_NAME: Final = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")
_CODE_MARK: Final = re.compile(r"\$[({]|`")
_ARITH_TESTS: Final = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_MAX_TEXTS: Final = 64  # texts read again per line; past it the rest is not followed
_MAX_CHAIN: Final = 6  # names followed through names (``y=x; $((y))``)


def subscript_of(word: str) -> str | None:
    """``a[$(cmd)]`` / ``a[i+1]=v`` -> the subscript, which bash evaluates; else None."""
    m = _SUBSCRIPTED.fullmatch(word)
    return m.group(1) if m else None


def arith_operands(words: Sequence[str]) -> list[str]:
    """The operands of ``[[ ]]``'s arithmetic tests and of ``-v`` (words, quotes removed)."""
    out: list[str] = []
    for k, w in enumerate(words):
        if w in _ARITH_TESTS:
            out.extend([*words[k - 1 : k], *words[k + 1 : k + 2]])
        elif w == "-v" and k + 1 < len(words):
            out.append(words[k + 1])
    return out


class Reexpander(CodeRunner):
    """Arithmetic, prompt and startup-file text, read again at the end of the line (what it
    reads it runs as code: :class:`.coderun.CodeRunner`'s ``apply_code`` and ``script``)."""

    vars: dict[str, list[str]]
    arrays: dict[str, list[str]]
    second: list[tuple[str, str, str | None]]

    if TYPE_CHECKING:

        def _resolve_cwd(self, cwd: str | None) -> str | None: ...

    def again(self, context: str, text: str, cwd: str | None = "") -> None:
        """Record ``text`` as read again (``arith``, ``prompt``, ``startup``, ``integer``)."""
        if len(self.second) < _MAX_TEXTS and (context, text, cwd) not in self.second:
            self.second.append((context, text, cwd))

    def assigned_again(self, name: str, value: str, cwd: str | None) -> None:
        """A prompt or startup variable set by the line."""
        if name in PROMPT_VARS:
            self.again("prompt", value, cwd)
        elif name in STARTUP_VARS:
            self.again("startup", value, cwd)

    def names_again(self, argv: Sequence[str], cwd: str | None) -> None:
        """``read 'a[$(cmd)]'``, ``printf -v``, ``let EXPR``: subscripts and expressions."""
        if argv[0] == "let":
            for a in argv[1:]:
                self.again("arith", a, cwd)
            return
        flag = _NAME_FLAG.get(argv[0])
        args = argv[1:]
        if flag is not None:  # only the option's value is a name (``printf -v NAME``)
            args = [args[k + 1] for k in range(len(args) - 1) if args[k] == flag]
        for a in args:
            sub = subscript_of(a)
            if sub is not None:
                self.again("arith", sub, cwd)
        if argv[0] in ("declare", "typeset", "local") and any(
            a.startswith("-") and "n" in a for a in argv[1:]
        ):  # a name reference to ``a[SUBSCRIPT]``: evaluated each time the name is used
            for a in argv[1:]:
                sub = subscript_of(a.partition("=")[2]) if not a.startswith("-") else None
                if sub is not None:
                    self.again("arith", sub, cwd)
        if argv[0] in ("declare", "typeset", "local") and any(
            a.startswith("-") and "i" in a for a in argv[1:]
        ):
            for a in argv[1:]:
                name = a.partition("=")[0]
                if not a.startswith("-") and re.fullmatch(r"[A-Za-z_]\w*", name):
                    self.again("integer", name, cwd)

    def run_again(self, depth: int) -> None:
        """Read every recorded text as bash reads it again (run at the end of the line)."""
        done = 0
        while done < len(self.second):
            context, text, cwd = self.second[done]
            cwd = self._resolve_cwd(cwd)  # the parser's directory may hold `cd "$x"` marks
            done += 1
            if context in ("integer", "prompt-name"):  # a name: each of its values
                for value in self.vars.get(text, ()):
                    self.again("arith" if context == "integer" else "prompt", value, cwd)
            elif context in ("arith", "arith-parsed"):
                self._expression(text, cwd, depth, context == "arith")
            else:
                self._text(text, cwd, depth, prompt=context == "prompt")
                if context == "startup":
                    self.script(". " + shlex.quote(text), cwd, depth + 1)

    def _expression(self, text: str, cwd: str | None, depth: int, read: bool) -> None:
        """An arithmetic expression: its own substitutions (unless the parser read them)
        and, through every name in it, the values bash evaluates in turn."""
        if read:
            self._text(text, cwd, depth, prompt=False)
        names = [n for n in _NAME.findall(HOLE_RE.sub(" ", text))][: _MAX_CHAIN * 4]
        for name in names:
            for value in [*self.vars.get(name, ()), *self.arrays.get(name, ())]:
                if value != text:
                    self.again("arith", value, cwd)

    def _text(self, text: str, cwd: str | None, depth: int, prompt: bool) -> None:
        """Text expanded again: its ``$(...)`` run; unknown parts read like ``eval``'s."""
        for hole in self.holes.of(text):
            if not hole.unknown or (hole.kind == "env" and not prompt):
                continue
            out = self.hole_out(hole)
            if out.kind == "local" or (out.kind == "lit" and not _CODE_MARK.search(out.text)):
                continue
            name = "prompt expansion" if prompt else "arithmetic"
            self.apply_code(
                name, ["eval", hole.text], out, hole.text, None, depth, cwd, (), (), None, []
            )
        plain = HOLE_RE.sub("_", text)
        if not _CODE_MARK.search(plain):
            return
        end = "HOOKRAILS_AGAIN"
        while end in plain:
            end += "_"
        self.script(f": <<{end}\n{plain}\n{end}\n", cwd, depth + 1)
