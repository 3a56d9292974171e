"""The machine itself: containers, processes, services, schedulers, disks, clock and network."""

from __future__ import annotations

from typing import Final

from ..options import first, has_opt, split_opts, subcommand, word_set
from .effect import Effect, Handler

__all__ = ["HANDLERS"]

_DOCKER_READ: Final = word_set(
    """ps images inspect logs version info stats top history search events port diff ls list
    config df wait show"""
)
_DOCKER_PROC: Final = word_set(
    """run start stop restart kill pause unpause exec attach up down create update rename scale
    watch"""
)
_DOCKER_GROUPS: Final = word_set(
    """container image network volume system builder buildx context plugin manifest compose stack
    service secret node swarm trust"""
)
_DOCKER_LONG: Final = word_set(
    """--context --host --config --log-level --file --project-name --env-file --profile
    --project-directory"""
)


def _docker(args: list[str]) -> Effect:
    verb, rest = subcommand(args, "cHlfp", _DOCKER_LONG)
    if verb in _DOCKER_GROUPS and rest:
        verb, _ = subcommand(rest, "fp", _DOCKER_LONG)
    if verb in _DOCKER_READ or not verb:
        return Effect("read_only")
    if verb in ("rm", "rmi", "prune", "remove"):
        return Effect("delete")
    if verb in _DOCKER_PROC:
        return Effect("process_control")
    if verb in word_set("build commit tag save export load import cp bake"):
        return Effect("file_write")
    if verb == "push":
        return Effect("network_mutation")
    if verb == "pull":
        return Effect("package_install")
    return Effect("unknown")


def _kill(args: list[str]) -> Effect:
    return Effect("read_only" if args[:1] in (["-l"], ["-L"], ["--list"]) else "process_control")


def _verb_table(reads: str, write: str, short_arg: str = "") -> Handler:
    """A CLI whose first operand is a verb: ``reads`` are read-only, the rest ``write``."""
    names = word_set(reads)

    def handler(args: list[str]) -> Effect:
        verb = first(split_opts(args, short_arg)[1])
        return Effect("read_only" if not verb or verb in names else write)

    return handler


def _service(args: list[str]) -> Effect:
    if "--status-all" in args:
        return Effect("read_only")
    ops = split_opts(args)[1]
    action = ops[1] if len(ops) > 1 else ""
    return Effect("read_only" if action in ("status", "") else "process_control")


def _crontab(args: list[str]) -> Effect:
    opts = split_opts(args, "u")[0]
    if has_opt(opts, "-l"):
        return Effect("read_only")
    return Effect("delete" if has_opt(opts, "-r") else "file_write")


def _sudo(args: list[str]) -> Effect:
    opts = split_opts(args, "ugpCDrtTUh")[0]
    return Effect("read_only" if has_opt(opts, "-l -v -k -K -V") else "unknown")


def _systemctl(args: list[str]) -> Effect:
    long_arg = word_set(
        "--type --property --host --machine --lines --output --signal --state --root"
    )
    verb = first(split_opts(args, "tpHMnos", long_arg)[1])
    reads = """status show cat list-units list-unit-files list-timers list-sockets list-jobs
        list-dependencies list-machines is-active is-enabled is-failed is-system-running
        get-default help show-environment"""
    return Effect("read_only" if not verb or verb in word_set(reads) else "process_control")


def _has_any(args: list[str], names: str) -> bool:
    wanted = word_set(names)
    return any(a.partition("=")[0] in wanted for a in args)


def _shopt(args: list[str]) -> Effect:
    """``shopt -s extglob`` makes ``!(x)``, ``@(a|b)`` patterns, which the guards do not
    read: what the next lines delete or write is not seen."""
    found = Effect("read_only")
    if "extglob" in args and any(a.startswith(("-s", "-o")) for a in args):
        found.opaque = ["turns on extglob, whose patterns (`!(x)`, `@(a|b)`) it does not read"]
    return found


HANDLERS: Final[dict[str, Handler]] = {
    "shopt": _shopt,
    "wipefs": lambda args: Effect("delete" if _has_any(args, "-a --all") else "read_only"),
    "date": lambda args: Effect("unknown" if _has_any(args, "-s --set") else "read_only"),
    "ip": lambda args: Effect(
        "unknown" if _has_any(args, "add del delete set flush change replace") else "read_only"
    ),
    "mount": lambda args: Effect("unknown" if split_opts(args, "tOoLU")[1] else "read_only"),
    **dict.fromkeys(word_set("docker podman nerdctl"), _docker),
    "docker-compose": lambda args: _docker(["compose", *args]),
    "kill": _kill,
    "systemctl": _systemctl,
    "service": _service,
    "launchctl": _verb_table(
        "list print print-disabled blame procinfo version help dumpstate managerpid",
        "process_control",
    ),
    "pm2": _verb_table(
        "list ls status show describe logs monit info jlist prettylist", "process_control"
    ),
    "supervisorctl": _verb_table("status avail tail pid version help", "process_control"),
    "tmux": _verb_table(
        """ls list-sessions list-windows list-panes list-clients has-session has display-message
        display show-options show capture-pane info""",
        "unknown",
    ),
    "crontab": _crontab,
    "sudo": _sudo,
}
