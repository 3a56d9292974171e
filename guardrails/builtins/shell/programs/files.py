"""File and text tools: which paths ``rm``, ``cp``, ``sed -i``, ``tar``, ``find`` ... change.

The paths matter as much as the kind: ``protect_paths`` checks every target.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Final

from ..options import has_opt, opt_value, split_opts, word_set
from ..syntax import SINKS
from .effect import Effect, Handler

__all__ = ["CP", "HANDLERS", "MV"]


def _on_operands(kind: str, short_arg: str = "", long_arg: Iterable[str] = ()) -> Handler:
    """``rm``, ``touch``, ``mkdir``: every operand is a changed path."""
    return lambda args: Effect(kind, targets=split_opts(args, short_arg, long_arg)[1])


def _copier(
    kind: str, short_arg: str = "St", long_arg: Iterable[str] = (), *, moves: bool = False
) -> Handler:
    """``cp``/``mv``/``ln``/``install``: the destination (``dir/name`` when copying into a dir)."""
    longs = ("--suffix", "--target-directory", *long_arg)

    def handler(args: list[str]) -> Effect:
        opts, ops = split_opts(args, short_arg, longs)
        target_dir = opt_value(opts, "-t --target-directory")
        if target_dir is not None:
            srcs, dest, into = ops, target_dir, True
        elif len(ops) >= 2:
            srcs, dest = ops[:-1], ops[-1]
            into = len(srcs) > 1 or dest.endswith("/")
        elif len(ops) == 1:  # ``ln -s ../x``: a link named x here
            srcs, dest, into = ops, ".", True
        else:
            return Effect(kind)
        if has_opt(opts, "-T --no-target-directory"):
            into = False
        if into:
            names = [posixpath.basename(s.rstrip("/")) for s in srcs]
            targets = [posixpath.normpath(posixpath.join(dest, name)) for name in names]
        else:
            targets = [dest]
        return Effect(kind, targets=[*srcs, *targets] if moves else targets, sources=srcs)

    return handler


CP: Final = _copier("file_write")
MV: Final = _copier("move", moves=True)


def _install(args: list[str]) -> Effect:
    if any(a in ("-d", "--directory") for a in args):
        return _on_operands("file_write", "gmo", ("--group", "--mode", "--owner"))(args)
    return _copier("file_write", "gmoSt", ("--group", "--mode", "--owner"))(args)


def _sed(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "efl", ("--expression", "--file", "--line-length"), attached="i")
    if not has_opt(opts, "-i --in-place"):
        return Effect("read_only")
    if not has_opt(opts, "-e --expression -f --file"):
        if ops[:1] == [""]:  # BSD: sed -i '' 's/a/b/' f
            ops = ops[1:]
        ops = ops[1:]  # the script
    return Effect("file_write", targets=ops)


def _perl(args: list[str]) -> Effect:
    code: str | None = None
    inplace = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--" or not a.startswith("-") or a == "-":
            break
        for j, ch in enumerate(a[1:], 1):
            if ch in "eE":
                code = a[j + 1 :] or (args[i + 1] if i + 1 < len(args) else "")
                i += 0 if a[j + 1 :] else 1
                break
            if ch == "i":  # -i[ext]: the rest of the cluster is the backup suffix
                inplace = True
                break
            if ch in "IMmFlCdDx0":
                i += 1 if (ch in "IMm" and not a[j + 1 :]) else 0
                break
        i += 1
    files = args[i + 1 :] if i < len(args) and args[i] == "--" else args[i:]
    if code is None:
        return Effect("unknown")  # a script file
    if inplace:
        return Effect("file_write", targets=files)
    if re.search(r"\b(system|exec|unlink|rename|rmdir|mkdir|open|qx|kill)\b|`", code):
        return Effect("unknown")
    return Effect("read_only")


def _awk(args: list[str]) -> Effect:
    long_arg = word_set("--file --assign --field-separator --include --exec --load")
    opts, ops = split_opts(args, "fvFiE", long_arg)
    if opt_value(opts, "-i --include") == "inplace":
        return Effect("file_write", targets=ops[1:])
    if has_opt(opts, "-f --file -E --exec") or not ops:
        return Effect("unknown")
    program = ops[0]
    if re.search(r"\bsystem\s*\(|\|\s*getline|\|&|\bprintf?\b[^;{}]*\|", program):
        return Effect("unknown")
    if re.search(r"\bprintf?\b[^;{}]*>", program):
        return Effect("file_write")
    return Effect("read_only")


def _yq(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "", ("--output-format", "--input-format", "--expression"))
    if not has_opt(opts, "-i --inplace"):
        return Effect("read_only")
    if ops[:1] and ops[0] in ("e", "eval", "ea", "eval-all"):
        ops = ops[1:]
    return Effect("file_write", targets=ops if has_opt(opts, "--expression") else ops[1:])


def _sort(args: list[str]) -> Effect:
    long_arg = word_set("--key --output --field-separator --temporary-directory --buffer-size")
    out = opt_value(split_opts(args, "kotTS", long_arg)[0], "-o --output")
    return Effect("file_write", targets=[out]) if out else Effect("read_only")


def _uniq(args: list[str]) -> Effect:
    ops = split_opts(args, "fsw", ("--skip-fields", "--skip-chars", "--check-chars"))[1]
    return Effect("file_write", targets=ops[1:2]) if len(ops) > 1 else Effect("read_only")


def _tee(args: list[str]) -> Effect:
    files = [f for f in split_opts(args)[1] if f not in SINKS and not f.startswith("/dev/fd/")]
    return Effect("file_write", targets=files) if files else Effect("read_only")


def _dd(args: list[str]) -> Effect:
    out = next((a[3:] for a in args if a.startswith("of=")), None)
    if out is None or out in SINKS:
        return Effect("read_only")
    return Effect("file_write", targets=[out])


def _iconv(args: list[str]) -> Effect:
    out = opt_value(
        split_opts(args, "fto", ("--from-code", "--to-code", "--output"))[0], "-o --output"
    )
    return Effect("file_write", targets=[out]) if out else Effect("read_only")


def _tar(args: list[str]) -> Effect:
    mode = args[0] if args and not args[0].startswith("-") else ""
    shorts = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    letters = set(mode + shorts)
    longs = {a.partition("=")[0] for a in args if a.startswith("--")}
    if "--list" in longs or ("t" in letters and not letters & set("cxruA")):
        return Effect("read_only")
    archive = None
    for k, a in enumerate(args):
        if a.startswith("--file="):
            archive = a.partition("=")[2]
        elif k + 1 < len(args) and (
            a in ("-f", "--file")
            or (a.startswith("-") and not a.startswith("--") and a.endswith("f"))
            or (k == 0 and a == mode and "f" in a)
        ):
            archive = args[k + 1]
    creates = letters & set("cruA") or longs & word_set("--create --append --update --delete")
    return Effect("file_write", targets=[archive] if creates and archive and archive != "-" else [])


def _compressor(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "S", ("--suffix",))
    if has_opt(opts, "-c --stdout --to-stdout -t --test -l --list"):
        return Effect("read_only")
    return Effect("file_write", targets=ops)


def _unzip(args: list[str]) -> Effect:
    listing = has_opt(split_opts(args, "dx")[0], "-l -t -Z -v -p -c -z")
    return Effect("read_only" if listing else "file_write")


def _patch(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "pioDBFrVYzdg", ("--input", "--output", "--directory", "--strip"))
    if has_opt(opts, "--dry-run -C --check"):
        return Effect("read_only")
    out = opt_value(opts, "-o --output")
    return Effect("file_write", targets=[out] if out else ops[:1])


def _find(args: list[str]) -> Effect:
    """``-delete`` deletes under the start paths; ``-exec CMD ;`` runs CMD (classified too)."""
    kinds = {"read_only"}
    nested: list[list[str]] = []
    targets: list[str] = []
    starts: list[str] = []
    i, n = 0, len(args)
    while i < n and args[i] in ("-H", "-L", "-P"):
        i += 1
    while i < n and not args[i].startswith(("-", "(", "!")):
        starts.append(args[i])
        i += 1
    while i < n:
        a = args[i]
        if a == "-delete":
            kinds.add("delete")
            targets.extend(starts or ["."])
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            cmd: list[str] = []
            while j < n and not (args[j] == ";" or (args[j] == "+" and cmd and cmd[-1] == "{}")):
                cmd.append(args[j])
                j += 1
            nested.append(cmd)
            i = j
        elif a in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < n:
            kinds.add("file_write")
            targets.append(args[i + 1])
            i += 1
        i += 1
    if len(kinds) > 1:
        kinds.discard("read_only")
    return Effect(*kinds, targets=targets, nested=nested)


def _fd(args: list[str]) -> Effect:
    for k, a in enumerate(args):
        if a in ("-x", "--exec", "-X", "--exec-batch"):
            cmd = args[k + 1 :]
            return Effect("read_only", nested=[cmd[: cmd.index(";")] if ";" in cmd else cmd])
    return Effect("read_only")


HANDLERS: Final[dict[str, Handler]] = {
    **dict.fromkeys(word_set("rmdir unlink srm trash trash-put"), _on_operands("delete")),
    "rm": _on_operands("delete"),
    "shred": _on_operands("delete", "ns", ("--iterations", "--size", "--random-source")),
    "mv": MV,
    "rename": lambda args: Effect("move", targets=split_opts(args)[1][1:]),
    "cp": CP,
    "ln": _copier("file_write"),
    "install": _install,
    "touch": _on_operands("file_write", "dtr", ("--reference", "--date")),
    "mkdir": _on_operands("file_write", "m", ("--mode", "--context")),
    "truncate": lambda args: Effect("file_write", targets=split_opts(args, "sr")[1]),
    "tee": _tee,
    "dd": _dd,
    "sed": _sed,
    "gsed": _sed,
    "perl": _perl,
    **dict.fromkeys(word_set("awk gawk mawk nawk"), _awk),
    "yq": _yq,
    "sort": _sort,
    "uniq": _uniq,
    "iconv": _iconv,
    **dict.fromkeys(word_set("tar gtar bsdtar"), _tar),
    "zip": lambda args: Effect("file_write", targets=split_opts(args, "bnitxP")[1][:1]),
    "unzip": _unzip,
    "patch": _patch,
    **dict.fromkeys(
        word_set(
            """gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli compress uncompress lzma
            unlzma"""
        ),
        _compressor,
    ),
    "find": _find,
    "gfind": _find,
    "fd": _fd,
    "fdfind": _fd,
}
