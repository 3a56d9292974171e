"""What a command prints: the text a substitution, a pipe or a written file carries.

``echo``/``printf`` of known words print known text; ``curl``/``wget``/``nc``
print a download; decoders and text filters that can build new text
(``base64 -d``, ``xxd -r``, ``tr``, ``rev``, ``sed``, ``openssl``, an
interpreter) print text computed at run time; ``find``/``ls``/``grep -l``/
``git ls-files`` print paths under their directories; ``mktemp`` a new
temporary path; ``pwd``, ``dirname``, ``basename``, ``realpath``, ``which``
something computable; ``date``, ``whoami``, ``id``... one harmless word;
anything else a local program's output (unknown, but not hidden on purpose).

An output also carries the files whose content is in it (``Output.reads``): a
file a command prints or transforms (``cat .env``, ``base64 .env``,
``tar -c .env``), what it read on its input, the environment (``env``,
``printenv``: ``/proc/self/environ``), string literals of inline interpreter
code; text with holes carries what its holes' outputs carry (``carried``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from .expand import find_name
from .interpreters import LANGS
from .options import has_opt, opt_value, program_name, split_opts, word_set
from .values import HOLE_RE, Output, Read, has_hole, worst

if TYPE_CHECKING:
    from .records import Command
    from .syntax import SimpleCommand
    from .values import Holes

__all__ = ["ENVIRON", "FETCHERS", "Producers", "dumps_env"]

#: what a dump of the environment reads (``env | curl -d @- ...`` sends every variable)
ENVIRON: Final = "/proc/self/environ"

FETCHERS: Final = word_set(
    """curl wget fetch aria2c http https xh nc ncat netcat socat lwp-request lwp-download
    GET lynx links elinks w3m ftp tftp"""
)
#: programs whose output may be text they decoded, decompressed or built from their input
_TRANSFORMERS: Final = word_set(
    """base64 base32 basenc xxd od uudecode openssl gpg gpg2 tr rev sed gsed awk gawk mawk nawk
    perl python pypy ruby node nodejs deno bun php lua Rscript iconv gzip gunzip zcat bzip2
    bunzip2 bzcat xz unxz xzcat lzma unlzma zstd unzstd zstdcat lz4 lz4cat brotli jq yq gojq
    envsubst m4 cpp cut paste fold column printf dd strings recode uncompress xargs tac"""
)
#: programs that print (part of) what they read, unchanged
_PASSTHROUGH: Final = word_set(
    "cat head tail grep egrep fgrep rg sort uniq tee less more nl sponge"
)
_TOKEN_PROGRAMS: Final = word_set(
    """date whoami id hostname uname nproc uuidgen uuid wc seq expr stat du hostid logname arch
    tty getconf sha256sum sha1sum md5sum shasum b2sum cksum"""
)
_TOKEN_GIT: Final = word_set("--short --abbrev-ref HEAD --verify --show-prefix --show-cdup")
#: find tests that pick paths by their name or content (not just how deep or what type)
_PICKING: Final = word_set(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -newer -size -user -perm"
)
_RG_TYPES: Final = {"py": "*.py", "js": "*.js", "ts": "*.ts", "go": "*.go", "rust": "*.rs"}
#: programs whose output holds names, counts or nothing of their operands' content
_NAMES_ONLY: Final = word_set(
    """ls dir vdir tree find gfind fd fdfind locate stat file test [ [[ realpath readlink
    basename dirname which type whereis du df touch mkdir rmdir rm chmod chown chgrp ln mv cp
    install kill sleep true false : wc pwd mktemp date whoami id uname hostname seq yes cd
    git echo printf"""
)
#: programs whose first operand is their program (a filter, a script), not a file
_SCRIPT_FIRST: Final = word_set("jq yq gojq jaq xq sed gsed awk gawk mawk nawk")
#: what a code literal or an operand spelled this way names: the folder the command runs in,
#: not a file it reads (``split('.')``, ``jq .``)
_HERE: Final = frozenset({".", "..", "./", "../"})
_NAMED: Final = re.compile(r"[A-Za-z_][\w.-]*=")
#: inline code that reads the whole environment (``os.environ``, ``process.env``, ``%ENV``)
_ENV_CODE: Final = re.compile(
    r"\benviron\b(?!\s*(?:\[|\.get|\.setdefault|\.pop))|\bprocess\.env\b(?!\s*[.\[])|"
    r"%ENV\b|\bENV\.to_h\b|\bgetenv\(\s*\)|\bSys\.getenv\(\s*\)"
)


def _named_by(word: str, origin: str) -> str:
    """``""`` when ``word`` is written out in the command as written (``origin``, set only
    for a command built at run time), else that command."""
    return f"`{' '.join(origin.split())[:100]}`" if origin and word not in origin else ""


def dumps_env(code: str) -> bool:
    """Does inline code read every environment variable at once?"""
    return _ENV_CODE.search(code) is not None


#: programs that print every variable when given no operand
_ENV_DUMPS: Final = word_set("env printenv set export declare typeset")
_CODE_LITERAL: Final = re.compile(r"""['"]([^'"\s]{1,200})['"]""")


class Producers:
    """The analyzer's model of command output (the analyzer fills ``outs`` and ``by_raw``)."""

    commands: list[Command]
    outs: list[Output | tuple[Sequence[str], Output | SimpleCommand | None, str | None]]
    by_raw: dict[int, range]
    files: dict[str, Output]
    links: dict[str, str]
    copies: dict[str, tuple[Read, ...]]  # a file the line made from others: their content
    holes: Holes

    def out(self, i: int) -> Output:
        """What command ``i`` prints (worked out the first time something asks)."""
        known = self.outs[i]
        if isinstance(known, tuple):
            argv, fed, cwd = known
            if fed is not None and not isinstance(fed, Output):  # its input, not read yet
                fed = self.stdin_of(fed)[0]
            known = self.outs[i] = self.out_of(argv, fed, cwd, i)
        return known

    if TYPE_CHECKING:

        def stdin_of(self, raw: SimpleCommand) -> tuple[Output | None, tuple[int, ...]]: ...

    def output_of(self, raws: list[SimpleCommand]) -> Output:
        """What a substitution's commands print (those whose output is not redirected)."""
        if not raws:
            return Output("lit", "")
        outs: list[Output] = []
        for raw in raws:
            span = self.by_raw.get(id(raw))
            if span is None:
                return Output("any", why="the output of a command the guard could not follow")
            if any(r.writes and r.fd in (None, "1") for r in raw.redirects):
                continue
            for i in span:
                cmd = self.commands[i]
                if not cmd.via and not cmd.speculative and i < len(self.outs):
                    outs.append(self.out(i))
        return worst(outs) if outs else Output("lit", "")

    def file_key(self, path: str, cwd: str | None) -> str:
        return posixpath.normpath(posixpath.join(cwd or "", path)) if cwd is not None else path

    def file_out(self, path: str, cwd: str | None, named: str = "") -> Output:
        """What reading ``path`` gives (``named``: what names it at run time, ``""``
        when the line names it literally): what the line wrote there, else the file's
        content."""
        key = self.file_key(path, cwd)
        known = self.files.get(key)
        if known is not None:
            return known.marked()  # read back from a file at run time
        if path in ("-", "/dev/stdin"):
            return Output("stdin")
        reads = ((self.links.get(key, key), named), *self.copies.get(key, ()))
        return Output("local", why=f"the content of {path}", reads=reads)

    def carried(self, out: Output | None) -> tuple[Read, ...]:
        """The files whose content ``out`` carries, its holes' included."""
        if out is None:
            return ()
        if out.kind != "lit" or HOLE_RE.search(out.text) is None:
            return out.reads
        found = list(out.reads)
        for hole in self.holes.of(out.text):
            if hole.out is not None:
                found.extend(hole.out.reads)
        return tuple(found)

    def operand_reads(
        self, args: Sequence[str], cwd: str | None, origin: str, unknown: bool = False
    ) -> list[Read]:
        """The files a command's operands name (``--opt=FILE`` too), with what the line
        put in them; words with an unknown part only when ``unknown`` (they may not be
        paths at all)."""
        found: list[Read] = []
        for a in args:
            if a.startswith("-"):
                if not a.startswith("--") or "=" not in a:
                    continue
                a = a.partition("=")[2]
            elif "=" in a and _NAMED.match(a):  # dd if=FILE, name=FILE
                found.extend(self.operand_reads([a.partition("=")[2]], cwd, origin, unknown))
            if not a or (not unknown and has_hole(a) and self._unknown_word(a)):
                continue
            key = self.file_key(a, cwd)
            found.append((self.links.get(key, key), _named_by(a, origin)))
            known = self.files.get(key)
            if known is not None:
                found.extend(self.carried(known))
            found.extend(self.copies.get(key, ()))
            if (self.copies or self.files) and any(c in a for c in "*?["):
                found.extend(self._globbed(key))
        return found

    def _globbed(self, pattern: str) -> list[Read]:
        """What the files the line made carry, when a glob names them (``part_*``)."""
        import fnmatch

        found: list[Read] = []
        for key, reads in self.copies.items():
            if fnmatch.fnmatchcase(key, pattern):
                found.extend(reads)
        for key, out in self.files.items():
            if fnmatch.fnmatchcase(key, pattern):
                found.extend(self.carried(out))
        return found

    def _unknown_word(self, word: str) -> bool:
        return any(h.unknown for h in self.holes.of(word))

    def out_of(
        self, argv: Sequence[str], stdin: Output | None, cwd: str | None, idx: int
    ) -> Output:
        """What the command at ``idx`` prints, given what it reads."""
        prog = program_name(argv[0]) if argv else ""
        args = list(argv[1:])
        fed = stdin if stdin is not None else Output("local", why="nothing")
        if prog in FETCHERS or (prog == "openssl" and args[:1] == ["s_client"]):
            if prog == "curl" and has_opt(split_opts(args, "oO")[0], "-o --output -O"):
                return Output("local", why="curl's progress")
            return Output("fetch", why=f"downloaded by {prog}", fetch=idx)
        if prog in ("echo", "printf"):
            return _printed(prog, args, idx)
        origin = self.commands[idx].written if idx < len(self.commands) else ""
        if prog in _PASSTHROUGH:
            return self._passthrough(prog, args, fed, cwd, origin)
        if prog in _TRANSFORMERS:
            if fed.kind == "fetch" or (any(has_hole(a) for a in args) and fed.kind == "fetch"):
                return fed
            reads = self._input_reads(prog, args, fed, cwd, origin)
            return Output("obf", why=f"text {prog} builds or decodes at run time", reads=reads)
        out = self._computed(prog, args, cwd, fed)
        if prog in _ENV_DUMPS and not [a for a in args if not a.startswith("-")]:
            return out.carrying(((ENVIRON, _named_by(prog, origin)),))
        if prog in _NAMES_ONLY or out.kind not in ("local", "token"):
            return out
        return out.carrying(self._input_reads(prog, args, fed, cwd, origin))

    def _input_reads(
        self, prog: str, args: list[str], fed: Output, cwd: str | None, origin: str
    ) -> tuple[Read, ...]:
        """What a program that may print what it reads carries: its input, its operands'
        files, the string literals of inline code."""
        if prog in _SCRIPT_FIRST:
            _, ops = split_opts(args, "feFv", ("--file", "--expression", "--arg", "--argjson"))
            args = ops[1:] if ops and not any(a in ("-f", "-e", "--file") for a in args) else ops
        found = [*self.carried(fed), *self.operand_reads(args, cwd, origin)]
        if prog in LANGS:
            if any(dumps_env(a) for a in args):
                found.append((ENVIRON, f"{prog} code"))
            found.extend(
                (self.file_key(m, cwd), f"{prog} code")
                for a in args
                for m in _CODE_LITERAL.findall(a)
                if m not in _HERE
            )
        return tuple(dict.fromkeys(found))

    def _passthrough(
        self, prog: str, args: list[str], fed: Output, cwd: str | None, origin: str
    ) -> Output:
        opts, ops = split_opts(args, "nceABCmfe" if prog != "sort" else "ktoS")
        if prog in ("grep", "egrep", "fgrep", "rg"):
            listing = _listing(prog, opts, ops, args)
            if listing is not None:
                return listing
            ops = ops[1:]  # the pattern
        files = [o for o in ops if o != "-"]
        if not files:
            return fed
        return worst([self.file_out(f, cwd, _named_by(f, origin)) for f in files])

    def _computed(self, prog: str, args: list[str], cwd: str | None, fed: Output) -> Output:
        if prog == "mktemp":
            opts, ops = split_opts(args, "p", ("--tmpdir", "--suffix"))
            where = opt_value(opts, "-p --tmpdir")
            if where is None and ops and not has_opt(opts, "-t"):
                return Output("temp", text=posixpath.dirname(ops[0]) + "/", why="a new path")
            return Output("temp", text=(where or "/tmp").rstrip("/") + "/", why="a new path")
        if prog == "pwd":  # an absolute path: not "." (its name, its parent are not known)
            return Output("any", why="the directory the command runs in")
        if prog in ("which", "type", "whereis") or (prog == "command" and "-v" in args):
            names = [a for a in args if not a.startswith("-")]
            if len(names) == 1 and not has_hole(names[0]):
                return Output("lit", "/usr/bin/" + posixpath.basename(names[0]))
            return Output("any", why=f"a path {prog} looks up")
        if prog in ("dirname", "basename", "realpath", "readlink"):
            return _path_op(prog, args)
        if prog in _TOKEN_PROGRAMS:
            return Output("token", why=f"the output of {prog}")
        if prog == "yes":
            return Output("lit", " ".join(args) or "y")
        if prog in ("find", "gfind", "fd", "fdfind", "ls", "tree", "locate"):
            return _listing(prog, *split_opts(args), args) or Output("local")
        if prog == "git":
            return _git_out(args)
        return Output("local", why=f"the output of {prog}")


def _printed(prog: str, args: list[str], idx: int) -> Output:
    """``echo``/``printf`` of known words: their text (``computed`` when escapes or a
    format made it differ from the words)."""
    if prog == "echo":
        flags = ""
        while args and re.fullmatch(r"-[neE]+", args[0]):
            flags += args[0][1:]
            args = args[1:]
        text = " ".join(args)
        if "e" in flags:
            text = _unescape(text)
    else:
        if args[:1] == ["-v"]:
            return Output("lit", "")
        if not args:
            return Output("lit", "")
        printed = _printf(args[0], args[1:])
        if printed is None:
            return Output("obf", why="text printf builds at run time")
        return Output("lit", printed, computed=_HIDING.search(args[0]) is not None)
    return Output("lit", text, computed="e" in flags and _HIDING.search(text) is not None)


#: escapes that hide characters (octal, hex, unicode) and formats that build text
_HIDING: Final = re.compile(r"\\(?:[0-7]|x|u|U|e)|%[^sd%\d.-]")


def _printf(fmt: str, args: list[str]) -> str | None:
    out: list[str] = []
    k = 0
    for _ in range(64):
        pieces = re.split(r"(%[-+ #0]*\d*(?:\.\d+)?[a-zA-Z%])", fmt)
        for piece in pieces:
            if not piece.startswith("%") or len(piece) < 2:
                out.append(_unescape(piece))
                continue
            conv = piece[-1]
            if conv == "%":
                out.append("%")
                continue
            arg = args[k] if k < len(args) else ""
            k += 1
            if conv == "s":
                out.append(arg)
            elif conv == "b":
                out.append(_unescape(arg))
            elif conv in "dic":
                out.append(arg)
            else:
                return None
        if k >= len(args):
            break
    return "".join(out)


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    try:
        return re.sub(
            r"\\(x[0-9A-Fa-f]{1,2}|0?[0-7]{1,3}|[abefnrtv\\])",
            lambda m: (
                _ESC.get(m.group(1))
                or chr(int(m.group(1)[1:], 16) if m.group(1)[0] == "x" else int(m.group(1), 8))
            ),
            text,
        )
    except ValueError:
        return text


_ESC: Final = {"a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_ESC.update({"v": "\v", "\\": "\\"})


def _path_op(prog: str, args: list[str]) -> Output:
    ops = [a for a in args if not a.startswith("-")]
    if not ops:
        return Output("any", why=f"the output of {prog}")
    arg = ops[0]
    if prog == "dirname":
        return Output("lit", posixpath.dirname(arg.rstrip("/")) or ".")
    if prog == "basename":
        name = posixpath.basename(arg.rstrip("/"))
        if len(ops) > 1 and name.endswith(ops[1]):
            name = name[: -len(ops[1])]
        return Output("lit", name)
    if prog == "readlink" and not any(
        a in ("-f", "-e", "-m") or a.startswith("--canon") for a in args
    ):
        return Output("any", why="where a link points, from the link's own folder")
    # realpath, readlink -f: where the path leads; the trailing slash has the guards follow a
    # link there, as the command does (``rm -rf "$(realpath link)"`` empties its folder)
    return Output("lit", posixpath.normpath(arg) + "/")


_FIND_NAMES: Final = ("-name", "-iname")
_LS_VALUES: Final = (
    "--ignore", "--hide", "--width", "--tabsize", "--format", "--sort", "--time", "--color",
    "--block-size", "--quoting-style", "--indicator-style", "--time-style",
)  # fmt: skip


def _listing(
    prog: str, opts: list[tuple[str, str | None]], ops: list[str], args: list[str]
) -> Output | None:
    """``find``/``ls``/``grep -l``/``rg --files``/``git ls-files``: paths under a directory."""
    names: tuple[str, ...] | None = None
    hidden = "all"
    if prog in ("grep", "egrep", "fgrep"):
        if not has_opt(opts, "-l -L --files-with-matches --files-without-match"):
            return None
        if not any(
            o.startswith("-") and ("r" in o or "R" in o) for o in args if not o.startswith("--")
        ) and not any(a in ("--recursive", "--dereference-recursive") for a in args):
            base = ops[1] if len(ops) > 1 else "."
        else:
            base = ops[1] if len(ops) > 1 else "."
        inc = [a.partition("=")[2] for a in args if a.startswith("--include=")]
        names = tuple(inc) or None
    elif prog == "rg":
        if not any(a in ("-l", "--files", "--files-with-matches", "-L") for a in args):
            return None
        files_mode = "--files" in args
        base = (ops[0] if files_mode else (ops[1] if len(ops) > 1 else ".")) if ops else "."
        globs = [args[k + 1] for k, a in enumerate(args[:-1]) if a in ("-g", "--glob")]
        types = [
            _RG_TYPES.get(args[k + 1], "*")
            for k, a in enumerate(args[:-1])
            if a in ("-t", "--type")
        ]
        names = tuple(g for g in [*globs, *types] if not g.startswith("!")) or None
        hidden = "all" if {"--hidden", "-uu", "-uuu", "-u"} & set(args) else "none"
    elif prog in ("find", "gfind"):
        starts = [
            a
            for a in args[
                : next((k for k, a in enumerate(args) if a.startswith(("-", "(", "!"))), len(args))
            ]
        ]
        if len(starts) > 1:  # one listing names one folder: several are not known apart
            return Output("any", why="the paths find lists under several folders")
        base = starts[0] if starts else "."
        found = [find_name(a, args[k + 1]) for k, a in enumerate(args[:-1]) if a in _FIND_NAMES]
        if found and "!" not in args and "-not" not in args and "-o" not in args:
            names = tuple(found)
        return Output(
            "paths",
            base,
            why=f"the paths find lists under {base}",
            names=names,
            self_too=names is None,
            computed=any(a in _PICKING for a in args),  # names picked at run time
        )
    elif prog in ("fd", "fdfind"):
        base = ops[1] if len(ops) > 1 else "."
        hidden = "all" if {"-H", "--hidden", "-u"} & set(args) else "none"
    elif prog in ("ls", "tree", "locate"):
        if prog == "ls":  # options that take a value: not folders
            ops = split_opts(args, "IwT", _LS_VALUES)[1]
        if len(ops) > 1:
            return Output("any", why=f"the paths {prog} lists under several folders")
        shown = "all" if has_opt(opts, "-a --all -A --almost-all") else "none"
        if prog == "ls" and ops and any(c in posixpath.basename(ops[0]) for c in "*?["):
            folder, pattern = posixpath.split(ops[0])
            return Output(  # what the pattern matches, printed as the paths they are
                "paths", folder or ".", why=f"the paths ls lists for {ops[0]}",
                names=(pattern,), hidden=shown, computed=True,
            )  # fmt: skip
        if prog == "ls" and ops and not has_opt(opts, "-d --directory"):
            # a folder's entries come out as bare names: whatever a later command does with
            # them, it finds them where it runs (`ls x | xargs rm -rf` takes ./name)
            return Output(
                "paths", ".", why=f"the names ls prints for {ops[0]}", hidden=shown, computed=True
            )
        base = ops[0] if ops else "."
    else:
        return None
    return Output(  # filtered at run time by what the files are called or hold: computed
        "paths",
        base,
        why=f"the paths {prog} lists under {base}",
        names=names,
        hidden=hidden,
        computed=True,
    )


def _git_out(args: list[str]) -> Output:
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1 :] if sub else []
    if sub == "rev-parse":
        if "--show-toplevel" in rest:
            return Output("root", why="the project root")
        if "--git-dir" in rest or "--absolute-git-dir" in rest or "--git-common-dir" in rest:
            return Output("lit", ".git")
        if any(a in _TOKEN_GIT for a in rest) or rest:
            return Output("token", why="a git revision")
    if sub in ("ls-files", "diff", "status") and (
        sub == "ls-files" or "--name-only" in rest or "--porcelain" in rest or "-s" in rest
    ):
        names = (
            tuple(a for a in rest if not a.startswith("-") and any(c in a for c in "*?[")) or None
        )
        return Output(
            "paths",
            ".",
            why=f"the paths git {sub} lists",
            names=names,
            hidden="tracked",
            computed=True,
        )
    if sub in ("branch", "describe", "log", "show") and (
        "--show-current" in rest or sub == "describe"
    ):
        return Output("token", why="a git name")
    return Output("local", why=f"the output of git {sub}")
