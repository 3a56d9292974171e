"""Package managers: installing, removing and upgrading packages, publishing, queries.

``npm``/``yarn``/``pnpm``/``bun`` also run project scripts, classified by name.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..options import first, has_opt, split_opts, subcommand, word_set
from .builds import project_script
from .effect import Effect, Handler

__all__ = ["HANDLERS"]

_INSTALL_VERBS: Final = word_set(
    """install i in ins inst add reinstall remove rm r un uninstall erase purge autoremove upgrade
    update up dist-upgrade full-upgrade dup del delete build-dep tap untap link unlink pin unpin
    cleanup downgrade distro-sync swap groupinstall groupremove localinstall makecache refresh
    sync require ci clean-install install-clean ic it install-test dedupe ddp prune rebuild rb
    import fetch global local use default self toolchain component target plugin bundle fix
    install-hooks autoclean"""
)
_PKG_READ_VERBS: Final = word_set(
    """list ls la ll info show search se s find query provides whatprovides deps depends rdepends
    uses outdated doctor config leaves home cat desc policy madison changelog showpkg
    check-update repolist history why why-not explain contents dependency environment env which
    specification files owner help current version versions where view v audit freeze check
    tree root bin prefix whoami ping fund docs repo bugs licenses diagnose validate
    check-platform-reqs platform inspect debug hash index status dir path"""
)
_DRY_RUN: Final = "-s --simulate --dry-run --just-print --no-act --recon"


def _package_manager(short_arg: str = "", long_arg: Iterable[str] = ()) -> Handler:
    """apt, brew, gem, rustup, version managers...: install verbs vs query verbs."""

    def handler(args: list[str]) -> Effect:
        opts, ops = split_opts(args, short_arg, long_arg)
        verb = first(ops)
        if has_opt(opts, _DRY_RUN):
            return Effect("read_only")
        if verb in ("services", "service"):  # brew services start x
            action = first(ops[1:])
            return Effect("read_only" if action in ("", "list", "info") else "process_control")
        if any(v in _INSTALL_VERBS for v in ops[:2]) and verb not in _PKG_READ_VERBS:
            return Effect("package_install")
        if not verb or verb in _PKG_READ_VERBS:
            return Effect("read_only")
        return Effect("unknown")

    return handler


_PIP_LONG: Final = word_set(
    """--python --log --proxy --timeout --cache-dir --cert --client-cert --retries
    --exists-action --trusted-host --index-url --extra-index-url --requirement --constraint
    --target --prefix --root --src --upgrade-strategy --report"""
)


def _pip(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "rcet", _PIP_LONG)
    verb, sub = first(ops), first(ops[1:])
    if verb in ("install", "uninstall", "sync"):
        return Effect("read_only" if has_opt(opts, "--dry-run") else "package_install")
    if verb in ("download", "wheel"):
        return Effect("file_write")
    if verb == "compile":
        return Effect("file_write" if has_opt(opts, "-o --output-file") else "read_only")
    if verb == "cache":
        return Effect("delete" if sub in word_set("purge remove clean prune") else "read_only")
    if verb == "config":
        return Effect("file_write" if sub in ("set", "unset", "edit") else "read_only")
    if (
        verb in word_set("list show freeze check search help index inspect debug hash tree")
        or not verb
    ):
        return Effect("read_only")
    return Effect("unknown")


def _uv(args: list[str]) -> Effect:
    verb, rest = subcommand(args, "p", ("--directory", "--project", "--python", "--cache-dir"))
    sub = first([r for r in rest if not r.startswith("-")])
    if verb == "pip":
        return _pip(rest)
    if verb in ("add", "remove", "sync"):
        return Effect("read_only" if "--dry-run" in rest else "package_install")
    if verb in ("tool", "python", "self"):
        if sub in ("list", "dir", "find", "version"):
            return Effect("read_only")
        return Effect("file_write" if sub == "pin" else "package_install")
    if verb in ("lock", "venv", "init", "build", "format"):
        return Effect("read_only" if {"--check", "--dry-run"} & set(rest) else "file_write")
    if verb == "publish":
        return Effect("network_mutation")
    if verb == "cache":
        return Effect("delete" if sub in ("clean", "prune") else "read_only")
    if verb == "export":
        return Effect("file_write" if {"-o", "--output-file"} & set(rest) else "read_only")
    if verb in ("tree", "version", "help", ""):
        return Effect("read_only")
    return Effect("unknown")


_NPM_INSTALL: Final = word_set(
    """install i in ins inst insta instal isnt isnta isntal isntall add ci clean-install
    install-clean ic install-ci-test it install-test uninstall un unlink remove rm r update up
    upgrade udpate link ln dedupe ddp prune rebuild rb"""
)
_NPM_READ: Final = word_set(
    """ls list la ll view v info show outdated search s se find why explain root bin prefix whoami
    ping doctor help fund docs home repo bugs query sbom get help-search licenses"""
)
_NPM_PUBLISH: Final = word_set(
    "publish unpublish deprecate dist-tag owner access team org star unstar hook"
)
_NPM_WRITE: Final = word_set("init create innit pack shrinkwrap config pkg build version")
_NPM_OTHER: Final = word_set("start stop restart exec x dlx login logout adduser token")


def _js_package_manager(pm: str) -> Handler:
    """npm, yarn, pnpm, bun: installs, scripts (by name), publishing, queries."""

    def handler(args: list[str]) -> Effect:
        verb, rest = subcommand(
            args, "Cw", ("--prefix", "--workspace", "--filter", "--cwd", "--dir")
        )
        opts, ops = split_opts(rest)
        if not verb:
            return Effect("package_install" if pm == "yarn" else "read_only")
        if verb in ("test", "t", "tst"):
            return Effect("read_only")
        if verb in ("run", "run-script", "rum", "urn"):
            name = first(ops)
            if pm == "bun" and ("/" in name or "." in name):
                return Effect("unknown")  # bun run file.ts
            return project_script(name) if name else Effect("read_only")
        if verb in _NPM_INSTALL or verb == "upgrade":
            return Effect("read_only" if has_opt(opts, "--dry-run") else "package_install")
        if verb == "audit":
            return Effect("package_install" if first(ops) == "fix" else "read_only")
        if verb in _NPM_READ or (verb == "config" and first(ops) in ("", "get", "list")):
            return Effect("read_only")
        if verb in _NPM_PUBLISH:
            return Effect("network_mutation")
        if verb in _NPM_WRITE:
            if verb == "version" and not ops:
                return Effect("read_only")
            return Effect("read_only" if has_opt(opts, "--dry-run") else "file_write")
        if verb == "cache":
            return Effect("delete" if first(ops) in ("clean", "rm", "clear") else "read_only")
        if verb in _NPM_OTHER:
            return Effect("unknown")
        if pm in ("yarn", "pnpm", "bun"):
            return project_script(verb)  # ``yarn lint`` runs the lint script
        return Effect("unknown")

    return handler


def _cargo(args: list[str]) -> Effect:
    verb, rest = subcommand(args, "Z", ("--manifest-path", "--config", "--color"))
    fixes = "--fix" in rest
    reads = """check c test t bench tree metadata search verify-project version locate-project
        help audit deny"""
    if verb in word_set(reads) and not fixes:
        return Effect("read_only")
    if verb == "clippy":
        return Effect("file_write" if fixes else "read_only")
    if verb == "fmt":
        return Effect("read_only" if "--check" in rest else "file_write")
    if verb in word_set("build b doc d package new init fix vendor generate-lockfile"):
        return Effect("file_write")
    if verb in word_set("install uninstall add remove rm update fetch binstall"):
        return Effect("package_install")
    if verb in word_set("publish yank owner login logout"):
        return Effect("network_mutation")
    if verb == "clean":
        return Effect("delete")
    return Effect("unknown")  # run, script-like extensions


def _go(args: list[str]) -> Effect:
    verb, rest = subcommand(args)
    sub = first(rest)
    if verb in word_set("test vet list doc version help bug tool") or (
        verb == "env" and "-w" not in rest and "-u" not in rest
    ):
        return Effect("read_only")
    if verb in word_set("build fmt fix env work"):
        return Effect("file_write")
    if verb in ("install", "get"):
        return Effect("package_install")
    if verb == "mod":
        if sub in ("graph", "verify", "why") or (sub == "edit" and "-json" in rest):
            return Effect("read_only")
        return Effect("file_write" if sub in ("init", "edit") else "package_install")
    if verb == "clean":
        return Effect("delete")
    return Effect("unknown")  # go run, go generate


def _pacman(args: list[str]) -> Effect:
    flags = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    op = next((ch for ch in flags if ch.isupper()), "")
    query = op == "S" and set(flags) & set("silgp") and not set(flags) & set("yu")
    if op in ("Q", "F", "T") or query:
        return Effect("read_only")
    if op in ("S", "R", "U", "D"):
        return Effect("package_install")
    return Effect("unknown")


def _dpkg(args: list[str]) -> Effect:
    changes = "-i --install -r --remove -P --purge --configure --unpack -a"
    return Effect("package_install" if has_opt(split_opts(args)[0], changes) else "read_only")


_PKG: Final = _package_manager("", ("--root", "--config", "--prefix"))
_CONDA: Final = _package_manager("nc", ("--name", "--channel", "--prefix"))

HANDLERS: Final[dict[str, Handler]] = {
    "pip": _pip,
    "uv": _uv,
    **dict.fromkeys(word_set("pipx poetry pdm pipenv"), _package_manager()),
    **dict.fromkeys(word_set("conda mamba micromamba"), _CONDA),
    **{pm: _js_package_manager(pm) for pm in ("npm", "yarn", "pnpm", "bun")},
    "cargo": _cargo,
    "go": _go,
    "pacman": _pacman,
    "dpkg": _dpkg,
    **dict.fromkeys(
        word_set(
            """apt apt-get aptitude dnf yum microdnf zypper apk brew port snap flatpak pkg emerge
            xbps-install nix-env gem composer bundle bundler rustup nvm pyenv rbenv nodenv goenv
            jenv asdf mise rtx fnm volta sdk tfenv choco winget scoop dotnet pre-commit helmfile
            deno cpan cpanm luarocks opam stack cabal mix nuget pod swift vcpkg conan"""
        ),
        _PKG,
    ),
}
