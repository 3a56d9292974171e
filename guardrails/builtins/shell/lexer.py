"""The tokens of a bash line: words (with their shapes), operators, redirections.

``shlex`` alone is not enough: it cannot tell a comment from a ``#`` inside a
word, a newline from a space, see ``$(...)`` inside double quotes, or skip a
here-document body. This lexer reads quotes, escapes, ``$'...'``, ``$(...)``,
backticks, ``${...}``, ``$((...))``, process substitution and here-documents,
and keeps, for every word that is not a plain literal, its shape (the
segments of ``syntax``): which parts are quoted and which are expansions, with
the commands parsed inside them. The grammar on top is ``parser._Parser``.
"""

from __future__ import annotations

import re
from typing import Final

from .syntax import MAX_DEPTH, ParseState, Redirect, Seg, Shape, SimpleCommand, TooDeep

__all__ = ["Lexer", "Tok"]

_REDIR_OPS: Final = ("&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<&", "<>", ">", "<")
_CTRL_OPS: Final = (";;&", ";;", ";&", "&&", "||", "|&", "|", "&", ";", "(", ")")
_FD_RE: Final = re.compile(r"(\d+|\{[A-Za-z_][A-Za-z0-9_]*\})(?=[<>])")
_ARRAY_START_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=$")
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HEX: Final = {"x": re.compile(r"[0-9A-Fa-f]{1,2}"), "u": re.compile(r"[0-9A-Fa-f]{1,4}")}
_HEX["U"] = re.compile(r"[0-9A-Fa-f]{1,8}")
_OCT: Final = re.compile(r"[0-7]{1,3}")
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
#: unquoted characters that make a word need its shape (globs, braces, tilde)
_SPECIAL_RE: Final = re.compile(r"[*?\[{~]")
#: characters a token may start with that are not (always) the start of a plain word
_NOT_PLAIN_START: Final = frozenset("\n<>;&|(){0123456789")
#: a run of characters with no meaning to the lexer
_PLAIN_RUN: Final = re.compile(r"[^ \t\r\n;&|<>()\\'\"$`]+")
#: a run of characters that stand for themselves in double quotes / a here-document body
_DQ_RUN: Final = re.compile(r'[^"\\$`]+')
_HEREDOC_RUN: Final = re.compile(r"[^\\$`]+")
#: a line of plain words only: no quoting, expansion, glob, brace, operator or comment
PLAIN_LINE: Final = re.compile(r"[^\n\r\v\f;&|<>()\\'\"$`*?\[\]{}~#]*")
_PLAIN_SUB: Final = re.compile(r"[^\n\r\v\f;&|<>()\\'\"$`*?\[\]{}~#]*\)")
_PLAIN_WORDS: Final = re.compile(r"[^ \t]+")
#: first words that make a line of plain words more than a command and its arguments
PLAIN_HEADS: Final = frozenset(
    {"!", "{", "}", "if", "then", "else", "elif", "fi", "while", "until", "do", "done", "for"}
    | {"select", "case", "esac", "function", "coproc", "[[", "cd", "pushd", "popd", "builtin"}
    | {"command"}
)


def plain_command(
    text: str, state: ParseState, cwd: str | None, depth: int
) -> SimpleCommand | None:
    """``text`` (plain words, ``PLAIN_LINE``) as its one simple command: ``git status``."""
    if state.loops:  # the loop variables bind to the next command: the parser does that
        return None
    words = _PLAIN_WORDS.findall(text)
    if not words or "=" in words[0] or words[0] in PLAIN_HEADS:
        return None
    if depth > MAX_DEPTH:
        raise TooDeep
    raw = SimpleCommand(words, [], state.new_pipeline(), cwd)
    raw.depth = depth
    raw.text = text.strip()
    return raw


class Tok:
    __slots__ = ("fd", "kind", "pos", "quoted", "shape", "text")

    def __init__(
        self,
        kind: str,
        text: str,
        pos: int,
        fd: str | None = None,
        quoted: bool = False,
        shape: Shape | None = None,
    ) -> None:
        self.kind = kind  # word, op, redir, nl, eof
        self.text = text
        self.pos = pos
        self.fd = fd
        self.quoted = quoted
        self.shape = shape


def _flush(lit: list[str], segs: list[Seg], quoted: bool) -> None:
    if lit:
        segs.append(("lit", "".join(lit), quoted, None))
        lit.clear()


class Lexer:
    """Tokens for ``parser._Parser``; substitutions are parsed as their words are read."""

    def __init__(self, text: str, state: ParseState, cwd: str | None, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        self.s = text
        self.n = len(text)
        self.i = 0
        self.state = state
        self.cwd = cwd
        self.depth = depth
        self.peeked: Tok | None = None
        self.pending: list[Redirect] = []  # here-documents whose body comes after the newline
        self.raws: list[SimpleCommand] = []

    def error(self, message: str) -> None:
        self.state.errors.append(message)

    def parse_list(self, stop: frozenset[str], stop_words: frozenset[str] = frozenset()) -> None:
        raise NotImplementedError  # the grammar (parser._Parser)

    # -- tokens --

    def peek(self) -> Tok:
        if self.peeked is None:
            self.peeked = self._lex()
        return self.peeked

    def next(self) -> Tok:
        tok = self.peek()
        self.peeked = None
        return tok

    def _lex(self) -> Tok:
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
            return Tok("eof", "", n)
        c = s[start]
        if c not in _NOT_PLAIN_START:  # a word (most tokens): no operator, no fd number
            return self._word()
        if c == "\n":
            self.i += 1
            self._read_heredocs()
            return Tok("nl", "\n", start)
        if c in "<>" and s.startswith("(", start + 1):
            return self._word()
        m = _FD_RE.match(s, start)
        fd = m.group(1) if m else None
        j = m.end() if m else start
        if s[j : j + 1] in ("<", ">") or (fd is None and s.startswith("&>", j)):
            for op in _REDIR_OPS:
                if s.startswith(op, j) and not (fd is not None and op[0] == "&"):
                    self.i = j + len(op)
                    return Tok("redir", op, start, fd)
        if c in ";&|()":
            for op in _CTRL_OPS:
                if s.startswith(op, start):
                    self.i = start + len(op)
                    return Tok("op", op, start)
        return self._word()

    def _word(self) -> Tok:
        s, n = self.s, self.n
        start = self.i
        m = _PLAIN_RUN.match(s, start)
        if m is not None:  # most words: plain characters up to a blank or an operator
            end = m.end()
            nxt = s[end : end + 1]
            if not nxt or nxt in " \t\r\n;&|)" or (nxt in "<>" and s[end + 1 : end + 2] != "("):
                text = m.group()
                self.i = end
                shape = (("lit", text, False, None),) if _SPECIAL_RE.search(text) else None
                return Tok("word", text, start, None, False, shape)
        segs: list[Seg] = []
        lit: list[str] = []
        quoted = special = False
        while self.i < n:
            m = _PLAIN_RUN.match(s, self.i)
            if m is not None:
                chunk = m.group()
                special = special or _SPECIAL_RE.search(chunk) is not None
                lit.append(chunk)
                self.i = m.end()
                if self.i >= n:
                    break
            c = s[self.i]
            if c in " \t\r\n;&|":
                break
            if c in "<>":
                if s.startswith("(", self.i + 1):
                    _flush(lit, segs, False)
                    self._substitution(self.i + 2, segs, "proc", False)
                    continue
                break
            if c == "(":
                so_far = "".join(seg[1] for seg in segs) + "".join(lit)
                if _ARRAY_START_RE.match(so_far):  # arr=(a b c)
                    end = self._skip_balanced(self.i + 1, "(", ")")
                    raws = self._inner(s[self.i + 1 : end - 1])
                    _flush(lit, segs, False)
                    segs.append(("array", s[self.i : end], True, raws))
                    self.i = end
                    continue
                break
            if c == ")":
                break
            if c == "\\":
                quoted = True
                if self.i + 1 < n:
                    if s[self.i + 1] != "\n":
                        _flush(lit, segs, False)
                        segs.append(("lit", s[self.i + 1], True, None))
                    self.i += 2
                else:
                    self.i += 1
                continue
            if c == "'":
                quoted = True
                _flush(lit, segs, False)
                end = s.find("'", self.i + 1)
                if end < 0:
                    self.error("unterminated single quote")
                    segs.append(("lit", s[self.i + 1 :], True, None))
                    self.i = n
                else:
                    segs.append(("lit", s[self.i + 1 : end], True, None))
                    self.i = end + 1
                continue
            if c == '"':
                quoted = True
                _flush(lit, segs, False)
                self.i += 1
                self._dquote(segs, '"')
                continue
            if c == "$":
                if s.startswith(("$'", '$"'), self.i):
                    quoted = True
                _flush(lit, segs, False)
                self._dollar(segs, in_dquote=False)
                continue
            if c == "`":
                _flush(lit, segs, False)
                self._backtick(segs, False)
                continue
            lit.append(c)  # a character the run stops at but bash keeps in the word
            self.i += 1
        _flush(lit, segs, False)
        text = "".join(seg[1] for seg in segs)
        plain = not special and all(seg[0] == "lit" for seg in segs)
        return Tok("word", text, start, None, quoted, None if plain else tuple(segs))

    def _dquote(self, segs: list[Seg], term: str | None) -> None:
        """Read a double-quoted string (or, with ``term=None``, an unquoted here-document body)."""
        s, n = self.s, self.n
        lit: list[str] = []
        run = (_DQ_RUN if term == '"' else _HEREDOC_RUN).match
        while self.i < n:
            m = run(s, self.i)
            if m is not None:
                lit.append(m.group())
                self.i = m.end()
                continue
            c = s[self.i]
            if c == term:
                self.i += 1
                _flush(lit, segs, True)
                return
            if c == "\\" and self.i + 1 < n:
                d = s[self.i + 1]
                if d in '$`"\\':
                    lit.append(d)
                    self.i += 2
                elif d == "\n":
                    self.i += 2
                else:
                    lit.append(c)
                    self.i += 1
                continue
            if c == "$":
                _flush(lit, segs, True)
                self._dollar(segs, in_dquote=True)
            elif c == "`":
                _flush(lit, segs, True)
                self._backtick(segs, True)
            else:
                lit.append(c)
                self.i += 1
        _flush(lit, segs, True)
        if term is not None:
            self.error("unterminated double quote")

    def _dollar(self, segs: list[Seg], in_dquote: bool) -> None:
        s, i = self.s, self.i
        nxt = s[i + 1 : i + 2]
        if nxt == "'" and not in_dquote:
            segs.append(("lit", self._ansi_c(), True, None))
        elif nxt == '"' and not in_dquote:
            self.i += 2
            self._dquote(segs, '"')
        elif s.startswith("$((", i):
            end = self._skip_balanced(i + 2, "(", ")")
            segs.append(("arith", s[i:end], in_dquote, self._inner(s[i + 3 : end - 2])))
            self.i = end
        elif nxt == "(":
            self._substitution(i + 2, segs, "cmd", in_dquote)
        elif nxt == "{":
            end = self._skip_balanced(i + 2, "{", "}")
            segs.append(("var", s[i:end], in_dquote, self._inner(s[i + 2 : end - 1])))
            self.i = end
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            m = _NAME_RE.match(s, i + 1)
            end = m.end() if m and not nxt.isdigit() else i + 2
            segs.append(("var", s[i:end], in_dquote, None))
            self.i = end
        else:
            segs.append(("lit", "$", in_dquote, None))
            self.i += 1

    def _ansi_c(self) -> str:
        """Decode ``$'...'`` (ANSI-C quoting). ``\\xHH`` and octal escapes are bytes, as bash
        makes them: a byte that is not UTF-8 comes out as the surrogate Python gives that
        byte in a file name (``$'\\xff'`` names the file ``os.fsdecode(b"\\xff")``)."""
        s, n = self.s, self.n
        j = self.i + 2
        out = bytearray()

        def text(t: str) -> None:
            out.extend(t.encode("utf-8", "surrogatepass"))

        while j < n and s[j] != "'":
            if s[j] == "\\" and j + 1 < n:
                d = s[j + 1]
                if d in _ANSI_C:
                    text(_ANSI_C[d])
                    j += 2
                elif d in _HEX:
                    m = _HEX[d].match(s, j + 2)
                    if m and d == "x":
                        out.append(int(m.group(), 16))
                        j = m.end()
                    elif m:
                        text(chr(min(int(m.group(), 16), 0x10FFFF)))
                        j = m.end()
                    else:
                        text("\\" + d)
                        j += 2
                elif d in "01234567":
                    m = _OCT.match(s, j + 1)
                    assert m is not None
                    out.append(int(m.group(), 8) & 0xFF)
                    j = m.end()
                elif d == "c" and j + 2 < n:  # \cX: a control character
                    text(chr(ord(s[j + 2]) & 0x1F))
                    j += 3
                else:
                    text("\\" + d)
                    j += 2
            else:
                text(s[j])
                j += 1
        if j >= n:
            self.error("unterminated $'...' string")
        self.i = j + 1
        return out.decode("utf-8", "surrogateescape")

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

    def _inner(self, text: str) -> list[SimpleCommand] | None:
        """The commands of the substitutions inside ``${...}``, ``$((...))``, ``arr=(...)``."""
        if "$" not in text and "`" not in text and "<(" not in text and ">(" not in text:
            return None
        return self.child(text, dquote=True)[0]

    def _substitution(self, inner: int, segs: list[Seg], kind: str, quoted: bool) -> None:
        """``$(...)``, ``<(...)`` or ``>(...)`` starting at ``self.i``: parse the list inside."""
        begin = self.i
        if self.depth + 1 > MAX_DEPTH:
            raise TooDeep
        plain = _PLAIN_SUB.match(self.s, inner)
        if plain is not None:  # ``$(git rev-parse HEAD)``
            raw = plain_command(
                self.s[inner : plain.end() - 1], self.state, self.cwd, self.depth + 1
            )
            if raw is not None:
                self.raws.append(raw)
                self.i = plain.end()
                segs.append((kind, self.s[begin : self.i], quoted, [raw]))
                return
        self.i = inner
        saved_cwd, saved_depth = self.cwd, self.depth
        first = len(self.raws)
        self.depth += 1
        self.parse_list(frozenset({")"}))
        self.depth, self.cwd = saved_depth, saved_cwd
        tok = self.next()
        if tok.kind != "op" or tok.text != ")":
            self.error("unterminated $(")
        segs.append((kind, self.s[begin : self.i], quoted, self.raws[first:]))

    def _backtick(self, segs: list[Seg], quoted: bool) -> None:
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
        raws = self.child("".join(inner), dquote=False)[0]
        segs.append(("cmd", s[begin : self.i], quoted, raws))

    def child(self, text: str, dquote: bool) -> tuple[list[SimpleCommand], list[Seg]]:
        """Parse ``text`` as a nested script (or, ``dquote``, as an expanding here-document
        body): its commands (also added to this parser's) and, for a body, its segments."""
        if not dquote and PLAIN_LINE.fullmatch(text):  # `git rev-parse HEAD`
            raw = plain_command(text, self.state, self.cwd, self.depth + 1)
            if raw is not None:
                self.raws.append(raw)
                return [raw], []
        sub = type(self)(text, self.state, self.cwd, self.depth + 1)
        segs: list[Seg] = []
        if dquote:
            sub._dquote(segs, None)
        else:
            sub.parse_list(frozenset())
        self.raws.extend(sub.raws)
        return sub.raws, segs

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
                # $(...) in an unquoted here-document runs; its text is what the command reads
                r.body_shape = tuple(self.child(r.body, dquote=True)[1])
