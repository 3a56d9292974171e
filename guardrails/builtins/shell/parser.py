"""A bash-compatible parser: a command line as the simple commands bash would run.

``shlex`` alone is not enough: it cannot tell a comment from a ``#`` inside a
word, a newline from a space, see ``$(...)`` inside double quotes, or skip a
here-document body. This lexer and parser read quotes, escapes, pipes,
``&&``/``||``/``;``/newlines, subshells, ``$(...)`` and backticks, process
substitution, redirections, here-documents and ``if``/``for``/``while``/``case``
bodies, and never raise over a line: errors are collected on the shared state.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from .syntax import MAX_DEPTH, ParseState, Redirect, SimpleCommand, TooDeep

__all__ = ["parse"]

_REDIR_OPS: Final = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_CTRL_OPS: Final = (";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")")
_FD_RE: Final = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])")
_ARRAY_START_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$")
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
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

#: reserved words that only open or close a compound command: skipped at command position
_SKIP_WORDS: Final = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "esac"}
)


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

    def __init__(self, text: str, state: ParseState, cwd: str | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        self.s = text
        self.n = len(text)
        self.i = 0
        self.state = state
        self.cwd = cwd
        self.depth = depth
        self.peeked: _Tok | None = None
        self.pending: list[Redirect] = []  # here-documents whose body comes after the newline
        self.raws: list[SimpleCommand] = []

    def error(self, message: str) -> None:
        self.state.errors.append(message)

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
        if self.depth + 1 > MAX_DEPTH:
            raise TooDeep
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
        sub = _Parser(text, self.state, self.cwd, self.depth + 1)
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
        pid = self.state.new_pipeline()
        members: list[SimpleCommand] = []
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

    def _command(
        self, pid: int, stop: frozenset[str], stop_words: frozenset[str]
    ) -> SimpleCommand | None:
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
                    self.state.functions.add(self.next().text)
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

    def _dbracket(self, pid: int) -> SimpleCommand:
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

    def _simple(self, pid: int) -> SimpleCommand | None:
        words: list[str] = []
        redirs: list[Redirect] = []
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
                        self.state.functions.add(words[0])
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

    def _redirects_only(self) -> list[Redirect]:
        redirs: list[Redirect] = []
        while self.peek().kind == "redir":
            r = self._redirect(self.next())
            if r is not None:
                redirs.append(r)
        return redirs

    def _redirect(self, tok: _Tok) -> Redirect | None:
        target = self.peek()
        if target.kind != "word":
            self.error(f"redirection {tok.text!r} without a target")
            return None
        self.next()
        r = Redirect(tok.text, tok.fd, target.text, target.quoted)
        if tok.text in ("<<", "<<-"):
            self.pending.append(r)
        elif tok.text == "<<<":
            r.body = target.text
        return r

    def _emit(self, words: list[str], redirs: list[Redirect], pid: int) -> SimpleCommand:
        raw = SimpleCommand(words, redirs, pid, self.cwd)
        self.raws.append(raw)
        return raw

    def _track_cd(self, raw: SimpleCommand) -> None:
        words = raw.words
        if not words or words[0] not in ("cd", "pushd", "popd"):
            return
        if words[0] == "popd":
            self.cwd = None
            return
        args = [w for w in words[1:] if not (w.startswith(("-", "+")) and w != "-")]
        self.cwd = _join_cwd(self.cwd, args[0] if args else "~")


def parse(text: str, state: ParseState, cwd: str | None, depth: int) -> list[SimpleCommand]:
    """The simple commands of ``text`` (and of the substitutions in it), in the order they run."""
    p = _Parser(text, state, cwd, depth)
    p.parse_list(frozenset())
    if p.pending:
        state.errors.append("here-document without its body")
    return p.raws
