"""From parsed simple commands to ``Command`` records: expansion, wrappers, data flow.

For each simple command the analyzer expands its words (``expand``), peels
wrappers (``wrappers``), follows code into the shell or interpreter that runs
it (``bash -c``, ``eval``, ``source``, ``sh`` reading a pipe, ``python -c``),
looks the program up (``programs``) and records what feeds what: a pipe, a
``<(...)``, a file the line itself wrote and then runs. Where it cannot see, it
says so (``Command.opaque``, built in ``opaque``) instead of guessing.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import Final

from . import opaque as why
from .expand import Expander
from .interpreters import code_of, scan
from .options import program_name
from .parser import CD_MARK, _join_cwd, parse
from .producers import FETCHERS, Producers
from .programs.effect import ITEM, Effect
from .programs.table import classify_argv, is_known
from .records import RANK, Command
from .syntax import MAX_DEPTH, ParseState, Redirect, Shape, SimpleCommand, TooDeep
from .values import Hole, Holes, Opaque, Output, has_hole, worst
from .wrappers import Peel, unwrap

__all__ = ["Analyzer"]

_ASSIGN_RE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_DECLARE: Final = frozenset({"export", "declare", "typeset", "local", "readonly"})
_GLOB_NAME: Final = re.compile(r"[*?]|\[[^\]]+\]")
_UNKNOWN_PART: Final = "\uf8fd"  # what interpreters.scan puts where a value is computed
#: programs that run code as shell code (what the default download rule names)
_CODE_RUNNERS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "eval", "source", "."}
)


class Analyzer(Producers, Expander, ParseState):
    """Turns one line into ``Command`` records (``commands``), recursing into the code it runs."""

    def __init__(self) -> None:
        ParseState.__init__(self)
        self.holes = Holes()
        self.vars: dict[str, list[str]] = {}
        self.positional: list[str] | None = None
        self.cur_cwd: str | None = ""
        self.commands: list[Command] = []
        self.outs: list[Output] = []
        self.by_raw: dict[int, range] = {}
        self.files: dict[str, Output] = {}
        self.links: dict[str, str] = {}
        self.speculating = 0
        self._cd_values: dict[int, str | None] = {}

    # -- lines and simple commands --

    def script(
        self, text: str, cwd: str | None, depth: int, positional: list[str] | None = None
    ) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        saved = self.positional
        if positional is not None:
            self.positional = positional
        try:
            for raw in parse(text, self, cwd, depth):
                start = len(self.commands)
                raw.cwd = self._resolve_cwd(raw.cwd)
                self.cur_cwd = raw.cwd
                try:
                    self._simple(raw, depth)
                finally:
                    self.by_raw[id(raw)] = range(start, len(self.commands))
        finally:
            self.positional = saved

    def _simple(self, raw: SimpleCommand, depth: int) -> None:
        words, shapes = raw.words, raw.shapes
        if raw.loop:
            values: list[str] = []
            for w, sh in zip(words[1:], shapes[1:], strict=True):
                for fields in self.expand_word(sh) if sh is not None else [[w]]:
                    values.extend(fields)
            self.assign(words[0], values or [""])
            return
        k = 0
        while k < len(words) and _assignment_word(words[k], shapes[k]):
            self._assignment(words[k], shapes[k])
            k += 1
        if k == len(words):
            written = self._written(raw)
            if written:
                self._emit(
                    (), raw, {"file_write"}, written, redirects=written, cwd=raw.cwd,
                    out=Output("lit"),
                )
            return
        for argv in self.expand_argv(words[k:], shapes[k:]):
            self.run(argv, raw, depth)

    def _resolve_cwd(self, cwd: str | None) -> str | None:
        """A directory with ``cd "$x"`` targets in it, with their expanded values."""
        if cwd is None or CD_MARK not in cwd:
            return cwd
        parts = cwd.split(CD_MARK)
        result = parts[0]
        for k in range(1, len(parts) - 1, 2):
            value = self._cd_value(int(parts[k]))
            if value is None:
                return None
            lead = self.holes.of(value[:1])
            if value.startswith(("/", "~")) or (lead and lead[0].kind not in ("token", "paths")):
                result = posixpath.expanduser(value)
            else:
                result = posixpath.join(result, value) if result else value
            result += parts[k + 1]
        if any(h.unknown for h in self.holes.of(result)):
            return None  # a directory only the running shell knows
        result = posixpath.normpath(result) if result else ""
        return "" if result == "." else result

    def _cd_value(self, n: int) -> str | None:
        if n in self._cd_values:
            return self._cd_values[n]
        raw = self.cd_targets[n]
        value: str | None = None
        for k, word in enumerate(raw.words[1:], 1):
            if word.startswith(("-", "+")) and word != "-":
                continue
            alts = self.expand_scalar(raw.shapes[k], word)
            value = alts[0] if len(alts) == 1 else self.hole("any", word, "one of several directories")
            break
        self._cd_values[n] = value
        return value

    def _assignment(self, word: str, shape: Shape | None) -> None:
        m = _ASSIGN_RE.match(word)
        assert m is not None
        cut = m.end()
        if shape is None:
            values = [word[cut:]]
        else:
            first = shape[0]
            rest: list[tuple[str, str, bool, list[SimpleCommand] | None]] = []
            if first[0] == "lit" and len(first[1]) > cut:
                rest.append(("lit", first[1][cut:], first[2], None))
            values = self.expand_scalar((*rest, *shape[1:]), word[cut:])
        self.assign(m.group(1), values, append=bool(m.group(3)))

    def _written(self, raw: SimpleCommand) -> list[str]:
        found: list[str] = []
        for r in raw.redirects:
            if r.writes:
                found.extend(self.expand_scalar(r.shape, r.target))
        return found

    def run(self, argv: list[str], raw: SimpleCommand, depth: int, cwd: str | None = "") -> None:
        """One expanded command: peel its wrappers and analyse what really runs."""
        cwd = raw.cwd if cwd == "" else cwd
        written = self._written(raw)
        stdin = self._stdin(raw)
        inputs = self._inputs(raw)
        self.run_argv(argv, raw, depth, cwd, written, stdin, inputs)

    def run_argv(
        self,
        argv: list[str],
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str] = (),
        stdin: Output | None = None,
        inputs: tuple[int, ...] = (),
    ) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        peel = unwrap(argv)
        if peel.cwd is not None:
            cwd = None if has_hole(peel.cwd) else _join_cwd(cwd, peel.cwd)
        if peel.code is not None:
            self._code(peel, raw, depth, cwd, written, stdin, inputs)
            return
        argv = peel.argv
        if peel.xargs is not None:
            for alt in self._xargs(argv, peel.xargs, stdin):
                self.program(alt, raw, depth, cwd, written, None, inputs)
            return
        self.program(argv, raw, depth, cwd, written, stdin, inputs)

    # -- what feeds a command --

    def _stdin(self, raw: SimpleCommand) -> Output | None:
        own = [r for r in raw.redirects if r.reads_stdin]
        r: Redirect | None = own[-1] if own else raw.stdin
        if r is not None:
            if r.body is not None:
                if r.body_shape is None:
                    return Output("lit", r.body)
                return Output("lit", self.expand_scalar(r.body_shape, r.body)[0])
            if r.op == "<" and not (r.shape and r.shape[0][0] == "proc"):
                return self.file_out(self.expand_scalar(r.shape, r.target)[0], raw.cwd)
        if raw.upstream:
            outs = [self.outs[i] for i in self._inputs(raw) if i < len(self.outs)]
            return worst(outs) if outs else None
        return None

    def _inputs(self, raw: SimpleCommand) -> tuple[int, ...]:
        found: list[int] = []
        for up in raw.upstream or ():
            for i in self.by_raw.get(id(up), ()):
                if not self.commands[i].speculative:
                    found.append(i)
        return tuple(dict.fromkeys(found))

    # -- code: shells, eval, source --

    def _code(
        self,
        peel: Peel,
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str],
        stdin: Output | None,
        inputs: tuple[int, ...],
    ) -> None:
        runner = peel.argv
        name = program_name(runner[0]) if runner else "eval"
        reasons: list[Opaque] = []
        text = peel.script
        if peel.code == "script":
            out, source = self._script_out(name, text, reasons)
        elif peel.code == "file":
            out, source = self._file_code(text, cwd, stdin), text
        else:
            out = stdin if stdin is not None else Output("local", why="the terminal")
            source = self._describe(inputs) or "its input"
        self.apply_code(name, runner, out, source, raw, depth, cwd, written, inputs, peel.args, reasons)

    def _script_out(self, name: str, text: str, reasons: list[Opaque]) -> tuple[Output, str]:
        holes = self.holes.of(text)
        if holes and len(holes) == 1 and text.strip() == _only_hole(text):
            hole = holes[0]
            return self._hole_out(hole), hole.text
        for hole in holes:
            if hole.unknown:
                reasons.append(why.injected(name, hole))
        return Output("lit", text), text

    def _hole_out(self, hole: Hole) -> Output:
        if hole.out is not None:
            return hole.out
        if hole.kind in ("any", "env"):
            return Output("any", why=hole.why or "not known")
        return Output("local", why=hole.why)

    def _file_code(self, path: str, cwd: str | None, stdin: Output | None) -> Output:
        holes = self.holes.of(path)
        if holes:
            if len(holes) == 1 and path == _only_hole(path):
                return self._hole_out(holes[0])
            if any(h.unknown for h in holes):
                return Output("any", why=f"a script named at run time ({holes[0].text})")
            return Output("local", why="a script file")
        out = self.file_out(path, cwd)
        if out.kind == "stdin":
            return stdin if stdin is not None else Output("local", why="the terminal")
        return out

    def apply_code(
        self,
        name: str,
        runner: list[str],
        out: Output,
        source: str,
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str],
        inputs: tuple[int, ...],
        positional: list[str] | None,
        reasons: list[Opaque],
    ) -> None:
        """Run ``out`` as shell code: parse it if known, else record what it comes from."""
        extra: tuple[int, ...] = ()
        if out.kind == "lit":
            if reasons or written:
                kinds = {"unknown"} if reasons else {"file_write"}
                argv = runner if reasons else ()
                self._emit(argv, raw, kinds, written, redirects=written, cwd=cwd, opaque=reasons)
            self.script(out.text, cwd, depth + 1, positional)
            return
        if out.kind == "fetch" and out.fetch is not None:
            extra = (out.fetch,)
            if name not in _CODE_RUNNERS:
                runner = ["sh", "-c", " ".join(runner)]
        elif out.kind in ("obf", "any"):
            reasons.append(why.code_from(name, source, out.why))
        self._emit(
            runner, raw, {"unknown"}, written, redirects=written, cwd=cwd, opaque=reasons,
            inputs=(*inputs, *extra),
        )

    def _describe(self, inputs: tuple[int, ...]) -> str:
        if not inputs:
            return ""
        cmd = self.commands[inputs[-1]]
        return " ".join(cmd.argv)[:80]

    # -- programs --

    def program(
        self,
        argv: list[str],
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str] = (),
        stdin: Output | None = None,
        inputs: tuple[int, ...] = (),
        via: str | None = None,
    ) -> None:
        name0 = argv[0]
        holes = self.holes.of(name0)
        if holes or (_GLOB_NAME.search(name0) and name0 not in ("[", "[[")):
            if self._dynamic_name(argv, holes, raw, cwd, written, inputs):
                return
        key = self.file_key(name0, cwd) if "/" in name0 else ""
        if key and key in self.links:
            argv = [self.links[key], *argv[1:]]
        elif key and key in self.files:  # a script the line itself wrote, now run
            runner = [name0, *argv[1:]]
            self.apply_code(
                posixpath.basename(name0), runner, self.files[key], name0, raw, depth, cwd,
                written, inputs, runner, [],
            )
            return
        if argv[0] in self.functions:
            effect = Effect("read_only")
        else:
            effect = classify_argv(argv)
        if argv[0] in _DECLARE:
            for a in argv[1:]:
                m = _ASSIGN_RE.match(a)
                if m:
                    self.assign(m.group(1), [a[m.end() :]], append=bool(m.group(3)))
        elif argv[0] == "read":
            self._read(argv, stdin)
        self._finish(argv, effect, raw, depth, cwd, written, stdin, inputs, via)

    def _dynamic_name(
        self,
        argv: list[str],
        holes: list[Hole],
        raw: SimpleCommand | None,
        cwd: str | None,
        written: Sequence[str],
        inputs: tuple[int, ...],
    ) -> bool:
        """A command whose name is computed or a glob: recorded as opaque (True), unless
        only its directory is computed (``"$VENV/bin/python"``: False, read it as usual)."""
        name0 = argv[0]
        base_holes = self.holes.of(posixpath.basename(name0))
        fetched = next((h.fetch for h in holes if h.fetch is not None), None)
        if not holes:
            reasons = [why.glob_name(name0)]
        elif fetched is not None:
            self._emit(
                ["sh", "-c", *argv], raw, {"unknown"}, written, redirects=written, cwd=cwd,
                inputs=(*inputs, fetched), via="runs downloaded text as a command",
            )
            return True
        elif base_holes or any(h.split and h.unknown for h in holes):
            hole = (base_holes or holes)[0]
            reasons = [why.unknown_name(self._show(name0), hole)]
        else:  # only a directory is computed: ``"$VENV/bin/python" -m x``
            return False
        self._emit(
            argv, raw, {"unknown"}, written, redirects=written, cwd=cwd, opaque=reasons,
            inputs=inputs,
        )
        return True

    def _finish(
        self,
        argv: list[str],
        effect: Effect,
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str],
        stdin: Output | None,
        inputs: tuple[int, ...],
        via: str | None,
    ) -> None:
        reasons: list[Opaque] = [Opaque(o, why.CODE_HINT) for o in effect.opaque]
        mentions: list[str] = []
        targets = [*written, *effect.targets]
        extra_inputs: list[int] = []
        for lang, text in effect.scripts:
            if lang == "sh":
                self.script(text, cwd, depth + 1)
            else:
                self._scanned(argv, lang, text, cwd, depth, targets, reasons, mentions, extra_inputs)
        code = code_of(argv)
        if code is not None:
            self._interpreter(argv, code, stdin, cwd, depth, targets, reasons, mentions, extra_inputs)
        for mode, where, names, hidden in effect.trees:
            hole = self.hole(
                "paths", "…", f"paths under {where} it does not name", names=names, hidden=hidden
            )
            target = where.rstrip("/") + "/" + hole if where not in ("", ".") else hole
            targets.append(target)
            if mode == "delete":
                self._virtual(["rm", "-rf", target], cwd, f"{' '.join(argv)[:60]} deletes under {where}")
        kinds = set(effect.kinds) or {"unknown"}
        if written:
            kinds.add("file_write")
        idx = self._emit(
            argv, raw, kinds, [*dict.fromkeys(targets)], redirects=written,
            sources=effect.sources, cwd=cwd, opaque=reasons, inputs=(*inputs, *extra_inputs),
            via=via, mentions=mentions, stdin=stdin,
        )
        self._track(argv, idx, effect, written, stdin, cwd)
        for nested in effect.nested:
            for alt in self._items(nested, effect.item):
                if alt:
                    self.run_argv(alt, None, depth + 1, cwd)
        prog = program_name(argv[0])
        if prog == "ssh" or (kinds == {"unknown"} and not is_known(prog)):
            self._speculate(argv, depth, cwd)

    def _items(self, nested: list[str], item: tuple[list[str], tuple[str, ...] | None] | None) -> list[list[str]]:
        """``find -exec CMD {}``: CMD with each start path, and with the paths under it."""
        if item is None or not any(ITEM in w for w in nested):
            return [nested]
        starts, names = item
        alts: list[list[str]] = []
        for start in starts[:4]:
            base = start.rstrip("/") or "/"
            hole = self.hole("paths", "…", f"the paths found under {base}", names=names)
            values = [base + ("" if base.endswith("/") else "/") + hole]
            if not start.endswith("/") or start == "/":
                values.append(base)
            for v in values:
                alts.append([w.replace(ITEM, v) for w in nested])
        return alts

    def _interpreter(
        self,
        argv: list[str],
        code: tuple[str, str, str],
        stdin: Output | None,
        cwd: str | None,
        depth: int,
        targets: list[str],
        reasons: list[Opaque],
        mentions: list[str],
        inputs: list[int],
    ) -> None:
        lang, where, text = code
        name = program_name(argv[0])
        if where == "inline":
            self._scanned(argv, lang, text, cwd, depth, targets, reasons, mentions, inputs)
            return
        if where == "encoded":
            reasons.append(why.code_from(name, "-EncodedCommand", "base64-encoded code"))
            return
        out = stdin if where == "stdin" else self._file_code(text, cwd, stdin)
        if out is None:
            return
        if out.kind == "lit":
            self._scanned(argv, lang, out.text, cwd, depth, targets, reasons, mentions, inputs)
        elif out.kind == "fetch" and out.fetch is not None:
            self._fetch_run(name, out.fetch, cwd)
        elif out.kind in ("obf", "any"):
            reasons.append(why.code_from(name, text or "its input", out.why))

    def _fetch_run(self, name: str, fetch: int, cwd: str | None) -> None:
        """An interpreter running downloaded code: recorded as a shell running it."""
        idx = self._emit(
            ["sh", "-c", f"({name})"], None, {"unknown"}, (), cwd=cwd, inputs=(fetch,),
            via=f"{name} runs what {self.commands[fetch].program} downloads",
        )
        self.outs[idx] = Output("local")

    def _scanned(
        self,
        argv: list[str],
        lang: str,
        text: str,
        cwd: str | None,
        depth: int,
        targets: list[str],
        reasons: list[Opaque],
        mentions: list[str],
        inputs: list[int],
    ) -> None:
        name = program_name(argv[0])
        sc = scan(lang, text)
        for line in sc.shells:
            self.script(self._unknown_parts(line, name), cwd, depth + 1)
        for cmd in sc.argvs:
            words = [self._unknown_parts(w, name) for w in cmd]
            if words and words[0]:
                self.run_argv(words, None, depth + 1, cwd)
        for target in sc.deletes:
            path = target if target is not None else self.hole("any", f"({name} code)", f"a path {name} computes")
            self._virtual(["rm", "-rf", path], cwd, f"a recursive delete in {name} code")
            targets.append(path)
        for target in sc.writes:
            targets.append(
                target
                if target is not None
                else self.hole("any", f"({name} code)", f"a path {name} computes")
            )
        if sc.fetch is not None:
            url = sc.fetch
            idx = self._virtual(["curl", url], cwd, f"{name} code downloads {url}", kinds={"read_only"})
            self.outs[idx] = Output("fetch", why=f"downloaded by {name} code", fetch=idx)
            self._fetch_run(name, idx, cwd)
            sc.opaque = []
        for reason in sc.opaque:
            reasons.append(why.code_from(name, text[:60], reason))
        if sc.changes or sc.opaque or sc.fetch:
            mentions.extend(sc.literals)

    def _unknown_parts(self, text: str, name: str) -> str:
        if _UNKNOWN_PART not in text:
            return text
        return text.replace(_UNKNOWN_PART, self.hole("any", name, f"a value {name} computes"))

    def _virtual(self, argv: list[str], cwd: str | None, via: str, kinds: set[str] | None = None) -> int:
        effect = classify_argv(argv)
        return self._emit(
            argv, None, kinds or effect.kinds or {"unknown"}, effect.targets, cwd=cwd, via=via
        )

    def _speculate(self, argv: list[str], depth: int, cwd: str | None) -> None:
        """An unknown program (or ``ssh``) whose arguments spell out a command: record
        that command as one that may run, so a rule it would break still counts."""
        if depth + 1 > MAX_DEPTH or self.speculating:
            return
        prog = program_name(argv[0])
        self.speculating += 1
        try:
            if prog == "ssh":
                rest = _ssh_command(argv[1:])
                if rest:
                    self.script(" ".join(rest), None, depth + 1)
                return
            for i in range(1, min(len(argv), 8)):
                word = argv[i]
                if not word.startswith("-") and is_known(program_name(word)) and not has_hole(word):
                    self.run_argv(argv[i:], None, depth + 1, cwd)
                    return
        finally:
            self.speculating -= 1

    def _read(self, argv: list[str], stdin: Output | None) -> None:
        names = [a for a in argv[1:] if not a.startswith("-") and re.fullmatch(r"\w+", a)]
        if not names:
            return
        out = stdin if stdin is not None else Output("any", why="read from the terminal")
        if out.kind == "lit":
            words = out.text.split()
            for k, n in enumerate(names):
                last = k == len(names) - 1
                self.assign(n, [" ".join(words[k:]) if last else (words[k] if k < len(words) else "")])
            return
        for n in names:
            self.assign(n, self.out_values(out, f"${n}"))

    def _xargs(self, argv: list[str], repl: str, stdin: Output | None) -> list[list[str]]:
        out = stdin if stdin is not None else Output("any", why="read from the terminal")
        if out.kind == "lit":
            items = out.text.split()
        else:
            items = self.out_values(out, "the items xargs reads")
        if repl:
            alts = [[w.replace(repl, item) for w in argv] for item in items[:8]]
            return alts or [argv]
        return [[*argv, *items]]

    def _track(
        self,
        argv: list[str],
        idx: int,
        effect: Effect,
        written: Sequence[str],
        stdin: Output | None,
        cwd: str | None,
    ) -> None:
        """Remember what the line writes to files and which links it makes."""
        out = self.outs[idx]
        for target in written:
            self.files[self.file_key(target, cwd)] = out
        prog = program_name(argv[0])
        if prog == "tee":
            for target in effect.targets:
                self.files[self.file_key(target, cwd)] = stdin or Output("local")
        elif prog in FETCHERS:
            for target in effect.targets:
                self.files[self.file_key(target, cwd)] = Output("fetch", why=f"downloaded by {prog}", fetch=idx)
        elif prog in ("cp", "mv", "install", "ln") and effect.sources:
            for src, dst in zip(effect.sources, effect.targets[-len(effect.sources) :], strict=False):
                content = self.files.get(self.file_key(src, cwd))
                if content is not None:
                    self.files[self.file_key(dst, cwd)] = content
                if prog == "ln":
                    base = posixpath.dirname(dst) if "-s" in " ".join(argv[1:]) else ""
                    self.links[self.file_key(dst, cwd)] = self.file_key(posixpath.join(base, src), cwd)

    def _emit(
        self,
        argv: Sequence[str],
        raw: SimpleCommand | None,
        kinds: set[str],
        targets: Sequence[str],
        *,
        redirects: Sequence[str] = (),
        sources: Sequence[str] = (),
        cwd: str | None = "",
        opaque: Sequence[Opaque] = (),
        inputs: tuple[int, ...] = (),
        via: str | None = None,
        mentions: Sequence[str] = (),
        stdin: Output | None = None,
        out: Output | None = None,
    ) -> int:
        if len(kinds) > 1:
            kinds.discard("read_only")
        targets = self._aliases(targets, cwd)
        idx = len(self.commands)
        cmd = Command(
            tuple(argv),
            tuple(redirects),
            min(kinds, key=RANK.__getitem__),
            frozenset(kinds),
            tuple(targets),
            tuple(sources),
            cwd,
            raw.pipeline if raw is not None else self.new_pipeline(),
            tuple(opaque),
            tuple(dict.fromkeys(inputs)),
            via,
            self.speculating > 0,
            tuple(mentions),
        )
        self.commands.append(cmd)
        self.outs.append(out if out is not None else self.out_of(list(argv), stdin, cwd, idx))
        return idx

    def _aliases(self, targets: Sequence[str], cwd: str | None) -> list[str]:
        found = list(targets)
        if self.links:
            for t in targets:
                key = self.file_key(t, cwd)
                for link, dest in self.links.items():
                    if key == link or key.startswith(link + "/"):
                        found.append(dest + key[len(link) :])
        return found

    def _show(self, text: str) -> str:
        from .records import show

        return show(text, tuple(self.holes.table))


def _assignment_word(word: str, shape: Shape | None) -> bool:
    if _ASSIGN_RE.match(word) is None:
        return False
    return shape is None or (shape[0][0] == "lit" and not shape[0][2] and "=" in shape[0][1])


def _only_hole(text: str) -> str:
    stripped = text.strip()
    return stripped if len(stripped) == 1 else ""


def _ssh_command(args: list[str]) -> list[str]:
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-"):
            i += 2 if len(a) == 2 and a[1] in "bcDEeFIiJLlmOopQRSWw" else 1
            continue
        return args[i + 1 :]
    return []
