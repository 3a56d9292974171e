"""Programs that write files named in their arguments, their scripts, or not at all.

``find -delete``/``-exec``, ``fd -x``, archive extraction (``tar -x``, ``unzip``,
``7z x``, ``cpio -i``, ``ar x``, ``dpkg-deb -x``), ``sed`` (``-i``, and its
``w FILE`` / ``e CMD`` commands), editors (``vi -es``, ``ex``, ``ed``: their
files), ``patch``, ``ssh-keygen -f``, ``openssl -out``, ``gpg -o``, ``xxd -r``,
``sponge``. An extraction whose members are not listed writes into its
directory (an ``Effect.trees`` entry): the path guard decides what that may hit.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from ..expand import find_name
from ..options import first, has_opt, opt_value, split_opts, word_set
from .effect import ITEM, Effect, Handler

__all__ = ["HANDLERS"]

_FIND_ARG: Final = word_set(
    """-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -size
    -perm -user -group -uid -gid -newer -anewer -cnewer -mtime -mmin -atime -amin -ctime
    -cmin -maxdepth -mindepth -links -inum -samefile -fstype -used -printf -fprint -fprint0
    -fprintf -fls -context -newermt -newerct -regextype -D -O"""
)
_FIND_WRITES: Final = word_set("-fprint -fprint0 -fprintf -fls")


def _find(args: list[str]) -> Effect:
    """``-delete`` deletes what matches under the start paths; ``-exec CMD ;`` runs CMD on it."""
    kinds = {"read_only"}
    nested: list[list[str]] = []
    targets: list[str] = []
    starts: list[str] = []
    names: list[str] = []
    negated = mindepth = False
    i, n = 0, len(args)
    follows = False  # -H/-L: a start path that is a link is the folder it leads to
    while i < n and args[i] in ("-H", "-L", "-P"):
        follows = args[i] != "-P"
        i += 1
    while i < n and not args[i].startswith(("-", "(", "!")):
        starts.append(args[i] + "/" if follows and not args[i].endswith("/") else args[i])
        i += 1
    starts = starts or ["."]
    deletes = False
    tests: set[str] = set()
    while i < n:
        a = args[i]
        if a in ("!", "-not"):
            negated = True
        elif a == "-delete":
            deletes = True
        elif a in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            cmd: list[str] = []
            while j < n and not (args[j] == ";" or (args[j] == "+" and args[j - 1] == "{}")):
                cmd.append(args[j].replace("{}", ITEM))
                j += 1
            nested.append(cmd)
            i = j
        elif a in _FIND_WRITES and i + 1 < n:
            kinds.add("file_write")
            targets.append(args[i + 1])
            i += 1
        elif a in _FIND_ARG and i + 1 < n:
            tests.add(a)
            if a in ("-name", "-iname") and not negated:
                names.append(find_name(a, args[i + 1]))
            if a == "-mindepth" and args[i + 1] != "0":
                mindepth = True
            negated = False
            i += 1
        i += 1
    only_names = tests <= {"-name", "-iname", "-maxdepth", "-mindepth", "-type"}
    if "!" in args or "-not" in args or (("-o" in args or "-or" in args) and not only_names):
        names = []
    filt = tuple(names) or None
    if deletes:
        kinds.add("delete")
        for s in starts:
            targets.extend([s] if filt is None and not mindepth else [])
    res = Effect(*kinds, targets=targets, nested=nested)
    if deletes:
        res.trees = [("delete", s, filt, "all") for s in starts]
    if nested:
        res.item = (starts if not mindepth else [s + "/" for s in starts], filt, bool(tests))
    if len(res.kinds) > 1:
        res.kinds.discard("read_only")
    return res


def _fd(args: list[str]) -> Effect:
    cut = next((k for k, a in enumerate(args) if a in ("-x", "--exec", "-X", "--exec-batch")), None)
    head = args if cut is None else args[:cut]
    opts, ops = split_opts(
        head,
        "etEdgcjSo",
        word_set("--extension --type --exclude --max-depth --color --threads --size --owner"),
    )
    names: tuple[str, ...] | None = None
    ext = [v for name, v in opts if name in ("-e", "--extension") and v]
    if ext:
        names = tuple(f"*.{e.lstrip('.')}" for e in ext)
    elif has_opt(opts, "-g --glob") and ops:
        names = (ops[0],)
    starts = ops[1:] or ["."]
    if cut is None:
        return Effect("read_only")
    cmd = args[cut + 1 :]
    cmd = cmd[: cmd.index(";")] if ";" in cmd else cmd
    marks = ("{}", "{/}", "{//}", "{.}", "{/.}")
    if any(m in w for w in cmd for m in marks):
        cmd = [re.sub(r"\{/?/?\.?\}", ITEM, w) for w in cmd]
    else:
        cmd = [*cmd, ITEM]
    res = Effect("read_only", nested=[cmd])
    res.item = ([s.rstrip("/") + "/" for s in starts], names, True)
    return res


# -- archives --

_TAR_VALUED: Final = "fCTXbHgKLNV"
_TAR_LONG_VALUED: Final = word_set(
    """--file --directory --files-from --exclude-from --exclude --blocking-factor --format
    --listed-incremental --starting-file --tape-length --newer --label --transform
    --strip-components --owner --group --mode --use-compress-program --to-command
    --checkpoint-action"""
)


def _tar(args: list[str]) -> Effect:
    letters: set[str] = set()
    longs: set[str] = set()
    members: list[str] = []
    values: dict[str, str] = {}
    placed: list[str] = []  # each member in the folder the -C before it names
    folders: list[str] = []  # the -C folders so far
    i, n = 0, len(args)
    if args and not args[0].startswith("-"):  # tar xzf a.tgz: the old bundled form
        for ch in args[0]:
            letters.add(ch)
            if ch in _TAR_VALUED and i + 1 < n:
                i += 1
                values[ch] = args[i]
        i += 1
    while i < n:
        a = args[i]
        if a == "--":
            members.extend(args[i + 1 :])
            placed.extend(_in_folder(folders, m) for m in args[i + 1 :])
            break
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            longs.add(name)
            if name in _TAR_LONG_VALUED and not eq and i + 1 < n:
                i += 1
                val = args[i]
            values[name] = val
            if name == "--directory" and val:
                folders.append(val)
        elif a.startswith("-") and len(a) > 1:
            for j, ch in enumerate(a[1:], 1):
                letters.add(ch)
                if ch in _TAR_VALUED:
                    val = a[j + 1 :]
                    if not val and i + 1 < n:
                        i += 1
                        val = args[i]
                    values[ch] = val
                    if ch == "C" and val:
                        folders.append(val)
                    break
        else:
            members.append(a)
            placed.append(_in_folder(folders, a))
        i += 1
    archive = values.get("f") or values.get("--file")
    where = values.get("C") or values.get("--directory") or "."
    if "--list" in longs or ("t" in letters and not letters & set("cxruA")):
        return Effect("read_only")
    if "x" in letters or longs & {"--extract", "--get"}:
        if "O" in letters or longs & {"--to-stdout", "--to-command"}:
            return Effect("read_only")
        return _extract("P" in letters or "--absolute-names" in longs, where, members)
    creates = letters & set("cruA") or longs & word_set("--create --append --update --delete")
    res = Effect("file_write", targets=[archive] if creates and archive and archive != "-" else [])
    if any(len(o) >= 5 and "--remove-files".startswith(o) for o in longs):  # --rem, ...
        res.kinds.add("delete")
        res.targets.extend(placed)
        if values.get("T") or values.get("--files-from"):  # names read from a file
            res.opaque = ["deletes the files a list names, which the guard does not read"]
    return res


def _in_folder(folders: list[str], member: str) -> str:
    """``member`` in the folder the ``-C``s so far lead to (GNU tar applies each to the
    names after it, a relative one from the one before)."""
    return posixpath.join(".", *folders, member)


def _extract(absolute: bool, where: str, members: list[str]) -> Effect:
    """Extraction: the listed members, or (members unknown) anything under ``where``."""
    if members and not absolute:
        return Effect("file_write", targets=[posixpath.join(where, m) for m in members])
    res = Effect("file_write")
    res.trees = [("write", "/" if absolute else where, tuple(members) or None, "all")]
    return res


def _unzip(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "dP")
    if has_opt(opts, "-l -t -Z -v -p -c -z") or not ops:
        return Effect("read_only")
    if "-x" in args:
        ops = ops[:1]  # some members are excluded: take it as extracting everything
    return _extract(False, opt_value(opts, "-d") or ".", ops[1:])


def _sevenzip(args: list[str]) -> Effect:
    verb, rest = first(args), args[1:]
    ops = [a for a in rest if not a.startswith("-")]
    out = next((a[2:] for a in rest if a.startswith("-o")), ".")
    if verb in ("x", "e"):
        return _extract(False, out or ".", ops[1:])
    if verb in ("a", "u", "d", "rn"):
        return Effect("file_write", targets=ops[:1])
    return Effect("read_only")


def _cpio(args: list[str]) -> Effect:
    opts, ops = split_opts(
        args, "DEFHIMORV", ("--directory", "--file", "--format", "--pattern-file")
    )
    if not has_opt(opts, "-i --extract"):
        return Effect("read_only")  # -o writes the archive to its output; -t lists
    return _extract(False, opt_value(opts, "-D --directory") or ".", ops)


def _ar(args: list[str]) -> Effect:
    mode = first(args).lstrip("-")
    ops = args[1:]
    if "x" in mode:
        return _extract(False, ".", ops[1:])
    if set(mode) & set("rqmd"):
        return Effect("file_write", targets=ops[:1])
    return Effect("read_only")


def _dpkg_deb(args: list[str]) -> Effect:
    for k, a in enumerate(args):
        if a in ("-x", "--extract", "-X", "--vextract", "-R", "--raw-extract") and k + 2 < len(
            args
        ):
            return _extract(False, args[k + 2], [])
    return Effect("read_only")


# -- editors and stream editors --

_VIM_CMD: Final = word_set("-c --cmd -S -s -W -w -T -u -U -i")


def _editor(args: list[str]) -> Effect:
    """An editor changes the files it opens (``-R``/``view``: read-only); ``-c`` commands
    are scanned for ``:!cmd`` and ``:w FILE`` (``interpreters`` reads ex scripts)."""
    files: list[str] = []
    scripts: list[str] = []
    readonly = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in _VIM_CMD and i + 1 < len(args):
            if a in ("-c", "--cmd"):
                scripts.append(args[i + 1])
            elif a == "-W":
                files.append(args[i + 1])
            i += 2
            continue
        if a.startswith("+"):
            scripts.append(a[1:])
        elif a in ("-R", "-M", "-m", "--version", "--help", "-h"):
            readonly = True
        elif not a.startswith("-") or a == "-":
            files.append(a)
        i += 1
    if readonly and not scripts:
        return Effect("read_only")
    res = Effect("file_write", targets=files)
    res.scripts = [("ex", s) for s in scripts]
    return res


_SED_ADDR: Final = re.compile(
    r"\s*(?:\d+(?:~\d+)?|\$|/(?:[^/\\\n]|\\.)*/I?M?|\\(.)(?:(?!\1).)*\1)?"
    r"(?:\s*,\s*(?:\d+|\$|[+~]\d+|/(?:[^/\\\n]|\\.)*/))?\s*!?\s*"
)


def sed_script(script: str) -> tuple[list[str], list[str], bool]:
    """The files a sed script writes (``w``), the commands it runs (``e``), and whether
    it runs text from its input (``e`` alone, ``s///e``)."""
    writes: list[str] = []
    runs: list[str] = []
    runs_input = False
    i, n = 0, len(script)
    while i < n:
        m = _SED_ADDR.match(script, i)
        i = m.end() if m else i
        if i >= n:
            break
        c = script[i]
        if c in ";\n{}":
            i += 1
            continue
        end = script.find("\n", i)
        end = n if end < 0 else end
        if c in "wW":
            writes.append(script[i + 1 : end].strip())
            i = end
        elif c == "e":
            cmd = script[i + 1 : end].strip().split(";")[0].strip()
            if cmd:
                runs.append(cmd)
            else:
                runs_input = True
            i = end
        elif c == "s" and i + 1 < n:
            delim, j, parts = script[i + 1], i + 2, 0
            while j < n and parts < 2:
                if script[j] == "\\":
                    j += 2
                    continue
                if script[j] == delim:
                    parts += 1
                j += 1
            flag_end = j
            while flag_end < n and script[flag_end] not in ";\n}":
                if script[flag_end] == "w":
                    writes.append(script[flag_end + 1 : end].strip())
                    flag_end = end
                    break
                if script[flag_end] == "e":
                    runs_input = True
                flag_end += 1
            i = flag_end
        elif c in "aic":
            i = end
        else:
            nxt = min((k for k in (script.find(";", i), end) if k >= 0), default=n)
            i = nxt + 1
    return [w for w in writes if w and w not in ("/dev/stdout", "/dev/stderr")], runs, runs_input


def _sed(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "efl", ("--expression", "--file", "--line-length"), attached="i")
    scripts = [v for name, v in opts if name in ("-e", "--expression") and v is not None]
    if not has_opt(opts, "-e --expression -f --file"):
        if has_opt(opts, "-i --in-place") and ops[:1] == [""]:
            # BSD: sed -i '' 's/a/b/' f; GNU: '' is the script: both ways, every file counts
            ops = ops[1:] if len(ops) > 2 else ops
        scripts, ops = ops[:1], ops[1:]
        if scripts == [""] and ops:
            scripts, ops = ops[:1], ops if len(ops) == 1 else ops[1:]
    writes: list[str] = []
    res = Effect("read_only")
    code: list[tuple[str, str]] = []
    hidden: list[str] = []
    for script in scripts:
        w, runs, runs_input = sed_script(script)
        writes.extend(w)
        code.extend(("sh", r) for r in runs)
        if runs_input:
            hidden.append(f"sed runs text from its input as commands ({script!r})")
    res.scripts, res.opaque = code, hidden
    if has_opt(opts, "-i --in-place"):
        writes.extend(ops)
    if writes:
        res.kinds, res.targets = {"file_write"}, writes
    if res.scripts or res.opaque:
        res.kinds.add("unknown")
        res.kinds.discard("read_only")
    return res


# -- other writers --


def _patch(args: list[str]) -> Effect:
    opts, ops = split_opts(
        args, "pioDBFrVYzdg", ("--input", "--output", "--directory", "--strip", "--reject-file")
    )
    if has_opt(opts, "--dry-run -C --check"):
        return Effect("read_only")
    out = opt_value(opts, "-o --output")
    if out or ops:
        return Effect("file_write", targets=[out] if out else ops[:1])
    res = Effect("file_write")  # the files the patch names: not known here
    res.trees = [("write", opt_value(opts, "-d --directory") or ".", None, "all")]
    return res


def _ssh_keygen(args: list[str]) -> Effect:
    opts, _ = split_opts(args, "bCfFNtZaEGIJKMnOPrSVwzDhRsTYmWx")
    if has_opt(opts, "-l -y -B -F -L -Q -D -H -k") and not has_opt(opts, "-R"):
        return Effect("read_only")
    key = opt_value(opts, "-f")
    if key is None:
        kind = (opt_value(opts, "-t") or "ed25519").lower()
        key = f"~/.ssh/id_{kind}"
    return Effect("file_write", targets=[key, key + ".pub"])


def _valued_output(*names: str) -> Handler:
    """``openssl ... -out F``, ``gpg -o F``: the output file, if any."""
    wanted = frozenset(names)

    def handler(args: list[str]) -> Effect:
        outs = [args[k + 1] for k, a in enumerate(args[:-1]) if a in wanted]
        outs += [a.partition("=")[2] for a in args if a.partition("=")[0] in wanted and "=" in a]
        return Effect("file_write", targets=outs) if outs else Effect("read_only")

    return handler


def _xxd(args: list[str]) -> Effect:
    ops = [a for a in args if not a.startswith("-") or a == "-"]
    return Effect("file_write", targets=ops[1:2]) if len(ops) > 1 else Effect("read_only")


HANDLERS: Final[dict[str, Handler]] = {
    "find": _find,
    "gfind": _find,
    "fd": _fd,
    "fdfind": _fd,
    **dict.fromkeys(word_set("tar gtar bsdtar jar"), _tar),
    "unzip": _unzip,
    **dict.fromkeys(word_set("7z 7za 7zr 7zz"), _sevenzip),
    "cpio": _cpio,
    "ar": _ar,
    "dpkg-deb": _dpkg_deb,
    **dict.fromkeys(
        word_set("vi vim nvim gvim vim.tiny vim.basic view nano pico emacs micro hx kak"),
        _editor,
    ),
    **dict.fromkeys(
        word_set("ed red ex"),
        lambda args: Effect("file_write", targets=split_opts(args, "p", ("--prompt",))[1]),
    ),
    "view": lambda args: _editor(["-R", *args]),
    "sed": _sed,
    "gsed": _sed,
    "patch": _patch,
    "ssh-keygen": _ssh_keygen,
    "openssl": _valued_output("-out", "-keyout"),
    **dict.fromkeys(word_set("gpg gpg2"), _valued_output("-o", "--output")),
    "xxd": _xxd,
    "sponge": lambda args: Effect("file_write", targets=[a for a in args if a != "-a"][:1]),
}
