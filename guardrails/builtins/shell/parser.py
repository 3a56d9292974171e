"""A bash-compatible parser: a command line as the simple commands bash would run.

On top of ``lexer``: pipes, ``&&``/``||``/``;``/newlines, subshells, brace
groups and ``if``/``while``/``until``/``for``/``case`` compounds (a compound in
a pipeline reads the pipe like any member), function definitions, ``coproc``,
``[[ ]]`` and ``(( ))``. Never raises over a line: errors are collected on the
shared state. Each simple command knows which commands feed its standard input
(``upstream``), so ``curl x | (sh)`` and ``tee >(sh)`` are seen for what they are.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from .lexer import PLAIN_LINE, Lexer, Tok, plain_command
from .reexpand import arith_operands
from .syntax import ParseState, Redirect, Shape, SimpleCommand

__all__ = ["CD_MARK", "parse"]

#: reserved words that only open or close part of a compound command: skipped at command position
_SKIP_WORDS: Final = frozenset({"!", "}", "then", "else", "elif", "fi", "do", "done", "esac"})
#: compound commands parsed as one pipeline member, and the word that closes each
_COMPOUNDS: Final = {"if": "fi", "while": "done", "until": "done", "{": "}"}


#: marks, in a directory, the target of a ``cd`` known only once its words are expanded
CD_MARK: Final = "\uf8fc"
_CD_WORD: Final = re.compile(r"(?<![\w.-])(?:cd|pushd|popd)(?![\w.-])")


def _join_cwd(cwd: str | None, target: str) -> str | None:
    """The directory ``cd target`` leads to from ``cwd`` (``None``: unknown)."""
    if target == "-":
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


class _Parser(Lexer):
    """A lenient bash parser: collects simple commands, records errors, never raises them.

    Substitutions (``$(...)``, backticks, ``<(...)``) are parsed when their word
    is read, so their commands come before the command that uses them, as they run.
    """

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
        first = len(self.raws)
        last = self._command(pid, stop, stop_words)
        tok = self.peek()
        if not (tok.kind == "op" and tok.text in ("|", "|&")):  # most lines: no pipe
            if last is not None:
                if last.redirects or any(last.shapes):
                    self._wire(last)
                if not (tok.kind == "op" and tok.text == "&"):  # `cd x &`: a subshell's cd
                    self._track_cd(last)
            return
        members: list[list[SimpleCommand]] = [self.raws[first:]]
        directs: list[SimpleCommand] = [] if last is None else [last]
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.text in ("|", "|&"):
                self.next()
                while self.peek().kind == "nl":
                    self.next()
                first = len(self.raws)
                last = self._command(pid, stop, stop_words)
                members.append(self.raws[first:])
                if last is not None:
                    directs.append(last)
                continue
            break
        if len(members) > 1:
            upstream: list[SimpleCommand] = []
            for member in members:
                feeding = list(upstream)
                for raw in member:
                    raw.pipeline = pid
                    if feeding and raw.upstream is None:
                        raw.upstream = feeding
                upstream.extend(member)
        for raw in directs:
            self._wire(raw)

    def _wire(self, raw: SimpleCommand) -> None:
        """``cmd >(sh)`` feeds ``sh``; ``cmd < <(curl x)`` is fed by ``curl``."""
        for r in raw.redirects:
            if r.shape is not None and len(r.shape) == 1 and r.shape[0][0] == "proc":
                inner = r.shape[0][3] or []
                if r.op == "<" and r.shape[0][1].startswith("<("):
                    raw.upstream = [*(raw.upstream or []), *inner]
                elif r.shape[0][1].startswith(">("):
                    self._feed(inner, raw)
        for shape in raw.shapes:
            for seg in shape or ():
                if seg[0] == "proc" and seg[1].startswith(">("):
                    self._feed(seg[3] or [], raw)

    @staticmethod
    def _feed(inner: list[SimpleCommand], source: SimpleCommand) -> None:
        feeding = [source, *(source.upstream or [])]
        for sub in inner:
            sub.upstream = [*feeding, *(sub.upstream or [])]

    def _command(
        self, pid: int, stop: frozenset[str], stop_words: frozenset[str]
    ) -> SimpleCommand | None:
        first = len(self.raws)
        while True:
            tok = self.peek()
            if tok.kind == "word" and not tok.quoted:
                t = tok.text
                if t in stop_words:
                    return None
                closer = _COMPOUNDS.get(t)
                if closer is not None:
                    self.next()
                    return self._compound(pid, stop, stop_words | {closer}, closer, first)
                if t in _SKIP_WORDS:
                    self.next()
                    if not stop_words and t != "!":
                        self.error(f"unexpected {t!r}")  # a closer with nothing open: bash refuses
                    continue
                if t in ("for", "select"):
                    self.next()
                    self._for_header(pid)
                    return self._compound(pid, stop, stop_words | {"done"}, "done", first)
                if t == "case":
                    self.next()
                    self._case(stop)
                    return self._group_redirects(pid, first)
                if t == "function":
                    self.next()
                    self.state.functions.add(self.next().text)
                    self._function_parens()
                    continue
                if t == "coproc":
                    self.next()
                    self._coproc_name()
                    continue
                if t == "[[":
                    return self._dbracket(pid)
            if tok.kind == "op" and tok.text == "(":
                if self.s.startswith("((", tok.pos):  # arithmetic command
                    self.next()
                    end = self._skip_balanced(tok.pos + 1, "(", ")")
                    self._arith(self.s[tok.pos + 2 : end - 2])
                    self.i = end
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
                return self._group_redirects(pid, first)
            break
        return self._simple(pid)

    def _compound(
        self,
        pid: int,
        stop: frozenset[str],
        stop_words: frozenset[str],
        closer: str,
        first: int,
    ) -> SimpleCommand | None:
        self.parse_list(stop, stop_words)
        tok = self.peek()
        if tok.kind == "word" and tok.text == closer:
            self.next()
        else:
            self.error(f"missing {closer!r}")
        return self._group_redirects(pid, first)

    def _group_redirects(self, pid: int, first: int) -> SimpleCommand | None:
        """A group's redirections: a file it writes is one command; what feeds its
        standard input feeds every command inside that has no input of its own."""
        redirs: list[Redirect] = []
        while self.peek().kind == "redir":
            r = self._redirect(self.next())
            if r is not None:
                redirs.append(r)
        inside = self.raws[first:]
        for r in redirs:
            if not r.reads_stdin:
                continue
            feeding = r.shape[0][3] if r.shape is not None and r.shape[0][0] == "proc" else None
            for raw in inside:
                if raw.stdin is None and not any(x.reads_stdin for x in raw.redirects):
                    raw.stdin = r
                    if feeding:
                        raw.upstream = [*(raw.upstream or []), *feeding]
        return self._emit([], [], redirs, pid) if redirs else None

    def _for_header(self, pid: int) -> None:
        """``for NAME in WORDS`` is recorded (the variable's values); ``for ((...))`` is not."""
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(" and self.s.startswith("((", tok.pos):
            self.next()
            end = self._skip_balanced(tok.pos + 1, "(", ")")
            self._arith(self.s[tok.pos + 2 : end - 2])
            self.i = end
            self._to_body()
            return
        name = self.next()
        words: list[str] = [name.text]
        shapes: list[Shape | None] = [None]
        while self.peek().kind == "nl":
            self.next()
        if self.peek().kind == "word" and self.peek().text == "in":
            self.next()
            while True:
                tok = self.peek()
                if tok.kind != "word" or tok.text == "do":
                    break
                self.next()
                words.append(tok.text)
                shapes.append(tok.shape)
        else:
            words.append('"$@"')
            shapes.append((("var", "$@", True, None),))
        self.state.loops.append((words[0], words[1:], shapes[1:]))
        self._to_body()

    def _to_body(self) -> None:
        while True:
            tok = self.peek()
            if tok.kind in ("nl",) or (tok.kind == "op" and tok.text == ";"):
                self.next()
                continue
            if tok.kind == "word" and tok.text == "do":
                self.next()
            return

    def _case(self, stop: frozenset[str]) -> None:
        self._case_word(self.next())  # the subject word
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
                self._case_word(tok)
                if tok.kind == "eof":
                    self.error("unterminated case pattern")
                    return
                if tok.kind == "op" and tok.text == ")":
                    break
            self.parse_list(item_stop, frozenset({"esac"}))
            tok = self.peek()
            if tok.kind == "op" and tok.text in (";;", ";&", ";;&"):
                self.next()

    def _case_word(self, tok: Tok) -> None:
        """A ``case`` subject or pattern is expanded but runs nothing itself: what in it
        bash reads again (``$((x))``, ``${x@P}``) is recorded for ``reexpand``."""
        for kind, text, _, _ in tok.shape or () if tok.kind == "word" else ():
            if kind == "arith":
                self.state.second.append(("arith-parsed", text[3:-2], self.cwd))
            elif kind == "var" and text.endswith("@P}"):
                self.state.second.append(("prompt-name", text[2:-3], self.cwd))

    def _function_parens(self) -> None:
        tok = self.peek()
        if tok.kind == "op" and tok.text == "(" and self.s[self.i :].lstrip().startswith(")"):
            self.next()
            self.next()

    def _coproc_name(self) -> None:
        """``coproc NAME { ...; }``: the name is not a command (``coproc cmd args`` has none)."""
        tok = self.peek()
        if tok.kind == "word" and not tok.quoted and tok.text not in _COMPOUNDS:
            rest = self.s[self.i :].lstrip(" \t")
            if rest.startswith(("{", "(")):
                self.next()

    def _arith(self, body: str) -> None:
        """``((...))``, ``for ((...))``: the substitutions in it, and the text itself, which
        bash evaluates (a variable's value in it is evaluated again: ``reexpand``)."""
        self._inner(body)
        self.state.second.append(("arith-parsed", body, self.cwd))

    def _dbracket(self, pid: int) -> SimpleCommand:
        self.next()
        words: list[str] = []
        while True:
            tok = self.peek()
            if tok.kind in ("eof", "nl"):
                self.error("unterminated [[")
                break
            self.next()
            if tok.kind == "word" and tok.text == "]]":
                break
            words.append(tok.text if tok.kind == "word" else "")
        for operand in arith_operands(words):
            self.state.second.append(("arith", operand, self.cwd))
        return self._emit(["[["], [None], [], pid)

    def _simple(self, pid: int) -> SimpleCommand | None:
        begin = self.peek().pos
        words: list[str] = []
        shapes: list[Shape | None] = []
        redirs: list[Redirect] = []
        while True:
            tok = self.peek()
            if tok.kind == "word":
                self.next()
                words.append(tok.text)
                shapes.append(tok.shape)
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
        raw = self._emit(words, shapes, redirs, pid)
        end = self.peeked.pos if self.peeked is not None else self.i
        raw.text = self.s[begin:end].strip()
        return raw

    def _redirect(self, tok: Tok) -> Redirect | None:
        target = self.peek()
        if target.kind != "word":
            self.error(f"redirection {tok.text!r} without a target")
            return None
        self.next()
        r = Redirect(tok.text, tok.fd, target.text, target.quoted, target.shape)
        if tok.text in ("<<", "<<-"):
            self.pending.append(r)
        elif tok.text == "<<<":
            r.body, r.body_shape = target.text, target.shape
        return r

    def _emit(
        self, words: list[str], shapes: list[Shape | None], redirs: list[Redirect], pid: int
    ) -> SimpleCommand:
        raw = SimpleCommand(words, redirs, pid, self.cwd, shapes)
        raw.depth = self.depth
        if self.state.loops:  # the loop variables it may see take their values first
            raw.binds, self.state.loops = self.state.loops, []
        feeds = self._fed_by(raw) if redirs or any(shapes) else None
        if feeds:  # a >(...) runs with what this command writes: list it after the command
            ids = {id(f) for f in feeds}
            kept = [r for r in self.raws if id(r) not in ids]
            self.raws[:] = [*kept, raw, *(r for r in self.raws if id(r) in ids)]
        else:
            self.raws.append(raw)
        return raw

    @staticmethod
    def _fed_by(raw: SimpleCommand) -> list[SimpleCommand]:
        found: list[SimpleCommand] = []
        shapes = [*raw.shapes, *(r.shape for r in raw.redirects)]
        for shape in shapes:
            for seg in shape or ():
                if seg[0] == "proc" and seg[1].startswith(">("):
                    found.extend(seg[3] or [])
        return found

    def _track_cd(self, raw: SimpleCommand) -> None:
        words = raw.words
        while words[:1] in (["builtin"], ["command"]):
            words = words[1:]
            raw = SimpleCommand(words, raw.redirects, raw.pipeline, raw.cwd, raw.shapes[1:])
        if words and words[0] in ("eval", "source", ".") and _CD_WORD.search(" ".join(words[1:])):
            self.cwd = None  # a `cd` in text run in this shell: not followed
            return
        if not words or words[0] not in ("cd", "pushd", "popd"):
            return
        if words[0] == "popd":
            self.cwd = None
            return
        args = [
            k for k, w in enumerate(words[1:], 1) if not (w.startswith(("-", "+")) and w != "-")
        ]
        target = words[args[0]] if args else "~"
        if "CDPATH" in self.s and not target.startswith(("/", "~", ".", "-")):
            self.cwd = None  # the line sets CDPATH: `cd name` may go to any folder it lists
            return
        physical = "-P" in words[1:] or "set -P" in self.s or "set -o physical" in self.s
        if len(args) > 1 or (physical and ".." in target.split("/")):
            self.cwd = None  # `cd a b` fails; `cd -P l/..` goes up from where the link leads
            return
        if args and raw.shapes[args[0]] is not None:  # cd "$x": known after expansion
            self.state.cd_targets.append(raw)
            self.cwd = _join_cwd(self.cwd, f"{CD_MARK}{len(self.state.cd_targets) - 1}{CD_MARK}")
            return
        self.cwd = _join_cwd(self.cwd, words[args[0]] if args else "~")


def parse(text: str, state: ParseState, cwd: str | None, depth: int) -> list[SimpleCommand]:
    """The simple commands of ``text`` (and of the substitutions in it), in the order they run."""
    if PLAIN_LINE.fullmatch(text):  # ``git status``: one plain command
        raw = plain_command(text, state, cwd, depth)
        if raw is not None:
            return [raw]
    p = _Parser(text, state, cwd, depth)
    p.parse_list(frozenset())
    if p.pending:
        state.errors.append("here-document without its body")
    return p.raws
