"""Interpreters given code: where the code is, and what in it the guards care about.

``code_of(argv)`` finds the code an interpreter runs: inline (``python -c``,
``node -e``, ``perl -e``, ``ruby -e``, ``php -r``, an ``awk`` program,
``osascript -e``, ``Rscript -e``, ``lua -e``, ``pwsh -c``), its input, or a file.
``scan(lang, code)`` reads inline code for the same signals the shell guards
look for: shell commands it runs (``os.system('rm -rf ~')``,
``subprocess.run(['rm', '-rf', '/'])``, ``system("...")``), recursive deletes
(``shutil.rmtree('/')``), files it writes, code it downloads and runs
(``exec(urlopen(u).read())``), code it builds or decodes and runs (opaque),
whether it talks to the network, and its string literals (a protected path named
in code that writes is a hit; a secret named in code that talks to the network
may be what it sends).
``print(1)`` has none of these. Reading is by patterns, not by a parser: it
errs toward seeing a call that is not there.
"""

from __future__ import annotations

import re
from typing import Final

from .options import program_name, split_opts

__all__ = ["LANGS", "Scan", "code_of", "scan"]

LANGS: Final = {
    "python": "py",
    "pypy": "py",
    "node": "js",
    "nodejs": "js",
    "bun": "js",
    "deno": "js",
    "perl": "pl",
    "ruby": "rb",
    "php": "php",
    "awk": "awk",
    "gawk": "awk",
    "mawk": "awk",
    "nawk": "awk",
    "lua": "lua",
    "luajit": "lua",
    "Rscript": "r",
    "R": "r",
    "osascript": "as",
    "pwsh": "ps",
    "powershell": "ps",
    "ed": "ex",
    "red": "ex",
    "ex": "ex",
    "tclsh": "tcl",
    "wish": "tcl",
    "expect": "tcl",
    "irb": "rb",
    "julia": "jl",
    "make": "make",
    "gmake": "make",
    "crontab": "cron",
}

#: (language, option letters or words carrying inline code, options taking a value)
_INLINE: Final = {
    "py": (("-c",), "WXQ"),
    "js": (("-e", "--eval", "-p", "--print"), "r"),
    "pl": (("-e", "-E"), ""),
    "rb": (("-e",), "rICE"),
    "php": (("-r",), "dcfz"),
    "lua": (("-e",), "l"),
    "r": (("-e",), ""),
    "as": (("-e",), "l"),
    "ps": (("-c", "-command", "-Command", "-encodedcommand", "-EncodedCommand"), ""),
    "tcl": (("-c",), ""),
    "jl": (("-e", "-E"), ""),
}
#: option letters that take no value, which may come before the inline code's letter
_FLAGS: Final = {
    "py": "bBdEhiIOPqsSuvRx",
    "pl": "acnpstTuUwWX",
    "rb": "acdlnpsSvwWy",
    "php": "aHhinqsv",
    "lua": "iEvW",
}


def code_of(argv: list[str]) -> tuple[str, str, str] | None:
    """``(language, where, text)`` for an interpreter run: where is ``inline`` (text is
    the code), ``file`` (text names it) or ``stdin``; ``None`` for other programs."""
    prog = program_name(argv[0])
    lang = LANGS.get(prog)
    if lang is None:
        if prog in ("vi", "vim", "nvim") and any(
            a in ("-e", "-es", "-Es", "-E", "-s") for a in argv
        ):
            return "ex", "stdin", ""
        return None
    args = argv[1:]
    if lang == "awk":
        opts, ops = split_opts(args, "fvFiEe", ("--file", "--assign", "--field-separator"))
        files = [v for n, v in opts if n in ("-f", "--file") and v]
        if files:
            return "awk", "file", files[0]
        return ("awk", "inline", ops[0]) if ops else None
    if lang == "ex":
        return "ex", "stdin", ""
    if lang == "make":
        opts, _ = split_opts(args, "fCIjlo", ("--file", "--makefile", "--directory"))
        files = [v for n, v in opts if n in ("-f", "--file", "--makefile") and v]
        if not files:
            return None  # the project's own Makefile: like running a script
        return (
            ("make", "stdin", "") if files[0] in ("-", "/dev/stdin") else ("make", "file", files[0])
        )
    if lang == "cron":
        opts, ops = split_opts(args, "u")
        if any(n in ("-l", "-r", "-e") for n, _ in opts):
            return None
        return ("cron", "stdin", "") if not ops or ops[0] == "-" else ("cron", "file", ops[0])
    if prog == "deno" and args[:1] == ["eval"]:
        return "js", "inline", " ".join(args[1:2])
    if prog in ("deno", "bun") and args[:1] in (["run"], ["x"]):
        args = args[1:]
    marks, valued = _INLINE[lang]
    code: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("--", "-"):
            return (lang, "inline", "\n".join(code)) if code else (lang, "stdin", "")
        if lang == "py" and (a == "-m" or (a.startswith("-m") and len(a) > 2)):
            return None  # a module: its code is not inline
        hit = next((m for m in marks if a == m or (len(m) == 2 and a.startswith(m))), None)
        if hit is None and a.startswith("-") and not a.startswith("--") and len(a) > 2:
            letters = {m[1]: m for m in marks if len(m) == 2}
            for ch in a[1:]:  # -Sc CODE, -ne CODE: the code follows the cluster
                if ch in letters:
                    hit = a = letters[ch]
                    break
                if ch not in _FLAGS.get(lang, ""):
                    break
        if hit is not None:
            rest = a[len(hit) :] if a.startswith(hit) and len(a) > len(hit) else ""
            if not rest and i + 1 < len(args):
                i += 1
                rest = args[i]
            if "encoded" in hit.lower():
                return lang, "encoded", rest
            code.append(rest)
        elif a.startswith("-"):
            if len(a) == 2 and a[1] in valued:
                i += 1
        elif code:
            break  # arguments to the inline code
        else:
            return lang, "file", a
        i += 1
    if code:
        return lang, "inline", "\n".join(code)
    return lang, "stdin", ""


class Scan:
    """What inline code does. ``unknown`` in ``deletes``/``writes`` is ``None``."""

    __slots__ = ("argvs", "deletes", "fetch", "literals", "net", "opaque", "shells", "writes")

    def __init__(self) -> None:
        self.net = False  # it talks to the network (a URL, a socket, an HTTP client)
        self.shells: list[str] = []  # shell command lines it runs
        self.argvs: list[list[str]] = []  # commands it runs without a shell
        self.deletes: list[str | None] = []  # recursive deletes
        self.writes: list[str | None] = []  # files it writes or removes
        self.fetch: str | None = None  # what it downloads and runs
        self.opaque: list[str] = []  # code it builds or decodes at run time and runs
        self.literals: list[str] = []

    def merge(self, inner: Scan) -> None:
        """Add what code run by this code (``exec('...')``) does."""
        self.shells += inner.shells
        self.argvs += inner.argvs
        self.deletes += inner.deletes
        self.writes += inner.writes
        self.opaque += inner.opaque
        self.literals += inner.literals
        self.fetch = self.fetch or inner.fetch
        self.net = self.net or inner.net

    @property
    def changes(self) -> bool:
        return bool(self.shells or self.argvs or self.deletes or self.writes or self.opaque)


_QUOTE_RE: Final = re.compile(r"""'''|\"\"\"|'|"|`""")
_PREFIX_CHARS: Final = frozenset("rRbBuUfF")
_HOME_RE: Final = re.compile(
    r"""(?:os\.path\.expanduser\(\s*(['"])~\1\s*\)|Path\.home\(\)|pathlib\.Path\.home\(\)|"""
    r"""os\.environ\[\s*(['"])HOME\2\s*\]|os\.getenv\(\s*(['"])HOME\3\s*\)|"""
    r"""os\.homedir\(\)|process\.env\.HOME|ENV\[\s*(['"])HOME\4\s*\]|\$ENV\{\s*HOME\s*\}|"""
    r"""Dir\.home|getenv\(\s*(['"])HOME\5\s*\))"""
)
_DECODE_RE: Final = re.compile(
    r"b64decode|base64|fromhex|decode\(|codecs|zlib|marshal|pickle|unhexlify|atob|"
    r"Buffer\.from|pack\(|unpack|fromCharCode|chr\(|rot13|reverse|\[::-1\]|gunzip|inflate",
    re.I,
)
_FETCH_RE: Final = re.compile(
    r"urlopen|urllib|requests\.|httpx|http\.client|urllib3|aiohttp|socket\b|wget\.|"
    r"\bfetch\(|https?\.get|https?\.request|axios|XMLHttpRequest|got\(|LWP|HTTP::Tiny|"
    r"IO::Socket|Net::HTTP|open-uri|URI\.open|HTTParty|Faraday|file_get_contents\(\s*['\"]https?|"
    r"curl_exec|fsockopen|socket\.http|download\.file|url\(|Invoke-WebRequest|\biwr\b|"
    r"Invoke-RestMethod|\birm\b|DownloadString|WebClient|['\"]https?://",
    re.I,
)

#: code that talks to the network besides fetching (sockets, mail, file transfer clients)
_NET_RE: Final = re.compile(
    r"\bnet\.(?:connect|createConnection|Socket)|require\(\s*['\"](?:net|tls|dgram|https?)['\"]|"
    r"\btls\.connect|\bdgram\b|TCPSocket|UDPSocket|Socket\.new|smtplib|ftplib|telnetlib|"
    r"paramiko|stream_socket_client|\bmail\s*\(|Net::(?:SMTP|FTP|SSH)|WebSocket|"
    r"/inet/|Deno\.connect|Bun\.connect",
)


def _net(code: str) -> bool:
    return _FETCH_RE.search(code) is not None or _NET_RE.search(code) is not None


#: per language: call pattern (up to its argument list) and what the call does
_CALLS: Final[dict[str, list[tuple[str, str]]]] = {
    "py": [
        (r"\bos\.(?:system|popen)", "shell"),
        (r"\bcommands\.getoutput|\bsubprocess\.getoutput|\bsubprocess\.getstatusoutput", "shell"),
        (r"\bsubprocess\.(?:run|call|check_call|check_output|Popen)", "proc"),
        (r"\bos\.(?:exec|spawn)[lvpe]+", "argv_rest"),
        (r"\bpty\.spawn", "proc"),
        (r"\b(?:exec|eval|compile)", "exec"),
        (r"\bshutil\.rmtree|\.rmtree|\bremove_tree", "delete"),
        (r"\bopen", "open"),
        (r"\bos\.(?:remove|unlink|rmdir|removedirs|truncate|mkfifo)", "write"),
        (
            r"\b(?:Path|pathlib\.Path)\(([^()]*)\)\.(?:write_text|write_bytes|touch|unlink|"
            r"rmdir|rename|replace|open|symlink_to|hardlink_to|chmod)",
            "pathobj",
        ),
        (r"\b(?:Path|pathlib\.Path)\(([^()]*)\)\.(?:rglob|glob|iterdir|walk)\b", "pathtree"),
        (r"\bos\.(?:rename|replace)|\bshutil\.move", "move2"),
        (r"\bos\.(?:symlink|link)|\bshutil\.copy\w*", "write2"),
        (r"\burlretrieve|\bwget\.download", "write2"),
    ],
    "js": [
        (r"\b(?:execSync|exec)", "shell"),
        (r"\b(?:execFile|execFileSync|spawn|spawnSync|fork)", "argv_list"),
        (r"\b(?:eval|Function|runInThisContext|runInNewContext|runInContext)", "exec"),
        (
            r"\b(?:rmSync|rmdirSync|rimraf|removeSync|emptyDirSync)|\.(?:rm|rmdir)(?=\s*\()|"
            r"\bfse?\.remove|Deno\.remove",
            "delete",
        ),
        (
            r"\b(?:writeFileSync|writeFile|appendFileSync|appendFile|createWriteStream|"
            r"unlinkSync|unlink|truncateSync|outputFileSync|Bun\.write|Deno\.writeTextFile|"
            r"Deno\.writeFile)",
            "write",
        ),
        (
            r"\b(?:copyFileSync|copyFile|symlinkSync|linkSync|cpSync|copySync)",
            "write2",
        ),
        (
            r"\b(?:renameSync|rename|moveSync|move)\b",
            "move2",
        ),
    ],
    "pl": [
        (r"\b(?:system|exec)\b", "shell_or_list"),
        (r"\beval\b", "exec"),
        (r"\b(?:rmtree|remove_tree)\b", "delete"),
        (r"\bopen\b", "open_pl"),
        (r"\b(?:unlink|truncate|rmdir)\b", "write"),
        (r"\b(?:rename|move|mv)\b", "move2"),
        (r"\b(?:copy|cp|symlink|link)\b", "write2"),
        (r"\bgetstore\b|\bmirror\b", "write2"),
    ],
    "rb": [
        (r"\b(?:system|exec|spawn|IO\.popen|Open3\.\w+)", "shell_or_list"),
        (r"\b(?:eval|instance_eval|class_eval|module_eval)\b", "exec"),
        (r"\bFileUtils\.(?:rm_rf|rm_r|remove_dir|remove_entry\w*|rmtree)", "delete"),
        (
            r"\b(?:File|IO)\.(?:write|binwrite|delete|unlink|truncate)|"
            r"\bFileUtils\.(?:rm|rm_f|touch)\b",
            "write",
        ),
        (r"\bFile\.open", "open"),
        (r"\b(?:File\.rename|FileUtils\.mv)", "move2"),
        (r"\bFileUtils\.(?:cp|ln_s|ln)", "write2"),
    ],
    "php": [
        (r"\b(?:system|exec|shell_exec|passthru|popen|proc_open)\b", "shell"),
        (r"\b(?:eval|assert|create_function)\b", "exec"),
        (r"\b(?:include|require)(?:_once)?\b", "exec"),
        (r"\b(?:file_put_contents|unlink|rmdir)\b", "write"),
        (r"\bfopen\b", "open"),
        (r"\brename\b", "move2"),
        (r"\b(?:copy|symlink|link)\b", "write2"),
    ],
    "lua": [
        (r"\bos\.execute|\bio\.popen", "shell"),
        (r"\b(?:loadstring|load|dofile)\b", "exec"),
        (r"\bos\.remove", "write"),
        (r"\bio\.open", "open"),
        (r"\bos\.rename", "move2"),
    ],
    "r": [
        (r"\bsystem\b", "shell"),
        (r"\bsystem2\b", "argv_rest"),
        (r"\bunlink\b", "delete"),
        (r"\bfile\.remove\b", "write"),
        (r"\b(?:eval|source)\b", "exec"),
        (r"\bdownload\.file\b", "write2"),
    ],
    "as": [(r"\bdo shell script\b", "shell_or_list")],
    "ps": [
        (r"\b(?:Invoke-Expression|iex)\b", "exec"),
        (r"\b(?:Remove-Item|rm|del|rmdir|ri)\b[^|;]*-Recurse", "ps_delete"),
    ],
}


def _words(pattern: str) -> tuple[str, ...]:
    """The literal words of ``pattern``: every match holds one of them (a quick test first)."""
    return tuple(sorted(set(re.findall(r"\w+", re.sub(r"\\.", " ", pattern)))))


_COMPILED: Final = {
    lang: [(re.compile(p + r"(?![\w$])"), role, _words(p)) for p, role in calls]
    for lang, calls in _CALLS.items()
}


def _strings(code: str, lang: str) -> list[tuple[int, int, str | None]]:
    """String literals: (start, end, value), value ``None`` when it interpolates."""
    found: list[tuple[int, int, str | None]] = []
    i, n = 0, len(code)
    while i < n:
        m = _QUOTE_RE.search(code, i)
        if m is None:
            break
        q = m.group()
        start = m.start()
        k = start  # a prefix (``r''``, ``f""``, ``rb''``): up to two letters after a non-word
        while k > max(i, start - 2) and code[k - 1] in _PREFIX_CHARS:
            k -= 1
        while k < start and k > 0 and (code[k - 1].isalnum() or code[k - 1] == "_"):
            k += 1  # no word boundary before it: the letters belong to a name
        prefix = code[k:start].lower()
        if q == "`" and lang not in ("js",):
            i = m.end()
            continue
        j = m.end()
        buf: list[str] = []
        raw = "r" in prefix
        while j < n:
            end = code.find(q, j)
            if end < 0:
                end = n
            slash = -1 if raw else code.find("\\", j, end)
            if slash < 0 or slash + 1 >= n:
                buf.append(code[j:end])
                j = end
                break
            buf.append(code[j:slash])
            buf.append(_ESC.get(code[slash + 1], code[slash + 1]))
            j = slash + 2
        text = "".join(buf)
        dynamic = (
            "f" in prefix
            or (q == "`" and "${" in text)
            or (lang in ("pl", "php") and q == '"' and re.search(r"[$@]\w", text) is not None)
            or (lang == "rb" and q == '"' and "#{" in text)
        )
        found.append((k, min(j + len(q), n), None if dynamic else text))
        i = j + len(q)
    return found


_ESC: Final = {"n": "\n", "t": "\t", "0": "\0", "r": "\r"}


def _args(code: str, start: int, strings: list[tuple[int, int, str | None]]) -> list[str]:
    """The top-level argument expressions of the call whose name ends at ``start``."""
    j = start
    while j < len(code) and code[j] in " \t":
        j += 1
    paren = j < len(code) and code[j] == "("
    if paren:
        j += 1
    depth, args, cur_start = 0, [], j
    spans = {s: e for s, e, _ in strings}
    while j < len(code):
        if j in spans:
            j = spans[j]
            continue
        c = code[j]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            args.append(code[cur_start:j].strip())
            cur_start = j + 1
        elif c in ";\n" and depth == 0 and not paren:
            break
        j += 1
    last = code[cur_start:j].strip()
    if last:
        args.append(last)
    return args


def _value(expr: str, lang: str) -> str | None:
    """A path or command an argument expression names: a literal, the home directory."""
    expr = expr.strip()
    if "=" in expr.split("(")[0] and lang == "py" and not expr.startswith(("'", '"')):
        expr = expr.partition("=")[2].strip()  # a keyword argument
    home = _HOME_RE.fullmatch(expr)
    if home:
        return "~"
    strings = _strings(expr, lang)
    if len(strings) == 1 and strings[0][0] <= 2 and strings[0][1] == len(expr):
        return strings[0][2]
    if expr.startswith(("Path(", "pathlib.Path(")) and expr.endswith(")"):
        return _value(expr[expr.index("(") + 1 : -1], lang)
    lead = _HOME_RE.match(expr)
    if lead:
        rest = expr[lead.end() :].strip()
        tail = re.fullmatch(r"""(?:\+|/|\.joinpath\(|,)\s*(['"])([^'"]*)\1\)?""", rest)
        if tail:
            return "~/" + tail.group(2).lstrip("/")
    return None


def _list(expr: str, lang: str) -> list[str] | None:
    expr = expr.strip()
    if not (expr.startswith(("[", "(")) and expr.endswith(("]", ")"))):
        return None
    items = _args(expr[1:-1] + ")", 0, _strings(expr[1:-1], lang))
    values = [_value(x, lang) for x in items]
    return [v if v is not None else "\uf8fd" for v in values] if values else None


def scan(lang: str, code: str) -> Scan:
    """What ``code`` in ``lang`` runs, deletes, writes and downloads."""
    out = Scan()
    if lang == "awk":
        return _scan_awk(code, out)
    if lang == "ex":
        return _scan_ex(code, out)
    if lang == "make":
        out.shells = [line.lstrip("\t@-+ ") for line in code.splitlines() if line.startswith("\t")]
        return out
    if lang == "cron":
        for line in code.splitlines():
            line = line.strip()
            if not line or line.startswith("#") or re.match(r"\w+=", line):
                continue
            fields = line.split(None, 1 if line.startswith("@") else 5)
            if len(fields) > (1 if line.startswith("@") else 5):
                out.shells.append(fields[-1])
        return out
    strings = _strings(code, lang)
    if lang == "py" and _PY_ALIAS.search(code):
        code = _unaliased(code, [(s, e) for s, e, _ in strings])
        strings = _strings(code, lang)
    out.literals = [v for _, _, v in strings if v]
    out.net = _net(code)
    inside = [(s, e) for s, e, _ in strings]
    for regex, role, words in _COMPILED.get(lang, []):
        if not any(w in code for w in words):
            continue  # none of its names in the code
        for m in regex.finditer(code):
            if any(s <= m.start() < e for s, e in inside):
                continue  # the name inside a string
            if role == "pathtree":  # what a walk of the folder finds, unlinked
                if re.search(r"\.(?:unlink|rmdir)\(|\bremove\(|rmtree", code):
                    _record(out, "delete", [_value(m.group(1), lang) or "\uf8fd"])
                continue
            if role == "pathobj":  # a folder renamed or removed goes with what it holds
                moves = m.group(0).endswith(("rename", "replace", "rmdir"))
                _record(out, "delete" if moves else "write", [_value(m.group(1), lang) or "\uf8fd"])
                continue
            if role == "ps_delete":
                tail = code[m.end() : m.end() + 200]
                _record(out, "delete", [_value(tail.split()[0], lang) if tail.split() else None])
                continue
            args = _args(code, m.end(), strings)
            _role(out, role, args, lang, code)
    if lang == "pl" or lang == "rb" or lang == "php":
        for m in re.finditer(r"`([^`]*)`|\bqx\s*([{(/|])(.*?)[})/|]|%x\{(.*?)\}", code, re.S):
            text = m.group(1) or m.group(3) or m.group(4) or ""
            if re.search(r"[$@]\w|#\{", text):
                out.opaque.append(f"runs a shell command it builds ({text.strip()[:60]!r})")
            else:
                out.shells.append(text)
    if out.opaque and _FETCH_RE.search(code):
        out.fetch = _url(code)
    return out


_PY_MODULES: Final = r"(os|shutil|subprocess|pathlib)"
_PY_ALIAS: Final = re.compile(
    rf"\bimport\s+{_PY_MODULES}\s+as\s+(\w+)|\bfrom\s+{_PY_MODULES}\s+import\s+([\w \t,]+)"
)


def _unaliased(code: str, strings: list[tuple[int, int]]) -> str:
    """Python code with ``import shutil as s`` / ``from shutil import move as m`` written
    back (``shutil.``, ``shutil.move(``) outside its strings, so the call patterns see it."""
    subs: list[tuple[str, str]] = []
    for m in _PY_ALIAS.finditer(code):
        if m.group(1):
            subs.append((rf"\b{m.group(2)}\.", f"{m.group(1)}."))
            continue
        for item in m.group(4).split(","):
            name, _, alias = item.strip().partition(" as ")
            if name.strip().isidentifier():
                who = (alias.strip() or name.strip()).split()[0]
                subs.append((rf"(?<![\w.]){who}\s*\(", f"{m.group(3)}.{name.strip()}("))

    def plain(text: str) -> str:
        for pattern, repl in subs:
            text = re.sub(pattern, repl, text)
        return text

    parts, last = [], 0
    for start, end in sorted(strings):
        parts += [plain(code[last:start]), code[start:end]]
        last = end
    return "".join(parts) + plain(code[last:])


def _role(out: Scan, role: str, args: list[str], lang: str, code: str) -> None:
    if not args:
        if role == "exec":  # eval passed on as a function: ``.then(eval)``
            if _FETCH_RE.search(code):
                out.fetch = _url(code)
            else:
                out.opaque.append("runs code it receives at run time")
        return
    first = args[0]
    if role in ("shell", "proc", "shell_or_list"):
        listed = _list(first, lang)
        shell_kw = any(re.search(r"shell\s*=\s*True", a) for a in args[1:])
        if listed is not None and not (role == "proc" and shell_kw):
            out.argvs.append(listed)
            return
        if role == "shell_or_list" and len(args) > 1:
            values = [_value(a, lang) for a in args]
            out.argvs.append([v if v is not None else "\uf8fd" for v in values])
            return
        value = _value(first, lang)
        if value is None:
            out.opaque.append(f"runs a command it builds at run time ({first[:60]!r})")
        elif role == "proc" and not shell_kw:
            out.argvs.append([value])
        else:
            out.shells.append(value)
    elif role in ("argv_list", "argv_rest"):
        prog = _value(first, lang)
        rest = _list(args[1], lang) if role == "argv_list" and len(args) > 1 else None
        if rest is None and role == "argv_rest":
            rest = [_value(a, lang) or "\uf8fd" for a in args[1:]]
        if prog is None:
            out.opaque.append(f"runs a program it names at run time ({first[:60]!r})")
        else:
            out.argvs.append([prog, *(rest or [])])
    elif role == "exec":
        value = _value(first, lang)
        if value is not None:
            out.merge(scan(lang, value))
        elif re.match(r"open\(|File\.read|fs\.readFileSync|io\.open|do\b", first):
            pass  # running a local file's code: like running a script
        elif _FETCH_RE.search(first) or _FETCH_RE.search(code):
            out.fetch = _url(code)
        elif _DECODE_RE.search(first):
            out.opaque.append(f"runs code it decodes at run time ({first[:60]!r})")
        else:
            out.opaque.append(f"runs code it builds at run time ({first[:60]!r})")
    elif role == "delete":
        _record(out, "delete", [_value(first, lang)])
    elif role == "write":
        _record(out, "write", [_value(first, lang)])
    elif role == "open" or role == "open_pl":
        mode = _value(args[1], lang) if len(args) > 1 else None
        if role == "open_pl":
            target = args[-1] if len(args) > 1 else first
            spec = _value(target, lang) or ""
            mode = mode if len(args) > 2 else spec[:2]
            if len(args) <= 2:
                target_value = spec.lstrip("+<> ").strip() if spec else None
            else:
                target_value = _value(target, lang)
            if mode and re.match(r"\+?[>|]|.*\|$", mode):
                if "|" in mode:
                    cmd = (target_value or "").strip("| ")
                    if cmd:
                        out.shells.append(cmd)
                    else:
                        out.opaque.append("opens a pipe to a command it builds")
                else:
                    _record(out, "write", [target_value])
            return
        if mode and any(c in mode for c in "wax+"):
            _record(out, "write", [_value(first, lang)])
    elif role == "write2":
        values = [_value(a, lang) for a in args[:2]]
        _record(out, "write", values[1:] if len(values) > 1 else [None])
    elif role == "move2":  # the source leaves its place, with what a folder holds
        values = [_value(a, lang) for a in args[:2]]
        _record(out, "delete", values[:1])
        _record(out, "write", values[1:] if len(values) > 1 else [None])


def _record(out: Scan, what: str, values: list[str | None]) -> None:
    for v in values:
        (out.deletes if what == "delete" else out.writes).append(v)


def _url(code: str) -> str:
    m = re.search(r"""['"](https?://[^'"\s]+)""", code)
    return m.group(1) if m else "a URL"


def _scan_awk(code: str, out: Scan) -> Scan:
    strings = _strings(code, "awk")
    out.literals = [v for _, _, v in strings if v]
    out.net = _net(code)
    for m in re.finditer(r"\bsystem\s*\(", code):
        args = _args(code, m.end() - 1, strings)
        value = _value(args[0], "awk") if args else None
        if value is None:
            out.opaque.append(f"awk runs a command it builds ({(args or ['?'])[0][:60]!r})")
        else:
            out.shells.append(value)
    for m in re.finditer(r"""(\|&?)\s*("[^"]*"|\w+)|("[^"]*")\s*\|\s*getline""", code):
        target = m.group(2) or m.group(3)
        if target is None:
            continue
        value = _value(target, "awk")
        if value is None:
            out.opaque.append("awk pipes into a command it builds")
        elif m.group(1) and program_name(value.split()[0] if value.split() else "") in (
            "sh",
            "bash",
            "zsh",
            "dash",
            "ksh",
        ):
            out.opaque.append(f"awk prints computed text into {value!r}")
        else:
            out.shells.append(value)
    for m in re.finditer(r"\bprintf?\b[^;{}|]*?>>?\s*(\"[^\"]*\"|[\w$]+)", code):
        out.writes.append(_value(m.group(1), "awk"))
    return out


_EX_SHELL: Final = re.compile(r"(?:^|[\s:|%,.$0-9'<>])!(?!\s*$)(.*)$")
_EX_WRITE: Final = re.compile(
    r"(?:^|[\s:|])(?:w|write|wq|x|xit|sav|saveas|up|update)!?\s+([^\s|!][^|]*)"
)


def _scan_ex(code: str, out: Scan) -> Scan:
    """An ex/ed/vim script: ``!cmd`` and ``r !cmd`` run the shell, ``w FILE`` writes FILE."""
    for line in re.split(r"\n|\|", code):
        line = line.strip()
        sh = _EX_SHELL.search(line)
        if sh:
            out.shells.append(sh.group(1))
            continue
        if re.search(r"\bsystem\s*\(|\bexecute\b|\bexe\b", line):
            out.opaque.append(f"the editor script runs {line[:60]!r}")
        w = _EX_WRITE.search(line)
        if w:
            out.writes.append(w.group(1).strip())
    out.literals = [w for w in out.writes if w]
    return out
