"""Shell command intent and the deny list: what a Bash command line would do, before it runs.

``classify(command)`` parses a command line the way bash reads it (quotes,
escapes, pipes, ``&&``/``||``/``;``/newlines, subshells, ``$(...)`` and
backticks, process substitution, redirections, here-documents, ``if``/``for``/
``while``/``case`` bodies) and classifies every simple command it would run.
``shlex`` alone is not enough for that: it cannot tell a comment from a ``#``
inside a word, a newline from a space, see ``$(...)`` inside double quotes, or
skip a here-document body, so a small bash-compatible lexer does the work.

Wrappers are peeled off before a command is classified: ``VAR=1``, ``env``,
``sudo``/``doas``, ``command``, ``builtin``, ``exec``, ``nohup``, ``time``,
``timeout``, ``nice``, ``xargs``, ``busybox``, ``uv run``/``npx``/... and
``bash -c``/``sh -c``/``eval``/``su -c``, whose script is parsed recursively.
``find -exec`` and ``fd -x`` add the command they run.

Kinds (``Intent.kinds``): ``read_only``, ``file_write``, ``delete``, ``move``,
``git_mutation``, ``network_mutation``, ``package_install`` (also uninstall and
upgrade), ``process_control`` and ``unknown``. A command the tables do not
know, a script or interpreter run (``python x.py``, ``make``, ``npm run x``),
a program named by a variable and a line that does not parse are ``unknown``,
which counts as side-effecting: a guess that something is harmless would
switch off every check fed by this module. Test runners, linters and type
checkers count as read-only (they are re-run after every edit), unless a flag
makes them rewrite files (``--fix``, ``--write``, ``format``).

``BashSideEffects`` records the intent on the call (``annotations["intent"]``);
``DenyCommands`` refuses commands that match deny rules over the parsed,
normalised commands, so quoting, wrappers and nesting do not hide them.
"""

from __future__ import annotations

import functools
import itertools
import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ...results import HookResult

__all__ = [
    "DEFAULT_DENY_RULES",
    "KINDS",
    "BashSideEffects",
    "Command",
    "DenyCommands",
    "Intent",
    "bash_side_effects",
    "classify",
    "command_of",
    "deny_commands",
    "normalize_argv",
]

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
_RANK: Final = {k: i for i, k in enumerate(KINDS)}
_MAX_DEPTH: Final = 12  # nested $(...), backticks and bash -c scripts
_MAX_LISTED: Final = 100  # commands listed in ``Intent.as_dict``

#: redirection targets that are not files: writing there changes nothing
_SINKS: Final = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "/dev/full"}
)


@functools.cache
def _words(text: str) -> frozenset[str]:
    """A set of names written as one whitespace-separated string (keeps the tables short)."""
    return frozenset(text.split())


# --- the result ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Command:
    """One simple command the line would run.

    ``argv`` is what runs once env prefixes and wrappers (``sudo``, ``env``,
    ``xargs`` ...) are peeled off; it is empty for a bare redirection
    (``> file``). ``redirects`` are the files output redirections write
    (``/dev/null`` and ``2>&1``-style duplications are not files). ``targets``
    are the paths whose content or existence the command changes, as written
    (redirects, ``tee`` files, ``cp``/``mv``/``ln`` destinations, ``rm`` and
    ``touch`` operands, ``sed -i`` files ...); ``sources`` are the operands a
    ``cp``/``mv``/``ln``/``install`` copies from. ``cwd`` is the directory it
    runs in after the line's own ``cd``: ``""`` for the starting directory, a
    relative or absolute path, or ``None`` when it cannot be known.
    ``pipeline`` numbers the pipeline it belongs to (commands of one pipeline
    are listed in order).
    """

    argv: tuple[str, ...]
    redirects: tuple[str, ...] = ()
    kind: str = "unknown"
    kinds: frozenset[str] = frozenset({"unknown"})
    targets: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    cwd: str | None = ""
    pipeline: int = 0

    @property
    def program(self) -> str:
        """The program's base name (``/bin/rm`` -> ``rm``), or ``""`` for a bare redirection."""
        return posixpath.basename(self.argv[0]) if self.argv else ""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"argv": list(self.argv), "kind": self.kind}
        if len(self.kinds) > 1:
            out["kinds"] = sorted(self.kinds, key=_RANK.__getitem__)
        if self.redirects:
            out["redirects"] = list(self.redirects)
        if self.targets:
            out["targets"] = list(self.targets)
        if self.cwd:
            out["cwd"] = self.cwd
        elif self.cwd is None:
            out["cwd"] = None
        return out


@dataclass(frozen=True, slots=True)
class Intent:
    """What a command line would do: the union of its commands' kinds.

    ``kinds`` holds ``read_only`` only when nothing else is in it. ``error``
    says why the line did not parse cleanly (``unknown`` is then in ``kinds``;
    the commands parsed up to the error are still listed).
    """

    kinds: frozenset[str]
    commands: tuple[Command, ...] = ()
    error: str | None = None

    @property
    def side_effecting(self) -> bool:
        """True when any kind other than ``read_only`` is present (``unknown`` included)."""
        return bool(self.kinds - {"read_only"})

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (what ``bash_side_effects`` stores in the ledger)."""
        out: dict[str, Any] = {
            "kinds": sorted(self.kinds, key=_RANK.__getitem__),
            "side_effecting": self.side_effecting,
            "commands": [c.as_dict() for c in self.commands[:_MAX_LISTED]],
        }
        if len(self.commands) > _MAX_LISTED:
            out["commands_omitted"] = len(self.commands) - _MAX_LISTED
        if self.error:
            out["error"] = self.error
        return out


# --- lexer and parser ----------------------------------------------------------

_REDIR_OPS: Final = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_CTRL_OPS: Final = (";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")")
_WRITE_OPS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_FD_RE: Final = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])")
_ASSIGN_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_ARRAY_START_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$")
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: reserved words that only open or close a compound command: skipped at command position
_SKIP_WORDS: Final = _words("! { } if then else elif fi do done while until esac")
_ANSI_C: Final = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


class _TooDeep(Exception):
    pass


class _Tok:
    __slots__ = ("fd", "kind", "pos", "quoted", "text")

    def __init__(
        self, kind: str, text: str, pos: int, fd: str | None = None, quoted: bool = False
    ) -> None:
        self.kind = kind  # word, op, redir, nl, eof
        self.text = text
        self.pos = pos
        self.fd = fd
        self.quoted = quoted


class _Redirect:
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
        return t not in _SINKS and not t.startswith("/dev/fd/")


class _Raw:
    """A simple command as parsed, before wrappers are peeled."""

    __slots__ = ("cwd", "pipeline", "redirects", "words")

    def __init__(
        self, words: list[str], redirects: list[_Redirect], pipeline: int, cwd: str | None
    ) -> None:
        self.words = words
        self.redirects = redirects
        self.pipeline = pipeline
        self.cwd = cwd


def _join_cwd(cwd: str | None, target: str) -> str | None:
    """The directory ``cd target`` leads to from ``cwd`` (``None``: unknown)."""
    if target == "-" or "$" in target or "`" in target:
        return None
    if target.startswith("~"):
        target = posixpath.expanduser(target)
        if target.startswith("~"):
            return None
    if target.startswith("/"):
        return posixpath.normpath(target)
    if cwd is None:
        return None
    joined = posixpath.normpath(posixpath.join(cwd, target)) if cwd else posixpath.normpath(target)
    return "" if joined == "." else joined


class _Parser:
    """A lenient bash parser: collects simple commands, records errors, never raises them.

    Substitutions (``$(...)``, backticks, ``<(...)``) are parsed when their word
    is read, so their commands come before the command that uses them, as they run.
    """

    def __init__(self, text: str, an: _Analyzer, cwd: str | None, depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise _TooDeep
        self.s = text
        self.n = len(text)
        self.i = 0
        self.an = an
        self.cwd = cwd
        self.depth = depth
        self.peeked: _Tok | None = None
        self.pending: list[_Redirect] = []  # here-documents whose body comes after the newline
        self.raws: list[_Raw] = []

    def error(self, message: str) -> None:
        self.an.errors.append(message)

    # -- tokens --

    def peek(self) -> _Tok:
        if self.peeked is None:
            self.peeked = self._lex()
        return self.peeked

    def next(self) -> _Tok:
        tok = self.peek()
        self.peeked = None
        return tok

    def _lex(self) -> _Tok:
        s, n = self.s, self.n
        while True:
            while self.i < n and s[self.i] in " \t\r":
                self.i += 1
            if s.startswith("\\\n", self.i):
                self.i += 2
                continue
            if self.i < n and s[self.i] == "#":
                end = s.find("\n", self.i)
                self.i = n if end < 0 else end
                continue
            break
        start = self.i
        if start >= n:
            return _Tok("eof", "", n)
        c = s[start]
        if c == "\n":
            self.i += 1
            self._read_heredocs()
            return _Tok("nl", "\n", start)
        if c in "<>" and s.startswith("(", start + 1):
            return self._word()
        m = _FD_RE.match(s, start)
        fd = m.group(1) if m else None
        j = m.end() if m else start
        if s[j : j + 1] in ("<", ">") or (fd is None and s.startswith("&>", j)):
            for op in _REDIR_OPS:
                if s.startswith(op, j) and not (fd is not None and op[0] == "&"):
                    self.i = j + len(op)
                    return _Tok("redir", op, start, fd)
        if c in ";&|()":
            for op in _CTRL_OPS:
                if s.startswith(op, start):
                    self.i = start + len(op)
                    return _Tok("op", op, start)
        return self._word()

    def _word(self) -> _Tok:
        s, n = self.s, self.n
        start = self.i
        buf: list[str] = []
        quoted = False
        while self.i < n:
            c = s[self.i]
            if c in " \t\r\n;&|":
                break
            if c in "<>":
                if s.startswith("(", self.i + 1):
                    self._substitution(self.i + 2, buf)
                    continue
                break
            if c == "(":
                if _ARRAY_START_RE.match("".join(buf)):  # arr=(a b c)
                    end = self._skip_balanced(self.i + 1, "(", ")")
                    buf.append(s[self.i : end])
                    self.i = end
                    continue
                break
            if c == ")":
                break
            if c == "\\":
                quoted = True
                if self.i + 1 < n:
                    if s[self.i + 1] != "\n":
                        buf.append(s[self.i + 1])
                    self.i += 2
                else:
                    self.i += 1
                continue
            if c == "'":
                quoted = True
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.error("unterminated single quote")
                    buf.append(s[self.i + 1 :])
                    self.i = n
                else:
                    buf.append(s[self.i + 1 : end])
                    self.i = end + 1
                continue
            if c == '"':
                quoted = True
                self.i += 1
                self._dquote(buf, '"')
                continue
            if c == "$":
                if s.startswith(("$'", '$"'), self.i):
                    quoted = True
                self._dollar(buf, in_dquote=False)
                continue
            if c == "`":
                self._backtick(buf)
                continue
            buf.append(c)
            self.i += 1
        return _Tok("word", "".join(buf), start, None, quoted)

    def _dquote(self, buf: list[str], term: str | None) -> None:
        """Read a double-quoted string (or, with ``term=None``, an unquoted here-document body)."""
        s, n = self.s, self.n
        while self.i < n:
            c = s[self.i]
            if c == term:
                self.i += 1
                return
            if c == "\\" and self.i + 1 < n:
                d = s[self.i + 1]
                if d in '$`"\\':
                    buf.append(d)
                    self.i += 2
                elif d == "\n":
                    self.i += 2
                else:
                    buf.append(c)
                    self.i += 1
                continue
            if c == "$":
                self._dollar(buf, in_dquote=True)
            elif c == "`":
                self._backtick(buf)
            else:
                buf.append(c)
                self.i += 1
        if term is not None:
            self.error("unterminated double quote")

    def _dollar(self, buf: list[str], in_dquote: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'" and not in_dquote:
            buf.append(self._ansi_c())
        elif nxt == '"' and not in_dquote:
            self.i += 2
            self._dquote(buf, '"')
        elif s.startswith("$((", i):
            end = self._skip_balanced(i + 2, "(", ")")
            buf.append(s[i:end])
            self.i = end
        elif nxt == "(":
            self._substitution(i + 2, buf)
        elif nxt == "{":
            end = self._skip_balanced(i + 2, "{", "}")
            buf.append(s[i:end])
            self.i = end
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            m = _NAME_RE.match(s, i + 1)
            end = m.end() if m and not nxt.isdigit() else i + 2
            buf.append(s[i:end])
            self.i = end
        else:
            buf.append("$")
            self.i += 1

    def _ansi_c(self) -> str:
        """Decode ``$'...'`` (ANSI-C quoting)."""
        s, n = self.s, self.n
        j = self.i + 2
        out: list[str] = []
        while j < n and s[j] != "'":
            if s[j] == "\\" and j + 1 < n:
                d = s[j + 1]
                if d in _ANSI_C:
                    out.append(_ANSI_C[d])
                    j += 2
                elif d in "xuU":
                    width = {"x": 2, "u": 4, "U": 8}[d]
                    m = re.match(rf"[0-9A-Fa-f]{{1,{width}}}", s[j + 2 : j + 2 + width])
                    if m:
                        out.append(chr(min(int(m.group(), 16), 0x10FFFF)))
                        j += 2 + m.end()
                    else:
                        out.append("\\" + d)
                        j += 2
                elif d in "01234567":
                    m = re.match(r"[0-7]{1,3}", s[j + 1 : j + 4])
                    assert m is not None
                    out.append(chr(int(m.group(), 8)))
                    j += 1 + m.end()
                else:
                    out.append("\\" + d)
                    j += 2
            else:
                out.append(s[j])
                j += 1
        if j >= n:
            self.error("unterminated $'...' string")
        self.i = j + 1
        return "".join(out)

    def _skip_balanced(self, j: int, open_: str, close: str) -> int:
        """Index after the ``close`` that balances an ``open_`` just before ``j`` (quote-aware)."""
        s, n = self.s, self.n
        depth = 1
        while j < n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == "'":
                end = s.find("'", j + 1)
                j = n if end < 0 else end + 1
                continue
            if c == open_:
                depth += 1
            elif c == close:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        self.error(f"unterminated {open_}")
        return n

    def _substitution(self, inner: int, buf: list[str]) -> None:
        """``$(...)``, ``<(...)`` or ``>(...)`` starting at ``self.i``: parse the list inside."""
        begin = self.i
        if self.depth + 1 > _MAX_DEPTH:
            raise _TooDeep
        self.i = inner
        saved_cwd, saved_depth = self.cwd, self.depth
        self.depth += 1
        self.parse_list(frozenset({")"}))
        self.depth, self.cwd = saved_depth, saved_cwd
        tok = self.next()
        if tok.kind != "op" or tok.text != ")":
            self.error("unterminated $(")
        buf.append(self.s[begin : self.i])

    def _backtick(self, buf: list[str]) -> None:
        s, n = self.s, self.n
        begin = self.i
        j = self.i + 1
        inner: list[str] = []
        while j < n and s[j] != "`":
            if s[j] == "\\" and j + 1 < n and s[j + 1] in "`$\\":
                inner.append(s[j + 1])
                j += 2
                continue
            inner.append(s[j])
            j += 1
        if j >= n:
            self.error("unterminated backquote")
            self.i = n
        else:
            self.i = j + 1
        self._child("".join(inner), dquote=False)
        buf.append(s[begin : self.i])

    def _child(self, text: str, dquote: bool) -> None:
        """Parse ``text`` as a nested script (or as an expanding here-document body)."""
        sub = _Parser(text, self.an, self.cwd, self.depth + 1)
        if dquote:
            sub._dquote([], None)
        else:
            sub.parse_list(frozenset())
        self.raws.extend(sub.raws)

    def _read_heredocs(self) -> None:
        s, n = self.s, self.n
        pending, self.pending = self.pending, []
        for r in pending:
            lines: list[str] = []
            while self.i < n:
                end = s.find("\n", self.i)
                line = s[self.i : n if end < 0 else end]
                self.i = n if end < 0 else end + 1
                if r.op == "<<-":
                    line = line.lstrip("\t")
                if line.rstrip("\r") == r.target:
                    break
                lines.append(line)
            r.body = "\n".join(lines)
            if not r.quoted and ("$" in r.body or "`" in r.body):
                self._child(r.body, dquote=True)  # $(...) in an unquoted here-doc runs

    # -- grammar --

    def parse_list(self, stop: frozenset[str], stop_words: frozenset[str] = frozenset()) -> None:
        """Pipelines separated by ``; & && || newline`` until ``stop`` (an operator) or EOF."""
        while True:
            tok = self.peek()
            if tok.kind == "eof":
                return
            if tok.kind == "nl":
                self.next()
                continue
            if tok.kind == "op":
                if tok.text in stop:
                    return
                if tok.text == ")":
                    self.next()
                    self.error("unexpected ')'")
                    continue
                if tok.text != "(":
                    self.next()  # separators (a leading one is bash's syntax error; be lenient)
                    continue
            if tok.kind == "word" and not tok.quoted and tok.text in stop_words:
                return
            before = (self.i, self.peeked)
            self._pipeline(stop, stop_words)
            if (self.i, self.peeked) == before:  # no progress: drop the token
                self.next()

    def _pipeline(self, stop: frozenset[str], stop_words: frozenset[str]) -> None:
        pid = self.an.new_pipeline()
        members: list[_Raw] = []
        while True:
            raw = self._command(pid, stop, stop_words)
            if raw is not None:
                members.append(raw)
            tok = self.peek()
            if tok.kind == "op" and tok.text in ("|", "|&"):
                self.next()
                while self.peek().kind == "nl":
                    self.next()
                continue
            break
        if len(members) == 1:
            self._track_cd(members[0])

    def _command(self, pid: int, stop: frozenset[str], stop_words: frozenset[str]) -> _Raw | None:
        while True:
            tok = self.peek()
            if tok.kind == "word" and not tok.quoted:
                t = tok.text
                if t in stop_words:
                    return None
                if t in _SKIP_WORDS:
                    self.next()
                    continue
                if t in ("for", "select"):
                    self.next()
                    self._skip_for_header()
                    continue
                if t == "case":
                    self.next()
                    self._case(stop)
                    continue
                if t == "function":
                    self.next()
                    self.an.functions.add(self.next().text)
                    self._function_parens()
                    continue
                if t == "[[":
                    return self._dbracket(pid)
            if tok.kind == "op" and tok.text == "(":
                if self.s.startswith("((", tok.pos):  # arithmetic command
                    self.next()
                    self.i = self._skip_balanced(tok.pos + 1, "(", ")")
                    return None
                self.next()
                saved = self.cwd
                self.parse_list(frozenset({")"}))
                self.cwd = saved
                close = self.peek()
                if close.kind == "op" and close.text == ")":
                    self.next()
                else:
                    self.error("unterminated (")
                redirs = self._redirects_only()
                return self._emit([], redirs, pid) if redirs else None
            break
        return self._simple(pid)

    def _skip_for_header(self) -> None:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(" and self.s.startswith("((", tok.pos):
            self.next()
            self.i = self._skip_balanced(tok.pos + 1, "(", ")")
        while True:
            tok = self.peek()
            if tok.kind in ("eof", "nl") or (tok.kind == "word" and tok.text == "do"):
                return
            if tok.kind == "op":
                if tok.text == ";":
                    self.next()
                return
            self.next()

    def _case(self, stop: frozenset[str]) -> None:
        self.next()  # the subject word
        while self.peek().kind == "nl":
            self.next()
        if self.peek().text == "in":
            self.next()
        item_stop = stop | {";;", ";&", ";;&"}
        while True:
            tok = self.peek()
            if tok.kind == "nl" or (tok.kind == "op" and tok.text == ";"):
                self.next()
                continue
            if tok.kind == "eof":
                self.error("unterminated case")
                return
            if tok.kind == "word" and tok.text == "esac":
                self.next()
                return
            if tok.kind == "op" and tok.text in stop:
                self.error("unterminated case")
                return
            if tok.kind == "op" and tok.text == "(":
                self.next()
            while True:  # the pattern, up to ')'
                tok = self.next()
                if tok.kind == "eof":
                    self.error("unterminated case pattern")
                    return
                if tok.kind == "op" and tok.text == ")":
                    break
            self.parse_list(item_stop, frozenset({"esac"}))
            tok = self.peek()
            if tok.kind == "op" and tok.text in (";;", ";&", ";;&"):
                self.next()

    def _function_parens(self) -> None:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(" and self.s[self.i :].lstrip().startswith(")"):
            self.next()
            self.next()

    def _dbracket(self, pid: int) -> _Raw:
        self.next()
        while True:
            tok = self.peek()
            if tok.kind in ("eof", "nl"):
                self.error("unterminated [[")
                break
            self.next()
            if tok.kind == "word" and tok.text == "]]":
                break
        return self._emit(["[["], [], pid)

    def _simple(self, pid: int) -> _Raw | None:
        words: list[str] = []
        redirs: list[_Redirect] = []
        while True:
            tok = self.peek()
            if tok.kind == "word":
                self.next()
                words.append(tok.text)
                if len(words) == 1 and not redirs:
                    nxt = self.peek()
                    if (
                        nxt.kind == "op"
                        and nxt.text == "("
                        and self.s[self.i :].lstrip().startswith(")")
                    ):  # name() { ...; }: a definition; the body is parsed as what follows
                        self._function_parens()
                        self.an.functions.add(words[0])
                        return None
                continue
            if tok.kind == "redir":
                self.next()
                r = self._redirect(tok)
                if r is not None:
                    redirs.append(r)
                continue
            break
        if not words and not redirs:
            return None
        return self._emit(words, redirs, pid)

    def _redirects_only(self) -> list[_Redirect]:
        redirs: list[_Redirect] = []
        while self.peek().kind == "redir":
            r = self._redirect(self.next())
            if r is not None:
                redirs.append(r)
        return redirs

    def _redirect(self, tok: _Tok) -> _Redirect | None:
        target = self.peek()
        if target.kind != "word":
            self.error(f"redirection {tok.text!r} without a target")
            return None
        self.next()
        r = _Redirect(tok.text, tok.fd, target.text, target.quoted)
        if tok.text in ("<<", "<<-"):
            self.pending.append(r)
        elif tok.text == "<<<":
            r.body = target.text
        return r

    def _emit(self, words: list[str], redirs: list[_Redirect], pid: int) -> _Raw:
        raw = _Raw(words, redirs, pid, self.cwd)
        self.raws.append(raw)
        return raw

    def _track_cd(self, raw: _Raw) -> None:
        words = raw.words
        if not words or words[0] not in ("cd", "pushd", "popd"):
            return
        if words[0] == "popd":
            self.cwd = None
            return
        args = [w for w in words[1:] if not (w.startswith(("-", "+")) and w != "-")]
        self.cwd = _join_cwd(self.cwd, args[0] if args else "~")


# --- option parsing helpers ----------------------------------------------------

_Opts = list[tuple[str, "str | None"]]


def _opts(
    args: Sequence[str],
    short_arg: str = "",
    long_arg: Iterable[str] = (),
    attached: str = "",
    first_operand_ends: bool = False,
) -> tuple[_Opts, list[str]]:
    """Split ``args`` into options (``(name, value)``) and operands, GNU style.

    ``short_arg`` letters take a value (rest of the cluster or the next word),
    ``attached`` letters take only an attached one; ``long_arg`` options take
    the next word unless written ``--opt=value``. ``--`` ends the options;
    ``first_operand_ends`` stops at the first operand (POSIX, subcommand CLIs).
    """
    longs = frozenset(long_arg)
    opts: _Opts = []
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


def _has(opts: _Opts, *names: str) -> bool:
    """Is any of ``names`` (each may list several, space-separated) among ``opts``?"""
    wanted = _names(names)
    return any(name in wanted for name, _ in opts)


def _val(opts: _Opts, *names: str) -> str | None:
    """The value of the last of ``names`` given (``None`` if absent or valueless)."""
    wanted = _names(names)
    found = None
    for name, value in opts:
        if name in wanted:
            found = value
    return found


def _sub(
    args: Sequence[str], short_arg: str = "", long_arg: Iterable[str] = ()
) -> tuple[str, list[str]]:
    """The subcommand (first operand after leading options) and the words after it."""
    _, ops = _opts(args, short_arg, long_arg, first_operand_ends=True)
    return (ops[0], ops[1:]) if ops else ("", [])


def _first(ops: Sequence[str]) -> str:
    return ops[0] if ops else ""


def _prog(word: str) -> str:
    """The program name used for lookups: base name, ``python3.12`` -> ``python``."""
    name = posixpath.basename(word) or word
    m = re.fullmatch(r"(python|pip|pypy|pydoc)[0-9.]*", name)
    return m.group(1) if m else name


# --- wrappers: commands that run another command -------------------------------

_Peel = Callable[[list[str]], "list[str] | str | None"]
_SHELLS: Final = _words("sh bash zsh dash ksh mksh ash fish yash")


def _peeler(
    short_arg: str = "",
    long_arg: Iterable[str] = (),
    attached: str = "",
    assignments: bool = False,
    positional: int = 0,
) -> Callable[[list[str]], list[str]]:
    """A wrapper whose options come first and the command after them (POSIX style)."""
    longs = frozenset(long_arg)

    def peel(args: list[str]) -> list[str]:
        i, n = 0, len(args)
        while i < n:
            a = args[i]
            if a == "--":
                i += 1
                break
            if a.startswith("--") and len(a) > 2:
                i += 2 if (a in longs and "=" not in a) else 1
                continue
            if a.startswith("-") and len(a) > 1:
                for j, ch in enumerate(a[1:], 1):
                    if ch in attached:
                        break
                    if ch in short_arg:
                        if j == len(a) - 1:
                            i += 1  # the value is the next word
                        break
                i += 1
                continue
            break
        if assignments:
            while i < n and _ASSIGN_RE.match(args[i]):
                i += 1
        return args[i + positional :]

    return peel


def _peel_env(args: list[str]) -> list[str] | str:
    i, n = 0, len(args)
    while i < n:
        a = args[i]
        if a in ("-S", "--split-string") or a.startswith(("--split-string=", "-S")):
            if a in ("-S", "--split-string"):
                text, i = (args[i + 1] if i + 1 < n else ""), i + 2
            else:
                text, i = (a.partition("=")[2] if a.startswith("--") else a[2:]), i + 1
            return " ".join([text, *(shlex.quote(w) for w in args[i:])])
        if a in ("-u", "--unset", "-C", "--chdir"):
            i += 2
        elif a == "--":
            i += 1
            break
        elif a.startswith("-") and a != "-":
            i += 1
        else:
            break
    while i < n and (_ASSIGN_RE.match(args[i]) or args[i] == "-"):
        i += 1
    return args[i:]


def _peel_command(args: list[str]) -> list[str] | None:
    opts, ops = _opts(args, first_operand_ends=True)
    if _has(opts, "-v -V"):
        return None  # a lookup, not a run
    return ops


def _peel_xargs(args: list[str]) -> list[str]:
    long_arg = _words(
        "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var"
    )
    return _peeler("adEILnPs", long_arg, attached="eil")(args) or ["echo"]


def _peel_watch(args: list[str]) -> list[str] | str:
    opts, ops = _opts(args, "nq", ("--interval", "--equexit"), first_operand_ends=True)
    if _has(opts, "-x --exec"):
        return ops
    return " ".join(ops)


def _peel_su(args: list[str]) -> list[str] | str:
    long_arg = _words(
        "--command --group --supp-group --shell --whitelist-environment --session-command"
    )
    opts, _ = _opts(args, "cgGsw", long_arg)
    script = _val(opts, "-c --command --session-command")
    return script if script is not None else []


def _peel_runuser(args: list[str]) -> list[str] | str:
    if "-c" in args or any(a.startswith("--command") for a in args):
        return _peel_su(args)
    return _peeler("ugG", ("--user", "--group", "--supp-group"))(args)


def _peel_npx(args: list[str]) -> list[str] | str:
    opts, ops = _opts(
        args, "pc", ("--package", "--call", "--node-options"), first_operand_ends=True
    )
    script = _val(opts, "-c --call")
    return script if script is not None else ops


def _peel_subcommand(subs: str, peel: _Peel) -> _Peel:
    """``npm exec ...``, ``uv run ...``: a wrapper only behind one of ``subs``."""
    names = _words(subs)
    long_arg = _words("--prefix --workspace --directory --project --filter --cwd --python")

    def run(args: list[str]) -> list[str] | str | None:
        sub, rest = _sub(args, "CwpP", long_arg)
        if sub not in names:
            return None
        return peel(rest)

    return run


_PEEL_UV_RUN: Final = _peeler(
    "p",
    _words(
        """--with --python --directory --project --env-file --extra --group --package --index
        --with-requirements --with-editable --default-index --index-url --from --script"""
    ),
)


def _peel_uv(args: list[str]) -> list[str] | str | None:
    sub, rest = _sub(args, "p", ("--directory", "--project", "--python"))
    if sub == "run":
        return _PEEL_UV_RUN(rest)
    if sub == "tool" and rest[:1] == ["run"]:
        return _PEEL_UV_RUN(rest[1:])
    return None


_CONDA_RUN: Final = _peeler("np", ("--name", "--prefix", "--cwd"))

#: program -> how to find the command it runs (``None`` from the peeler: not a wrapper use)
_WRAPPERS: Final[dict[str, _Peel]] = {
    "sudo": _peeler(
        "ugpCDrtTUh",
        _words(
            """--user --group --host --prompt --close-from --chdir --role --type
            --command-timeout --other-user"""
        ),
        assignments=True,
    ),
    "doas": _peeler("uC"),
    "env": _peel_env,
    "command": _peel_command,
    "builtin": _peeler(),
    "exec": _peeler("a"),
    "nohup": _peeler(),
    "time": _peeler("of", ("--output", "--format")),
    "timeout": _peeler("sk", ("--signal", "--kill-after"), positional=1),
    "gtimeout": _peeler("sk", ("--signal", "--kill-after"), positional=1),
    "nice": _peeler("n", ("--adjustment",)),
    "ionice": _peeler("cnu", ("--class", "--classdata", "--uid")),
    "stdbuf": _peeler("ioe", ("--input", "--output", "--error")),
    "setsid": _peeler(),
    "unbuffer": _peeler(),
    "caffeinate": _peeler("tw"),
    "chronic": _peeler(),
    "proxychains": _peeler("f"),
    "proxychains4": _peeler("f"),
    "torsocks": _peeler("uapP"),
    "fakeroot": _peeler("lsi"),
    "xargs": _peel_xargs,
    "watch": _peel_watch,
    "su": _peel_su,
    "runuser": _peel_runuser,
    "busybox": lambda args: args,
    "npx": _peel_npx,
    "bunx": _peel_npx,
    "uvx": _PEEL_UV_RUN,
    "direnv": _peel_subcommand("exec", _peeler(positional=1)),
    "npm": _peel_subcommand("exec x", _peel_npx),
    "pnpm": _peel_subcommand("exec dlx", _peel_npx),
    "yarn": _peel_subcommand("exec dlx", _peel_npx),
    "bun": _peel_subcommand("x", _peel_npx),
    "uv": _peel_uv,
    "pipx": _peel_subcommand("run", _peeler("", ("--spec", "--python", "--index-url"))),
    "poetry": _peel_subcommand("run", _peeler()),
    "pdm": _peel_subcommand("run", _peeler()),
    "pipenv": _peel_subcommand("run", _peeler()),
    "bundle": _peel_subcommand("exec", _peeler()),
    "conda": _peel_subcommand("run", _CONDA_RUN),
    "mamba": _peel_subcommand("run", _CONDA_RUN),
    "micromamba": _peel_subcommand("run", _CONDA_RUN),
}


def _shell_script(args: list[str]) -> tuple[str | None, bool]:
    """For ``bash ARGS``: (the ``-c`` script, or None; whether the shell reads stdin)."""
    i, n = 0, len(args)
    has_c = from_stdin = False
    while i < n:
        a = args[i]
        if a in ("--", "-"):
            i += 1
            break
        if a.startswith("--"):
            i += 2 if a in ("--rcfile", "--init-file") else 1
            continue
        if a[:1] in ("-", "+") and len(a) > 1:
            letters = a[1:]
            has_c = has_c or (a[0] == "-" and "c" in letters)
            from_stdin = from_stdin or (a[0] == "-" and "s" in letters)
            i += 2 if ("o" in letters or "O" in letters) else 1
            continue
        break
    if has_c:
        return (args[i] if i < n else ""), False
    return None, from_stdin or i >= n


class _Res:
    """What one program invocation does: kinds, changed paths, and commands it runs."""

    __slots__ = ("kinds", "nested", "sources", "targets")

    def __init__(
        self,
        *kinds: str,
        targets: Iterable[str] = (),
        sources: Iterable[str] = (),
        nested: Iterable[list[str]] = (),
    ) -> None:
        self.kinds = set(kinds)
        self.targets = list(targets)
        self.sources = list(sources)
        self.nested = list(nested)


class _Analyzer:
    """Turns parsed commands into ``Command`` records, recursing into nested scripts."""

    def __init__(self) -> None:
        self.commands: list[Command] = []
        self.errors: list[str] = []
        self.functions: set[str] = set()  # shell functions the line defines
        self._pipelines = 0

    def new_pipeline(self) -> int:
        self._pipelines += 1
        return self._pipelines

    def script(self, text: str, cwd: str | None, depth: int) -> None:
        p = _Parser(text, self, cwd, depth)
        p.parse_list(frozenset())
        if p.pending:
            self.errors.append("here-document without its body")
        for raw in p.raws:
            words = raw.words
            i = 0
            while i < len(words) and _ASSIGN_RE.match(words[i]):
                i += 1
            self.argv(words[i:], raw.redirects, raw.pipeline, raw.cwd, depth)

    def argv(
        self,
        argv: list[str],
        redirects: Sequence[_Redirect],
        pid: int,
        cwd: str | None,
        depth: int,
    ) -> None:
        written = [r.target for r in redirects if r.writes]
        stdin = next(
            (r.body for r in reversed(redirects) if r.body is not None and r.fd in (None, "0")),
            None,
        )
        for _ in range(32):
            if not argv:
                break
            prog = _prog(argv[0])
            script: str | None = None
            if prog in _SHELLS:
                script, reads_stdin = _shell_script(argv[1:])
                if script is None and not (reads_stdin and stdin is not None):
                    break  # a script file, or an interactive shell: unknown
                if script is None:
                    script = stdin
            elif prog == "eval":
                script = " ".join(argv[1:])
            else:
                peel = _WRAPPERS.get(prog)
                rest = peel(argv[1:]) if peel is not None else None
                if rest is None:
                    break
                if isinstance(rest, str):
                    script = rest
                elif not rest:
                    break  # the wrapper alone (``sudo -l``, ``env``): classified itself
                else:
                    argv = rest
                    continue
            if depth + 1 > _MAX_DEPTH:
                raise _TooDeep
            self.script(script or "", cwd, depth + 1)
            argv = []
        if not argv:
            if written:
                self.commands.append(
                    Command(
                        (),
                        tuple(written),
                        "file_write",
                        frozenset({"file_write"}),
                        tuple(written),
                        (),
                        cwd,
                        pid,
                    )
                )
            return
        # a call to a function the line defines: its body is already listed
        res = _Res("read_only") if argv[0] in self.functions else _classify_argv(argv)
        for nested in res.nested:
            if nested:
                self.argv(nested, (), self.new_pipeline(), cwd, depth + 1)
        kinds = res.kinds or {"unknown"}
        if written:
            kinds.add("file_write")
        if len(kinds) > 1:
            kinds.discard("read_only")
        self.commands.append(
            Command(
                tuple(argv),
                tuple(written),
                min(kinds, key=_RANK.__getitem__),
                frozenset(kinds),
                tuple(dict.fromkeys([*written, *res.targets])),
                tuple(res.sources),
                cwd,
                pid,
            )
        )


# --- classification tables -----------------------------------------------------

_Handler = Callable[[list[str]], _Res]
_READ: Final = _words("GET HEAD OPTIONS TRACE")
_REMOTE_RE: Final = re.compile(r"(?:[^/:@\s]+@)?[A-Za-z0-9_.\-\[\]]+:(?!//)|[a-z][a-z0-9+.-]*://")


def _is_remote(path: str) -> bool:
    return bool(_REMOTE_RE.match(path)) and not path.startswith(("/", "./", "../", "~"))


def _on_operands(kind: str, short_arg: str = "", long_arg: Iterable[str] = ()) -> _Handler:
    """``rm``, ``touch``, ``mkdir``: every operand is a changed path."""
    return lambda args: _Res(kind, targets=_opts(args, short_arg, long_arg)[1])


def _copier(
    kind: str, short_arg: str = "St", long_arg: Iterable[str] = (), *, moves: bool = False
) -> _Handler:
    """``cp``/``mv``/``ln``/``install``: the destination (``dir/name`` when copying into a dir)."""
    longs = ("--suffix", "--target-directory", *long_arg)

    def handler(args: list[str]) -> _Res:
        opts, ops = _opts(args, short_arg, longs)
        target_dir = _val(opts, "-t --target-directory")
        if target_dir is not None:
            srcs, dest, into = ops, target_dir, True
        elif len(ops) >= 2:
            srcs, dest = ops[:-1], ops[-1]
            into = len(srcs) > 1 or dest.endswith("/")
        elif len(ops) == 1:  # ``ln -s ../x``: a link named x here
            srcs, dest, into = ops, ".", True
        else:
            return _Res(kind)
        if _has(opts, "-T --no-target-directory"):
            into = False
        if into:
            names = [posixpath.basename(s.rstrip("/")) for s in srcs]
            targets = [posixpath.normpath(posixpath.join(dest, name)) for name in names]
        else:
            targets = [dest]
        return _Res(kind, targets=[*srcs, *targets] if moves else targets, sources=srcs)

    return handler


_CP: Final = _copier("file_write")
_MV: Final = _copier("move", moves=True)


def _install(args: list[str]) -> _Res:
    if any(a in ("-d", "--directory") for a in args):
        return _on_operands("file_write", "gmo", ("--group", "--mode", "--owner"))(args)
    return _copier("file_write", "gmoSt", ("--group", "--mode", "--owner"))(args)


def _remote_copy(args: list[str], short_arg: str, long_arg: Iterable[str]) -> _Res:
    """``rsync``/``scp``: a remote destination is a network mutation, a local one a write."""
    opts, ops = _opts(args, short_arg, long_arg)
    if _has(opts, "-n --dry-run --list-only") or len(ops) < 2:
        return _Res("read_only")
    dest = ops[-1]
    kinds = {"network_mutation"} if _is_remote(dest) else {"file_write"}
    if any(n.startswith("--delete") or n == "--remove-source-files" for n, _ in opts):
        kinds.add("delete")
    res = _Res(*kinds)
    if not _is_remote(dest):
        local = _CP(ops)
        res.targets, res.sources = local.targets, local.sources
    return res


_RSYNC_LONG: Final = _words(
    """--rsh --exclude --include --filter --exclude-from --include-from --files-from --port
    --password-file --temp-dir --partial-dir --log-file --chmod --chown --timeout --bwlimit
    --backup-dir --suffix --compare-dest --copy-dest --link-dest --block-size --max-size
    --min-size --remote-option --out-format --rsync-path"""
)


def _rsync(args: list[str]) -> _Res:
    return _remote_copy(args, "eBfMT", _RSYNC_LONG)


def _scp(args: list[str]) -> _Res:
    return _remote_copy(args, "cFiJloPSDX", ())


_CURL_SHORT: Final = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_CURL_LONG: Final = _words(
    """--data --data-raw --data-binary --data-urlencode --data-ascii --json --form --form-string
    --upload-file --request --output --header --user --user-agent --referer --cookie --cookie-jar
    --config --max-time --connect-timeout --retry --output-dir --proxy --write-out --dump-header
    --cacert --cert --key --url --resolve --range --limit-rate --trace --trace-ascii
    --oauth2-bearer --netrc-file --interface --retry-delay --retry-max-time --speed-limit
    --speed-time --max-filesize --stderr --unix-socket --aws-sigv4 --variable --url-query
    --max-redirs --cert-type --key-type --pass --capath --ciphers --continue-at --proxy-user
    --expect100-timeout --happy-eyeballs-timeout-ms --local-port --dns-servers"""
)
_CURL_DATA: Final = """-d --data --data-raw --data-binary --data-urlencode --data-ascii --json
    -F --form --form-string -T --upload-file"""


def _curl(args: list[str]) -> _Res:
    opts, _ = _opts(args, _CURL_SHORT, _CURL_LONG)
    method = _val(opts, "-X --request")
    if method is not None:
        mutating = method.upper() not in _READ
    else:
        mutating = _has(opts, _CURL_DATA) and not _has(opts, "-G --get")
    kinds = {"network_mutation"} if mutating else set()
    outputs = _words("-o --output -D --dump-header -c --cookie-jar")
    targets = [v for n, v in opts if n in outputs and v and v != "-" and v not in _SINKS]
    if targets or _has(opts, "-O --remote-name --remote-name-all"):
        kinds.add("file_write")
    return _Res(*(kinds or {"read_only"}), targets=targets)


_WGET_LONG: Final = _words(
    """--output-document --post-data --post-file --method --body-data --body-file --output-file
    --append-output --directory-prefix --header --user-agent --user --password --input-file
    --tries --timeout --wait --level --accept --reject --execute --referer --load-cookies
    --save-cookies"""
)


def _wget(args: list[str]) -> _Res:
    opts, _ = _opts(args, "aoOPeiBtTwUQlARDIX", _WGET_LONG)
    method = _val(opts, "--method")
    kinds: set[str] = set()
    if _has(opts, "--post-data --post-file --body-data --body-file") or (
        method is not None and method.upper() not in _READ
    ):
        kinds.add("network_mutation")
    out = _val(opts, "-O --output-document")
    targets: list[str] = []
    if not _has(opts, "--spider") and out != "-" and out not in _SINKS:
        kinds.add("file_write")  # wget saves what it downloads
        if out:
            targets.append(out)
    return _Res(*(kinds or {"read_only"}), targets=targets)


_HTTPIE_DATA: Final = re.compile(r"[^=:@]*(:=|=@|@|=(?!=))")
_HTTPIE_LONG: Final = _words(
    """--auth --auth-type --output --print --style --session --verify --cert --cert-key --timeout
    --proxy --pretty --format-options"""
)


def _httpie(args: list[str]) -> _Res:
    opts, ops = _opts(args, "aAopsv", _HTTPIE_LONG)
    if ops and ops[0].isalpha() and ops[0].isupper():
        mutating = ops[0] not in _READ
    else:
        items = ops[1:]
        mutating = _has(opts, "-f --form --raw --multipart") or any(
            _HTTPIE_DATA.match(i) for i in items
        )
    kinds = {"network_mutation"} if mutating else set()
    out = _val(opts, "-o --output")
    if out or _has(opts, "-d --download"):
        kinds.add("file_write")
    return _Res(*(kinds or {"read_only"}), targets=[out] if out else [])


# -- git --

_GIT_GLOBAL_ARG: Final = _words(
    "-C -c --git-dir --work-tree --namespace --config-env --super-prefix"
)
_GIT_READ: Final = _words(
    """status log diff show blame annotate grep ls-files ls-tree ls-remote rev-parse rev-list
    describe shortlog cat-file show-ref for-each-ref whatchanged help version check-ignore
    check-attr check-ref-format check-mailmap name-rev merge-base cherry count-objects fsck var
    diff-tree diff-index diff-files range-diff show-branch verify-commit verify-tag verify-pack
    get-tar-commit-id difftool request-pull column fmt-merge-msg interpret-trailers patch-id"""
)
_GIT_MUTATE: Final = _words(
    """add commit pull fetch merge rebase reset revert cherry-pick restore am init gc prune repack
    maintenance update-ref update-index symbolic-ref replace filter-branch filter-repo
    sparse-checkout rerere commit-tree mktag mktree read-tree write-tree checkout-index
    merge-file mergetool pack-refs prune-packed unpack-objects update-server-info fast-import
    citool gui"""
)


def _git_sub(args: Sequence[str]) -> tuple[str, list[str]]:
    """Skip git's global options (``-C dir``, ``-c k=v``, ``--no-pager`` ...)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GIT_GLOBAL_ARG:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            return a, list(args[i + 1 :])
    return "", []


def _git(args: list[str]) -> _Res:
    sub, rest = _git_sub(args)
    opts, ops = _opts(rest)
    if not sub or sub in _GIT_READ:
        return _Res("read_only")
    if sub in ("push", "fetch", "clean", "add", "rm", "mv") and _has(opts, "-n --dry-run"):
        return _Res("read_only")
    if sub == "push":
        return _Res("git_mutation", "network_mutation")
    if sub in _GIT_MUTATE:
        dry = sub == "commit" and _has(opts, "--dry-run")
        return _Res("read_only" if dry else "git_mutation")
    handler = _GIT_SUBCOMMANDS.get(sub)
    if handler is None:
        return _Res("unknown")  # an alias or an unknown subcommand
    return handler(rest, opts, ops)


def _git_rm(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    if _has(opts, "--cached"):
        return _Res("git_mutation")
    return _Res("delete", "git_mutation", targets=ops)


def _git_mv(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    res = _MV(rest)
    res.kinds = {"move", "git_mutation"}
    return res


def _git_clone(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    long_arg = _words(
        """--branch --origin --depth --config --reference --template --separate-git-dir --jobs
        --upload-pack --filter"""
    )
    _, cops = _opts(rest, "bcoju", long_arg)
    dest = cops[1] if len(cops) > 1 else posixpath.basename(_first(cops).rstrip("/"))
    return _Res("file_write", targets=[dest.removesuffix(".git")] if dest else [])


def _git_branch(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    changes = """-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream
        -f --force --edit-description --track"""
    if _has(opts, changes):
        return _Res("git_mutation")
    listing = """-l --list -a --all -r --remotes --contains --no-contains --merged --no-merged
        --points-at --show-current"""
    return _Res("git_mutation" if ops and not _has(opts, listing) else "read_only")


def _git_tag(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    if _has(opts, "-d --delete -a --annotate -s --sign -u -f --force -m --message -F --file"):
        return _Res("git_mutation")
    listing = "-l --list -n --contains --no-contains --points-at --merged --no-merged -v --verify"
    return _Res("git_mutation" if ops and not _has(opts, listing) else "read_only")


def _git_config(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    copts, cops = _opts(rest, "f", ("--file", "--blob", "--type", "--default"))
    action = _first(cops)
    reads = "--get --get-all --get-regexp --get-urlmatch --list -l --get-color --get-colorbool"
    if action in ("get", "list") or _has(copts, reads):
        return _Res("read_only")
    writes = """--unset --unset-all --add --replace-all --rename-section --remove-section -e
        --edit"""
    if action in _words("set unset rename-section remove-section edit") or _has(copts, writes):
        return _Res("git_mutation")
    return _Res("git_mutation" if len(cops) >= 2 else "read_only")


def _git_verbs(
    reads: str, *, write: str = "git_mutation", default: str = ""
) -> Callable[[list[str], _Opts, list[str]], _Res]:
    """A git subcommand whose first operand is an action: ``reads`` are read-only."""
    names = _words(reads)

    def handler(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
        action = _first(ops) or default
        return _Res("read_only" if action in names or not action else write)

    return handler


def _git_apply(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    checks = _has(opts, "--check --stat --numstat --summary") and not _has(opts, "--apply")
    return _Res("read_only" if checks else "git_mutation")


def _git_archive(rest: list[str], opts: _Opts, ops: list[str]) -> _Res:
    out = _val(_opts(rest, "o", ("--output",))[0], "-o --output")
    return _Res("file_write", targets=[out]) if out else _Res("read_only")


_GIT_SUBCOMMANDS: Final[dict[str, Callable[[list[str], _Opts, list[str]], _Res]]] = {
    "checkout": lambda rest, o, ops: _Res("git_mutation" if rest else "read_only"),
    "switch": lambda rest, o, ops: _Res("git_mutation" if rest else "read_only"),
    "clean": lambda rest, o, ops: _Res("delete"),
    "rm": _git_rm,
    "mv": _git_mv,
    "clone": _git_clone,
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "stash": _git_verbs("list show", default="push"),
    "remote": _git_verbs("show get-url"),
    "reflog": _git_verbs("show", write="git_mutation", default="show"),
    "worktree": _git_verbs("list", default="list"),
    "submodule": _git_verbs("status summary", default="status"),
    "notes": _git_verbs("list show", default="list"),
    "bisect": _git_verbs("log view visualize help terms", default="help"),
    "lfs": _git_verbs("ls-files status env version logs fsck", default="help"),
    "apply": _git_apply,
    "archive": _git_archive,
    "format-patch": lambda rest, o, ops: _Res("read_only" if _has(o, "--stdout") else "file_write"),
    "bundle": lambda rest, o, ops: _Res("file_write" if _first(ops) == "create" else "read_only"),
    "hash-object": lambda rest, o, ops: _Res("git_mutation" if _has(o, "-w") else "read_only"),
}


# -- GitHub CLI and cloud CLIs --

_REMOTE_READ_VERBS: Final = _words(
    """view list ls status diff checks search browse watch show get describe logs log token
    version help completion"""
)
_REMOTE_WRITE_VERBS: Final = _words(
    """create merge close reopen comment edit delete review ready lock unlock transfer pin unpin
    upload fork rename archive unarchive sync set remove add enable disable rerun cancel run
    approve develop deploy update patch apply replace scale start stop restart import"""
)
_GH_API_LONG: Final = _words(
    "--method --field --raw-field --header --input --hostname --preview --jq --template --cache"
)


def _gh(args: list[str]) -> _Res:
    _, ops = _opts(args, "R", ("--repo", "--hostname", "--jq", "--template"))
    group, verb = _first(ops), _first(ops[1:])
    if group == "api":
        aopts, _ = _opts(args, "XfFHRpqt", _GH_API_LONG)
        method = _val(aopts, "-X --method")
        if method is None:
            method = "POST" if _has(aopts, "-f -F --field --raw-field --input") else "GET"
        return _Res("read_only" if method.upper() in _READ else "network_mutation")
    if group in ("status", "browse", "search", "completion", "version", "help", ""):
        return _Res("read_only")
    if (group, verb) == ("pr", "checkout"):
        return _Res("git_mutation")
    if (group, verb) == ("repo", "clone") or verb == "download":
        return _Res("file_write")
    if group == "extension" and verb in ("install", "upgrade", "remove"):
        return _Res("package_install")
    if group in ("config", "alias"):
        return _Res("file_write" if verb in ("set", "delete", "import") else "read_only")
    if group == "auth":
        return _Res("read_only" if verb in ("status", "token") else "unknown")
    if verb in _REMOTE_READ_VERBS:
        return _Res("read_only")
    if verb in _REMOTE_WRITE_VERBS:
        return _Res("network_mutation")
    return _Res("unknown")


_KUBECTL_READ: Final = _words(
    """get describe logs log explain version top api-resources api-versions cluster-info diff
    events wait completion help options plugin kustomize"""
)
_KUBECTL_WRITE: Final = _words(
    """apply create delete patch replace scale autoscale set edit label annotate expose run exec
    cp drain cordon uncordon taint certificate debug attach port-forward proxy"""
)
_KUBECTL_LONG: Final = _words(
    """--namespace --context --kubeconfig --cluster --user --server --token --selector --output
    --filename --container"""
)


def _kubectl(args: list[str]) -> _Res:
    opts, ops = _opts(args, "nslcfo", _KUBECTL_LONG)
    verb, sub = _first(ops), _first(ops[1:])
    if _has(opts, "--dry-run"):
        return _Res("read_only")
    if verb in _KUBECTL_READ or (verb == "auth" and sub in ("can-i", "whoami")):
        return _Res("read_only")
    if verb == "config":
        reads = _words("view get-contexts current-context get-clusters get-users")
        return _Res("read_only" if sub in reads else "file_write")
    if verb == "rollout":
        return _Res("read_only" if sub in ("status", "history") else "network_mutation")
    if verb in _KUBECTL_WRITE:
        return _Res("network_mutation")
    return _Res("unknown")


def _helm(args: list[str]) -> _Res:
    long_arg = _words("--namespace --kube-context --kubeconfig --values --set --version --repo")
    opts, ops = _opts(args, "nfo", long_arg)
    verb = _first(ops)
    reads = """list ls status get history show inspect template lint search version env verify
        diff help completion"""
    if _has(opts, "--dry-run") or verb in _words(reads):
        return _Res("read_only")
    if verb in _words("install upgrade uninstall delete rollback test push"):
        return _Res("network_mutation")
    if verb in _words("repo dependency dep pull fetch plugin package"):
        return _Res("package_install")
    if verb == "create":
        return _Res("file_write")
    return _Res("unknown")


def _terraform(args: list[str]) -> _Res:
    opts, ops = _opts(args)
    verb, sub = _first(ops), _first(ops[1:])
    reads = """plan show validate output graph providers version console test help metadata
        modules query"""
    if verb in _words(reads):
        return _Res("read_only")
    if verb == "fmt":
        return _Res("read_only" if "-check" in args or _has(opts, "--check") else "file_write")
    if verb in ("init", "get"):
        return _Res("package_install")
    if verb == "state":
        return _Res("read_only" if sub in ("list", "show", "pull") else "network_mutation")
    if verb == "workspace":
        return _Res("read_only" if sub in ("list", "show") else "network_mutation")
    if verb in _words("apply destroy import taint untaint refresh force-unlock"):
        return _Res("network_mutation")
    return _Res("unknown")


def _pulumi(args: list[str]) -> _Res:
    _, ops = _opts(args, "sC", ("--stack", "--cwd"))
    verb, sub = _first(ops), _first(ops[1:])
    if verb in _words("preview whoami version logs about help watch"):
        return _Res("read_only")
    if verb in _words("up update destroy refresh import cancel"):
        return _Res("network_mutation")
    if verb in ("stack", "config", "state"):
        if sub in _words("ls output get export history select show") or not sub:
            return _Res("read_only")
        return _Res("network_mutation" if verb != "config" else "file_write")
    return _Res("unknown")


_CLOUD_READ_RE: Final = re.compile(
    r"(describe|list|get|head|lookup|search|scan|query|batch-get|select|filter|validate|"
    r"estimate|preview|check|wait|show|read|tail|print|info|version|help|ls|whoami)([-_].*)?"
)
_CLOUD_WRITE_RE: Final = re.compile(
    r"(create|delete|update|put|set|add|remove|attach|detach|modify|start|stop|reboot|terminate|"
    r"run|invoke|deploy|send|publish|upload|copy|cp|mv|rm|sync|import|register|deregister|"
    r"associate|disassociate|enable|disable|tag|untag|ssh|scp|restore|reset|resize|submit|"
    r"execute|rotate|revoke|grant|cancel|purge)([-_].*)?"
)
_CLOUD_LONG: Final = _words(
    """--region --profile --output --project --query --format --endpoint-url --subscription
    --resource-group --filter"""
)


def _cloud(args: list[str]) -> _Res:
    """aws, gcloud, az: reads are describe/list/get/show-style verbs, the rest mutate."""
    opts, ops = _opts(args, "", _CLOUD_LONG)
    if _has(opts, "--dry-run --generate-cli-skeleton --help") or not ops:
        return _Res("read_only")
    if ops[0] == "s3" and len(ops) > 1:  # aws s3 ls|cp|mv|rm|sync
        verb = ops[1]
        if verb in ("ls", "presign"):
            return _Res("read_only")
        dest = ops[-1] if len(ops) > 3 else ""
        if verb in ("cp", "sync") and dest and not dest.startswith("s3://"):
            return _Res("file_write", targets=[dest])
        return _Res("network_mutation")
    if ops[0] in ("configure", "config", "init", "login", "auth"):
        reads = any(_CLOUD_READ_RE.fullmatch(o) for o in ops[1:])
        return _Res("read_only" if reads else "file_write")
    for word in ops[1:]:
        if _CLOUD_READ_RE.fullmatch(word):
            return _Res("read_only")
        if word in _REMOTE_WRITE_VERBS or _CLOUD_WRITE_RE.fullmatch(word):
            return _Res("network_mutation")
    return _Res("unknown")


# -- containers and processes --

_DOCKER_READ: Final = _words(
    """ps images inspect logs version info stats top history search events port diff ls list
    config df wait show"""
)
_DOCKER_PROC: Final = _words(
    """run start stop restart kill pause unpause exec attach up down create update rename scale
    watch"""
)
_DOCKER_GROUPS: Final = _words(
    """container image network volume system builder buildx context plugin manifest compose stack
    service secret node swarm trust"""
)
_DOCKER_LONG: Final = _words(
    """--context --host --config --log-level --file --project-name --env-file --profile
    --project-directory"""
)


def _docker(args: list[str]) -> _Res:
    verb, rest = _sub(args, "cHlfp", _DOCKER_LONG)
    if verb in _DOCKER_GROUPS and rest:
        verb, _ = _sub(rest, "fp", _DOCKER_LONG)
    if verb in _DOCKER_READ or not verb:
        return _Res("read_only")
    if verb in ("rm", "rmi", "prune", "remove"):
        return _Res("delete")
    if verb in _DOCKER_PROC:
        return _Res("process_control")
    if verb in _words("build commit tag save export load import cp bake"):
        return _Res("file_write")
    if verb == "push":
        return _Res("network_mutation")
    if verb == "pull":
        return _Res("package_install")
    return _Res("unknown")


def _kill(args: list[str]) -> _Res:
    return _Res("read_only" if args[:1] in (["-l"], ["-L"], ["--list"]) else "process_control")


def _verb_table(reads: str, write: str, short_arg: str = "") -> _Handler:
    """A CLI whose first operand is a verb: ``reads`` are read-only, the rest ``write``."""
    names = _words(reads)

    def handler(args: list[str]) -> _Res:
        verb = _first(_opts(args, short_arg)[1])
        return _Res("read_only" if not verb or verb in names else write)

    return handler


def _service(args: list[str]) -> _Res:
    if "--status-all" in args:
        return _Res("read_only")
    ops = _opts(args)[1]
    action = ops[1] if len(ops) > 1 else ""
    return _Res("read_only" if action in ("status", "") else "process_control")


def _crontab(args: list[str]) -> _Res:
    opts = _opts(args, "u")[0]
    if _has(opts, "-l"):
        return _Res("read_only")
    return _Res("delete" if _has(opts, "-r") else "file_write")


def _sudo(args: list[str]) -> _Res:
    opts = _opts(args, "ugpCDrtTUh")[0]
    return _Res("read_only" if _has(opts, "-l -v -k -K -V") else "unknown")


def _systemctl(args: list[str]) -> _Res:
    long_arg = _words("--type --property --host --machine --lines --output --signal --state --root")
    verb = _first(_opts(args, "tpHMnos", long_arg)[1])
    reads = """status show cat list-units list-unit-files list-timers list-sockets list-jobs
        list-dependencies list-machines is-active is-enabled is-failed is-system-running
        get-default help show-environment"""
    return _Res("read_only" if not verb or verb in _words(reads) else "process_control")


# -- package managers --

_INSTALL_VERBS: Final = _words(
    """install i in ins inst add reinstall remove rm r un uninstall erase purge autoremove upgrade
    update up dist-upgrade full-upgrade dup del delete build-dep tap untap link unlink pin unpin
    cleanup downgrade distro-sync swap groupinstall groupremove localinstall makecache refresh
    sync require ci clean-install install-clean ic it install-test dedupe ddp prune rebuild rb
    import fetch global local use default self toolchain component target plugin bundle fix
    install-hooks autoclean"""
)
_PKG_READ_VERBS: Final = _words(
    """list ls la ll info show search se s find query provides whatprovides deps depends rdepends
    uses outdated doctor config leaves home cat desc policy madison changelog showpkg
    check-update repolist history why why-not explain contents dependency environment env which
    specification files owner help current version versions where view v audit freeze check
    tree root bin prefix whoami ping fund docs repo bugs licenses diagnose validate
    check-platform-reqs platform inspect debug hash index status dir path"""
)
_DRY_RUN: Final = "-s --simulate --dry-run --just-print --no-act --recon"


def _package_manager(short_arg: str = "", long_arg: Iterable[str] = ()) -> _Handler:
    """apt, brew, gem, rustup, version managers...: install verbs vs query verbs."""

    def handler(args: list[str]) -> _Res:
        opts, ops = _opts(args, short_arg, long_arg)
        verb = _first(ops)
        if _has(opts, _DRY_RUN):
            return _Res("read_only")
        if verb in ("services", "service"):  # brew services start x
            action = _first(ops[1:])
            return _Res("read_only" if action in ("", "list", "info") else "process_control")
        if any(v in _INSTALL_VERBS for v in ops[:2]) and verb not in _PKG_READ_VERBS:
            return _Res("package_install")
        if not verb or verb in _PKG_READ_VERBS:
            return _Res("read_only")
        return _Res("unknown")

    return handler


_PIP_LONG: Final = _words(
    """--python --log --proxy --timeout --cache-dir --cert --client-cert --retries
    --exists-action --trusted-host --index-url --extra-index-url --requirement --constraint
    --target --prefix --root --src --upgrade-strategy --report"""
)


def _pip(args: list[str]) -> _Res:
    opts, ops = _opts(args, "rcet", _PIP_LONG)
    verb, sub = _first(ops), _first(ops[1:])
    if verb in ("install", "uninstall", "sync"):
        return _Res("read_only" if _has(opts, "--dry-run") else "package_install")
    if verb in ("download", "wheel"):
        return _Res("file_write")
    if verb == "compile":
        return _Res("file_write" if _has(opts, "-o --output-file") else "read_only")
    if verb == "cache":
        return _Res("delete" if sub in _words("purge remove clean prune") else "read_only")
    if verb == "config":
        return _Res("file_write" if sub in ("set", "unset", "edit") else "read_only")
    if (
        verb in _words("list show freeze check search help index inspect debug hash tree")
        or not verb
    ):
        return _Res("read_only")
    return _Res("unknown")


def _uv(args: list[str]) -> _Res:
    verb, rest = _sub(args, "p", ("--directory", "--project", "--python", "--cache-dir"))
    sub = _first([r for r in rest if not r.startswith("-")])
    if verb == "pip":
        return _pip(rest)
    if verb in ("add", "remove", "sync"):
        return _Res("read_only" if "--dry-run" in rest else "package_install")
    if verb in ("tool", "python", "self"):
        if sub in ("list", "dir", "find", "version"):
            return _Res("read_only")
        return _Res("file_write" if sub == "pin" else "package_install")
    if verb in ("lock", "venv", "init", "build", "format"):
        return _Res("read_only" if {"--check", "--dry-run"} & set(rest) else "file_write")
    if verb == "publish":
        return _Res("network_mutation")
    if verb == "cache":
        return _Res("delete" if sub in ("clean", "prune") else "read_only")
    if verb == "export":
        return _Res("file_write" if {"-o", "--output-file"} & set(rest) else "read_only")
    if verb in ("tree", "version", "help", ""):
        return _Res("read_only")
    return _Res("unknown")


_CHECK_SCRIPT_RE: Final = re.compile(r"check|verify|validate")
_FIX_SCRIPT_RE: Final = re.compile(r"fix|format|fmt|prettier|write")
_READ_SCRIPT_RE: Final = re.compile(
    r"(test|tests|lint|typecheck|type-check|types|tsc|e2e|spec|coverage|audit|ci)\b"
)
_BUILD_SCRIPT_RE: Final = re.compile(r"(build|compile|bundle|dist|generate|gen|codegen)\b")


def _script(name: str) -> _Res:
    """A project script (``npm run x``, ``make x``, ``just x``), classified by naming convention."""
    if _CHECK_SCRIPT_RE.search(name):
        return _Res("read_only")
    if _FIX_SCRIPT_RE.search(name):
        return _Res("file_write")
    if _READ_SCRIPT_RE.match(name):
        return _Res("read_only")
    if _BUILD_SCRIPT_RE.match(name):
        return _Res("file_write")
    if name in ("clean", "distclean"):
        return _Res("delete")
    return _Res("unknown")


_NPM_INSTALL: Final = _words(
    """install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install
    install-clean ic install-ci-test it install-test uninstall un unlink remove rm r update up
    upgrade udpate link ln dedupe ddp prune rebuild rb"""
)
_NPM_READ: Final = _words(
    """ls list la ll view v info show outdated search s se find why explain root bin prefix whoami
    ping doctor help fund docs home repo bugs query sbom get help-search licenses"""
)
_NPM_PUBLISH: Final = _words(
    "publish unpublish deprecate dist-tag owner access team org star unstar hook"
)
_NPM_WRITE: Final = _words("init create innit pack shrinkwrap config pkg build version")
_NPM_OTHER: Final = _words("start stop restart exec x dlx login logout adduser token")


def _js_package_manager(pm: str) -> _Handler:
    """npm, yarn, pnpm, bun: installs, scripts (by name), publishing, queries."""

    def handler(args: list[str]) -> _Res:
        verb, rest = _sub(args, "Cw", ("--prefix", "--workspace", "--filter", "--cwd", "--dir"))
        opts, ops = _opts(rest)
        if not verb:
            return _Res("package_install" if pm == "yarn" else "read_only")
        if verb in ("test", "t", "tst"):
            return _Res("read_only")
        if verb in ("run", "run-script", "rum", "urn"):
            name = _first(ops)
            if pm == "bun" and ("/" in name or "." in name):
                return _Res("unknown")  # bun run file.ts
            return _script(name) if name else _Res("read_only")
        if verb in _NPM_INSTALL or verb == "upgrade":
            return _Res("read_only" if _has(opts, "--dry-run") else "package_install")
        if verb == "audit":
            return _Res("package_install" if _first(ops) == "fix" else "read_only")
        if verb in _NPM_READ or (verb == "config" and _first(ops) in ("", "get", "list")):
            return _Res("read_only")
        if verb in _NPM_PUBLISH:
            return _Res("network_mutation")
        if verb in _NPM_WRITE:
            if verb == "version" and not ops:
                return _Res("read_only")
            return _Res("read_only" if _has(opts, "--dry-run") else "file_write")
        if verb == "cache":
            return _Res("delete" if _first(ops) in ("clean", "rm", "clear") else "read_only")
        if verb in _NPM_OTHER:
            return _Res("unknown")
        if pm in ("yarn", "pnpm", "bun"):
            return _script(verb)  # ``yarn lint`` runs the lint script
        return _Res("unknown")

    return handler


def _cargo(args: list[str]) -> _Res:
    verb, rest = _sub(args, "Z", ("--manifest-path", "--config", "--color"))
    fixes = "--fix" in rest
    reads = """check c test t bench tree metadata search verify-project version locate-project
        help audit deny"""
    if verb in _words(reads) and not fixes:
        return _Res("read_only")
    if verb == "clippy":
        return _Res("file_write" if fixes else "read_only")
    if verb == "fmt":
        return _Res("read_only" if "--check" in rest else "file_write")
    if verb in _words("build b doc d package new init fix vendor generate-lockfile"):
        return _Res("file_write")
    if verb in _words("install uninstall add remove rm update fetch binstall"):
        return _Res("package_install")
    if verb in _words("publish yank owner login logout"):
        return _Res("network_mutation")
    if verb == "clean":
        return _Res("delete")
    return _Res("unknown")  # run, script-like extensions


def _go(args: list[str]) -> _Res:
    verb, rest = _sub(args)
    sub = _first(rest)
    if verb in _words("test vet list doc version help bug tool") or (
        verb == "env" and "-w" not in rest and "-u" not in rest
    ):
        return _Res("read_only")
    if verb in _words("build fmt fix env work"):
        return _Res("file_write")
    if verb in ("install", "get"):
        return _Res("package_install")
    if verb == "mod":
        if sub in ("graph", "verify", "why") or (sub == "edit" and "-json" in rest):
            return _Res("read_only")
        return _Res("file_write" if sub in ("init", "edit") else "package_install")
    if verb == "clean":
        return _Res("delete")
    return _Res("unknown")  # go run, go generate


def _pacman(args: list[str]) -> _Res:
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    op = next((ch for ch in flags if ch.isupper()), "")
    query = op == "S" and set(flags) & set("silgp") and not set(flags) & set("yu")
    if op in ("Q", "F", "T") or query:
        return _Res("read_only")
    if op in ("S", "R", "U", "D"):
        return _Res("package_install")
    return _Res("unknown")


def _dpkg(args: list[str]) -> _Res:
    changes = "-i --install -r --remove -P --purge --configure --unpack -a"
    return _Res("package_install" if _has(_opts(args)[0], changes) else "read_only")


# -- builders, runners, linters, formatters --

_MAKE_CHECKS: Final = _words(
    """test tests check lint typecheck type-check types mypy vet verify help list fmt-check
    format-check ci"""
)
_MAKE_LONG: Final = _words(
    "--directory --file --makefile --include-dir --what-if --old-file --assume-old"
)


def _make(args: list[str]) -> _Res:
    opts, ops = _opts(args, "CfIlWo", _MAKE_LONG, attached="j")
    targets = [o for o in ops if "=" not in o and not o.isdigit()]
    if _has(opts, "-n --dry-run --just-print --recon -q --question -p"):
        return _Res("read_only")
    if not targets:
        return _Res("unknown")  # the default target could do anything
    if all(t in _MAKE_CHECKS for t in targets):
        return _Res("read_only")
    if any(t in ("install", "uninstall") for t in targets):
        return _Res("package_install")
    if all(t in ("clean", "distclean", "mostlyclean", "maintainer-clean") for t in targets):
        return _Res("delete")
    if all(_script(t).kinds == {"read_only"} for t in targets):
        return _Res("read_only")
    return _Res("unknown")


def _task_runner(args: list[str]) -> _Res:
    ops = _opts(args, "fdt", ("--justfile", "--working-directory", "--taskfile", "--dir"))[1]
    return _script(ops[0]) if ops else _Res("unknown")


def _fixer(
    write_flags: str = "",
    *,
    read_flags: str = "",
    write_verbs: str = "",
    read_default: bool = True,
) -> _Handler:
    """A linter/formatter: writes files only with a fix/write flag or verb (or by default)."""
    writes, reads, verbs = _words(write_flags), _words(read_flags), _words(write_verbs)

    def handler(args: list[str]) -> _Res:
        words = {a.partition("=")[0] for a in args}
        if words & reads:
            return _Res("read_only")
        verb = _first([a for a in args if not a.startswith("-")])
        if words & writes or verb in verbs:
            return _Res("file_write")
        return _Res("read_only" if read_default else "file_write")

    return handler


def _ruff(args: list[str]) -> _Res:
    verb = _first([a for a in args if not a.startswith("-")])
    if verb == "format":
        return _Res("read_only" if {"--check", "--diff"} & set(args) else "file_write")
    if verb == "clean":
        return _Res("delete")
    fixes = {"--fix", "--unsafe-fixes", "--add-noqa"} & set(args) and "--no-fix" not in args
    return _Res("file_write" if fixes else "read_only")


def _tsc(args: list[str]) -> _Res:
    reads = {"--noEmit", "--noemit", "--listFiles", "--showConfig", "-v", "--help"}
    return _Res("read_only" if reads & set(args) else "file_write")


_PY_MODULE_KIND: Final = {
    **dict.fromkeys(_words("venv virtualenv compileall py_compile zipapp"), "file_write"),
    **dict.fromkeys(
        _words("json.tool pydoc timeit tabnanny sysconfig site platform unittest doctest"),
        "read_only",
    ),
    **dict.fromkeys(_words("http.server trace cProfile pdb"), "unknown"),
    "ensurepip": "package_install",
}


def _python(args: list[str]) -> _Res:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" or (a.startswith("-m") and len(a) > 2):
            if a == "-m":
                mod, rest = (args[i + 1] if i + 1 < len(args) else ""), args[i + 2 :]
            else:
                mod, rest = a[2:], args[i + 1 :]
            kind = _PY_MODULE_KIND.get(mod)
            if kind is not None:
                return _Res(kind)
            return _classify_argv([mod, *rest]) if mod and "." not in mod else _Res("unknown")
        if a in ("-V", "--version", "-VV", "-h", "--help"):
            return _Res("read_only")
        if a in ("-W", "-X", "-Q"):
            i += 2
            continue
        if a.startswith("--") or (a.startswith("-") and "c" not in a[1:]):
            i += 1
            continue
        return _Res("unknown")  # -c code, a script, or stdin
    return _Res("unknown")


def _coverage(args: list[str]) -> _Res:
    verb, rest = _sub(args)
    if verb == "run":
        return _python(rest[rest.index("-m") :]) if "-m" in rest else _Res("unknown")
    if verb == "erase":
        return _Res("delete")
    if verb in _words("html xml json lcov combine annotate"):
        return _Res("file_write")
    return _Res("read_only")


# -- text and file tools with side effects behind flags --


def _sed(args: list[str]) -> _Res:
    opts, ops = _opts(args, "efl", ("--expression", "--file", "--line-length"), attached="i")
    if not _has(opts, "-i --in-place"):
        return _Res("read_only")
    if not _has(opts, "-e --expression -f --file"):
        if ops[:1] == [""]:  # BSD: sed -i '' 's/a/b/' f
            ops = ops[1:]
        ops = ops[1:]  # the script
    return _Res("file_write", targets=ops)


def _perl(args: list[str]) -> _Res:
    code: str | None = None
    inplace = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--" or not a.startswith("-") or a == "-":
            break
        for j, ch in enumerate(a[1:], 1):
            if ch in "eE":
                code = a[j + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                i += 0 if a[j + 1 :] else 1
                break
            if ch == "i":  # -i[ext]: the rest of the cluster is the backup suffix
                inplace = True
                break
            if ch in "IMmFlCdDx0":
                i += 1 if (ch in "IMm" and not a[j + 1 :]) else 0
                break
        i += 1
    files = args[i + 1 :] if i < len(args) and args[i] == "--" else args[i:]
    if code is None:
        return _Res("unknown")  # a script file
    if inplace:
        return _Res("file_write", targets=files)
    if re.search(r"\b(system|exec|unlink|rename|rmdir|mkdir|open|qx|kill)\b|`", code):
        return _Res("unknown")
    return _Res("read_only")


def _awk(args: list[str]) -> _Res:
    long_arg = _words("--file --assign --field-separator --include --exec --load")
    opts, ops = _opts(args, "fvFiE", long_arg)
    if _val(opts, "-i --include") == "inplace":
        return _Res("file_write", targets=ops[1:])
    if _has(opts, "-f --file -E --exec") or not ops:
        return _Res("unknown")
    program = ops[0]
    if re.search(r"\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;{}]*\|", program):
        return _Res("unknown")
    if re.search(r"\bprintf?\b[^;{}]*>", program):
        return _Res("file_write")
    return _Res("read_only")


def _yq(args: list[str]) -> _Res:
    opts, ops = _opts(args, "", ("--output-format", "--input-format", "--expression"))
    if not _has(opts, "-i --inplace"):
        return _Res("read_only")
    if ops[:1] and ops[0] in ("e", "eval", "ea", "eval-all"):
        ops = ops[1:]
    return _Res("file_write", targets=ops if _has(opts, "--expression") else ops[1:])


def _sort(args: list[str]) -> _Res:
    long_arg = _words("--key --output --field-separator --temporary-directory --buffer-size")
    out = _val(_opts(args, "kotTS", long_arg)[0], "-o --output")
    return _Res("file_write", targets=[out]) if out else _Res("read_only")


def _uniq(args: list[str]) -> _Res:
    ops = _opts(args, "fsw", ("--skip-fields", "--skip-chars", "--check-chars"))[1]
    return _Res("file_write", targets=ops[1:2]) if len(ops) > 1 else _Res("read_only")


def _tee(args: list[str]) -> _Res:
    files = [f for f in _opts(args)[1] if f not in _SINKS and not f.startswith("/dev/fd/")]
    return _Res("file_write", targets=files) if files else _Res("read_only")


def _dd(args: list[str]) -> _Res:
    out = next((a[3:] for a in args if a.startswith("of=")), None)
    if out is None or out in _SINKS:
        return _Res("read_only")
    return _Res("file_write", targets=[out])


def _iconv(args: list[str]) -> _Res:
    out = _val(_opts(args, "fto", ("--from-code", "--to-code", "--output"))[0], "-o --output")
    return _Res("file_write", targets=[out]) if out else _Res("read_only")


def _tar(args: list[str]) -> _Res:
    mode = args[0] if args and not args[0].startswith("-") else ""
    shorts = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    letters = set(mode + shorts)
    longs = {a.partition("=")[0] for a in args if a.startswith("--")}
    if "--list" in longs or ("t" in letters and not letters & set("cxruA")):
        return _Res("read_only")
    archive = None
    for k, a in enumerate(args):
        if a.startswith("--file="):
            archive = a.partition("=")[2]
        elif k + 1 < len(args) and (
            a in ("-f", "--file")
            or (a.startswith("-") and not a.startswith("--") and a.endswith("f"))
            or (k == 0 and a == mode and "f" in a)
        ):
            archive = args[k + 1]
    creates = letters & set("cruA") or longs & _words("--create --append --update --delete")
    return _Res("file_write", targets=[archive] if creates and archive and archive != "-" else [])


def _compressor(args: list[str]) -> _Res:
    opts, ops = _opts(args, "S", ("--suffix",))
    if _has(opts, "-c --stdout --to-stdout -t --test -l --list"):
        return _Res("read_only")
    return _Res("file_write", targets=ops)


def _unzip(args: list[str]) -> _Res:
    listing = _has(_opts(args, "dx")[0], "-l -t -Z -v -p -c -z")
    return _Res("read_only" if listing else "file_write")


def _patch(args: list[str]) -> _Res:
    opts, ops = _opts(args, "pioDBFrVYzdg", ("--input", "--output", "--directory", "--strip"))
    if _has(opts, "--dry-run -C --check"):
        return _Res("read_only")
    out = _val(opts, "-o --output")
    return _Res("file_write", targets=[out] if out else ops[:1])


def _find(args: list[str]) -> _Res:
    """``-delete`` deletes under the start paths; ``-exec CMD ;`` runs CMD (classified too)."""
    kinds = {"read_only"}
    nested: list[list[str]] = []
    targets: list[str] = []
    starts: list[str] = []
    i, n = 0, len(args)
    while i < n and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < n and not args[i].startswith(("-", "(", "!")):
        starts.append(args[i])
        i += 1
    while i < n:
        a = args[i]
        if a == "-delete":
            kinds.add("delete")
            targets.extend(starts or ["."])
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            cmd: list[str] = []
            while j < n and not (args[j] == ";" or (args[j] == "+" and cmd and cmd[-1] == "{}")):
                cmd.append(args[j])
                j += 1
            nested.append(cmd)
            i = j
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < n:
            kinds.add("file_write")
            targets.append(args[i + 1])
            i += 1
        i += 1
    if len(kinds) > 1:
        kinds.discard("read_only")
    return _Res(*kinds, targets=targets, nested=nested)


def _fd(args: list[str]) -> _Res:
    for k, a in enumerate(args):
        if a in ("-x", "--exec", "-X", "--exec-batch"):
            cmd = args[k + 1 :]
            return _Res("read_only", nested=[cmd[: cmd.index(";")] if ";" in cmd else cmd])
    return _Res("read_only")


def _has_any(args: list[str], names: str) -> bool:
    wanted = _words(names)
    return any(a.partition("=")[0] in wanted for a in args)


_SIMPLE: Final[dict[str, str]] = {
    **dict.fromkeys(
        _words(
            """ls ll la dir vdir cat tac nl less more most head tail wc grep egrep fgrep rg ag ack
            echo printf pwd which whereis type whoami id groups uname cal uptime ps pgrep pidof
            top htop btop free df du stat file tree realpath readlink basename dirname diff diff3
            cmp comm cut tr paste join column fold fmt od hexdump xxd strings md5sum sha1sum
            sha224sum sha256sum sha384sum sha512sum shasum cksum sum b2sum base32 base64 basenc
            jq gron true false : test [ [[ seq yes expr bc dc printenv locale getconf nproc lscpu
            lsblk lsusb lspci lsmod lsof netstat ss ifconfig ping ping6 dig nslookup host
            traceroute tracepath mtr whois arp route tty arch sw_vers lsb_release w who last
            lastlog users finger vmstat iostat mpstat dmesg journalctl man info tldr help apropos
            whatis history jobs sleep wait read cd pushd popd dirs export unset alias unalias set
            shopt declare typeset local readonly let shift exit return break continue trap umask
            ulimit hash getopts caller compgen complete times clear reset tput rev shuf numfmt
            expand unexpand look tsort factor env time command builtin exec bat batcat glow
            pygmentize highlight zcat bzcat xzcat zstdcat lzcat zless zgrep zegrep zfgrep bzgrep
            xzgrep zdiff zmore cloc tokei scc fzf hyperfine xmllint ssh-keyscan getent nm objdump
            readelf ldd otool fc-list pytest py.test tox nox jest vitest mocha ava karma phpunit
            rspec behave mypy dmypy pyright pyre pytype pylint flake8 pyflakes pycodestyle
            pydocstyle bandit vulture radon safety pip-audit shellcheck hadolint yamllint
            actionlint tflint checkov tfsec staticcheck govulncheck revive errcheck golint
            markdownlint-cli2 commitlint license-checker deptry terraform-docs apt-cache
            dpkg-query atq"""
        ),
        "read_only",
    ),
    **dict.fromkeys(
        _words(
            """chmod chown chgrp chattr setfacl chflags mkfifo mknod mktemp ssh-keygen vim vi nvim
            nano emacs ed ex micro hx kak sudoedit split csplit"""
        ),
        "file_write",
    ),
    **dict.fromkeys(
        _words(
            """ssh sftp telnet nc ncat netcat socat ftp mosh sendmail mail mailx mutt twine ansible
            ansible-playbook vercel netlify flyctl fly heroku firebase serverless sls wrangler"""
        ),
        "network_mutation",
    ),
    **dict.fromkeys(
        _words(
            """reboot shutdown halt poweroff init telinit renice at batch atrm disown bg fg pkill
            killall xkill skill"""
        ),
        "process_control",
    ),
    "umount": "unknown",
}

_PKG: Final = _package_manager("", ("--root", "--config", "--prefix"))
_CONDA: Final = _package_manager("nc", ("--name", "--channel", "--prefix"))

_HANDLERS: Final[dict[str, _Handler]] = {
    **dict.fromkeys(_words("rmdir unlink srm trash trash-put"), _on_operands("delete")),
    "rm": _on_operands("delete"),
    "shred": _on_operands("delete", "ns", ("--iterations", "--size", "--random-source")),
    "mv": _MV,
    "rename": lambda args: _Res("move", targets=_opts(args)[1][1:]),
    "cp": _CP,
    "ln": _copier("file_write"),
    "install": _install,
    "touch": _on_operands("file_write", "dtr", ("--reference", "--date")),
    "mkdir": _on_operands("file_write", "m", ("--mode", "--context")),
    "truncate": lambda args: _Res("file_write", targets=_opts(args, "sr")[1]),
    "tee": _tee,
    "dd": _dd,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    **dict.fromkeys(_words("awk gawk mawk nawk"), _awk),
    "yq": _yq,
    "sort": _sort,
    "uniq": _uniq,
    "iconv": _iconv,
    **dict.fromkeys(_words("tar gtar bsdtar"), _tar),
    "zip": lambda args: _Res("file_write", targets=_opts(args, "bnitxP")[1][:1]),
    "unzip": _unzip,
    "patch": _patch,
    "wipefs": lambda args: _Res("delete" if _has_any(args, "-a --all") else "read_only"),
    "date": lambda args: _Res("unknown" if _has_any(args, "-s --set") else "read_only"),
    "ip": lambda args: _Res(
        "unknown" if _has_any(args, "add del delete set flush change replace") else "read_only"
    ),
    "mount": lambda args: _Res("unknown" if _opts(args, "tOoLU")[1] else "read_only"),
    **dict.fromkeys(
        _words(
            """gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli compress uncompress lzma
            unlzma"""
        ),
        _compressor,
    ),
    "find": _find,
    "gfind": _find,
    "fd": _fd,
    "fdfind": _fd,
    "rsync": _rsync,
    "scp": _scp,
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(_words("http https xh"), _httpie),
    "git": _git,
    "gh": _gh,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "helm": _helm,
    **dict.fromkeys(_words("terraform tofu terragrunt"), _terraform),
    "pulumi": _pulumi,
    **dict.fromkeys(_words("aws gcloud az"), _cloud),
    **dict.fromkeys(_words("docker podman nerdctl"), _docker),
    "docker-compose": lambda args: _docker(["compose", *args]),
    "kill": _kill,
    "systemctl": _systemctl,
    "service": _service,
    "launchctl": _verb_table(
        "list print print-disabled blame procinfo version help dumpstate managerpid",
        "process_control",
    ),
    "pm2": _verb_table(
        "list ls status show describe logs monit info jlist prettylist", "process_control"
    ),
    "supervisorctl": _verb_table("status avail tail pid version help", "process_control"),
    "tmux": _verb_table(
        """ls list-sessions list-windows list-panes list-clients has-session has display-message
        display show-options show capture-pane info""",
        "unknown",
    ),
    "crontab": _crontab,
    "sudo": _sudo,
    "pip": _pip,
    "uv": _uv,
    **dict.fromkeys(_words("pipx poetry pdm pipenv"), _package_manager()),
    **dict.fromkeys(_words("conda mamba micromamba"), _CONDA),
    **{pm: _js_package_manager(pm) for pm in ("npm", "yarn", "pnpm", "bun")},
    "cargo": _cargo,
    "go": _go,
    "pacman": _pacman,
    "dpkg": _dpkg,
    **dict.fromkeys(
        _words(
            """apt apt-get aptitude dnf yum microdnf zypper apk brew port snap flatpak pkg emerge
            xbps-install nix-env gem composer bundle bundler rustup nvm pyenv rbenv nodenv goenv
            jenv asdf mise rtx fnm volta sdk tfenv choco winget scoop dotnet pre-commit helmfile
            deno cpan cpanm luarocks opam stack cabal mix nuget pod swift vcpkg conan"""
        ),
        _PKG,
    ),
    "make": _make,
    "gmake": _make,
    **dict.fromkeys(_words("just task invoke"), _task_runner),
    **dict.fromkeys(_words("python pypy py"), _python),
    "coverage": _coverage,
    "ruff": _ruff,
    "black": _fixer(read_flags="--check --diff", read_default=False),
    "isort": _fixer(read_flags="--check --check-only -c --diff --show-files", read_default=False),
    "autopep8": _fixer("-i --in-place"),
    "yapf": _fixer("-i --in-place"),
    "prettier": _fixer("--write -w"),
    **dict.fromkeys(_words("eslint stylelint standard xo markdownlint"), _fixer("--fix")),
    "biome": _fixer("--write --apply --apply-unsafe --fix"),
    "tsc": _tsc,
    "vue-tsc": _tsc,
    "gofmt": _fixer("-w"),
    "goimports": _fixer("-w"),
    "rustfmt": _fixer(read_flags="--check", read_default=False),
    "clang-format": _fixer("-i"),
    "shfmt": _fixer("-w --write"),
    "golangci-lint": _fixer("--fix", write_verbs="fmt"),
    "rubocop": _fixer(
        """-a -A --auto-correct --autocorrect --autocorrect-all --auto-correct-all -x
        --fix-layout"""
    ),
    "sqlfluff": _fixer(write_verbs="fix format"),
    "codespell": _fixer("-w --write-changes"),
    "djlint": _fixer("--reformat"),
    "dprint": _fixer(write_verbs="fmt"),
}


def _classify_argv(argv: list[str]) -> _Res:
    """Classify one command with its wrappers already peeled."""
    word = argv[0]
    if not word or "$" in word or "`" in word:
        return _Res("unknown")  # the program is computed at run time
    prog = _prog(word)
    args = argv[1:]
    if args in (["--version"], ["--help"]):
        return _Res("read_only")
    handler = _HANDLERS.get(prog)
    if handler is not None:
        return handler(args)
    if prog.startswith(("mkfs", "mke2fs", "mkswap")):
        return _Res("delete")
    return _Res(_SIMPLE.get(prog, "unknown"))


@functools.lru_cache(maxsize=512)
def _classify_cached(command: str) -> Intent:
    an = _Analyzer()
    error: str | None = None
    try:
        an.script(command, "", 0)
    except _TooDeep:
        error = f"nesting deeper than {_MAX_DEPTH} levels"
    except RecursionError:
        error = "nesting too deep to analyse"
    if an.errors and error is None:
        error = "; ".join(dict.fromkeys(an.errors))
    commands = tuple(an.commands)
    kinds = {k for c in commands for k in c.kinds}
    if error is not None:
        kinds.add("unknown")
    if not kinds:
        kinds = {"read_only"}
    if len(kinds) > 1:
        kinds.discard("read_only")
    return Intent(frozenset(kinds), commands, error)


def classify(command: str) -> Intent:
    """Parse a shell command line and classify every command it would run.

    Never raises: a line that does not parse is ``unknown`` with ``error`` set
    (and the commands parsed up to the error still listed). Results are cached,
    so hooks that classify the same command share the work.
    """
    if not isinstance(command, str):
        return Intent(frozenset({"unknown"}), (), f"not a command string: {type(command).__name__}")
    try:
        if len(command) > 20_000:
            return _classify_cached.__wrapped__(command)
        return _classify_cached(command)
    except Exception as exc:  # never crash a hook over an odd command line
        return Intent(frozenset({"unknown"}), (), f"could not analyse the command: {exc!r}")


# --- hooks ---------------------------------------------------------------------


def command_of(event: Any, ctx: Any) -> str | None:
    """The shell command of a tool call, or ``None``.

    The tool's declared text ``primary_arg`` (``tools: {run: {primary_arg: cmd}}``)
    when it has one, else ``tool_input["command"]`` (Claude's Bash).
    """
    tool_input = getattr(event, "tool_input", None)
    if not isinstance(tool_input, dict):
        return None
    key = "command"
    definition = getattr(ctx, "definition", None)
    tools = getattr(definition, "tools", None) or {}
    spec = tools.get(getattr(event, "tool_name", ""))
    if spec is not None and spec.primary_arg and spec.arg_kind != "path":
        key = spec.primary_arg
    value = tool_input.get(key)
    return value if isinstance(value, str) else None


class BashSideEffects:
    """Record what a shell command would do, for the ledger and for idempotency.

    Returns ``HookResult(annotations={"intent": ...})`` and never a decision:
    the intent (kinds, parsed commands, redirect targets) is stored with the
    call in ``tool_calls.annotations``, so ``select ... where
    json_extract(annotations, '$.intent.side_effecting')`` finds every
    mutating shell call. Bind it to Bash-like tools; a call without a command
    string gets no opinion.
    """

    hook_name = "bash_side_effects"

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        return HookResult(annotations={"intent": classify(command).as_dict()})


bash_side_effects = BashSideEffects()


# --- deny rules ------------------------------------------------------------------

_RM_LONG: Final = {"--recursive": "r", "--force": "f", "--dir": "d", "--verbose": ""}
_RM_ORDER: Final = "rfd"


def _is_glob(word: str) -> bool:
    return any(c in word for c in "*?[{")


def _norm_path(word: str) -> str:
    """``/tmp/../`` -> ``/``, ``~/`` -> ``~``, ``${HOME}/x`` -> ``$HOME/x`` (lexical).

    The home directory, written any way (``~``, ``$HOME``, its absolute path), and
    every folder above it but ``/`` become ``~``: deleting them deletes home.
    """
    if word.startswith("${HOME}"):
        word = "$HOME" + word[7:]
    home = posixpath.normpath(posixpath.expanduser("~"))
    expanded = None
    if word == "~" or word.startswith("~/"):
        expanded = home + word[1:]
    elif word == "$HOME" or word.startswith("$HOME/"):
        expanded = home + word[5:]
    elif word.startswith("/"):
        expanded = word
    if expanded is not None and home not in ("", "/", "~"):
        resolved = "/" + posixpath.normpath(expanded).lstrip("/")
        if resolved == "/":
            return "/"
        if resolved == home or home.startswith(resolved.rstrip("/") + "/"):
            return "~"
    if word.startswith(("/", "~", "$HOME", "./", "../")) or word in (".", ".."):
        norm = posixpath.normpath(word)
        return "/" + norm.lstrip("/") if norm.startswith("//") else norm
    return word


def _norm_rm(args: list[str], pattern: bool) -> list[str]:
    """One flag cluster in a fixed order (``-r -f``, ``-fr``, ``--recursive --force`` -> ``-rf``).

    ``-R`` is ``-r``; ``-v``/``--verbose`` are dropped; options may follow
    operands (GNU), so they are moved first; operand paths are normalised.
    """
    letters: set[str] = set()
    opaque: list[str] = []
    longs: list[str] = []
    operands: list[str] = []
    ended = False
    for a in args:
        a = a.replace("${HOME}", "$HOME")  # its braces are not a glob
        if ended or a == "-" or not a.startswith("-"):
            operands.append(a if _is_glob(a) else _norm_path(a))
        elif a == "--":
            ended = True
        elif _is_glob(a):
            opaque.append(a)
        elif a.startswith("--"):
            mapped = _RM_LONG.get(a.partition("=")[0])
            if mapped is None:
                longs.append(a)
            elif mapped:
                letters.add(mapped)
        else:
            letters.update("r" if ch == "R" else ch for ch in a[1:])
    letters.discard("v")
    order = sorted(letters, key=lambda c: (_RM_ORDER.find(c) if c in _RM_ORDER else 3, c))
    cluster = ["-" + "".join(order)] if order else []
    return [*cluster, *opaque, *sorted(longs), *operands]


def _norm_git(args: list[str], pattern: bool) -> list[str]:
    """Drop global options (``-C dir``, ``-c k=v``, ``--no-pager``).

    For ``git push`` commands, short clusters are split and options put before
    operands (``git push origin -uf`` -> ``git push -u -f origin``). Patterns
    keep their order, so a standalone ``*`` stays where the author put it.
    """
    sub, rest = _git_sub(args)
    if not sub:
        return list(args)
    if sub == "push" and not pattern:
        opts: list[str] = []
        ops: list[str] = []
        i = 0
        while i < len(rest):
            a = rest[i]
            if a == "--":
                ops.extend(rest[i + 1 :])
                break
            if a.startswith("--") or not a.startswith("-") or len(a) < 2:
                (opts if a.startswith("--") else ops).append(a)
            else:
                for j, ch in enumerate(a[1:], 1):
                    if ch == "o":  # -o <push-option>
                        value = a[j + 1 :] or (rest[i + 1] if i + 1 < len(rest) else "")
                        i += 0 if a[j + 1 :] else 1
                        opts.extend(["-o", value])
                        break
                    opts.append("-" + ch)
            i += 1
        rest = [*opts, *ops]
    return [sub, *rest]


def _norm_recursive_first(args: list[str], pattern: bool) -> list[str]:
    """chmod/chown/chgrp: ``-R``/``--recursive`` (also inside ``-vR``) moved to the front."""
    out: list[str] = []
    recursive = False
    for a in args:
        if a in ("-R", "--recursive"):
            recursive = True
        elif re.fullmatch(r"-[A-Za-z]*R[A-Za-z]*", a):
            recursive = True
            out.append(a.replace("R", ""))
        else:
            out.append(a if _is_glob(a) else _norm_path(a))
    return ["-R", *out] if recursive else out


_NORMALIZERS: Final[dict[str, Callable[[list[str], bool], list[str]]]] = {
    "rm": _norm_rm,
    "git": _norm_git,
    "chmod": _norm_recursive_first,
    "chown": _norm_recursive_first,
    "chgrp": _norm_recursive_first,
}


def normalize_argv(argv: Sequence[str], *, pattern: bool = False) -> list[str]:
    """The canonical words deny rules are matched against.

    The program is its base name (``/bin/rm`` -> ``rm``); ``rm`` flags become
    one ordered cluster, ``git`` loses its global options and ``git push``
    lists options first, ``chmod``/``chown``/``chgrp`` put ``-R`` first. With
    ``pattern=True`` the words are a rule's (globs are left as written).
    """
    if not argv:
        return []
    prog = posixpath.basename(argv[0]) or argv[0]
    rest = list(argv[1:])
    normalizer = _NORMALIZERS.get(prog)
    return [prog, *(normalizer(rest, pattern) if normalizer else rest)]


class _Rule:
    """A deny rule compiled once: one glob per command of the pipeline it describes."""

    __slots__ = ("parts", "reason", "source")

    def __init__(self, source: str, reason: str | None) -> None:
        from ...definition.matchers import split_alternatives
        from ...errors import DefinitionError

        self.source = source
        self.reason = reason
        try:
            parts = [p.strip() for p in split_alternatives(source)]
            if not all(parts):
                raise ValueError("an empty command beside '|'")
            self.parts = [self._compile(p) for p in parts]
        except DefinitionError as exc:
            raise ValueError(exc.message) from None

    @staticmethod
    def _compile(part: str) -> re.Pattern[str]:
        """A standalone ``*`` word also matches no word (``git push * -f`` matches
        ``git push -f``): every way of dropping such words is one alternative."""
        from ...definition.matchers import compile_glob

        words = normalize_argv(part.split(), pattern=True)
        stars = [i for i, w in enumerate(words) if w == "*"]
        if len(stars) > 6:
            raise ValueError("at most 6 standalone '*' words")
        variants: set[str] = set()
        for count in range(len(stars) + 1):
            for dropped in itertools.combinations(stars, count):
                kept = [w for i, w in enumerate(words) if i not in dropped]
                if kept:
                    variants.add(" ".join(kept))
        return re.compile("|".join(compile_glob(v).pattern for v in sorted(variants)))

    def match(self, commands: Sequence[Command], texts: Sequence[str]) -> list[Command] | None:
        """The commands this rule matches (one, or a run of one pipeline), or ``None``."""
        if len(self.parts) == 1:
            regex = self.parts[0]
            for cmd, text in zip(commands, texts, strict=True):
                if text and regex.fullmatch(text):
                    return [cmd]
            return None
        pipelines: dict[int, list[int]] = {}
        for idx, cmd in enumerate(commands):
            pipelines.setdefault(cmd.pipeline, []).append(idx)
        for members in pipelines.values():
            # in order, not necessarily adjacent: `curl x | tee f | sh` still feeds sh
            found: list[Command] = []
            for m in members:
                if self.parts[len(found)].fullmatch(texts[m]):
                    found.append(commands[m])
                    if len(found) == len(self.parts):
                        return found
        return None


#: the ready ``deny_commands`` rules: irreversible damage to the machine, the home
#: directory or shared history, and running a downloaded script unseen
DEFAULT_DENY_RULES: Final[tuple[dict[str, str], ...]] = (
    {"rule": "rm -r* {/,/[*]}{, *}", "reason": "recursive delete of the filesystem root"},
    {
        "rule": "rm -r* {~,~/[*],$HOME,$HOME/[*]}{, *}",
        "reason": "recursive delete of the home directory",
    },
    {
        "rule": "rm -r* /{bin,boot,dev,etc,home,lib,lib32,lib64,opt,proc,root,sbin,srv,sys,usr,"
        "var,Applications,Library,System,Users,Volumes}{,/[*]}{, *}",
        "reason": "recursive delete of a system directory",
    },
    {
        "rule": "ch{mod,own,grp} -R * {/,/[*]}{, *}",
        "reason": "recursive permission change of the whole filesystem",
    },
    {"rule": "chmod -R 777 *", "reason": "makes a whole tree world-writable"},
    {"rule": "mkfs*", "reason": "formats a filesystem"},
    {
        "rule": "dd * of=/dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk}*",
        "reason": "overwrites a disk device",
    },
    {
        "rule": "{curl,wget} * | {sh,bash,zsh,dash,ksh,fish}{, *}",
        "reason": "runs a downloaded script without review",
    },
    {"rule": "git push * --force{, *}", "reason": "force-push rewrites shared history"},
    {"rule": "git push * -f{, *}", "reason": "force-push rewrites shared history"},
    {"rule": "git push * +*", "reason": "a +refspec force-pushes"},
    {
        "rule": "{shutdown,reboot,halt,poweroff}{, *}",
        "reason": "powers off or restarts the machine",
    },
    {
        "rule": "systemctl {poweroff,reboot,halt,kexec}{, *}",
        "reason": "powers off or restarts the machine",
    },
    {"rule": "kill * -1", "reason": "signals every process you may signal"},
    {"rule": "mv * /dev/null", "reason": "replaces /dev/null"},
)

_DEFAULT_HINT: Final = (
    "This command is on the deny list because its damage cannot be undone. Do not retry it or "
    "a variant of it; if it is really needed, stop and ask the user to run it."
)


def _rules_from(value: Any, name: str) -> list[_Rule]:
    if isinstance(value, str | bytes | dict) or not isinstance(value, list | tuple):
        raise TypeError(
            f"{name} must be a list of command globs or {{rule, reason}} mappings, "
            f"got {type(value).__name__}"
        )
    rules: list[_Rule] = []
    for i, item in enumerate(value):
        where = f"{name}[{i}]"
        reason: Any = None
        if isinstance(item, dict):
            unknown = sorted(set(item) - {"rule", "reason"}, key=str)
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r} (expected rule, reason)")
            source, reason = item.get("rule"), item.get("reason")
            if reason is not None and not isinstance(reason, str):
                raise TypeError(f"{where}.reason must be a string, got {type(reason).__name__}")
        else:
            source = item
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"{where}: a rule must be a non-empty string, got {source!r}")
        try:
            rules.append(_Rule(" ".join(source.split()), reason))
        except ValueError as exc:
            raise ValueError(f"{where} {source!r}: {exc}") from None
    return rules


class DenyCommands:
    """Deny shell commands that match deny rules, however they are spelled.

    A rule is a glob over one parsed, normalised command: its words (quotes
    removed, env prefixes and wrappers like ``sudo``/``env``/``nohup``/
    ``timeout`` peeled, the program's base name) joined by single spaces, and
    it must match the whole command. ``*`` matches any characters, spaces
    included; a ``*`` standing alone as a word also matches no word at all.
    ``|`` separates the commands of a pipeline rule (``curl * | sh``), matched
    in order against the commands of one pipeline (others may stand between).
    Rules also see the commands inside ``bash -c``/``sh -c``/``eval``,
    subshells, ``$(...)``, backticks, ``xargs`` and ``find -exec``. A rule is a
    string or ``{rule, reason}``.

    ``rules=None`` uses ``DEFAULT_DENY_RULES``; a list replaces them unless
    ``include_defaults=True``. ``hint`` replaces the default advice. This is a
    guard rail against accidents, not a sandbox: a command built at run time
    (``$cmd``, ``python -c``) is not seen.
    """

    hook_name = "deny_commands"
    DEFAULT_RULES = DEFAULT_DENY_RULES

    def __init__(
        self,
        rules: Sequence[str | dict[str, str]] | None = None,
        *,
        include_defaults: bool = False,
        hint: str | None = None,
    ) -> None:
        if not isinstance(include_defaults, bool):
            raise TypeError(f"include_defaults must be true or false, got {include_defaults!r}")
        if hint is not None and not isinstance(hint, str):
            raise TypeError(f"hint must be a string, got {type(hint).__name__}")
        self.rules: list[_Rule] = []
        if rules is None or include_defaults:
            self.rules.extend(_rules_from(DEFAULT_DENY_RULES, "rules"))
        if rules is not None:
            self.rules.extend(_rules_from(rules, "rules"))
        self.hint = _DEFAULT_HINT if hint is None else hint

    def check(self, command: str) -> tuple[str, str | None, list[Command]] | None:
        """The first rule ``command`` breaks: ``(rule, reason, commands)``, or ``None``."""
        commands = classify(command).commands
        texts = [" ".join(normalize_argv(c.argv)) for c in commands]
        for rule in self.rules:
            hit = rule.match(commands, texts)
            if hit is not None:
                return rule.source, rule.reason, hit
        return None

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        found = self.check(command)
        if found is None:
            return None
        rule, reason, hit = found
        shown = " | ".join(shlex.join(c.argv) for c in hit)
        why = f" ({reason})" if reason else ""
        return HookResult.deny(f"Command denied by rule {rule!r}{why}: {shown}", hint=self.hint)


deny_commands = DenyCommands()
