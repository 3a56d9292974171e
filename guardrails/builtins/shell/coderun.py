"""Code a command runs: shell code (``bash -c``, ``eval``, ``source``, a shell reading a
pipe) and interpreter code (``python -c``, ``node -e``, ``perl -e``, a makefile...).

A mixin of the analyzer. Known code is read: shell code is parsed like the line
itself, with the runner's input passed on; interpreter code is scanned
(``interpreters``). Code from a download is recorded as a download run by a
shell, so the deny rule ``curl * | sh`` sees it whatever ran it. Code that is
computed, decoded, or read from an unknown variable is opaque, with the reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from . import opaque as why
from .interpreters import scan
from .options import program_name
from .syntax import SimpleCommand
from .values import HOLE_RE, Hole, Opaque, Output

if TYPE_CHECKING:
    from .records import Command
    from .values import Holes
    from .wrappers import Peel

__all__ = ["CodeRunner"]

#: programs that run code as shell code (what the default download rule names)
CODE_RUNNERS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "yash", "eval", "source", "."}
)
_UNKNOWN_PART: Final = "\uf8fd"  # what interpreters.scan puts where a value is computed


class CodeRunner:
    """Shell and interpreter code, for the analyzer."""

    holes: Holes
    commands: list[Command]
    outs: list[Output | tuple[Sequence[str], Output | SimpleCommand | None, str | None]]
    derived: int

    if TYPE_CHECKING:

        def script(
            self,
            text: str,
            cwd: str | None,
            depth: int,
            positional: list[str] | None = None,
            stdin: tuple[Output | None, tuple[int, ...]] | None = None,
        ) -> None: ...
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
        ) -> int: ...
        def emit_virtual(
            self, argv: list[str], cwd: str | None, via: str, inputs: tuple[int, ...]
        ) -> int: ...
        def run_argv(
            self,
            argv: list[str],
            raw: SimpleCommand | None,
            depth: int,
            cwd: str | None,
            written: Sequence[str] = (),
            stdin: Output | None = None,
            inputs: tuple[int, ...] = (),
        ) -> None: ...
        def hole(self, kind: str, text: str, why: str = "", **kw: object) -> str: ...
        def file_out(self, path: str, cwd: str | None, named: str = "") -> Output: ...

    def run_code(
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
        passed: tuple[Output | None, tuple[int, ...]] | None = (stdin, inputs)
        if peel.code == "script":
            out, source = self.script_out(name, peel.script, reasons)
        elif peel.code == "file":
            out, source = self.file_code(peel.script, cwd, stdin), peel.script
        else:
            out = stdin if stdin is not None else Output("local", why="the terminal")
            source = self.describe(inputs) or "its input"
            passed = None
        self.apply_code(
            name, runner, out, source, raw, depth, cwd, written, inputs, peel.args, reasons, passed
        )

    def script_out(self, name: str, text: str, reasons: list[Opaque]) -> tuple[Output, str]:
        """The code of ``-c TEXT``/``eval TEXT``: known text, or what one expansion held."""
        holes = self.holes.of(text)
        if len(holes) == 1 and len(text.strip()) == 1:
            return self.hole_out(holes[0]).marked(), holes[0].text
        for hole in holes:
            if hole.hostile:
                reasons.append(why.injected(name, hole))
                break
        return Output("lit", text), text

    def hole_out(self, hole: Hole) -> Output:
        if hole.out is not None:
            return hole.out
        if hole.kind in ("any", "env"):
            return Output("any", why=hole.why or "not known")
        return Output("local", why=hole.why)

    def file_code(self, path: str, cwd: str | None, stdin: Output | None) -> Output:
        holes = self.holes.of(path)
        if holes:
            if len(holes) == 1 and len(path.strip()) == 1:
                return self.hole_out(holes[0]).marked()
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
        passed: tuple[Output | None, tuple[int, ...]] | None = None,
    ) -> None:
        """Run ``out`` as shell code: parse it if known, else record what it comes from."""
        extra: tuple[int, ...] = ()
        if out.kind == "lit":
            if reasons or written:
                kinds = {"unknown"} if reasons else {"file_write"}
                argv = runner if reasons else ()
                self.emit(argv, raw, kinds, written, redirects=written, cwd=cwd, opaque=reasons)
            computed = out.computed  # built at run time: substituted, formatted, decoded
            self.derived += computed
            try:
                self.script(out.text, cwd, depth + 1, positional, passed)
            finally:
                self.derived -= computed
            return
        if out.kind == "fetch" and out.fetch is not None:
            extra = (out.fetch,)
            if name not in CODE_RUNNERS:
                runner = ["sh", "-c", " ".join(runner)]
        elif out.kind in ("obf", "any"):
            reasons.append(why.code_from(name, self.show(source), out.why))
        self.emit(
            runner,
            raw,
            {"unknown"},
            written,
            redirects=written,
            cwd=cwd,
            opaque=reasons,
            inputs=(*inputs, *extra),
        )

    def describe(self, inputs: tuple[int, ...]) -> str:
        if not inputs:
            return ""
        cmd = self.commands[inputs[-1]]
        return self.show(" ".join(cmd.argv))[:80]

    def show(self, text: str) -> str:
        """``text`` with its holes written as they were in the command."""
        from .records import show

        return show(text, tuple(self.holes.table)) if HOLE_RE.search(text) else text

    # -- interpreters --

    def interpreter(
        self,
        argv: list[str],
        code: tuple[str, str, str],
        stdin: Output | None,
        cwd: str | None,
        depth: int,
        found: dict[str, list[Any]],
    ) -> None:
        """Code an interpreter runs: inline, on its input, or in a file."""
        lang, where, text = code
        name = program_name(argv[0])
        reasons: list[Opaque] = found["opaque"]
        if where == "encoded":
            reasons.append(why.code_from(name, "-EncodedCommand", "base64-encoded code"))
            return
        if where == "inline":
            holes = self.holes.of(text)
            if len(holes) == 1 and len(text.strip()) == 1:
                out: Output | None = self.hole_out(holes[0])
            else:
                for hole in holes:
                    if hole.hostile:
                        reasons.append(why.injected(name, hole))
                        break
                self.scanned(name, lang, text, cwd, depth, found)
                return
        else:
            out = stdin if where == "stdin" else self.file_code(text, cwd, stdin)
        if out is None:
            return
        if out.kind == "lit":
            self.scanned(name, lang, out.text, cwd, depth, found)
        elif out.kind == "fetch" and out.fetch is not None:
            self.fetch_run(name, out.fetch, cwd)
        elif out.kind in ("obf", "any"):
            source = text if where != "stdin" else "its input"
            reasons.append(why.code_from(name, self.show(source) or "its input", out.why))

    def fetch_run(self, name: str, fetch: int, cwd: str | None) -> None:
        """An interpreter running downloaded code: recorded as a shell running it."""
        idx = self.emit_virtual(
            ["sh", "-c", f"({name})"],
            cwd,
            f"{name} runs what {self.commands[fetch].program} downloads",
            (fetch,),
        )
        self.outs[idx] = Output("local")

    def scanned(
        self,
        name: str,
        lang: str,
        text: str,
        cwd: str | None,
        depth: int,
        found: dict[str, list[Any]],
    ) -> None:
        """What inline code does, recorded: the commands it runs, deletes, writes, downloads."""
        built = lang != "ex"  # an editor's commands are plain text; other languages compute
        self.derived += built
        try:
            self._record_scan(name, lang, text, cwd, depth, found)
        finally:
            self.derived -= built

    def _record_scan(
        self,
        name: str,
        lang: str,
        text: str,
        cwd: str | None,
        depth: int,
        found: dict[str, list[Any]],
    ) -> None:
        sc = scan(lang, text)
        for line in sc.shells:
            self.script(self.unknown_parts(line, name), cwd, depth + 1)
        for cmd in sc.argvs:
            words = [self.unknown_parts(w, name) for w in cmd]
            if words and words[0]:
                self.run_argv(words, None, depth + 1, cwd)
        computed = f"a path {name} computes"
        for target in sc.deletes:
            path = target if target is not None else self.hole("any", f"({name} code)", computed)
            self.emit_virtual(["rm", "-rf", path], cwd, f"a recursive delete in {name} code", ())
            found["targets"].append(path)
        for target in sc.writes:
            found["targets"].append(
                target if target is not None else self.hole("any", f"({name} code)", computed)
            )
        if sc.fetch is not None:
            url = sc.fetch
            idx = self.emit_virtual(["curl", url], cwd, f"{name} code downloads {url}", ())
            self.outs[idx] = Output("fetch", why=f"downloaded by {name} code", fetch=idx)
            self.fetch_run(name, idx, cwd)
        else:
            for reason in sc.opaque:
                found["opaque"].append(why.code_from(name, self.show(text)[:60], reason))
        if sc.changes or sc.opaque or sc.fetch:
            found["mentions"].extend(sc.literals)
        if sc.net:  # code that talks to the network: what it names may be what it sends
            found["net"].extend(sc.literals or [""])

    def unknown_parts(self, text: str, name: str) -> str:
        if _UNKNOWN_PART not in text:
            return text
        return text.replace(_UNKNOWN_PART, self.hole("any", name, f"a value {name} computes"))
