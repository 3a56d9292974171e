"""Commands hidden in options and variables: the shell code a program is told to run.

``tar --checkpoint-action=exec=CMD``, ``tar --to-command=CMD``, ``tar -I CMD``,
``zip -TT CMD``, ``rsync -e CMD``, ``man -P CMD``, ``ssh -o ProxyCommand=CMD``,
``sort --compress-program=CMD``, ``git submodule foreach CMD``, ``git rebase
--exec CMD``, ``git bisect run CMD``, ``git filter-branch --tree-filter CMD``,
``gdb -ex '!CMD'``, ``xterm -e CMD``, ``tmux new -d CMD``; and variables whose value
a program runs: ``GIT_PAGER``, ``PAGER``, ``GIT_SSH_COMMAND``, ``EDITOR``,
``LESSOPEN``... Each is returned as shell code for the analyzer to read.
"""

from __future__ import annotations

from typing import Final

from ..options import program_name, word_set

__all__ = ["COMMAND_VARS", "PROGRAMS", "embedded", "variable_code"]

#: variables whose value some program runs as a command
COMMAND_VARS: Final = word_set(
    """GIT_PAGER PAGER MANPAGER GIT_EDITOR EDITOR VISUAL GIT_SEQUENCE_EDITOR GIT_SSH_COMMAND
    GIT_SSH GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS SUDO_ASKPASS GIT_PROXY_COMMAND
    LESSOPEN LESSCLOSE BROWSER PROMPT_COMMAND FCEDIT CVS_RSH RSYNC_RSH SYSTEMD_PAGER
    SYSTEMD_EDITOR"""
)

#: program -> options whose value is shell code (``=`` or next word; ``prefix`` inside it)
_OPTIONS: Final[dict[str, tuple[tuple[str, str], ...]]] = {
    "tar": (
        ("--checkpoint-action", "exec="),
        ("--to-command", ""),
        ("--use-compress-program", ""),
        ("-I", ""),
        ("--info-script", ""),
        ("--new-volume-script", ""),
        ("-F", ""),
    ),
    "zip": (("-TT", ""), ("--unzip-command", "")),
    "rsync": (("-e", ""), ("--rsh", "")),
    "man": (("-P", ""), ("--pager", "")),
    "sort": (("--compress-program", ""),),
    "scp": (("-S", ""),),
    "gdb": (("-ex", "!"), ("-ex", "shell "), ("--eval-command", "!")),
    "xterm": (("-e", ""),),
    "emacs": (("--eval", ""),),
}
_SSH_KEYS: Final = ("proxycommand=", "localcommand=", "knownhostscommand=", "remotecommand=")


#: the programs ``embedded`` looks at
PROGRAMS: Final = frozenset({*_OPTIONS, "ssh", "scp", "sftp", "git", "tmux", "screen"})


def embedded(argv: list[str]) -> list[str]:
    """Shell code ``argv`` tells its program to run (besides its own operation)."""
    prog = program_name(argv[0])
    if prog not in PROGRAMS:
        return []
    args = argv[1:]
    found: list[str] = []
    options = _OPTIONS.get(prog, ())
    ssh = prog in ("ssh", "scp", "sftp")
    for k, a in enumerate(args if options or ssh else ()):
        nxt = args[k + 1] if k + 1 < len(args) else ""
        for opt, prefix in options:
            value = None
            if a == opt:
                value = nxt
            elif a.startswith(opt + "=") and opt.startswith("--"):
                value = a[len(opt) + 1 :]
            elif len(opt) == 2 and a.startswith(opt) and len(a) > 2 and not opt.startswith("--"):
                value = a[2:]
            if value is not None and value.startswith(prefix):
                found.append(value[len(prefix) :])
        if ssh and (a == "-o" or a.startswith("-o")):
            option = (nxt if a == "-o" else a[2:]).strip()
            if option.lower().startswith(_SSH_KEYS):
                found.append(option.split("=", 1)[1])
    if prog == "git" and _GIT_CODE & set(args):
        found.extend(_git(args))
    if prog in ("tmux", "screen") and args:
        found.extend(_session(prog, args))
    return [f for f in found if f.strip()]


_GIT_CODE: Final = frozenset({"submodule", "bisect", "rebase", "filter-branch"})


def _git(args: list[str]) -> list[str]:
    words = [a for a in args if not a.startswith("-")]
    if words[:2] == ["submodule", "foreach"]:
        return [" ".join(words[2:])]
    if words[:2] == ["bisect", "run"]:
        return [" ".join(args[args.index("run") + 1 :])]
    found: list[str] = []
    for k, a in enumerate(args[:-1]):
        if a in ("-x", "--exec") and "rebase" in words[:1]:
            found.append(args[k + 1])
        if a.startswith("--") and a.endswith("-filter") and "filter-branch" in words[:1]:
            found.append(args[k + 1])
    found += [a.partition("=")[2] for a in args if a.startswith("--exec=")]
    return found


def _session(prog: str, args: list[str]) -> list[str]:
    verbs = ("new-session", "new", "new-window", "neww", "send-keys", "split-window", "run-shell")
    if prog == "tmux" and args[0] in verbs:
        ops = [a for a in args[1:] if not a.startswith("-")]
        return [" ".join(ops[-1:])] if ops else []
    if prog == "screen" and any(a.startswith("-d") for a in args):
        ops = [a for a in args if not a.startswith("-")]
        return [" ".join(ops)] if ops else []
    return []


def variable_code(name: str, value: str) -> str | None:
    """The command a variable assignment sets up (``GIT_PAGER='rm -rf ~'``), if any."""
    if name not in COMMAND_VARS:
        return None
    return value.lstrip("|") if name.startswith("LESS") else value
