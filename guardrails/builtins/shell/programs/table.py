"""The program table: every known program, and how one command is classified from it.

``python -m`` and ``coverage run`` look the module up here again, so they live
beside the table rather than with a family of programs.
"""

from __future__ import annotations

from typing import Final

from ..options import program_name, subcommand, word_set
from . import builds, files, git, network, packages, system, writers
from .effect import Effect, Handler

__all__ = ["classify_argv", "is_known"]

_PY_MODULE_KIND: Final = {
    **dict.fromkeys(word_set("venv virtualenv compileall py_compile zipapp"), "file_write"),
    **dict.fromkeys(
        word_set("json.tool pydoc timeit tabnanny sysconfig site platform unittest doctest"),
        "read_only",
    ),
    **dict.fromkeys(word_set("http.server trace cProfile pdb"), "unknown"),
    "ensurepip": "package_install",
}


def _python(args: list[str]) -> Effect:
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-m" or (a.startswith("-m") and len(a) > 2):
            if a == "-m":
                mod, rest = (args[i + 1] if i + 1 < len(args) else ""), args[i + 2 :]
            else:
                mod, rest = a[2:], args[i + 1 :]
            special = _py_module(mod, rest)
            if special is not None:
                return special
            kind = _PY_MODULE_KIND.get(mod)
            if kind is not None:
                return Effect(kind)
            return classify_argv([mod, *rest]) if mod and "." not in mod else Effect("unknown")
        if a in ("-V", "--version", "-VV", "-h", "--help"):
            return Effect("read_only")
        if a in ("-W", "-X", "-Q"):
            i += 2
            continue
        if a.startswith("--") or (a.startswith("-") and "c" not in a[1:]):
            i += 1
            continue
        return Effect("unknown")  # -c code, a script, or stdin
    return Effect("unknown")


def _py_module(mod: str, rest: list[str]) -> Effect | None:
    """``python -m zipfile -e a.zip DIR``, ``-m tarfile -e``, ``-m json.tool IN OUT``."""
    ops = [a for a in rest if not a.startswith("-")]
    if mod in ("zipfile", "tarfile") and any(a in ("-e", "--extract") for a in rest):
        res = Effect("file_write")
        res.trees = [("write", ops[1] if len(ops) > 1 else ".", None, "all")]
        return res
    if mod == "json.tool" and len(ops) > 1:
        return Effect("file_write", targets=ops[1:2])
    return None


def _coverage(args: list[str]) -> Effect:
    verb, rest = subcommand(args)
    if verb == "run":
        return _python(rest[rest.index("-m") :]) if "-m" in rest else Effect("unknown")
    if verb == "erase":
        return Effect("delete")
    if verb in word_set("html xml json lcov combine annotate"):
        return Effect("file_write")
    return Effect("read_only")


#: programs whose kind does not depend on their arguments
_SIMPLE: Final[dict[str, str]] = {
    **dict.fromkeys(
        word_set(
            """ls ll la dir vdir cat tac nl less more most head tail wc grep egrep fgrep rg ag ack
            echo printf pwd which whereis type whoami id groups uname cal uptime ps pgrep pidof
            top htop btop free df du stat file tree realpath readlink basename dirname diff diff3
            cmp comm cut tr paste join column fold fmt od hexdump xxd strings md5sum sha1sum
            sha224sum sha256sum sha384sum sha512sum shasum cksum sum b2sum base32 base64 basenc
            jq gron true false : test [ [[ seq yes expr bc dc printenv locale getconf nproc lscpu
            lsblk lsusb lspci lsmod lsof netstat ss ifconfig ping ping6 dig nslookup host
            traceroute tracepath mtr whois arp route tty arch sw_vers lsb_release w who last
            lastlog users finger vmstat iostat mpstat dmesg journalctl man info tldr help apropos
            whatis history jobs sleep wait read cd pushd popd dirs export unset alias unalias set
            declare typeset local readonly let shift exit return break continue trap umask
            ulimit hash getopts caller compgen complete times clear reset tput rev shuf numfmt
            expand unexpand look tsort factor env time command builtin exec bat batcat glow
            pygmentize highlight zcat bzcat xzcat zstdcat lzcat zless zgrep zegrep zfgrep bzgrep
            xzgrep zdiff zmore cloc tokei scc fzf hyperfine xmllint ssh-keyscan getent nm objdump
            readelf ldd otool fc-list pytest py.test tox nox jest vitest mocha ava karma phpunit
            rspec behave mypy dmypy pyright pyre pytype pylint flake8 pyflakes pycodestyle
            pydocstyle bandit vulture radon safety pip-audit shellcheck hadolint yamllint
            actionlint tflint checkov tfsec staticcheck govulncheck revive errcheck golint
            markdownlint-cli2 commitlint license-checker deptry terraform-docs apt-cache
            dpkg-query atq"""
        ),
        "read_only",
    ),
    **dict.fromkeys(
        word_set(
            """chmod chown chgrp chattr setfacl chflags mkfifo mknod mktemp ssh-keygen vim vi nvim
            nano emacs ed ex micro hx kak sudoedit split csplit"""
        ),
        "file_write",
    ),
    **dict.fromkeys(
        word_set(
            """ssh sftp telnet nc ncat netcat socat ftp mosh sendmail mail mailx mutt twine ansible
            ansible-playbook vercel netlify flyctl fly heroku firebase serverless sls wrangler"""
        ),
        "network_mutation",
    ),
    **dict.fromkeys(
        word_set(
            """reboot shutdown halt poweroff init telinit renice at batch atrm disown bg fg pkill
            killall xkill skill"""
        ),
        "process_control",
    ),
    "umount": "unknown",
}

_HANDLERS: Final[dict[str, Handler]] = {
    **files.HANDLERS,
    **writers.HANDLERS,
    **network.HANDLERS,
    **git.HANDLERS,
    **system.HANDLERS,
    **packages.HANDLERS,
    **builds.HANDLERS,
    **dict.fromkeys(word_set("python pypy py"), _python),
    "coverage": _coverage,
}


def is_known(prog: str) -> bool:
    """Does a table know ``prog`` (by its base name, ``python3.12`` as ``python``)?"""
    return prog in _HANDLERS or prog in _SIMPLE or prog.startswith(("mkfs", "mke2fs"))


def classify_argv(argv: list[str]) -> Effect:
    """Classify one command with its wrappers already peeled."""
    word = argv[0]
    if not word or "$" in word or "`" in word:
        return Effect("unknown")  # the program is computed at run time
    prog = program_name(word)
    args = argv[1:]
    if args in (["--version"], ["--help"]):
        return Effect("read_only")
    handler = _HANDLERS.get(prog)
    if handler is not None:
        return handler(args)
    if prog.startswith(("mkfs", "mke2fs", "mkswap")):
        return Effect("delete")
    return Effect(_SIMPLE.get(prog, "unknown"))
