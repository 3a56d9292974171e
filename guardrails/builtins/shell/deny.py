"""The deny list: refuse shell commands by rules over the parsed, normalised commands.

Matching parsed commands rather than the raw string means quoting, wrappers,
nesting, variables the line sets and flag order do not hide a command, and text
that only mentions one (``echo "rm -rf /"``) is not refused. What the analyzer
cannot see counts as the worst case (the ``opaque`` option): a command whose
name, code or input is computed at run time, and a value a rule needs that is
not known (``rm -rf "$X"`` could be ``rm -rf /``). Besides the rules, the
exfiltration check (``exfil``) refuses a line that sends a secret's content to
another machine.
"""

from __future__ import annotations

import os
import posixpath
import shlex
from collections.abc import Sequence
from typing import Any, Final

from ...results import HookResult
from .classify import Command, Intent, classify, command_of
from .project import check_opaque, git_top, project_root, root_of
from .rules import DEFAULT_DENY_RULES, Rule, has_paths, normalize_argv
from .secrets import DEFAULT_SECRETS
from .values import HOLE_RE, Hole, Opaque, hole_index

__all__ = [
    "DEFAULT_DENY_RULES",
    "DEFAULT_SECRETS",
    "EXFILTRATION",
    "DenyCommands",
    "Verdict",
    "deny_commands",
    "normalize_argv",
]

#: what an unknown value is tried as: nothing, the filesystem root, the home directory
_PROBES: Final = ("", "/", "~")


#: the name ``check`` and ``Verdict.rule`` give the exfiltration check
EXFILTRATION: Final = "secret exfiltration"


class Verdict:
    """Why a command is denied: the rule it breaks (``rule``, ``reason``, the commands),
    and, when that rests on something the guard could not see, ``opaque``; ``message``
    and ``hint``, when the check has its own words (the exfiltration check)."""

    __slots__ = ("commands", "hint", "message", "opaque", "reason", "rule", "shown")

    def __init__(
        self,
        rule: str | None,
        reason: str | None,
        commands: list[Command],
        shown: str,
        opaque: Opaque | None = None,
        message: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.rule = rule
        self.reason = reason
        self.commands = commands
        self.shown = shown
        self.opaque = opaque
        self.message = message
        self.hint = hint


class DenyCommands:
    """Deny shell commands that match deny rules, however they are spelled.

    A rule is a glob over one parsed, normalised command: its words (quotes
    removed, env prefixes and wrappers like ``sudo``/``env``/``nohup``/
    ``timeout`` peeled, the program's base name) joined by single spaces, and
    it must match the whole command. ``*`` matches any characters, spaces
    included; a ``*`` standing alone as a word also matches no word at all.
    ``|`` separates the commands of a pipeline rule (``curl * | sh``), matched
    against a command and those whose output it reads or runs (a pipe, a
    ``<(...)``, a ``$(...)`` it executes, a file the line downloaded and runs).
    Rules also see the commands inside ``bash -c``/``eval``/``source``,
    subshells, ``$(...)``, backticks, ``xargs``, ``find -exec``, ``trap``, and
    the shell commands, deletes and downloads in inline interpreter code
    (``python -c``, ``node -e``, ``perl -e``, ``awk``). A rule is a string or
    ``{rule, reason}``.

    ``rules=None`` uses ``DEFAULT_DENY_RULES``; a list replaces them unless
    ``include_defaults=True``. ``hint`` replaces the default advice. ``opaque``
    (``deny``, the default; ``ask``; ``allow``) is the answer when the guard
    cannot see whether a command breaks a rule: its name, its code or its input
    is computed at run time, a value a rule needs is unknown, an unknown program
    may run a command that breaks one, or the line does not parse.

    ``secrets`` (globs, default ``DEFAULT_SECRETS``: the project's env files and
    private keys as ``protect_paths`` protects them, ``.git/config``, credential
    files in the home directory, the environment as a whole; ``[]`` turns the
    check off) are what must not leave the machine: a line that sends a secret's
    content to another machine (an upload, a pipe or redirection into a network
    client, a substitution into a request or a DNS name, a file the line made from
    it, inline code that reads it and talks to the network) is denied, whatever
    the rules say. What it cannot see (a file to send named at run time) follows
    ``opaque``.
    """

    hook_name = "deny_commands"
    #: its PreToolUse judgement holds on PermissionRequest and PreSkillShellCommand too
    judges_calls = True
    DEFAULT_RULES = DEFAULT_DENY_RULES
    DEFAULT_SECRETS = DEFAULT_SECRETS

    def __init__(
        self,
        rules: Sequence[str | dict[str, str]] | None = None,
        *,
        include_defaults: bool = False,
        hint: str | None = None,
        opaque: str = "deny",
        secrets: Sequence[str] | None = None,
    ) -> None:
        if not isinstance(include_defaults, bool):
            raise TypeError(f"include_defaults must be true or false, got {include_defaults!r}")
        if hint is not None and not isinstance(hint, str):
            raise TypeError(f"hint must be a string, got {type(hint).__name__}")
        self.opaque = check_opaque(opaque)
        self.rules: list[Rule] = []
        if rules is None or include_defaults:
            self.rules.extend(_rules_from(DEFAULT_DENY_RULES, "rules"))
        if rules is not None:
            self.rules.extend(_rules_from(rules, "rules"))
        self.custom_hint = hint
        self.hint = _DEFAULT_HINT if hint is None else hint
        self._by_program: dict[str, frozenset[int]] = {}
        self.secrets: tuple[str, ...] | None = None  # None: the defaults, compiled on first use
        self._secret_check: Any = None
        if secrets is not None:
            if isinstance(secrets, str | bytes) or not isinstance(secrets, list | tuple):
                raise TypeError(f"secrets must be a list of globs, got {type(secrets).__name__}")
            from .exfil import SecretCheck

            self.secrets = tuple(secrets)
            try:
                self._secret_check = SecretCheck(self.secrets) if self.secrets else None
            except (TypeError, ValueError) as exc:  # PathRules names them paths[i]
                raise type(exc)(str(exc).replace("paths[", "secrets[", 1)) from None

    def check(self, command: str) -> tuple[str, str | None, list[Command]] | None:
        """The first rule ``command`` plainly breaks: ``(rule, reason, commands)``, or ``None``
        (the exfiltration check answers as the rule ``EXFILTRATION``).

        Only what the command shows counts here; ``verdict`` also answers for
        what it hides.
        """
        found = self.verdict(command)
        if found is None or found.opaque is not None or found.rule is None:
            return None
        return found.rule, found.reason, found.commands

    def verdict(
        self, command: str, cwd: str | None = None, root: str | None = None
    ) -> Verdict | None:
        """Why ``command`` (run in ``cwd``, in the project at ``root``) is denied, or ``None``.

        A rule it plainly breaks comes first; otherwise the first thing the guard
        cannot see (whatever the ``opaque`` option says about it).
        """
        intent = classify(command)
        commands = intent.commands
        texts, probed = _texts(intent, cwd, root)
        inputs = [c.inputs for c in commands]
        hidden: Verdict | None = None
        # (rule, command) pairs whose program fits, in rule order: the first rule broken wins
        pairs = sorted(
            (k, i) for i, t in enumerate(texts) for k in self._rules_for(t[0].partition(" ")[0])
        )
        for k, i in pairs:
            rule = self.rules[k]
            hit = rule.match_at(i, texts, inputs)
            if hit is not None:
                hit_cmds = [commands[j] for j in hit]
                shown = " | ".join(_display(c, intent) for c in hit_cmds)
                speculative = any(c.speculative for c in hit_cmds)
                computed = next((c for c in hit_cmds if c.written), None)
                if not speculative and computed is None:
                    return Verdict(rule.source, rule.reason, hit_cmds, shown)
                if hidden is None:
                    if computed is None or speculative:
                        reason = _speculation(intent, hit_cmds[-1], shown)
                    else:
                        reason = computed_reason(computed, _display(computed, intent, False))
                    hidden = Verdict(rule.source, rule.reason, hit_cmds, shown, reason)
            elif hidden is None and probed[i]:
                hidden = _probe_hit(rule, i, intent, probed[i], inputs, texts)
        if any(c.sends for c in commands):
            checked = self._secrets_check()
            if checked is not None:
                leak = self._exfiltration(checked, intent, cwd, root)
                if leak is not None and leak.opaque is None:
                    return leak
                hidden = hidden or leak
        if hidden is not None:
            return hidden
        for reason in intent.opaque:
            return Verdict(None, None, [], command.strip()[:120], reason)
        for cmd in commands:
            if cmd.opaque and not cmd.speculative:
                return Verdict(None, None, [cmd], _display(cmd, intent), cmd.opaque[0])
        return None

    def _secrets_check(self) -> Any:
        """The compiled ``secrets`` (the defaults on first use), or ``None`` when off."""
        if self._secret_check is None and self.secrets is None:
            from .exfil import SecretCheck

            self.secrets = DEFAULT_SECRETS
            self._secret_check = SecretCheck(DEFAULT_SECRETS)
        return self._secret_check

    def _exfiltration(
        self, checked: Any, intent: Intent, cwd: str | None, root: str | None
    ) -> Verdict | None:
        """A secret the line sends to another machine (``opaque`` set when not plainly)."""
        from .exfil import HINT, shown_path

        where = posixpath.normpath(cwd or os.getcwd())
        top = root or root_of(where)
        roots: tuple[str, ...] = (top,)
        if where != top and not where.startswith(top.rstrip("/") + "/"):
            roots = (top, git_top(where))  # working outside the project: its own too
        leak, maybe = checked.find(
            intent, where, roots, lambda cmd, written: _display(cmd, intent, written)
        )
        found = leak or maybe
        if found is None:
            return None
        shown = _display(found.cmd, intent)
        hint = self.custom_hint or HINT
        if found.opaque is not None:
            return Verdict(None, None, [found.cmd], shown, found.opaque, hint=hint)
        sockets = [r for r in found.cmd.redirects if r.startswith(("/dev/tcp/", "/dev/udp/"))]
        shown += "".join(f" > {r}" for r in sockets)
        what = f"{shown_path(found.path, top)}, a secret (matches {found.glob!r})"
        message = f"Command denied: {shown} sends {what}, to another machine."
        return Verdict(EXFILTRATION, f"sends {what}", [found.cmd], shown, None, message, hint)

    def _rules_for(self, program: str) -> frozenset[int]:
        """The rules (indexes) whose last command could be ``program`` (remembered)."""
        known = self._by_program.get(program)
        if known is None:
            known = frozenset(
                k
                for k, rule in enumerate(self.rules)
                if rule.heads[-1] is None or rule.heads[-1].fullmatch(program)
            )
            if len(self._by_program) < 2048:
                self._by_program[program] = known
        return known

    def __call__(self, event: Any, ctx: Any) -> HookResult | None:
        command = command_of(event, ctx)
        if command is None:
            return None
        cwd = getattr(event, "cwd", None) or None
        dynamic = "$(" in command or "`" in command
        sends = self.secrets != () and any(c.sends for c in classify(command).commands)
        # the project root: for a root hole, and to anchor the secrets a line may send
        root = project_root(event, ctx) if (cwd and dynamic) or sends else None
        found = self.verdict(command, cwd, root)
        if found is None:
            return None
        if found.opaque is None:
            if found.message is not None:
                return HookResult.deny(found.message, hint=found.hint or self.hint)
            why = f" ({found.reason})" if found.reason else ""
            return HookResult.deny(
                f"Command denied by rule {found.rule!r}{why}: {found.shown}", hint=self.hint
            )
        if self.opaque == "allow":
            return None
        rule = f" (rule {found.rule!r}: {found.reason})" if found.rule and found.reason else ""
        reason = f"Command {'denied' if self.opaque == 'deny' else 'needs approval'}: " + (
            f"the guard cannot see all of what it would run: {found.opaque}{rule}."
        )
        hint = found.opaque.hint + (" " + (found.hint or self.custom_hint or "")).rstrip()
        if self.opaque == "ask":
            return HookResult.ask(f"{reason}\n{hint}")
        return HookResult.deny(reason, hint=hint)


def _display(cmd: Command, intent: Intent, written: bool = True) -> str:
    """The command as it would run, with where it comes from when that reads differently."""
    from .records import show

    text = show(shlex.join(cmd.argv), intent.holes) if cmd.argv else "a redirection"
    if cmd.via:
        text += f" ({cmd.via})"
    if cmd.cwd and has_paths(cmd.argv):
        text += f" (in {show(cmd.cwd, intent.holes)})"
    return text + written_as(cmd, text) if written else text


def written_as(cmd: Command, shown: str) -> str:
    """`` (written `...`)`` when the command's words are computed, decoded or built by
    code on the line (``Command.written`` is set only then)."""
    written = " ".join(cmd.written.split())
    if not written or written == " ".join(shown.split()):
        return ""
    return f" (written `{written if len(written) <= 100 else written[:97] + '...'}`)"


def _speculation(intent: Intent, cmd: Command, shown: str) -> Opaque:
    from . import opaque as why

    owner = next(
        (c for c in intent.commands if not c.speculative and c.argv and c.kinds == {"unknown"}),
        None,
    )
    program = owner.program if owner is not None else "a program"
    return why.unknown_wrapper(f"`{program}`", shown)


def computed_reason(cmd: Command, shown: str) -> Opaque:
    """A command the line builds at run time (from variables it sets, substitutions,
    decoded text, interpreter code): the guard worked it out, but it is not written out."""
    written = " ".join(cmd.written.split())
    written = written if len(written) <= 100 else written[:97] + "..."
    return Opaque(
        f"`{written}` builds the command at run time; worked out, it is {shown}", _COMPUTED_HINT
    )


def _resolved_cwd(
    cmd: Command, cwd: str | None, holes: tuple[Hole, ...], root: str | None
) -> str | None:
    """The absolute directory ``cmd`` runs in (``None``: not known)."""
    if cmd.cwd is None:
        return None
    base = _fixed(cmd.cwd, holes, root) if HOLE_RE.search(cmd.cwd) else cmd.cwd
    if HOLE_RE.search(base):
        return None
    if not base:
        return cwd
    if base.startswith("/"):
        return base
    if base.startswith("~"):
        return posixpath.expanduser(base)
    return posixpath.join(cwd, base) if cwd else None


#: a guess at an unknown: (what was unknown, the command's text with the guess, the guess)
_Try = tuple[str, str, str]


def _texts(
    intent: Intent, cwd: str | None, root: str | None
) -> tuple[list[list[str]], list[list[_Try]]]:
    """Per command: the texts rules are matched against, and guesses at its unknowns."""
    holes = intent.holes
    texts: list[list[str]] = []
    probed: list[list[_Try]] = []
    for cmd in intent.commands:
        known = not holes or not any(HOLE_RE.search(w) for w in cmd.argv)
        if known and not has_paths(cmd.argv):  # most commands: their words, nothing to resolve
            texts.append([" ".join(normalize_argv(cmd.argv))])
            probed.append([])
            continue
        where = _resolved_cwd(cmd, cwd, holes, root)
        argv = [_fixed(w, holes, root) for w in cmd.argv]
        found = [" ".join(normalize_argv(argv))]
        paths = has_paths(argv)
        if paths and where is not None:
            found.append(" ".join(normalize_argv(argv, cwd=where)))
        tries: list[_Try] = []
        unknown = [holes[hole_index(c)] for w in argv for c in HOLE_RE.findall(w)]
        if unknown:
            for value in _PROBES:
                guess = [HOLE_RE.sub(value, w) for w in argv]
                text = " ".join(normalize_argv(guess, cwd=where))
                tries.append((f"the value of `{unknown[0].text}`", text, value))
        if paths and where is None:
            plain = [HOLE_RE.sub("", w) for w in argv]
            for value in ("/", posixpath.expanduser("~")):
                text = " ".join(normalize_argv(plain, cwd=value))
                tries.append(("the directory it runs in", text, value))
        texts.append(found)
        probed.append(tries)
    return texts, probed


def _fixed(word: str, holes: tuple[Hole, ...], root: str | None) -> str:
    """A word with the holes the guard can fill in filled: environment variables it
    has, paths a listing prints (``*``), harmless tokens, the project root."""
    if HOLE_RE.search(word) is None:
        return word

    def fill(m: Any) -> str:
        hole = holes[hole_index(m.group())]
        if hole.kind == "env" and hole.env in os.environ:
            return os.environ[hole.env]
        if hole.kind == "paths":
            return "*"
        if hole.kind == "token":
            return "x"
        if hole.kind == "root" and root:
            return root
        if hole.kind == "fd":
            return "/dev/fd/63"
        return str(m.group())

    return HOLE_RE.sub(fill, word)


def _probe_hit(
    rule: Rule,
    i: int,
    intent: Intent,
    tries: list[_Try],
    inputs: list[tuple[int, ...]],
    texts: list[list[str]],
) -> Verdict | None:
    cmd = intent.commands[i]
    last = len(rule.parts) - 1
    for what, text, value in tries:
        if not rule.matches(last, (text,)):
            continue
        trial = list(texts)
        trial[i] = [text]
        if rule.match_at(i, trial, inputs) is None:
            continue
        shown = _display(cmd, intent)
        reason = Opaque(
            f"{what} is not known; if it were `{value or '(empty)'}` the command would be `{text}`",
            _TARGET_HINT,
        )
        return Verdict(rule.source, rule.reason, [cmd], shown, reason)
    return None


_COMPUTED_HINT: Final = (
    "Write the command out as it would run (program, options and paths spelled out), "
    "without variables, substitutions or code that build it."
)
_TARGET_HINT: Final = (
    "Write the path plainly in the command (no variable, substitution or `cd` the guard "
    "cannot follow in front of it), so the guard can see what it deletes or changes."
)
_DEFAULT_HINT: Final = (
    "This command is on the deny list because its damage cannot be undone. Do not retry it or "
    "a variant of it; if it is really needed, stop and ask the user to run it."
)


def _rules_from(value: Any, name: str) -> list[Rule]:
    if isinstance(value, str | bytes | dict) or not isinstance(value, list | tuple):
        raise TypeError(
            f"{name} must be a list of command globs or {{rule, reason}} mappings, "
            f"got {type(value).__name__}"
        )
    rules: list[Rule] = []
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
            rules.append(Rule(" ".join(source.split()), reason))
        except ValueError as exc:
            raise ValueError(f"{where} {source!r}: {exc}") from None
    return rules


deny_commands = DenyCommands()
