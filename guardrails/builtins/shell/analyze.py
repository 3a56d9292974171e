"""From parsed simple commands to ``Command`` records: expansion, wrappers, data flow.

For each simple command the analyzer expands its words (``expand``), peels
wrappers (``wrappers``), follows code into the shell or interpreter that runs
it (``coderun``), looks the program up (``programs``) and records what feeds
what (``dataflow``): a pipe, a ``<(...)``, a file the line itself wrote and then
runs. Where it cannot see, it says so (``Command.opaque``, built in ``opaque``)
instead of guessing.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
from collections.abc import Sequence
from typing import Any, Final

from . import opaque as why
from .dataflow import DataFlow
from .expand import Expander, glob_options
from .interpreters import LANGS, code_of
from .leaks import Leaks
from .options import program_name
from .parser import CD_MARK, _join_cwd, parse
from .programs.effect import ITEM, Effect
from .programs.embedded import PROGRAMS as EMBEDDING
from .programs.embedded import embedded, variable_code
from .programs.sends import SENDERS
from .programs.table import classify_argv, is_known
from .records import RANK, Command, Sent
from .reexpand import NAME_TAKERS, Reexpander
from .syntax import MAX_DEPTH, ParseState, Shape, SimpleCommand, TooDeep
from .values import HOLE_RE, Hole, Holes, Opaque, Output, Read, has_hole
from .wrappers import hashed, unwrap, wrapping, xargs_items

__all__ = ["Analyzer"]

_ASSIGN_RE: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(\+?)=")
_DECLARE: Final = frozenset({"export", "declare", "typeset", "local", "readonly"})
_WRAPPING: Final = wrapping()
#: programs whose input the analyzer reads when they run (others: only for what they print)
_READS_INPUT: Final = frozenset(
    {*_WRAPPING, *LANGS, "read", "tee", "vi", "vim", "nvim", "at", "batch", "sudo", "su", "doas"}
)
#: programs whose code ``interpreters`` reads
_CODED: Final = frozenset({*LANGS, "vi", "vim", "nvim"})
_GLOB_NAME: Final = re.compile(r"[*?]|\[[^\]]+\]")


class Analyzer(Reexpander, DataFlow, Leaks, Expander, ParseState):  # Reexpander: a CodeRunner
    """Turns one line into ``Command`` records (``commands``), recursing into the code it runs."""

    def __init__(self) -> None:
        ParseState.__init__(self)
        self.holes = Holes()
        self.vars: dict[str, list[str]] = {}
        self.arrays: dict[str, list[str]] = {}
        self.aliases_defined: dict[str, str] = {}
        #: the glob options the line turned on that widen what a pattern matches
        self.glob_opts: frozenset[str] = frozenset()
        self.ifs = " \t\n"
        self.positional: list[str] | None = None
        self.cur_cwd: str | None = ""
        self.commands: list[Command] = []
        self.outs: list[
            Output | tuple[Sequence[str], Output | SimpleCommand | None, str | None]
        ] = []
        self.by_raw: dict[int, range] = {}
        self.files: dict[str, Output] = {}
        self.links: dict[str, str] = {}
        self.copies: dict[str, tuple[Read, ...]] = {}
        self.staged: list[Sent] = []
        self.net_fds: set[str] = set()
        self.fds: dict[str, tuple[Output, tuple[int, ...]]] = {}
        self.fifos: set[str] = set()
        self.stdin_ctx: tuple[Output | None, tuple[int, ...]] = (None, ())
        self.speculating = 0
        self.lazy_stdin: SimpleCommand | None = None
        self.origin_raw: SimpleCommand | None = None
        self.derived = 0  # > 0 while a command's words come from expansions or code
        self.valued = 0
        self._level = 0
        self._cd_values: dict[int, str | None] = {}

    # -- lines and simple commands --

    def script(
        self,
        text: str,
        cwd: str | None,
        depth: int,
        positional: list[str] | None = None,
        stdin: tuple[Output | None, tuple[int, ...]] | None = None,
    ) -> None:
        if depth > MAX_DEPTH:
            raise TooDeep
        saved = self.positional, self.stdin_ctx
        if positional is not None:
            self.positional = positional
        self.stdin_ctx = stdin if stdin is not None else (None, ())
        self._level += 1
        try:
            for raw in parse(text, self, cwd, depth):
                start = len(self.commands)
                if self._level == 1:
                    self.origin_raw = raw
                if raw.cwd and CD_MARK in raw.cwd:
                    raw.cwd = self._resolve_cwd(raw.cwd)
                self.cur_cwd = raw.cwd
                try:
                    self._simple(raw, max(depth, raw.depth))
                finally:
                    self.by_raw[id(raw)] = range(start, len(self.commands))
            if self._level == 1:  # every value the line gives is known: read text again
                self.run_again(depth)
        finally:
            self._level -= 1
            self.positional, self.stdin_ctx = saved

    def _simple(self, raw: SimpleCommand, depth: int) -> None:
        words, shapes = raw.words, raw.shapes
        for name, items, item_shapes in raw.binds:
            values: list[str] = []
            for w, sh in zip(items, item_shapes, strict=True):
                for fields in self.expand_word(sh) if sh is not None else [[w]]:
                    values.extend(fields)
            self.assign(name, values or [""])
        k = 0
        while k < len(words) and "=" in words[k] and _assignment_word(words[k], shapes[k]):
            self._assignment(words[k], shapes[k], raw, depth)
            k += 1
        if k == len(words):
            written = self._written(raw)
            if raw.depth and not written and any(r.op == "<" for r in raw.redirects):
                self.emit((), raw, {"read_only"}, (), cwd=raw.cwd, out=self.stdin_of(raw)[0])
            if written:
                self.emit(
                    (),
                    raw,
                    {"file_write"},
                    written,
                    redirects=written,
                    cwd=raw.cwd,
                    out=Output("lit"),
                )
            return
        if not raw.redirects and raw.upstream is None and raw.stdin is None:
            plain = all(sh is None for sh in shapes)
            if plain:  # the common case: literal words, no redirection, no pipe
                self.run_argv(words[k:], raw, depth, raw.cwd, (), *self.stdin_ctx)
                return
        before = self.valued
        argvs = self.expand_argv(words[k:], shapes[k:])
        written = self._written(raw)
        dynamic = self.valued > before  # a known value put into its words: built at run time
        self.derived += dynamic
        try:
            for argv in argvs:
                if argv[:1] == ["exec"]:
                    self.open_fds(raw, argv)
                if not argv or program_name(argv[0]) in _READS_INPUT:
                    stdin, inputs = self.stdin_of(raw)
                else:  # what it reads only matters for what it prints: worked out if asked
                    stdin, inputs = None, self.inputs_of(raw)
                    self.lazy_stdin = raw
                self.run_argv(argv, raw, depth, raw.cwd, written, stdin, inputs)
                self.lazy_stdin = None
        finally:
            self.derived -= dynamic

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
        if any(h.unknown and h.kind != "env" for h in self.holes.of(result)):
            return None  # a directory only the running shell knows (the guards read $VARs)
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
            value = alts[0] if len(alts) == 1 else self.hole("any", word, "one of several")
            break
        self._cd_values[n] = value
        return value

    def _assignment(self, word: str, shape: Shape | None, raw: SimpleCommand, depth: int) -> None:
        m = _ASSIGN_RE.match(word)
        assert m is not None
        name, cut = m.group(1), m.end()
        if shape is None:
            values = [word[cut:]]
        else:
            first = shape[0]
            rest: list[tuple[str, str, bool, list[SimpleCommand] | None]] = []
            if first[0] == "lit" and len(first[1]) > cut:
                rest.append(("lit", first[1][cut:], first[2], None))
            tail = (*rest, *shape[1:])
            if len(tail) == 1 and tail[0][0] == "array":
                self.arrays[name] = self.array_elements(tail[0][1])
            values = self.expand_scalar(tail, word[cut:])
        self.assign(name, values, append=bool(m.group(3)))
        if name == "IFS":
            self.ifs = "".join(dict.fromkeys("".join(v for v in values if not has_hole(v))))
        for value in values:
            self.assigned_again(name, value, raw.cwd)
            code = variable_code(name, value)
            if code:
                self.script(code, raw.cwd, depth + 1)

    def _written(self, raw: SimpleCommand) -> list[str]:
        found: list[str] = []
        for r in raw.redirects:
            if r.writes:
                found.extend(self.expand_scalar(r.shape, r.target))
        return found

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
        """One expanded command: peel its wrappers and analyse what really runs."""
        if depth > MAX_DEPTH:
            raise TooDeep
        if argv and argv[0] == "alias":
            for a in argv[1:]:
                name, eq, value = a.partition("=")
                if eq:
                    self.aliases_defined[name] = value
        elif argv and argv[0] == "hash":  # `hash -p PROG NAME`: NAME runs PROG from here on
            for name, prog in hashed(argv[1:]):
                self.aliases_defined[name] = shlex.quote(prog)
        elif argv and argv[0] == "shopt":
            self.glob_opts = glob_options(argv[1:], self.glob_opts)
        alias = self.aliases_defined.get(argv[0]) if argv else None
        if alias is not None:
            text = alias + " " + " ".join(shlex.quote(a) for a in argv[1:])
            self.aliases_defined.pop(argv[0])  # an alias is not expanded inside itself
            try:
                self.script(text, cwd, depth + 1, None, (stdin, inputs))
            finally:
                self.aliases_defined[argv[0]] = alias
            return
        if program_name(argv[0]) not in _WRAPPING:  # most commands: nothing to peel
            self.program(argv, raw, depth, cwd, written, stdin, inputs)
            return
        peel = unwrap(argv)
        for assignment in peel.env:
            name, _, value = assignment.partition("=")
            self.assign(name, [value])
            self.assigned_again(name, value, cwd)
            code = variable_code(name, value)
            if code:
                self.script(code, cwd, depth + 1)
        if peel.cwd is not None:
            cwd = None if has_hole(peel.cwd) else _join_cwd(cwd, peel.cwd)
        if peel.code is not None:
            self.run_code(peel, raw, depth, cwd, written, stdin, inputs)
            return
        if peel.xargs is not None:
            if peel.items is not None:  # xargs -a FILE: its items are the file's lines
                stdin = self.file_out(peel.items, cwd)
            # items a program builds (ls | grep, a file's lines): the command is built at run
            # time; find's paths under a named folder, literal text, a download: plain to see
            computed = stdin is not None and (
                stdin.kind in ("local", "token")
                or (stdin.kind in ("lit", "paths") and stdin.computed)
            )
            self.derived += computed
            try:
                for k, alt in enumerate(self._xargs(peel.argv, peel.xargs, stdin, peel.split)):
                    self.run_argv(alt, raw, depth + 1, cwd, written if k == 0 else (), None, inputs)
            finally:
                self.derived -= computed
            return
        self.program(peel.argv, raw, depth, cwd, written, stdin, inputs)

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
    ) -> None:
        name0 = argv[0]
        holes = self.holes.of(name0) if HOLE_RE.search(name0) else []
        dynamic = holes or (_GLOB_NAME.search(name0) and name0 not in ("[", "[["))
        if dynamic and self._dynamic_name(argv, holes, raw, cwd, written, inputs):
            return
        key = self.file_key(name0, cwd) if "/" in name0 else ""
        if key and key in self.links:
            argv = [self.links[key], *argv[1:]]
        elif key and key in self.files:  # a script the line itself wrote, now run
            runner = [name0, *argv[1:]]
            self.apply_code(
                posixpath.basename(name0),
                runner,
                self.files[key],
                name0,
                raw,
                depth,
                cwd,
                written,
                inputs,
                runner,
                [],
                (stdin, inputs),
            )
            return
        hidden = None
        if argv[0] == "fc" and not any(a.startswith("-") and "l" in a for a in argv[1:]):
            hidden = why.code_from("fc", "the shell's history", "what ran or was added before")
        elif argv[0] == "enable" and any(a.startswith("-") and "f" in a for a in argv[1:]):
            hidden = why.code_from("enable -f", "a shared object", "compiled code it loads")
        if hidden is not None:
            self.emit(argv, raw, {"unknown"}, written, redirects=written, cwd=cwd,
                      opaque=[hidden], inputs=inputs)  # fmt: skip
            return
        effect = Effect("read_only") if argv[0] in self.functions else classify_argv(argv)
        if argv[0] in NAME_TAKERS:
            self.names_again(argv, cwd)
        if argv[0] in _DECLARE:
            for a in argv[1:]:
                m = _ASSIGN_RE.match(a)
                if m:
                    self.assign(m.group(1), [a[m.end() :]], append=bool(m.group(3)))
                    self.assigned_again(m.group(1), a[m.end() :], cwd)
                    code = variable_code(m.group(1), a[m.end() :])  # export GIT_PAGER=...
                    if code:
                        self.script(code, cwd, depth + 1)
        elif argv[0] == "read":
            self._read(argv, stdin)
        self._finish(argv, effect, raw, depth, cwd, written, stdin, inputs)

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
            self.emit(
                ["sh", "-c", *argv],
                raw,
                {"unknown"},
                written,
                redirects=written,
                cwd=cwd,
                inputs=(*inputs, fetched),
                via="runs downloaded text as a command",
            )
            return True
        elif base_holes or any(h.split and h.unknown for h in holes):
            reasons = [why.unknown_name(self.show(name0), (base_holes or holes)[0])]
        else:  # only a directory is computed: ``"$VENV/bin/python" -m x``
            return False
        self.emit(
            argv,
            raw,
            {"unknown"},
            written,
            redirects=written,
            cwd=cwd,
            opaque=reasons,
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
    ) -> None:
        prog = program_name(argv[0])
        if prog == "openssl" and argv[1:2] == ["s_client"]:  # a network client: reads a host
            host = next((a for a in argv[2:] if ":" in a and not a.startswith("-")), "a host")
            fetch = self.emit_virtual(["nc", host], cwd, f"openssl s_client connects to {host}", ())
            inputs = (*inputs, fetch)
        targets = [*written, *effect.targets] if written else effect.targets
        kinds = effect.kinds or {"unknown"}
        if written:
            kinds.add("file_write")
        extra = embedded(argv) if prog in EMBEDDING else ()
        if not (
            extra or effect.scripts or effect.trees or effect.opaque or written or prog in _CODED
        ):  # the common case: a plain program, nothing hidden in it
            idx = self.emit(argv, raw, kinds, targets, sources=effect.sources, cwd=cwd,
                            inputs=inputs, stdin=stdin)  # fmt: skip
        else:
            idx = self._finish_code(argv, prog, effect, raw, depth, cwd, written, stdin, inputs,
                                    targets, kinds, extra)  # fmt: skip
        self.track(argv, idx, effect, written, stdin, cwd)
        if prog in SENDERS or written or self.net_fds:
            self.leaks(argv, raw, stdin, cwd, written, idx)
        for nested in effect.nested:  # find -exec: the command is written out; {} are paths
            for alt in self._items(nested, effect.item):
                if alt:
                    self.run_argv(alt, None, depth + 1, cwd)
        if prog == "ssh":  # the command it runs on the other side is there to read
            rest = _ssh_command(argv[1:])
            if rest:
                self.script(" ".join(rest), None, depth + 1)
        elif kinds == {"unknown"} and (effect.speculate or not is_known(prog)):
            self._speculate(argv, depth, cwd)

    def _finish_code(
        self,
        argv: list[str],
        prog: str,
        effect: Effect,
        raw: SimpleCommand | None,
        depth: int,
        cwd: str | None,
        written: Sequence[str],
        stdin: Output | None,
        inputs: tuple[int, ...],
        targets: list[str],
        kinds: set[str],
        extra: Sequence[str],
    ) -> int:
        """A command with code, unnamed paths or block devices in it: all of it recorded."""
        found: dict[str, list[Any]] = {
            "targets": list(targets),
            "opaque": [Opaque(o, why.CODE_HINT) for o in effect.opaque],
            "mentions": [],
            "net": [],
        }
        if prog in _CODED or effect.scripts or extra:
            scripts = [*effect.scripts, *(("sh", code) for code in extra)]
            for lang, text in scripts:
                if lang == "sh":
                    self.script(text, cwd, depth + 1)
                else:
                    self.scanned(prog, lang, text, cwd, depth, found)
            code = code_of(argv)
            if code is not None:
                self.interpreter(argv, code, stdin, cwd, depth, found)
        sends = self.code_sends(argv[1:], found["net"], stdin, cwd) if found["net"] else ()
        for mode, where, names, hidden in effect.trees:
            hole = self.hole(
                "paths", "…", f"paths under {where} it does not name", names=names, hidden=hidden
            )
            target = where.rstrip("/") + "/" + hole if where not in ("", ".") else hole
            found["targets"].append(target)
            if mode == "delete":
                via = f"{' '.join(argv)[:60]} deletes under {where}"
                self.emit_virtual(["rm", "-rf", target], cwd, via, ())
        for target in written:
            if target.startswith("/dev/") and not target.startswith(("/dev/fd/", "/dev/std")):
                self.emit_virtual(["dd", f"of={target}"], cwd, f"writes to {target}", ())
        return self.emit(
            argv,
            raw,
            kinds,
            [*dict.fromkeys(found["targets"])],
            redirects=written,
            sources=effect.sources,
            cwd=cwd,
            opaque=found["opaque"],
            inputs=inputs,
            mentions=found["mentions"],
            stdin=stdin,
            sends=sends,
        )

    def _items(
        self, nested: list[str], item: tuple[list[str], tuple[str, ...] | None, bool] | None
    ) -> list[list[str]]:
        """``find -exec CMD {}``: CMD with each start path, and with the paths under it."""
        if item is None or not any(ITEM in w for w in nested):
            return [nested]
        starts, names, _ = item
        alts: list[list[str]] = []
        for start in starts[:4]:
            base = start.rstrip("/") or "/"
            hole = self.hole("paths", "…", f"the paths found under {base}", names=names, base=base)
            values = [base + ("" if base.endswith("/") else "/") + hole]
            itself = names is None or any(
                fnmatch.fnmatch(posixpath.basename(base), n) for n in names
            )
            if itself and (not start.endswith("/") or start == "/"):
                values.append(base)
            for v in values:
                alts.append([w.replace(ITEM, v) for w in nested])
        return alts

    def _speculate(self, argv: list[str], depth: int, cwd: str | None) -> None:
        """An unknown program whose arguments spell out a command: record that command
        as one that may run, so a rule it would break still counts."""
        if depth + 1 > MAX_DEPTH or self.speculating:
            return
        self.speculating += 1
        try:
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
                value = " ".join(words[k:]) if last else (words[k] if k < len(words) else "")
                self.assign(n, [value])
            return
        for n in names:
            self.assign(n, self.out_values(out, f"${n}"))

    def _xargs(
        self, argv: list[str], repl: str, stdin: Output | None, split: str | None
    ) -> list[list[str]]:
        out = stdin if stdin is not None else Output("any", why="read from the terminal")
        if out.kind == "lit":
            items = xargs_items(out.text, split)
        else:
            items = self.out_values(out, "the items xargs reads")
        if repl:
            alts = [[w.replace(repl, item) for w in argv] for item in items[:8]]
            return alts or [argv]
        return [[*argv, *items]]

    # -- records --

    def emit_virtual(
        self, argv: list[str], cwd: str | None, via: str, inputs: tuple[int, ...]
    ) -> int:
        """A command the analyzer derives (``find / -delete`` also is ``rm -rf /``)."""
        effect = classify_argv(argv)
        return self.emit(
            argv,
            None,
            effect.kinds or {"unknown"},
            effect.targets,
            cwd=cwd,
            via=via,
            inputs=inputs,
        )

    def emit(
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
        sends: Sequence[Sent] = (),
    ) -> int:
        if len(kinds) > 1:
            kinds.discard("read_only")
            kind = min(kinds, key=RANK.__getitem__)
        else:
            kind = next(iter(kinds))
        idx = len(self.commands)
        argv = tuple(argv)
        self.commands.append(
            Command(
                argv,
                tuple(redirects) if redirects else (),
                kind,
                frozenset(kinds),
                tuple(self.aliases(targets, cwd) if self.links else targets) if targets else (),
                tuple(sources) if sources else (),
                cwd,
                raw.pipeline if raw is not None else self.new_pipeline(),
                tuple(opaque) if opaque else (),
                inputs if len(inputs) < 2 else tuple(dict.fromkeys(inputs)),
                via,
                self.speculating > 0,
                tuple(mentions) if mentions else (),
                self._origin() if self.derived else "",
                tuple(sends),
                self.glob_opts,
            )
        )
        if out is None:  # what it prints is worked out when something asks
            lazy = self.lazy_stdin if stdin is None and raw is self.lazy_stdin else None
            self.outs.append((argv, lazy or stdin, cwd))
        else:
            self.outs.append(out)
        return idx

    def _origin(self) -> str:
        """The line's command (with the pipe that feeds it) the current one comes from."""
        raw = self.origin_raw
        if raw is None:
            return ""
        feeding = [u.text for u in raw.upstream or () if u.depth == raw.depth]
        return " | ".join([*feeding, raw.text])


def _assignment_word(word: str, shape: Shape | None) -> bool:
    if _ASSIGN_RE.match(word) is None:
        return False
    return shape is None or (shape[0][0] == "lit" and not shape[0][2] and "=" in shape[0][1])


def _ssh_command(args: list[str]) -> list[str]:
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("-"):
            i += 2 if len(a) == 2 and a[1] in "bcDEeFIiJLlmOopQRSWw" else 1
            continue
        return args[i + 1 :]
    return []
