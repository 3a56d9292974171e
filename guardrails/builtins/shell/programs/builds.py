"""Builders, task runners, linters and formatters: checks are read-only, fixes write files.

Project scripts (``npm run x``, ``make x``, ``just x``) are classified by their
names, following common conventions (``test``, ``lint``, ``build``, ``clean``).
"""

from __future__ import annotations

import re
from typing import Final

from ..options import first, has_opt, split_opts, word_set
from .effect import Effect, Handler, unread_verb

__all__ = ["HANDLERS", "project_script"]

_CHECK_SCRIPT_RE: Final = re.compile(r"check|verify|validate")
_FIX_SCRIPT_RE: Final = re.compile(r"fix|format|fmt|prettier|write")
_READ_SCRIPT_RE: Final = re.compile(
    r"(test|tests|lint|typecheck|type-check|types|tsc|e2e|spec|coverage|audit|ci)\b"
)
_BUILD_SCRIPT_RE: Final = re.compile(r"(build|compile|bundle|dist|generate|gen|codegen)\b")


def project_script(name: str) -> Effect:
    """A project script (``npm run x``, ``make x``, ``just x``), classified by naming convention."""
    if _CHECK_SCRIPT_RE.search(name):
        return Effect("read_only")
    if _FIX_SCRIPT_RE.search(name):
        return Effect("file_write")
    if _READ_SCRIPT_RE.match(name):
        return Effect("read_only")
    if _BUILD_SCRIPT_RE.match(name):
        return Effect("file_write")
    if name in ("clean", "distclean"):
        return Effect("delete")
    return Effect("unknown")


_MAKE_CHECKS: Final = word_set(
    """test tests check lint typecheck type-check types mypy vet verify help list fmt-check
    format-check ci"""
)
_MAKE_LONG: Final = word_set(
    "--directory --file --makefile --include-dir --what-if --old-file --assume-old"
)


def _make(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "CfIlWo", _MAKE_LONG, attached="j")
    targets = [o for o in ops if "=" not in o and not o.isdigit()]
    if has_opt(opts, "-n --dry-run --just-print --recon -q --question -p"):
        return Effect("read_only")
    if not targets:
        return Effect("unknown")  # the default target could do anything
    if all(t in _MAKE_CHECKS for t in targets):
        return Effect("read_only")
    if any(t in ("install", "uninstall") for t in targets):
        return Effect("package_install")
    if all(t in ("clean", "distclean", "mostlyclean", "maintainer-clean") for t in targets):
        return Effect("delete")
    if all(project_script(t).kinds == {"read_only"} for t in targets):
        return Effect("read_only")
    return Effect("unknown")


def _task_runner(args: list[str]) -> Effect:
    ops = split_opts(args, "fdt", ("--justfile", "--working-directory", "--taskfile", "--dir"))[1]
    return project_script(ops[0]) if ops else Effect("unknown")


def _fixer(
    write_flags: str = "",
    *,
    read_flags: str = "",
    write_verbs: str = "",
    read_default: bool = True,
) -> Handler:
    """A linter/formatter: writes files only with a fix/write flag or verb (or by default)."""
    writes, reads, verbs = word_set(write_flags), word_set(read_flags), word_set(write_verbs)

    def handler(args: list[str]) -> Effect:
        words = {a.partition("=")[0] for a in args}
        if words & reads:
            return Effect("read_only")
        verb = first([a for a in args if not a.startswith("-")])
        if words & writes or verb in verbs:
            return Effect("file_write")
        return Effect("read_only" if read_default else "file_write")

    return handler


def _ruff(args: list[str]) -> Effect:
    verb = first([a for a in args if not a.startswith("-")])
    if verb == "format":
        return Effect("read_only" if {"--check", "--diff"} & set(args) else "file_write")
    if verb == "clean":
        return Effect("delete")
    fixes = {"--fix", "--unsafe-fixes", "--add-noqa"} & set(args) and "--no-fix" not in args
    return Effect("file_write" if fixes else "read_only")


def _tsc(args: list[str]) -> Effect:
    reads = {"--noEmit", "--noemit", "--listFiles", "--showConfig", "-v", "--help"}
    return Effect("read_only" if reads & set(args) else "file_write")


def _cmake(args: list[str]) -> Effect:
    """``cmake -E``: its portable file commands (``rm -r``, ``remove_directory``, ``rename``,
    ``copy``...) change their operands, ``env``/``time`` run a command, ``chdir`` runs one
    in another folder (not followed); anything else is read as an unknown program's words."""
    verb = args[1] if args[:1] == ["-E"] and len(args) > 1 else ""
    ops = [a for a in args[2:] if not a.startswith("-")]
    if verb in ("rm", "remove", "remove_directory"):
        return Effect("delete", targets=ops)
    if verb == "rename":
        return Effect("move", "file_write", targets=ops)
    if verb in ("copy", "copy_directory", "copy_if_different", "create_symlink", "create_hardlink"):
        return Effect("file_write", targets=ops[-1:])
    if verb in ("touch", "touch_nocreate", "make_directory"):
        return Effect("file_write", targets=ops)
    if verb in ("echo", "echo_append", "environment", "capabilities", "sha256sum", "md5sum",
                "compare_files", "cat", "true", "false", "sleep"):  # fmt: skip
        return Effect("read_only")
    if verb in ("env", "time", "chdir"):
        rest = args[2:]
        if verb == "env":
            while rest and ("=" in rest[0] or rest[0].startswith("--unset")):
                rest = rest[1:]
        found = Effect("unknown", nested=[rest[1:] if verb == "chdir" else rest])
        if verb == "chdir":  # its command's paths are from a folder the guard does not follow
            found.opaque = ["runs a command in another folder (`cmake -E chdir`)"]
        return found
    return unread_verb()


HANDLERS: Final[dict[str, Handler]] = {
    "cmake": _cmake,
    "make": _make,
    "gmake": _make,
    **dict.fromkeys(word_set("just task invoke"), _task_runner),
    "ruff": _ruff,
    "black": _fixer(read_flags="--check --diff", read_default=False),
    "isort": _fixer(read_flags="--check --check-only -c --diff --show-files", read_default=False),
    "autopep8": _fixer("-i --in-place"),
    "yapf": _fixer("-i --in-place"),
    "prettier": _fixer("--write -w"),
    **dict.fromkeys(word_set("eslint stylelint standard xo markdownlint"), _fixer("--fix")),
    "biome": _fixer("--write --apply --apply-unsafe --fix"),
    "tsc": _tsc,
    "vue-tsc": _tsc,
    "gofmt": _fixer("-w"),
    "goimports": _fixer("-w"),
    "rustfmt": _fixer(read_flags="--check", read_default=False),
    "clang-format": _fixer("-i"),
    "shfmt": _fixer("-w --write"),
    "golangci-lint": _fixer("--fix", write_verbs="fmt"),
    "rubocop": _fixer(
        """-a -A --auto-correct --autocorrect --autocorrect-all --auto-correct-all -x
        --fix-layout"""
    ),
    "sqlfluff": _fixer(write_verbs="fix format"),
    "codespell": _fixer("-w --write-changes"),
    "djlint": _fixer("--reformat"),
    "dprint": _fixer(write_verbs="fmt"),
}
