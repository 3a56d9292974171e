"""git: which subcommands (and flags) change the repository, the work tree or the remote."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import Final

from ..options import Opts, first, has_opt, opt_value, split_opts, word_set
from .effect import Effect, Handler
from .files import MV

__all__ = ["HANDLERS", "git_subcommand"]

_GIT_GLOBAL_ARG: Final = word_set(
    "-C -c --git-dir --work-tree --namespace --config-env --super-prefix"
)
_GIT_READ: Final = word_set(
    """status log diff show blame annotate grep ls-files ls-tree ls-remote rev-parse rev-list
    describe shortlog cat-file show-ref for-each-ref whatchanged help version check-ignore
    check-attr check-ref-format check-mailmap name-rev merge-base cherry count-objects fsck var
    diff-tree diff-index diff-files range-diff show-branch verify-commit verify-tag verify-pack
    get-tar-commit-id difftool request-pull column fmt-merge-msg interpret-trailers patch-id"""
)
_GIT_MUTATE: Final = word_set(
    """add commit pull fetch merge rebase reset revert cherry-pick restore am init gc prune repack
    maintenance update-ref update-index symbolic-ref replace filter-branch filter-repo
    sparse-checkout rerere commit-tree mktag mktree read-tree write-tree checkout-index
    merge-file mergetool pack-refs prune-packed unpack-objects update-server-info fast-import
    citool gui"""
)


def git_subcommand(args: Sequence[str]) -> tuple[str, list[str]]:
    """Skip git's global options (``-C dir``, ``-c k=v``, ``--no-pager`` ...)."""
    i = 0
    while i < len(args):
        a = args[i]
        if a in _GIT_GLOBAL_ARG:
            i += 2
        elif a.startswith("-"):
            i += 1
        else:
            return a, list(args[i + 1 :])
    return "", []


#: configuration keys whose value is a command git runs (``alias.*`` when it starts with ``!``)
#: settings that change which code git runs (besides the command keys): a write to .git
_CODE_KEYS: Final = word_set("core.hookspath include.path core.worktree core.gitproxy")
_COMMAND_KEYS: Final = word_set(
    """core.pager core.editor core.sshcommand core.fsmonitor core.askpass sequence.editor
    diff.external gpg.program credential.helper pager.log pager.diff pager.show web.browser
    uploadpack.packobjectshook"""
)


def _config_command(key: str, value: str) -> str | None:
    """The shell command a config setting makes git run, if any."""
    key = key.lower()
    if key.startswith("alias."):
        return value[1:] if value.startswith("!") else None
    if key in _COMMAND_KEYS or key.endswith(
        (".textconv", ".clean", ".smudge", ".process", ".driver", ".command", ".cmd", ".tool")
    ):
        return value
    return None


def _git_places(args: list[str]) -> tuple[str, str]:
    """Where git works: the folder its ``-C`` options lead to (each from the last; ``""``:
    here), and its repository folder from there (``--git-dir=X``, else ``.git``)."""
    where, gitdir = "", ""
    for k, a in enumerate(args):
        if a == "-C" and k + 1 < len(args):
            where = posixpath.join(where, args[k + 1])
        elif a.startswith("--git-dir="):
            gitdir = a.partition("=")[2]
        elif a == "--git-dir" and k + 1 < len(args):
            gitdir = args[k + 1]
        elif not a.startswith("-") and (k == 0 or args[k - 1] not in _GIT_GLOBAL_ARG):
            break
    return where, gitdir or ".git"


def _git(args: list[str]) -> Effect:
    res = _git_effect(args)
    where, gitdir = _git_places(args)
    if ".git/config" in res.targets:  # a local setting that makes git run code
        config = posixpath.join(gitdir, "config")
        res.targets = [config if t == ".git/config" else t for t in res.targets]
    if where:  # `git -C dir`: its paths are from there
        res.targets = [posixpath.join(where, t) for t in res.targets]
        res.trees = [(m, posixpath.join(where, d), n, h) for m, d, n, h in res.trees]
    for k, a in enumerate(args):  # git -c alias.x='!cmd' / -c core.pager=cmd
        if a == "-c" and k + 1 < len(args):
            key, _, value = args[k + 1].partition("=")
            cmd = _config_command(key, value)
            if cmd:
                res.scripts = [*res.scripts, ("sh", cmd)]
        elif not a.startswith("-") and (k == 0 or args[k - 1] not in _GIT_GLOBAL_ARG):
            break
    return res


def _git_effect(args: list[str]) -> Effect:
    sub, rest = git_subcommand(args)
    opts, ops = split_opts(rest)
    if not sub or sub in _GIT_READ:
        return Effect("read_only")
    if sub in ("push", "fetch", "clean", "add", "rm", "mv") and has_opt(opts, "-n --dry-run"):
        return Effect("read_only")
    if sub == "push":
        return Effect("git_mutation", "network_mutation")
    if sub == "restore":
        return _git_restore(rest, opts, ops)
    if sub in _GIT_MUTATE:
        dry = sub == "commit" and has_opt(opts, "--dry-run")
        return Effect("read_only" if dry else "git_mutation")
    handler = _GIT_SUBCOMMANDS.get(sub)
    if handler is None:
        return Effect("unknown")  # an alias or an unknown subcommand
    return handler(rest, opts, ops)


def _git_rm(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    if has_opt(opts, "--cached"):
        return Effect("git_mutation")
    return Effect("delete", "git_mutation", targets=ops)


def _git_mv(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    res = MV(rest)
    res.kinds = {"move", "git_mutation"}
    return res


def _git_clone(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    long_arg = word_set(
        """--branch --origin --depth --config --reference --template --separate-git-dir --jobs
        --upload-pack --filter"""
    )
    _, cops = split_opts(rest, "bcoju", long_arg)
    dest = cops[1] if len(cops) > 1 else posixpath.basename(first(cops).rstrip("/"))
    return Effect("file_write", targets=[dest.removesuffix(".git")] if dest else [])


def _git_branch(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    changes = """-d -D --delete -m -M --move -c -C --copy -u --set-upstream-to --unset-upstream
        -f --force --edit-description --track"""
    if has_opt(opts, changes):
        return Effect("git_mutation")
    listing = """-l --list -a --all -r --remotes --contains --no-contains --merged --no-merged
        --points-at --show-current"""
    return Effect("git_mutation" if ops and not has_opt(opts, listing) else "read_only")


def _git_tag(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    if has_opt(opts, "-d --delete -a --annotate -s --sign -u -f --force -m --message -F --file"):
        return Effect("git_mutation")
    listing = "-l --list -n --contains --no-contains --points-at --merged --no-merged -v --verify"
    return Effect("git_mutation" if ops and not has_opt(opts, listing) else "read_only")


def _git_config(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """A write to a ``--file`` is a write to that file; a local one changes ``.git/config``
    (a git mutation, like any other) and an alias or command key is code git will run."""
    copts, cops = split_opts(rest, "f", ("--file", "--blob", "--type", "--default", "--comment"))
    action = first(cops)
    reads = "--get --get-all --get-regexp --get-urlmatch --list -l --get-color --get-colorbool"
    if action in ("get", "list") or has_opt(copts, reads):
        return Effect("read_only")
    writes = """--unset --unset-all --add --replace-all --rename-section --remove-section -e
        --edit"""
    verbs = word_set("set unset rename-section remove-section edit")
    if not (action in verbs or has_opt(copts, writes) or len(cops) >= 2):
        return Effect("read_only")
    file = opt_value(copts, "-f --file")
    res = Effect("git_mutation", targets=[file] if file else [])
    pair = cops[1:3] if action in verbs else cops[:2]
    if len(pair) == 2:
        cmd = _config_command(pair[0], pair[1])
        if cmd:
            res.scripts = [*res.scripts, ("sh", cmd)]
        scope = has_opt(copts, "--global --system --worktree --blob") or file
        if not scope and (cmd or pair[0].lower() in _CODE_KEYS):
            res.targets.append(".git/config")
    return res


def _git_clean(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """``git clean -x``/``-X`` also deletes ignored files (``.env`` files usually are)."""
    res = Effect("delete", targets=ops)
    if has_opt(opts, "-x -X"):
        res.trees = [("delete", ".", None, "nogit")]
    return res


_STASH_ACTIONS: Final = word_set("push save list show pop apply drop clear branch create store")


def _git_stash(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """``git stash -u`` takes untracked files out of the work tree, as ``git clean`` deletes
    them (its paths, with what a folder holds); ``-a`` ignored ones too (``clean -x``)."""
    named = first(ops) in _STASH_ACTIONS  # else: `git stash -u -- path`, a push
    action = first(ops) if named else "push"
    if action in ("list", "show"):
        return Effect("read_only")
    if action not in ("push", "save") or not has_opt(opts, "-u --include-untracked -a --all"):
        return Effect("git_mutation")
    paths = ops[1:] if named else ops
    paths = [p for p in paths if p != "--"]
    res = Effect("git_mutation", "delete", targets=paths)
    matched = any(p.startswith(":") or any(c in p for c in "*?[") for p in paths)
    if has_opt(opts, "-a --all") or matched or has_opt(opts, "--pathspec-from-file"):
        res.trees = [("delete", ".", None, "nogit")]  # git matches them: any file it takes
    return res


def _git_worktree(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """``git worktree remove PATH`` deletes the worktree's folder, with what it holds;
    ``move`` takes it elsewhere."""
    action = first(ops) or "list"
    if action == "list":
        return Effect("read_only")
    if action == "remove":
        return Effect("git_mutation", "delete", targets=ops[1:])
    if action == "move":  # the worktree's folder goes elsewhere, with what it holds
        return Effect("git_mutation", "move", "file_write", targets=ops[1:3])
    return Effect("git_mutation")


def _git_checkout(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """``git checkout [ref] -- paths`` / ``git restore paths`` overwrite those paths."""
    if not rest:
        return Effect("read_only")
    paths = rest[rest.index("--") + 1 :] if "--" in rest else []
    return Effect("git_mutation", targets=paths)


def _git_restore(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    _, paths = split_opts(rest, "s", ("--source",))
    return Effect("git_mutation", targets=paths)


def _git_verbs(
    reads: str, *, write: str = "git_mutation", default: str = ""
) -> Callable[[list[str], Opts, list[str]], Effect]:
    """A git subcommand whose first operand is an action: ``reads`` are read-only."""
    names = word_set(reads)

    def handler(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
        action = first(ops) or default
        return Effect("read_only" if action in names or not action else write)

    return handler


def _git_apply(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    """A patch changes the files it names: not known here, so anything in the work tree."""
    checks = has_opt(opts, "--check --stat --numstat --summary") and not has_opt(opts, "--apply")
    if checks:
        return Effect("read_only")
    res = Effect("git_mutation")
    if not has_opt(opts, "--cached"):
        res.trees = [("write", ".", None, "nogit")]
    return res


def _git_archive(rest: list[str], opts: Opts, ops: list[str]) -> Effect:
    out = opt_value(split_opts(rest, "o", ("--output",))[0], "-o --output")
    return Effect("file_write", targets=[out]) if out else Effect("read_only")


_GIT_SUBCOMMANDS: Final[dict[str, Callable[[list[str], Opts, list[str]], Effect]]] = {
    "checkout": _git_checkout,
    "switch": lambda rest, o, ops: Effect("git_mutation" if rest else "read_only"),
    "clean": _git_clean,
    "rm": _git_rm,
    "mv": _git_mv,
    "clone": _git_clone,
    "branch": _git_branch,
    "tag": _git_tag,
    "config": _git_config,
    "stash": _git_stash,
    "remote": _git_verbs("show get-url"),
    "reflog": _git_verbs("show", write="git_mutation", default="show"),
    "worktree": _git_worktree,
    "submodule": _git_verbs("status summary", default="status"),
    "notes": _git_verbs("list show", default="list"),
    "bisect": _git_verbs("log view visualize help terms", default="help"),
    "lfs": _git_verbs("ls-files status env version logs fsck", default="help"),
    "apply": _git_apply,
    "archive": _git_archive,
    "format-patch": lambda rest, o, ops: Effect(
        "read_only" if has_opt(o, "--stdout") else "file_write"
    ),
    "bundle": lambda rest, o, ops: Effect("file_write" if first(ops) == "create" else "read_only"),
    "hash-object": lambda rest, o, ops: Effect("git_mutation" if has_opt(o, "-w") else "read_only"),
}


HANDLERS: Final[dict[str, Handler]] = {"git": _git}
