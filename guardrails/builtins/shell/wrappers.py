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

__all__ = ["Peel", "drop_assignments", "unwrap", "wrapping", "xargs_items"]

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


def _peel_flock(args: list[str]) -> list[str] | str:
    opts, ops = split_opts(
        args,
        "wEc",
        ("--timeout", "--wait", "--conflict-exit-code", "--command"),
        first_operand_ends=True,
    )
    script = opt_value(opts, "-c --command")
    if script is not None:
        return script
    if len(ops) > 1 and ops[1] in ("-c", "--command"):
        return " ".join(ops[2:])
    return ops[1:]


def _peel_script(args: list[str]) -> list[str] | str:
    opts, _ = split_opts(args, "cEIOTBt", ("--command", "--log-in", "--log-out", "--echo"))
    script = opt_value(opts, "-c --command")
    return script if script is not None else []


_PARALLEL_SEPS: Final = frozenset({":::", "::::", ":::+", "::::+"})
_PARALLEL_OPTS: Final = ("--jobs", "--sshlogin", "--delimiter", "--colsep", "--arg-file")


def _peel_parallel(args: list[str]) -> list[str] | str:
    """``parallel CMD ::: ARGS``: the command with its inputs appended (one run each), or
    put where it says ``{}`` (each run then read as a line of its own). Without a command
    the inputs are the command lines (``parallel ::: 'rm -rf x'``: ``parallel_code``)."""
    cut = next((k for k, a in enumerate(args) if a in _PARALLEL_SEPS), len(args))
    cmd = _peeler("jSXEIdNa", _PARALLEL_OPTS)(args[:cut])
    inputs = args[cut + 1 :]
    if cmd and inputs and args[cut] != "::::" and any("{}" in w for w in cmd):
        return "\n".join(shlex.join([w.replace("{}", i) for w in cmd]) for i in inputs[:8])
    return [*cmd, *inputs] if cmd else []


def parallel_code(args: list[str]) -> tuple[str, str] | None:
    """``parallel`` given no command runs its inputs as shell command lines: ``("script",
    the lines)`` after ``:::``, ``("file", FILE)`` after ``::::`` or ``-a``, ``("stdin", "")``
    when it reads them from its input; ``None`` when it has a command."""
    cut = next((k for k, a in enumerate(args) if a in _PARALLEL_SEPS), len(args))
    if _peeler("jSXEIdNa", _PARALLEL_OPTS)(args[:cut]):
        return None
    opts, _ = split_opts(args[:cut], "jSXEIdNa", _PARALLEL_OPTS)
    arg_file = opt_value(opts, "-a --arg-file")
    if cut < len(args) and args[cut].startswith("::::"):
        return ("file", args[cut + 1]) if cut + 1 < len(args) else None
    if cut < len(args):
        inputs = [a for a in args[cut + 1 :] if a not in _PARALLEL_SEPS]
        return ("script", "\n".join(inputs))
    return ("file", arg_file) if arg_file else ("stdin", "")


def _peel_taskset(args: list[str]) -> list[str]:
    if any(a in ("-p", "--pid") or (a.startswith("-") and "p" in a[1:]) for a in args[:2]):
        return []
    return _peeler(positional=1)(args)


def _peel_nodemon(args: list[str]) -> list[str] | str:
    opts, _ = split_opts(args, "xwei", ("--exec", "--watch", "--ext", "--ignore"))
    script = opt_value(opts, "-x --exec")
    return script if script is not None else []


def _peel_nix_shell(args: list[str]) -> list[str] | str:
    opts, _ = split_opts(args, "pIA", ("--run", "--command", "--packages", "--attr"))
    script = opt_value(opts, "--run --command")
    return script if script is not None else []


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
    "chroot": _peeler("", ("--userspec", "--groups"), positional=1),
    "flock": _peel_flock,
    "nsenter": _peeler("tSGw", ("--target", "--setuid", "--setgid", "--wd", "--root", "--wdns")),
    "unshare": _peeler("", ("--map-user", "--map-group", "--propagation", "--setgroups")),
    "firejail": _peeler(),
    "systemd-run": _peeler(
        "pEu",
        word_set(
            """--unit --property --setenv --uid --gid --working-directory --description
            --slice --nice --on-calendar --on-active --machine --host"""
        ),
    ),
    "setpriv": _peeler(
        "", word_set("--reuid --regid --groups --inh-caps --bounding-set --securebits")
    ),
    "sg": lambda args: " ".join(a for a in args[1:] if a != "-c") if len(args) > 1 else [],
    "script": _peel_script,
    "parallel": _peel_parallel,
    "sem": _peel_parallel,
    "taskset": _peel_taskset,
    "numactl": _peeler("CNmpil", word_set("--cpunodebind --membind --physcpubind --preferred")),
    "strace": _peeler("oepPsSuEIXab", word_set("--output --expr --attach --user --env")),
    "ltrace": _peeler("oepuSanl", word_set("--output --library")),
    "valgrind": _peeler(),
    "xvfb-run": _peeler("nsfe", word_set("--server-num --server-args --auth-file --error-file")),
    "dbus-run-session": _peeler("", ("--config-file", "--dbus-daemon")),
    "pkexec": _peeler("", ("--user",)),
    "run0": _peeler("", word_set("--user --group --unit --property --chdir --setenv --nice")),
    "catchsegv": _peeler(),
    "tini": _peeler("slpeg"),
    "dumb-init": _peeler(),
    "chpst": _peeler("ugUbnlmdofcprt"),
    "setuidgid": _peeler(positional=1),
    "s6-setuidgid": _peeler(positional=1),
    "envchain": _peeler(positional=1),
    "chrt": _peeler("T", ("--sched-runtime", "--sched-period", "--sched-deadline"), positional=1),
    "cgexec": _peeler("g"),
    "faketime": _peeler("fm", positional=1),
    "eatmydata": _peeler(),
    "nocache": _peeler(),
    "trickle": _peeler("udwtl"),
    "torify": _peeler(),
    "tsocks": _peeler(),
    "cpulimit": _peeler("lpe", ("--limit", "--pid", "--exe")),
    "systemd-inhibit": _peeler("", ("--what", "--who", "--why", "--mode")),
    "proot": _peeler("rbwq", ("--rootfs", "--bind", "--cwd")),
    "ssh-agent": _peeler("aEPt"),
    "dbus-launch": _peeler(),
    "prlimit": _peeler("p", ("--pid",)),
    "entr": _peeler(),
    "watchexec": _peeler(
        "wedfi", word_set("--watch --exts --debounce --filter --ignore --shell --signal")
    ),
    "nodemon": _peel_nodemon,
    "nix-shell": _peel_nix_shell,
    "op": _peel_subcommand("run", _peeler("", ("--env-file",))),
    "doppler": _peel_subcommand("run", _peeler("pc", ("--project", "--config", "--command"))),
    "infisical": _peel_subcommand("run", _peeler("", ("--env", "--path", "--projectId"))),
    "dotenvx": _peel_subcommand("run", _peeler("f", ("--env-file",))),
    "dotenv": _peeler("ecv", ("--env-file",)),
    "aws-vault": _peel_subcommand("exec", _peeler("d", ("--duration",), positional=1)),
    "hatch": _peel_subcommand("run", _peeler()),
    "rye": _peel_subcommand("run", _peeler()),
    "pixi": _peel_subcommand("run", _peeler("e", ("--environment", "--manifest-path"))),
    "devbox": _peel_subcommand("run", _peeler()),
    "mise": _peel_subcommand("exec x", _peeler()),
    "rtx": _peel_subcommand("exec x", _peeler()),
    "asdf": _peel_subcommand("exec", _peeler()),
    **dict.fromkeys(word_set("pyenv rbenv nodenv goenv jenv"), _peel_subcommand("exec", _peeler())),
    "conda": _peel_subcommand("run", _CONDA_RUN),
    "mamba": _peel_subcommand("run", _CONDA_RUN),
    "micromamba": _peel_subcommand("run", _CONDA_RUN),
}


def _shell_code(args: list[str]) -> tuple[str, str, list[str]]:
    """For ``bash ARGS``: ``(kind, script or file, positional)`` with kind ``script``
    (``-c``), ``file`` (a script file) or ``stdin`` (no file: it reads its input)."""
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
        return "script", (args[i] if i < n else ""), args[i + 1 :]
    if from_stdin or i >= n:
        return "stdin", "", ["bash", *args[i:]]
    return "file", args[i], args[i:]


def drop_assignments(words: list[str]) -> list[str]:
    """``A=1 B=2 cmd x`` -> ``cmd x``: the environment prefix of a simple command."""
    i = 0
    while i < len(words) and _ASSIGN_RE.match(words[i]):
        i += 1
    return words[i:]


class Peel:
    """What runs once wrappers are peeled off a command.

    ``argv``: the command (for code, the program that runs it: ``bash -c ...``);
    ``code``: ``None`` for a plain command, else ``script`` (``script`` is the
    text: ``-c``, ``eval``, ``trap``, ``su -c``), ``file`` (``script`` names the
    file: ``bash f``, ``source f``) or ``stdin`` (a shell reading its input);
    ``args``: the positional parameters ``$0``, ``$1``... of that code;
    ``cwd``: a directory a wrapper runs the command in (``env -C``, ``sudo -D``);
    ``xargs``: for ``xargs``, its replace string (``""``: items are appended), and
    ``items``: the file it reads them from (``-a FILE``; ``None``: its input);
    ``chain``: the wrappers peeled, outermost first; ``env``: the ``NAME=VALUE``
    words an ``env``/``sudo`` gave the command.
    """

    __slots__ = (
        "args", "argv", "chain", "code", "cwd", "env", "items", "script", "split", "xargs"
    )  # fmt: skip

    def __init__(self, argv: list[str]) -> None:
        self.argv = argv
        self.code: str | None = None
        self.script = ""
        self.args: list[str] | None = None
        self.cwd: str | None = None
        self.xargs: str | None = None
        self.items: str | None = None  # the file ``xargs -a`` reads its items from
        self.split: str | None = None  # how xargs cuts its input (``xargs_items``)
        self.chain: list[str] = []
        self.env: list[str] = []


def _xargs(args: list[str], peel: Peel) -> list[str]:
    long_arg = word_set(
        """--arg-file --delimiter --max-args --max-procs --max-chars --process-slot-var
        --max-lines --eof"""
    )
    opts, ops = split_opts(args, "adEILnPs", long_arg, attached="eil", first_operand_ends=True)
    repl = opt_value(opts, "-I --replace -i")
    if repl is None and has_opt(opts, "-i --replace"):
        repl = "{}"
    peel.xargs = repl or ""
    peel.items = opt_value(opts, "-a --arg-file")
    delim = opt_value(opts, "-d --delimiter")
    if has_opt(opts, "-0 --null"):
        peel.split = "\0"
    elif delim is not None:
        peel.split = _C_ESCAPES.get(delim, delim[:1]) or None
    elif repl is not None:
        peel.split = "\n"
    return ops or ["echo"]


_C_ESCAPES: Final = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\\\": "\\", "\\r": "\r"}


def xargs_items(text: str, split: str | None) -> list[str]:
    """The items xargs cuts ``text`` into, as it does: at a delimiter (``-0``, ``-d``) taken
    as is, else at blanks (``-I``: at newlines) with quotes and backslashes removed, so
    ``echo "'rm -rf /'" | xargs sh -c`` hands the shell one script."""
    if split is not None and split != "\n":
        items = text.split(split)
        return items[:-1] if len(items) > 1 and items[-1] in ("", "\n") else items
    lines = text.splitlines() if split == "\n" else [text]
    out: list[str] = []
    for line in lines:
        try:
            words = shlex.split(line)
        except ValueError:  # xargs refuses an unmatched quote; read the words as they are
            words = line.split()
        if split == "\n":
            out.extend([" ".join(words)] if words else [])
        else:
            out.extend(words)
    return out


def _trap(args: list[str]) -> str | None:
    _, ops = split_opts(args)
    if len(ops) < 2 or ops[0] in ("-", ""):
        return None
    return ops[0]


def _callback(args: list[str]) -> str | None:
    """``mapfile -C CODE`` / ``readarray -C CODE``: code run for every few lines read."""
    opts, _ = split_opts(args, "dnOsuCc")
    return opt_value(opts, "-C")


def hashed(args: list[str]) -> list[tuple[str, str]]:
    """``hash -p PROG NAME...``: each NAME that runs PROG from then on."""
    opts, names = split_opts(args, "p")
    prog = opt_value(opts, "-p")
    return [] if prog is None else [(name, prog) for name in names]


def _alias(args: list[str]) -> str | None:
    values = [a.partition("=")[2] for a in args if "=" in a]
    return "\n".join(values) if values else None


#: programs ``unwrap`` may peel or read code from (anything else is returned as it is)
def wrapping() -> frozenset[str]:
    return frozenset({*_WRAPPERS, *_SHELLS, "eval", "source", ".", "trap", "alias", "xargs",
                      "at", "batch", "mapfile", "readarray"})  # fmt: skip


def unwrap(argv: list[str]) -> Peel:
    """Peel wrappers off ``argv``: the command that really runs, or the code it runs.

    A wrapper used alone (``sudo -l``, ``env``) is returned as the command.
    """
    peel = Peel(argv)
    for _ in range(32):
        if not argv:
            break
        prog = program_name(argv[0])
        if prog in _SHELLS:
            peel.code, peel.script, peel.args = _shell_code(argv[1:])
            break
        script: str | None = None
        if prog == "eval":
            script = " ".join(argv[1:])
        elif prog in ("source", ".") and len(argv) > 1:
            rest = argv[2:] if argv[1] == "--" else argv[1:]
            if rest:
                peel.code, peel.script, peel.args = "file", rest[0], rest
                break
        elif prog == "trap":
            script = _trap(argv[1:])
            if script is None:
                break
        elif prog == "alias":
            script = _alias(argv[1:])
            if script is None:
                break
        elif prog in ("mapfile", "readarray"):
            script = _callback(argv[1:])
            if script is None:
                break
        elif prog == "xargs":  # its items are filled in first: the rest is peeled after
            peel.chain.append(argv[0])
            argv = _xargs(argv[1:], peel)
            break
        elif prog in ("parallel", "sem") and (found := parallel_code(argv[1:])) is not None:
            peel.code, peel.script = found
            break
        elif prog in ("at", "batch"):  # runs the commands it reads, later
            opts, _ = split_opts(argv[1:], "qfbt", ())
            file = opt_value(opts, "-f")
            peel.code, peel.script = ("file", file) if file else ("stdin", "")
            break
        else:
            wrapper = _WRAPPERS.get(prog)
            peeled = wrapper(argv[1:]) if wrapper is not None else None
            if peeled is None:
                break
            if isinstance(peeled, str):
                script = peeled
            elif not peeled:
                if _login_shell(prog, argv[1:]):  # ``sudo -s``, ``su``: a shell reading input
                    peel.code = "stdin"
                break  # the wrapper alone (``sudo -l``, ``env``): classified itself
            else:
                if prog in ("env", "sudo", "doas"):
                    skipped = argv[1 : len(argv) - len(peeled)]
                    peel.env.extend(w for w in skipped if _ASSIGN_RE.match(w))
                moved = _chdir(prog, argv[1:])
                if moved is not None:
                    peel.cwd = moved
                peel.chain.append(argv[0])
                argv = peeled
                continue
        peel.code, peel.script, peel.args = "script", script or "", None
        break
    peel.argv = argv
    return peel


def _login_shell(prog: str, args: list[str]) -> bool:
    if prog in ("su", "runuser"):
        return not any(a in ("-c", "--command") or a.startswith("--command=") for a in args)
    if prog in ("sudo", "doas"):
        flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
        return "s" in flags or "i" in flags or "--shell" in args or "--login" in args
    return False


def _chdir(prog: str, args: list[str]) -> str | None:
    """The directory ``env -C DIR`` / ``sudo -D DIR`` runs its command in."""
    if prog not in ("env", "sudo"):
        return None
    flags = ("-C", "--chdir") if prog == "env" else ("-D", "--chdir")
    for k, a in enumerate(args):
        if a in flags and k + 1 < len(args):
            return args[k + 1]
        if a.startswith("--chdir="):
            return a.partition("=")[2]
        if a.startswith(flags[0]) and len(a) > 2 and not a.startswith("--"):
            return a[2:]
        if not a.startswith("-"):
            break
    return None
