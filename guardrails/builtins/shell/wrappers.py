"""Wrappers: commands that run another command, peeled off before it is classified.

``VAR=1``, ``env``, ``sudo``/``doas``, ``command``, ``builtin``, ``exec``,
``nohup``, ``time``, ``timeout``, ``nice``, ``xargs``, ``busybox``, ``uv run``/
``npx``/... hide the program that really runs; ``bash -c``/``sh -c``/``eval``/
``su -c`` run a script, which the classifier parses recursively.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Iterable
from typing import Final

from .options import has_opt, opt_value, program_name, split_opts, subcommand, word_set

__all__ = ["drop_assignments", "unwrap"]

_ASSIGN_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

_Peel = Callable[[list[str]], "list[str] | str | None"]
_SHELLS: Final = word_set("sh bash zsh dash ksh mksh ash fish yash")


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
    opts, ops = split_opts(args, first_operand_ends=True)
    if has_opt(opts, "-v -V"):
        return None  # a lookup, not a run
    return ops


def _peel_xargs(args: list[str]) -> list[str]:
    long_arg = word_set(
        "--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var"
    )
    return _peeler("adEILnPs", long_arg, attached="eil")(args) or ["echo"]


def _peel_watch(args: list[str]) -> list[str] | str:
    opts, ops = split_opts(args, "nq", ("--interval", "--equexit"), first_operand_ends=True)
    if has_opt(opts, "-x --exec"):
        return ops
    return " ".join(ops)


def _peel_su(args: list[str]) -> list[str] | str:
    long_arg = word_set(
        "--command --group --supp-group --shell --whitelist-environment --session-command"
    )
    opts, _ = split_opts(args, "cgGsw", long_arg)
    script = opt_value(opts, "-c --command --session-command")
    return script if script is not None else []


def _peel_runuser(args: list[str]) -> list[str] | str:
    if "-c" in args or any(a.startswith("--command") for a in args):
        return _peel_su(args)
    return _peeler("ugG", ("--user", "--group", "--supp-group"))(args)


def _peel_npx(args: list[str]) -> list[str] | str:
    opts, ops = split_opts(
        args, "pc", ("--package", "--call", "--node-options"), first_operand_ends=True
    )
    script = opt_value(opts, "-c --call")
    return script if script is not None else ops


def _peel_subcommand(subs: str, peel: _Peel) -> _Peel:
    """``npm exec ...``, ``uv run ...``: a wrapper only behind one of ``subs``."""
    names = word_set(subs)
    long_arg = word_set("--prefix --workspace --directory --project --filter --cwd --python")

    def run(args: list[str]) -> list[str] | str | None:
        sub, rest = subcommand(args, "CwpP", long_arg)
        if sub not in names:
            return None
        return peel(rest)

    return run


_PEEL_UV_RUN: Final = _peeler(
    "p",
    word_set(
        """--with --python --directory --project --env-file --extra --group --package --index
        --with-requirements --with-editable --default-index --index-url --from --script"""
    ),
)


def _peel_uv(args: list[str]) -> list[str] | str | None:
    sub, rest = subcommand(args, "p", ("--directory", "--project", "--python"))
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
        word_set(
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


def drop_assignments(words: list[str]) -> list[str]:
    """``A=1 B=2 cmd x`` -> ``cmd x``: the environment prefix of a simple command."""
    i = 0
    while i < len(words) and _ASSIGN_RE.match(words[i]):
        i += 1
    return words[i:]


def unwrap(argv: list[str], stdin: str | None) -> tuple[list[str], str | None]:
    """Peel wrappers off ``argv``: ``(the command that runs, None)``, or ``([], script)``.

    ``stdin`` is the here-document or here-string fed to the command (a shell
    reading it runs it). A wrapper used alone (``sudo -l``, ``env``) is returned
    as the command.
    """
    for _ in range(32):
        if not argv:
            break
        prog = program_name(argv[0])
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
        return [], script or ""
    return argv, None
