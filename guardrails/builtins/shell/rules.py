"""Deny rules: globs over parsed, normalised commands, and the ones ``deny_commands`` ships.

A command is matched as its words (quotes removed, wrappers peeled, the program's
base name) joined by spaces, after normalisation: ``rm``'s flags become one
ordered cluster and its operands clean paths (``/tmp/../`` -> ``/``, the home
directory in any spelling -> ``~``, a relative path joined with the directory
the command runs in when that is known, a glob below ``/`` or ``~`` -> ``/*``
/ ``~/*``); ``git`` loses its global options; ``chmod``/``chown``/``chgrp`` put
``-R`` first. A pipeline rule (``curl * | sh``) matches a command and, among
the commands whose output it reads or runs, one matching the part before.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Final

from .programs.git import git_subcommand

__all__ = ["DEFAULT_DENY_RULES", "Rule", "normalize_argv"]

_RM_LONG: Final = {"--recursive": "r", "--force": "f", "--dir": "d", "--verbose": ""}
_RM_ORDER: Final = "rfd"
_GLOB_RE: Final = re.compile(r"[*?\[{]")
_HOMES: dict[str, str] = {}


def _is_glob(word: str) -> bool:
    return _GLOB_RE.search(word) is not None


def _home() -> str:
    """The home directory, normalised (``$HOME`` read each time, worked out once per value)."""
    key = os.environ.get("HOME", "")
    home = _HOMES.get(key)
    if home is None:
        home = _HOMES[key] = posixpath.normpath(posixpath.expanduser("~"))
    return home


def _norm_path(word: str, cwd: str | None = None) -> str:
    """``/tmp/../`` -> ``/``, ``~/`` -> ``~``, ``${HOME}/x`` -> ``$HOME/x`` (lexical).

    The home directory, written any way (``~``, ``$HOME``, its absolute path), and
    every folder above it but ``/`` become ``~``: deleting them deletes home. With
    ``cwd`` (an absolute directory), a relative path is joined to it first.
    """
    if word.startswith("${HOME}"):
        word = "$HOME" + word[7:]
    if cwd and not word.startswith(("/", "~", "$HOME")) and word != "":
        word = posixpath.join(cwd, word)
    if not word.startswith(("/", "~", "$", ".")) and word != "..":
        return word  # a relative name: nothing to clean
    home = _home()
    expanded = None
    if word == "~" or word.startswith("~/"):
        expanded = home + word[1:]
    elif word == "$HOME" or word.startswith("$HOME/"):
        expanded = home + word[5:]
    elif word.startswith("/"):
        expanded = word
    if expanded is not None and home not in ("", "/", "~"):
        resolved = "/" + posixpath.normpath(expanded).lstrip("/")
        if resolved == "/":
            return "/"
        if resolved == home or home.startswith(resolved.rstrip("/") + "/"):
            return "~"
    if word.startswith(("/", "~", "$HOME", "./", "../")) or word in (".", ".."):
        norm = posixpath.normpath(word)
        return "/" + norm.lstrip("/") if norm.startswith("//") else norm
    return word


def _norm_glob(word: str, cwd: str | None) -> str:
    """A glob operand as the directory it matches in, with ``/*`` (``/??*`` -> ``/*``)."""
    parts = word.split("/")
    k = next(i for i, p in enumerate(parts) if _is_glob(p))
    prefix = "/".join(parts[:k]) or ("/" if word.startswith("/") else ".")
    base = _norm_path(prefix, cwd)
    return ("" if base == "/" else base) + "/*"


def _norm_operand(a: str, cwd: str | None) -> str:
    if _is_glob(a):
        return _norm_glob(a, cwd) if cwd or a.startswith(("/", "~", "$HOME")) else a
    return _norm_path(a, cwd)


def _norm_rm(args: list[str], pattern: bool, cwd: str | None) -> list[str]:
    """One flag cluster in a fixed order (``-r -f``, ``-fr``, ``--recursive --force`` -> ``-rf``).

    ``-R`` is ``-r``; ``-v``/``--verbose`` are dropped; options may follow
    operands (GNU), so they are moved first; operand paths are normalised.
    """
    letters: set[str] = set()
    opaque: list[str] = []
    longs: list[str] = []
    operands: list[str] = []
    ended = False
    for a in args:
        a = a.replace("${HOME}", "$HOME")  # its braces are not a glob
        if ended or a == "-" or not a.startswith("-"):
            operands.append(a if pattern else _norm_operand(a, cwd))
        elif a == "--":
            ended = True
        elif _is_glob(a):
            opaque.append(a)
        elif a.startswith("--"):
            mapped = _RM_LONG.get(a.partition("=")[0])
            if mapped is None:
                longs.append(a)
            elif mapped:
                letters.add(mapped)
        else:
            letters.update("r" if ch == "R" else ch for ch in a[1:])
    letters.discard("v")
    order = sorted(letters, key=lambda c: (_RM_ORDER.find(c) if c in _RM_ORDER else 3, c))
    cluster = ["-" + "".join(order)] if order else []
    return [*cluster, *opaque, *sorted(longs), *operands]


def _norm_git(args: list[str], pattern: bool, cwd: str | None) -> list[str]:
    """Drop global options (``-C dir``, ``-c k=v``, ``--no-pager``).

    For ``git push`` commands, short clusters are split and options put before
    operands (``git push origin -uf`` -> ``git push -u -f origin``). Patterns
    keep their order, so a standalone ``*`` stays where the author put it.
    """
    sub, rest = git_subcommand(args)
    if not sub:
        return list(args)
    if sub == "push" and not pattern:
        opts: list[str] = []
        ops: list[str] = []
        i = 0
        while i < len(rest):
            a = rest[i]
            if a == "--":
                ops.extend(rest[i + 1 :])
                break
            if a.startswith("--") or not a.startswith("-") or len(a) < 2:
                (opts if a.startswith("--") else ops).append(a)
            else:
                for j, ch in enumerate(a[1:], 1):
                    if ch == "o":  # -o <push-option>
                        value = a[j + 1 :] or (rest[i + 1] if i + 1 < len(rest) else "")
                        i += 0 if a[j + 1 :] else 1
                        opts.extend(["-o", value])
                        break
                    opts.append("-" + ch)
            i += 1
        rest = [*opts, *ops]
    return [sub, *rest]


def _norm_recursive_first(args: list[str], pattern: bool, cwd: str | None) -> list[str]:
    """chmod/chown/chgrp: ``-R``/``--recursive`` (also inside ``-vR``) moved to the front."""
    out: list[str] = []
    recursive = False
    for a in args:
        if a in ("-R", "--recursive"):
            recursive = True
        elif re.fullmatch(r"-[A-Za-z]*R[A-Za-z]*", a):
            recursive = True
            out.append(a.replace("R", ""))
        elif pattern or a.startswith("-"):
            out.append(a)
        else:
            out.append(_norm_operand(a, cwd) if ("/" in a or a in (".", "..", "~")) else a)
    return ["-R", *out] if recursive else out


def _norm_options_first(args: list[str], pattern: bool, cwd: str | None) -> list[str]:
    """mv/shred: options before operands (GNU allows both orders), operands as clean paths."""
    if pattern:
        return list(args)
    opts: list[str] = []
    ops: list[str] = []
    ended = False
    for a in args:
        if ended or a == "-" or not a.startswith("-"):
            ops.append(_norm_operand(a, cwd))
        elif a == "--":
            ended = True
        else:
            opts.append(a)
    return [*opts, *ops]


_NORMALIZERS: Final[dict[str, Callable[[list[str], bool, str | None], list[str]]]] = {
    "rm": _norm_rm,
    "mv": _norm_options_first,
    "shred": _norm_options_first,
    "rsync": _norm_options_first,
    "git": _norm_git,
    "chmod": _norm_recursive_first,
    "chown": _norm_recursive_first,
    "chgrp": _norm_recursive_first,
}


def normalize_argv(
    argv: Sequence[str], *, pattern: bool = False, cwd: str | None = None
) -> list[str]:
    """The canonical words deny rules are matched against.

    The program is its base name (``/bin/rm`` -> ``rm``); ``rm`` flags become
    one ordered cluster, ``git`` loses its global options and ``git push``
    lists options first, ``chmod``/``chown``/``chgrp`` put ``-R`` first. With
    ``cwd`` (an absolute directory) relative paths of ``rm``/``chmod``/... are
    joined to it. With ``pattern=True`` the words are a rule's (globs are left
    as written).
    """
    if not argv:
        return []
    prog = posixpath.basename(argv[0]) or argv[0]
    rest = list(argv[1:])
    normalizer = _NORMALIZERS.get(prog)
    return [prog, *(normalizer(rest, pattern, cwd) if normalizer else rest)]


def has_paths(argv: Sequence[str]) -> bool:
    """Would ``cwd`` change how ``argv`` normalises (a program whose operands are paths)?"""
    return bool(argv) and (posixpath.basename(argv[0]) in _NORMALIZERS)


class Rule:
    """A deny rule compiled once: one glob per command of the pipeline it describes."""

    __slots__ = ("heads", "parts", "reason", "source")

    def __init__(self, source: str, reason: str | None) -> None:
        from ...definition.matchers import split_alternatives
        from ...errors import DefinitionError

        self.source = source
        self.reason = reason
        try:
            parts = [p.strip() for p in split_alternatives(source)]
            if not all(parts):
                raise ValueError("an empty command beside '|'")
            self.parts = [self._compile(p) for p in parts]
            self.heads = [self._head(p) for p in parts]
        except DefinitionError as exc:
            raise ValueError(exc.message) from None

    @staticmethod
    def _head(part: str) -> re.Pattern[str] | None:
        """The program a part names (its first word), to skip other commands at once."""
        from ...definition.matchers import compile_glob

        depth, end = 0, len(part)
        for k, ch in enumerate(part):
            depth += (ch == "{") - (ch == "}")
            if ch == " " and depth == 0:
                end = k
                break
        first = posixpath.basename(part[:end]) or part[:end]
        return None if "*" in first and first.strip("*") == "" else compile_glob(first)

    @staticmethod
    def _compile(part: str) -> re.Pattern[str]:
        """A standalone ``*`` word also matches no word (``git push * -f`` matches
        ``git push -f``): every way of dropping such words is one alternative."""
        from ...definition.matchers import compile_glob

        words = normalize_argv(part.split(), pattern=True)
        stars = [i for i, w in enumerate(words) if w == "*"]
        if len(stars) > 6:
            raise ValueError("at most 6 standalone '*' words")
        variants: set[str] = set()
        for count in range(len(stars) + 1):
            for dropped in itertools.combinations(stars, count):
                kept = [w for i, w in enumerate(words) if i not in dropped]
                if kept:
                    variants.add(" ".join(kept))
        return re.compile("|".join(compile_glob(v).pattern for v in sorted(variants)))

    def matches(self, part: int, texts: Sequence[str]) -> bool:
        head = self.heads[part]
        regex = self.parts[part]
        for t in texts:
            if head is not None and not head.fullmatch(t.partition(" ")[0]):
                continue
            if t and regex.fullmatch(t):
                return True
        return False

    def match_at(
        self, i: int, texts: Sequence[Sequence[str]], inputs: Sequence[Sequence[int]]
    ) -> list[int] | None:
        """The commands (indexes, in order) by which command ``i`` completes this rule."""
        last = len(self.parts) - 1
        if not self.matches(last, texts[i]):
            return None
        if last == 0:
            return [i]
        return self._back(i, last - 1, texts, inputs, set())

    def _back(
        self,
        i: int,
        part: int,
        texts: Sequence[Sequence[str]],
        inputs: Sequence[Sequence[int]],
        seen: set[tuple[int, int]],
    ) -> list[int] | None:
        for j in _upstream(i, inputs):
            if (j, part) in seen:
                continue
            seen.add((j, part))
            if self.matches(part, texts[j]):
                if part == 0:
                    return [j, i]
                rest = self._back(j, part - 1, texts, inputs, seen)
                if rest is not None:
                    return [*rest, i]
        return None


def _upstream(i: int, inputs: Sequence[Sequence[int]]) -> list[int]:
    """Every command whose output reaches command ``i``, nearest first."""
    found: list[int] = []
    todo = list(inputs[i])
    while todo:
        j = todo.pop(0)
        if j not in found and j != i:
            found.append(j)
            todo.extend(inputs[j])
    return found


_FETCH: Final = (
    "{curl,wget,fetch,aria2c,http,https,xh,nc,ncat,netcat,socat,lwp-request,lwp-download,GET,"
    "lynx,links,elinks,w3m,ftp,tftp}"
)
_RUN: Final = "{sh,bash,zsh,dash,ksh,mksh,ash,fish,yash,eval,source,.}"
_SYSTEM: Final = (
    "/{bin,boot,dev,etc,home,lib,lib32,lib64,opt,proc,root,sbin,srv,sys,usr,var,Applications,"
    "Library,System,Users,Volumes}"
)

#: the ready ``deny_commands`` rules: irreversible damage to the machine, the home
#: directory or shared history, and running a downloaded script unseen
DEFAULT_DENY_RULES: Final[tuple[dict[str, str], ...]] = (
    {"rule": "rm -r* {/,/[*]}{, *}", "reason": "recursive delete of the filesystem root"},
    {
        "rule": "rm -r* {~,~/[*],$HOME,$HOME/[*]}{, *}",
        "reason": "recursive delete of the home directory",
    },
    {
        "rule": f"rm -r* {_SYSTEM}{{,/[*]}}{{, *}}",
        "reason": "recursive delete of a system directory",
    },
    {
        "rule": f"mv * {{/,/[*],~,~/[*],$HOME,{_SYSTEM}{{,/[*]}}}} ?*",
        "reason": "moves the filesystem root, the home directory or a system directory away",
    },
    {
        "rule": f"rsync * --delete* * {{/,~,$HOME,{_SYSTEM}}}",
        "reason": "deletes what the filesystem root, the home directory or a system directory "
        "holds that the source lacks",
    },
    {
        "rule": f"shred * {{/,/[*],~,~/[*],$HOME,{_SYSTEM}{{,/[*]}}}}{{, *}}",
        "reason": "overwrites the filesystem root, the home directory or a system directory",
    },
    {
        "rule": "ch{mod,own,grp} -R * {/,/[*]}{, *}",
        "reason": "recursive permission change of the whole filesystem",
    },
    {"rule": "chmod -R 777 *", "reason": "makes a whole tree world-writable"},
    {"rule": "mkfs*", "reason": "formats a filesystem"},
    {
        "rule": "dd * of=/dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,rdisk}*",
        "reason": "overwrites a disk device",
    },
    {"rule": f"{_FETCH} * | {_RUN}{{, *}}", "reason": "runs a downloaded script without review"},
    {"rule": "git push * --force{, *}", "reason": "force-push rewrites shared history"},
    {"rule": "git push * -f{, *}", "reason": "force-push rewrites shared history"},
    {"rule": "git push * +*", "reason": "a +refspec force-pushes"},
    {
        "rule": "{shutdown,reboot,halt,poweroff}{, *}",
        "reason": "powers off or restarts the machine",
    },
    {
        "rule": "systemctl {poweroff,reboot,halt,kexec}{, *}",
        "reason": "powers off or restarts the machine",
    },
    {"rule": "kill * -1", "reason": "signals every process you may signal"},
    {"rule": "mv * /dev/null", "reason": "replaces /dev/null"},
)
