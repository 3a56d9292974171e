"""What the parser hands on: simple commands, their redirections, the state a line shares.

Kept apart from the parser so that the classifier and the program tables can use
these records without depending on how the text was read.

A word is kept twice: as ``text`` (quotes removed, expansions left as written:
``"$HOME"/x`` -> ``$HOME/x``) and, when anything in it is not a plain literal,
as a *shape*: a tuple of segments ``(kind, text, quoted, inner)`` in which
``kind`` is ``lit`` (literal text), ``var`` (``$x``, ``${x...}``), ``cmd``
(``$(...)``, backticks), ``arith`` (``$((...))``) or ``proc`` (``<(...)``,
``>(...)``); ``quoted`` says whether double or single quotes (or a backslash)
protect it from splitting, globbing and brace expansion; ``inner`` holds the
simple commands parsed inside a ``cmd``, ``arith``, ``proc`` or ``${...}``.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "MAX_DEPTH",
    "SINKS",
    "Binding",
    "ParseState",
    "Redirect",
    "Seg",
    "Shape",
    "SimpleCommand",
    "TooDeep",
]

#: how deep ``$(...)``, backticks and ``bash -c`` scripts may nest before a line is opaque
MAX_DEPTH: Final = 12

#: redirection targets that are not files: writing there changes nothing
SINKS: Final = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full"}
)
_WRITE_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})

#: one piece of a word: (kind, text, quoted, inner commands or None)
Seg = tuple[str, str, bool, "list[SimpleCommand] | None"]
Shape = tuple[Seg, ...]
#: a ``for NAME in WORDS`` header: the name, the words and their shapes
Binding = tuple[str, list[str], "list[Shape | None]"]


class TooDeep(Exception):
    """Nesting went past ``MAX_DEPTH``: ``classify`` reports the line as opaque."""


class ParseState:
    """What the parsers of one line share: errors, the functions it defines, pipeline numbers."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.functions: set[str] = set()  # shell functions the line defines
        self.cd_targets: list[SimpleCommand] = []  # ``cd`` commands whose target is expanded later
        self.loops: list[Binding] = []  # ``for`` headers not yet given to a command
        #: text bash expands again (``reexpand``): (context, text, directory)
        self.second: list[tuple[str, str, str | None]] = []
        self._pipelines = 0

    def new_pipeline(self) -> int:
        self._pipelines += 1
        return self._pipelines


class Redirect:
    """One redirection of a simple command (``> f``, ``2>&1``, ``<<EOF`` ...)."""

    __slots__ = ("body", "body_shape", "fd", "op", "quoted", "shape", "target")

    def __init__(
        self, op: str, fd: str | None, target: str, quoted: bool, shape: Shape | None = None
    ) -> None:
        self.op = op
        self.fd = fd
        self.target = target  # the file, or a here-document's delimiter
        self.quoted = quoted
        self.shape = shape  # the target word's shape (None: a plain literal)
        self.body: str | None = None  # here-document / here-string text
        self.body_shape: Shape | None = None  # its expansions (None: literal text)

    @property
    def writes(self) -> bool:
        """Does this redirection write a file (not a sink, not an fd duplication)?"""
        if self.op not in _WRITE_OPS:
            return False
        if self.op == ">&" and (self.target.isdigit() or self.target == "-"):
            return False
        t = self.target
        return t not in SINKS and not t.startswith("/dev/fd/")

    @property
    def reads_stdin(self) -> bool:
        """Does this redirection feed the command's standard input?"""
        return self.op in ("<", "<<", "<<-", "<<<", "<>") and self.fd in (None, "0")


class SimpleCommand:
    """A simple command as parsed, before wrappers are peeled.

    ``upstream`` lists the commands whose output may reach this one's standard
    input (earlier members of its pipeline, the command feeding a ``>(...)``, a
    ``< <(...)``); ``stdin`` is the input redirection of an enclosing group
    (``{ sh; } <<EOF``); ``depth`` counts the substitutions around it and
    ``text`` is how it was written; ``binds`` are the ``for NAME in WORDS`` headers parsed
    just before it (``(NAME, WORDS, their shapes)``): the loop variables take their values
    before it runs.
    """

    __slots__ = (
        "binds",
        "cwd",
        "depth",
        "pipeline",
        "redirects",
        "shapes",
        "stdin",
        "text",
        "upstream",
        "words",
    )

    def __init__(
        self,
        words: list[str],
        redirects: list[Redirect],
        pipeline: int,
        cwd: str | None,
        shapes: list[Shape | None] | None = None,
    ) -> None:
        self.words = words
        self.redirects = redirects
        self.pipeline = pipeline
        self.cwd = cwd
        self.shapes: list[Shape | None] = shapes if shapes is not None else [None] * len(words)
        self.upstream: list[SimpleCommand] | None = None
        self.stdin: Redirect | None = None  # an enclosing group's input redirection
        self.binds: list[Binding] = []
        self.depth = 0  # how deep in substitutions the parser found it
        self.text = ""  # the command as written
