"""File and text tools: which paths ``rm``, ``cp``, ``sed -i``, ``tar``, ``find`` ... change.

The paths matter as much as the kind: ``protect_paths`` checks every target.
``writers`` holds the programs whose writes are less plain (archives, editors,
``sed``, ``find``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Final

from ..options import has_opt, opt_value, split_opts, word_set
from ..syntax import SINKS
from .effect import Effect, Handler, unread_verb

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
        res = Effect(kind, targets=[*srcs, *targets] if moves else targets, sources=srcs)
        contents = any(s.endswith(("/.", "/*")) for s in srcs) or (
            has_opt(opts, "-T --no-target-directory") and has_opt(opts, "-r -R -a --recursive")
        )
        if contents:  # cp -r a/. b, cp -rT a b: a's content into b
            res.trees = [("write", dest, None, "all")]
        return res

    return handler


CP: Final = _copier("file_write")
MV: Final = _copier("move", moves=True)


def _gio(args: list[str]) -> Effect:
    """GIO's file commands: ``move``/``rename``/``remove``/``trash`` take their operands
    away (a folder with what it holds), ``copy``/``save`` write their destination."""
    sub, rest = (args[0], args[1:]) if args else ("", [])
    rest = [a[len("file://") :] if a.startswith("file:///") else a for a in rest]  # local URIs
    if sub in ("move", "copy"):
        return (MV if sub == "move" else CP)(rest)
    if sub == "rename":  # the new name, in the same folder
        ops = split_opts(rest)[1]
        new = [posixpath.join(posixpath.dirname(ops[0]), ops[1])] if len(ops) > 1 else []
        return Effect("move", "file_write", targets=ops[:1] + new)
    if sub in ("remove", "trash"):
        return Effect("delete", targets=split_opts(rest)[1])
    if sub == "save":
        return Effect("file_write", targets=split_opts(rest)[1][:1])
    if sub in _GIO_READS:
        return Effect("read_only")
    return unread_verb()  # open (launches a program), launch, ...


_GIO_READS: Final = word_set("info list cat tree mime monitor mount version help")


def _install(args: list[str]) -> Effect:
    if any(a in ("-d", "--directory") for a in args):
        return _on_operands("file_write", "gmo", ("--group", "--mode", "--owner"))(args)
    return _copier("file_write", "gmoSt", ("--group", "--mode", "--owner"))(args)


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


def _split(args: list[str]) -> Effect:
    """``split FILE PREFIX``: writes PREFIXaa, PREFIXab..."""
    ops = split_opts(
        args, "abClnt", ("--bytes", "--lines", "--line-bytes", "--number", "--suffix-length")
    )[1]
    prefix = ops[1] if len(ops) > 1 else "x"
    return Effect("file_write", targets=[prefix + "aa", prefix + "*"])


def _zip(args: list[str]) -> Effect:
    """The archive is written; with ``-m`` (``--move``) the files put in it are deleted, a
    folder with what it holds."""
    opts, ops = split_opts(args, "bnitxP")
    if has_opt(opts, "-m --move"):
        follows = has_opt(opts, "-r --recurse-paths -R") and not has_opt(opts, "-y --symlinks")
        # -r without -y reads a link's folder, then deletes what it read there
        found = Effect("file_write", "delete", targets=[o + "/" if follows else o for o in ops])
        if has_opt(opts, "-@ --names-stdin"):  # what it deletes comes on its input
            found.opaque = ["deletes the files its input names, which the guard does not read"]
        return found
    return Effect("file_write", targets=ops[:1])


def _compressor(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "S", ("--suffix",))
    if has_opt(opts, "-c --stdout --to-stdout -t --test -l --list"):
        return Effect("read_only")
    return Effect("file_write", targets=ops)


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
    "mkfifo": _on_operands("file_write", "mZ", ("--mode", "--context")),
    "truncate": lambda args: Effect("file_write", targets=split_opts(args, "sr")[1]),
    "split": _split,
    "csplit": lambda args: Effect(
        "file_write", targets=[(opt_value(split_opts(args, "fbn")[0], "-f") or "xx") + "00"]
    ),
    "tee": _tee,
    "dd": _dd,
    "perl": _perl,
    "ruby": _perl,  # the same -i/-e/-p options
    **dict.fromkeys(word_set("awk gawk mawk nawk"), _awk),
    "yq": _yq,
    "sort": _sort,
    "uniq": _uniq,
    "iconv": _iconv,
    "zip": _zip,
    "gio": _gio,
    **dict.fromkeys(
        word_set(
            """gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli compress uncompress lzma
            unlzma"""
        ),
        _compressor,
    ),
}
