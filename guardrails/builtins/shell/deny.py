"""The deny list: refuse shell commands by rules over the parsed, normalised commands.

Matching parsed commands rather than the raw string means quoting, wrappers,
nesting and flag order do not hide a command, and text that only mentions one
(``echo "rm -rf /"``) is not refused.
"""

from __future__ import annotations

import itertools
import posixpath
import re
import shlex
from collections.abc import Callable, Sequence
from typing import Any, Final

from ...results import HookResult
from .classify import Command, classify, command_of
from .programs.git import git_subcommand

__all__ = ["DEFAULT_DENY_RULES", "DenyCommands", "deny_commands", "normalize_argv"]

_RM_LONG: Final = {"--recursive": "r", "--force": "f", "--dir": "d", "--verbose": ""}
_RM_ORDER: Final = "rfd"


def _is_glob(word: str) -> bool:
    return any(c in word for c in "*?[{")


def _norm_path(word: str) -> str:
    """``/tmp/../`` -> ``/``, ``~/`` -> ``~``, ``${HOME}/x`` -> ``$HOME/x`` (lexical).

    The home directory, written any way (``~``, ``$HOME``, its absolute path), and
    every folder above it but ``/`` become ``~``: deleting them deletes home.
    """
    if word.startswith("${HOME}"):
        word = "$HOME" + word[7:]
    home = posixpath.normpath(posixpath.expanduser("~"))
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


def _norm_rm(args: list[str], pattern: bool) -> list[str]:
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
            operands.append(a if _is_glob(a) else _norm_path(a))
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


def _norm_git(args: list[str], pattern: bool) -> list[str]:
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


def _norm_recursive_first(args: list[str], pattern: bool) -> list[str]:
    """chmod/chown/chgrp: ``-R``/``--recursive`` (also inside ``-vR``) moved to the front."""
    out: list[str] = []
    recursive = False
    for a in args:
        if a in ("-R", "--recursive"):
            recursive = True
        elif re.fullmatch(r"-[A-Za-z]*R[A-Za-z]*", a):
            recursive = True
            out.append(a.replace("R", ""))
        else:
            out.append(a if _is_glob(a) else _norm_path(a))
    return ["-R", *out] if recursive else out


_NORMALIZERS: Final[dict[str, Callable[[list[str], bool], list[str]]]] = {
    "rm": _norm_rm,
    "git": _norm_git,
    "chmod": _norm_recursive_first,
    "chown": _norm_recursive_first,
    "chgrp": _norm_recursive_first,
}


def normalize_argv(argv: Sequence[str], *, pattern: bool = False) -> list[str]:
    """The canonical words deny rules are matched against.

    The program is its base name (``/bin/rm`` -> ``rm``); ``rm`` flags become
    one ordered cluster, ``git`` loses its global options and ``git push``
    lists options first, ``chmod``/``chown``/``chgrp`` put ``-R`` first. With
    ``pattern=True`` the words are a rule's (globs are left as written).
    """
    if not argv:
        return []
    prog = posixpath.basename(argv[0]) or argv[0]
    rest = list(argv[1:])
    normalizer = _NORMALIZERS.get(prog)
    return [prog, *(normalizer(rest, pattern) if normalizer else rest)]


class _Rule:
    """A deny rule compiled once: one glob per command of the pipeline it describes."""

    __slots__ = ("parts", "reason", "source")

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
        except DefinitionError as exc:
            raise ValueError(exc.message) from None

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

    def match(self, commands: Sequence[Command], texts: Sequence[str]) -> list[Command] | None:
        """The commands this rule matches (one, or a run of one pipeline), or ``None``."""
        if len(self.parts) == 1:
            regex = self.parts[0]
            for cmd, text in zip(commands, texts, strict=True):
                if text and regex.fullmatch(text):
                    return [cmd]
            return None
        pipelines: dict[int, list[int]] = {}
        for idx, cmd in enumerate(commands):
            pipelines.setdefault(cmd.pipeline, []).append(idx)
        for members in pipelines.values():
            # in order, not necessarily adjacent: `curl x | tee f | sh` still feeds sh
            found: list[Command] = []
            for m in members:
                if self.parts[len(found)].fullmatch(texts[m]):
                    found.append(commands[m])
                    if len(found) == len(self.parts):
                        return found
        return None


#: the ready ``deny_commands`` rules: irreversible damage to the machine, the home
#: directory or shared history, and running a downloaded script unseen
DEFAULT_DENY_RULES: Final[tuple[dict[str, str], ...]] = (
    {"rule": "rm -r* {/,/[*]}{, *}", "reason": "recursive delete of the filesystem root"},
    {
        "rule": "rm -r* {~,~/[*],$HOME,$HOME/[*]}{, *}",
        "reason": "recursive delete of the home directory",
    },
    {
        "rule": "rm -r* /{bin,boot,dev,etc,home,lib,lib32,lib64,opt,proc,root,sbin,srv,sys,usr,"
        "var,Applications,Library,System,Users,Volumes}{,/[*]}{, *}",
        "reason": "recursive delete of a system directory",
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
    {
        "rule": "{curl,wget} * | {sh,bash,zsh,dash,ksh,fish}{, *}",
        "reason": "runs a downloaded script without review",
    },
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

_DEFAULT_HINT: Final = (
    "This command is on the deny list because its damage cannot be undone. Do not retry it or "
    "a variant of it; if it is really needed, stop and ask the user to run it."
)


def _rules_from(value: Any, name: str) -> list[_Rule]:
    if isinstance(value, str | bytes | dict) or not isinstance(value, list | tuple):
        raise TypeError(
            f"{name} must be a list of command globs or {{rule, reason}} mappings, "
            f"got {type(value).__name__}"
        )
    rules: list[_Rule] = []
    for i, item in enumerate(value):
        where = f"{name}[{i}]"
        reason: Any = None
        if isinstance(item, dict):
            unknown = sorted(set(item) - {"rule", "reason"}, key=str)
            if unknown:
                raise ValueError(f"{where}: unknown key {unknown[0]!r} (expected rule, reason)")
            source, reason = item.get("rule"), item.get("reason")
            if reason is not None and not isinstance(reason, str):
                raise TypeError(f"{where}.reason must be a string, got {type(reason).__name__}")
        else:
            source = item
        if not isinstance(source, str) or not source.strip():
            raise ValueError(f"{where}: a rule must be a non-empty string, got {source!r}")
        try:
            rules.append(_Rule(" ".join(source.split()), reason))
        except ValueError as exc:
            raise ValueError(f"{where} {source!r}: {exc}") from None
    return rules


class DenyCommands:
    """Deny shell commands that match deny rules, however they are spelled.

    A rule is a glob over one parsed, normalised command: its words (quotes
    removed, env prefixes and wrappers like ``sudo``/``env``/``nohup``/
    ``timeout`` peeled, the program's base name) joined by single spaces, and
    it must match the whole command. ``*`` matches any characters, spaces
    included; a ``*`` standing alone as a word also matches no word at all.
    ``|`` separates the commands of a pipeline rule (``curl * | sh``), matched
    in order against the commands of one pipeline (others may stand between).
    Rules also see the commands inside ``bash -c``/``sh -c``/``eval``,
    subshells, ``$(...)``, backticks, ``xargs`` and ``find -exec``. A rule is a
    string or ``{rule, reason}``.

    ``rules=None`` uses ``DEFAULT_DENY_RULES``; a list replaces them unless
    ``include_defaults=True``. ``hint`` replaces the default advice. This is a
    guard rail against accidents, not a sandbox: a command built at run time
    (``$cmd``, ``python -c``) is not seen.
    """

    hook_name = "deny_commands"
    DEFAULT_RULES = DEFAULT_DENY_RULES

    def __init__(
        self,
        rules: Sequence[str | dict[str, str]] | None = None,
        *,
        include_defaults: bool = False,
        hint: str | None = None,
    ) -> None:
        if not isinstance(include_defaults, bool):
            raise TypeError(f"include_defaults must be true or false, got {include_defaults!r}")
        if hint is not None and not isinstance(hint, str):
            raise TypeError(f"hint must be a string, got {type(hint).__name__}")
        self.rules: list[_Rule] = []
        if rules is None or include_defaults:
            self.rules.extend(_rules_from(DEFAULT_DENY_RULES, "rules"))
        if rules is not None:
            self.rules.extend(_rules_from(rules, "rules"))
        self.hint = _DEFAULT_HINT if hint is None else hint

    def check(self, command: str) -> tuple[str, str | None, list[Command]] | None:
        """The first rule ``command`` breaks: ``(rule, reason, commands)``, or ``None``."""
        commands = classify(command).commands
        texts = [" ".join(normalize_argv(c.argv)) for c in commands]
        for rule in self.rules:
            hit = rule.match(commands, texts)
            if hit is not None:
                return rule.source, rule.reason, hit
        return None

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        found = self.check(command)
        if found is None:
            return None
        rule, reason, hit = found
        shown = " | ".join(shlex.join(c.argv) for c in hit)
        why = f" ({reason})" if reason else ""
        return HookResult.deny(f"Command denied by rule {rule!r}{why}: {shown}", hint=self.hint)


deny_commands = DenyCommands()
