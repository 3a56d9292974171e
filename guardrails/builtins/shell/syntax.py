"""What the parser hands on: simple commands, their redirections, the state a line shares.

Kept apart from the parser so that the classifier and the program tables can use
these records without depending on how the text was read.
"""

from __future__ import annotations

from typing import Final

__all__ = ["MAX_DEPTH", "SINKS", "ParseState", "Redirect", "SimpleCommand", "TooDeep"]

#: how deep ``$(...)``, backticks and ``bash -c`` scripts may nest before a line is ``unknown``
MAX_DEPTH: Final = 12

#: redirection targets that are not files: writing there changes nothing
SINKS: Final = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full"}
)
_WRITE_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})


class TooDeep(Exception):
    """Nesting went past ``MAX_DEPTH``: ``classify`` reports the line as ``unknown``."""


class ParseState:
    """What the parsers of one line share: errors, the functions it defines, pipeline numbers."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.functions: set[str] = set()  # shell functions the line defines
        self._pipelines = 0

    def new_pipeline(self) -> int:
        self._pipelines += 1
        return self._pipelines


class Redirect:
    """One redirection of a simple command (``> f``, ``2>&1``, ``<<EOF`` ...)."""

    __slots__ = ("body", "fd", "op", "quoted", "target")

    def __init__(self, op: str, fd: str | None, target: str, quoted: bool) -> None:
        self.op = op
        self.fd = fd
        self.target = target  # the file, or a here-document's delimiter
        self.quoted = quoted
        self.body: str | None = None  # here-document / here-string text

    @property
    def writes(self) -> bool:
        """Does this redirection write a file (not a sink, not an fd duplication)?"""
        if self.op not in _WRITE_OPS:
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False
        t = self.target
        return t not in SINKS and not t.startswith("/dev/fd/")


class SimpleCommand:
    """A simple command as parsed, before wrappers are peeled."""

    __slots__ = ("cwd", "pipeline", "redirects", "words")

    def __init__(
        self, words: list[str], redirects: list[Redirect], pipeline: int, cwd: str | None
    ) -> None:
        self.words = words
        self.redirects = redirects
        self.pipeline = pipeline
        self.cwd = cwd
