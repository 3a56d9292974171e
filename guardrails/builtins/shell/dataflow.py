"""What reaches a command: its standard input, the files and links the line made.

A mixin of the analyzer. Standard input comes from a redirection (a file, a
here-document, a ``<(...)``, a file descriptor ``exec 3< ...`` opened), from
the pipe (the outputs of the commands before it), or from the code that runs
it (``bash -c 'source /dev/stdin'`` reads the pipe ``bash`` reads). Files the
line writes remember what was written to them (``curl -o x.sh`` then
``bash x.sh`` runs a download), links it makes are followed (``ln -s .env l``
then ``> l`` writes ``.env``), and a download written to a shell's start-up
file (``~/.bashrc``) runs later, as if piped into ``sh``. A file the line makes
from others (``cp .env n.txt``, ``tar -czf a.tgz .env``) carries their content
(``copies``), for the exfiltration check.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .options import has_opt, program_name, split_opts, word_set
from .producers import FETCHERS, Producers
from .syntax import Redirect, Shape, SimpleCommand
from .values import Output, worst

if TYPE_CHECKING:
    from .programs.effect import Effect

__all__ = ["DataFlow"]

#: files a shell runs when it starts: a download written there runs later
_STARTUP: Final = word_set(
    """.bashrc .bash_profile .bash_login .profile .zshrc .zprofile .zshenv .zlogin .kshrc
    .cshrc .tcshrc config.fish .bash_logout"""
)


#: programs whose effect on files the line remembers (besides redirections)
_TRACKED: Final = frozenset({"tee", "mkfifo", "cp", "mv", "install", "ln", *FETCHERS})
#: programs that write files holding nothing of their other operands
_EMPTY_WRITERS: Final = word_set(
    "touch mkdir rm rmdir chmod chown chgrp truncate shred unlink mkfifo mknod ssh-keygen"
)


class DataFlow(Producers):
    """Standard input, file descriptors, written files and links, for the analyzer."""

    fds: dict[str, tuple[Output, tuple[int, ...]]]
    net_fds: set[str]  # file descriptors the line opened on a network socket
    links: dict[str, str]
    fifos: set[str]
    stdin_ctx: tuple[Output | None, tuple[int, ...]]

    if TYPE_CHECKING:

        def emit_virtual(
            self, argv: list[str], cwd: str | None, via: str, inputs: tuple[int, ...]
        ) -> int: ...
        def expand_scalar(self, shape: Shape | None, text: str) -> list[str]: ...

    def stdin_of(self, raw: SimpleCommand) -> tuple[Output | None, tuple[int, ...]]:
        """What ``raw`` reads on its standard input, and the commands that produce it."""
        own = [r for r in raw.redirects if r.reads_stdin or _dup_in(r)]
        r: Redirect | None = own[-1] if own else raw.stdin
        if r is not None:
            if _dup_in(r):
                known = self.fds.get(r.target)
                if known is not None:
                    return known
                return Output("any", why=f"file descriptor {r.target}"), ()
            if r.body is not None:
                if r.body_shape is None:
                    return Output("lit", r.body), ()
                text = self.expand_scalar(r.body_shape, r.body)[0]
                dynamic = any(seg[0] not in ("lit", "array") for seg in r.body_shape)
                return Output("lit", text, computed=dynamic), ()
            if r.op in ("<", "<>") and not (r.shape and r.shape[0][0] == "proc"):
                path = self.expand_scalar(r.shape, r.target)[0]
                key = self.file_key(path, raw.cwd)
                if key in self.fifos and key not in self.files:
                    return Output("any", why=f"the named pipe {path}"), ()
                named = f"`< {r.target}`" if r.shape is not None else ""
                return self.file_out(path, raw.cwd, named), ()
        if raw.upstream:
            inputs = self.inputs_of(raw)
            outs = [self.out(i) for i in inputs if i < len(self.outs)]
            return (worst(outs) if outs else None), inputs
        return self.stdin_ctx

    def inputs_of(self, raw: SimpleCommand) -> tuple[int, ...]:
        if not raw.upstream:
            return self.stdin_ctx[1]
        found: list[int] = []
        commands, by_raw = self.commands, self.by_raw
        for up in raw.upstream:
            for i in by_raw.get(id(up), ()):
                if not commands[i].speculative:
                    found.append(i)
        return tuple(found)

    def open_fds(self, raw: SimpleCommand, argv: Sequence[str]) -> None:
        """``exec 3< file``, ``exec 3<> /dev/tcp/host/80``, ``exec 3< <(cmd)``: remembered."""
        if list(argv[:1]) != ["exec"] or len(argv) > 1:
            return
        for r in raw.redirects:
            if r.fd is None or not r.fd.isdigit() or r.op not in ("<", "<>", ">"):
                continue
            target = self.expand_scalar(r.shape, r.target)[0]
            if target.startswith(("/dev/tcp/", "/dev/udp/")):
                host = target.split("/")[3:5]
                idx = self.emit_virtual(["nc", *host], raw.cwd, f"opens {target}", ())
                self.outs[idx] = Output("fetch", why=f"read from {target}", fetch=idx)
                self.fds[r.fd] = (self.out(idx), (idx,))
                self.net_fds.add(r.fd)
            elif r.shape and r.shape[0][0] == "proc" and r.op == "<":
                inner = r.shape[0][3] or []
                ids = tuple(i for sub in inner for i in self.by_raw.get(id(sub), ()))
                self.fds[r.fd] = (self.output_of(inner), ids)
            elif r.op != ">":
                self.fds[r.fd] = (self.file_out(target, raw.cwd), ())

    def track(
        self,
        argv: list[str],
        idx: int,
        effect: Effect,
        written: Sequence[str],
        stdin: Output | None,
        cwd: str | None,
    ) -> None:
        """Remember what the line writes to files and which links it makes."""
        prog = program_name(argv[0])
        if effect.targets and prog not in _TRACKED and prog not in _EMPTY_WRITERS:
            self._made_from(argv, effect.targets, cwd, idx)
        if not written and prog not in _TRACKED:
            return
        stored: list[tuple[str, Output]] = [(t, self.out(idx)) for t in written]
        if prog == "tee":
            stored += [(t, stdin or Output("local")) for t in effect.targets]
        elif prog in FETCHERS:
            fetched = Output("fetch", why=f"downloaded by {prog}", fetch=idx)
            stored += [(t, fetched) for t in effect.targets]
        elif prog == "mkfifo":
            self.fifos.update(self.file_key(t, cwd) for t in effect.targets)
        elif prog in ("cp", "mv", "install", "ln") and effect.sources:
            opts = split_opts(argv[1:], "St", ("--suffix", "--target-directory"))[0]
            linked = prog == "ln" or has_opt(opts, "-l --link -s --symbolic-link")
            soft = has_opt(opts, "-s --symbolic --symbolic-link")
            dests = effect.targets[-len(effect.sources) :]
            for src, dst in zip(effect.sources, dests, strict=False):
                content = self.files.get(self.file_key(src, cwd))
                if content is not None:
                    stored.append((dst, content))
                elif not linked:
                    self._made_from([src], [dst], cwd, idx)
                if linked:
                    base = posixpath.dirname(dst) if soft and not src.startswith("/") else ""
                    self.links[self.file_key(dst, cwd)] = self.file_key(
                        posixpath.join(base, src), cwd
                    )
        for target, content in stored:
            key = self.file_key(target, cwd)
            self.files[key] = content
            if content.kind == "fetch" and content.fetch is not None and _startup(target):
                self.emit_virtual(
                    ["sh", "-c", target],
                    cwd,
                    f"a shell runs {target} when it starts",
                    (content.fetch,),
                )

    def _made_from(
        self, argv: Sequence[str], targets: Sequence[str], cwd: str | None, idx: int
    ) -> None:
        """``targets`` now hold what the other words of ``argv`` name (``tar -czf a.tgz .env``,
        ``cp .env n.txt``): remembered for what a later upload of them sends."""
        keys = {self.file_key(t, cwd) for t in targets}
        origin = self.commands[idx].written if idx < len(self.commands) else ""
        reads = tuple(
            r
            for r in self.operand_reads(argv[1:] if len(argv) > 1 else argv, cwd, origin)
            if r[0] not in keys
        )
        if reads:
            for key in keys:
                self.copies[key] = tuple(dict.fromkeys((*self.copies.get(key, ()), *reads)))

    def aliases(self, targets: Sequence[str], cwd: str | None) -> list[str]:
        """Targets, plus what the line's own links make them point at."""
        found = list(targets)
        if self.links:
            for t in targets:
                key = self.file_key(t, cwd)
                for link, dest in self.links.items():
                    if key == link or key.startswith(link + "/"):
                        found.append(dest + key[len(link) :])
        return found


def _dup_in(r: Redirect) -> bool:
    """``<&3``: standard input taken from another file descriptor."""
    return r.op == "<&" and r.fd in (None, "0") and r.target != "-"


def _startup(path: str) -> bool:
    name = posixpath.basename(path)
    return name in _STARTUP or "/etc/profile.d/" in path or path.startswith("/etc/profile")
