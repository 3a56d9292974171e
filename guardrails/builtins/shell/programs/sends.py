"""What network clients send: which files, whether their input, whether their words.

``sends(argv)`` answers for one command whose wrappers are peeled: ``None`` for a
program that sends nothing to another machine, else a ``Sends``. The analyzer
(``leaks``) joins it with the line's data flow (what the input carries, which
file a name stands for), and ``deny_commands`` checks what is sent against its
secret globs. Reading a secret to *use* it locally (``--cert key.pem``,
``ssh -i id_rsa``, ``--env-file .env``) is not sending it, so only the options
and operands whose content goes over the wire are listed here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ..options import has_opt, opt_value, program_name, split_opts, subcommand, word_set
from .git import git_subcommand
from .network import (
    _CURL_LONG,
    _CURL_SHORT,
    _HTTPIE_LONG,
    _RSYNC_LONG,
    _WGET_LONG,
    is_remote,
)

__all__ = ["SENDERS", "Sends", "curl_config", "put_files", "sends"]


class Sends:
    """What one network command sends.

    ``files``: paths whose content is sent (a folder: with what it holds; ``-``: its
    input); ``stdin``: its standard input is sent; ``args``: its words reach the
    other machine (a URL, a header, a DNS name, a remote command), so a value
    substituted into them is sent; ``script``: commands for an interactive client
    (``put FILE`` sends FILE), from ``-c`` or (``script_stdin``) its input;
    ``excludes``: name globs a folder is sent without (``rsync --exclude``);
    ``stage``: paths ``git add`` puts in the repository (a folder: what it holds that
    git does not ignore; ``force``: ignored files too), which a later push sends;
    ``push``: it sends what the line staged; ``config``: a file of curl options it
    reads (``-K FILE``; ``-``: its input).
    """

    __slots__ = (
        "args",
        "config",
        "excludes",
        "files",
        "force",
        "push",
        "script",
        "script_stdin",
        "stage",
        "stdin",
    )

    def __init__(
        self,
        files: list[str] | None = None,
        *,
        stdin: bool = False,
        args: bool = True,
        script: str | None = None,
        script_stdin: bool = False,
        excludes: tuple[str, ...] = (),
        stage: list[str] | None = None,
        push: bool = False,
        config: str | None = None,
        force: bool = False,
    ) -> None:
        self.files = files or []
        self.stdin = stdin
        self.args = args
        self.script = script
        self.script_stdin = script_stdin
        self.excludes = excludes
        self.stage = stage or []
        self.push = push
        self.config = config
        self.force = force


_Handler = Callable[[list[str]], "Sends | None"]

# -- HTTP clients --

_CURL_AT: Final = word_set("-d --data --data-binary --data-ascii --json -H --header")
_CURL_ENCODED: Final = word_set("--data-urlencode --url-query --variable")
_BRACES: Final = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _curl(args: list[str]) -> Sends:
    opts, _ = split_opts(args, _CURL_SHORT, _CURL_LONG)
    files: list[str] = []
    config: str | None = None
    for name, value in opts:
        if not value:
            continue
        if name in _CURL_AT:  # @file (-H @file: headers read from a file)
            if value.startswith("@"):
                files.append(value[1:])
        elif name in _CURL_ENCODED:  # content, =content, name=content, @file, name@file
            head, at, tail = value.partition("@")
            if at and "=" not in head:
                files.append(tail)
        elif name in ("-F", "--form"):  # name=@file;type=x, name=<file
            _, eq, rest = value.partition("=")
            if eq and rest[:1] in ("@", "<"):
                files.append(rest[1:].split(";", 1)[0])
        elif name in ("-T", "--upload-file"):  # curl's own {a,b} lists several files
            m = _BRACES.search(value)
            if m is not None:
                files.extend(
                    value[: m.start()] + alt + value[m.end() :] for alt in m.group(1).split(",")
                )
            else:
                files.append("-" if value in ("-", ".") else value)
        elif name in ("-K", "--config"):
            config = value
    return Sends(files, config=config)


def curl_config(text: str) -> list[str]:
    """The files a curl config (``-K FILE``: ``data = "@.env"``, ``--upload-file x``) sends."""
    args: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = re.match(r"(-{0,2}[\w-]+)\s*(?:[=:]\s*|\s+)(.*)", line)
        if m is None:
            continue
        name, value = m.group(1), m.group(2).strip().strip("\"'")
        if not name.startswith("-"):
            name = ("-" if len(name) == 1 else "--") + name
        args += [name, value]
    return _curl(args).files


def _wget(args: list[str]) -> Sends:
    """``--post-file``, ``--body-file``; ``-i FILE``: the file's lines become the URLs."""
    opts, _ = split_opts(args, "aoOPeiBtTwUQlARDIX", _WGET_LONG)
    names = ("--post-file", "--body-file", "-i", "--input-file")
    return Sends([v for n, v in opts if n in names and v])


_HTTPIE_FILE: Final = re.compile(r"[^=:@]*(?::=@|=@|@)(.+)")


def _httpie(args: list[str]) -> Sends:
    """``http POST url < file`` sends its input; ``f=@file``, ``f:=@file``, ``f@file`` a file."""
    opts, ops = split_opts(args, "aAopsv", _HTTPIE_LONG)
    files = [m.group(1) for o in ops[1:] if (m := _HTTPIE_FILE.fullmatch(o)) is not None]
    return Sends(files, stdin=not has_opt(opts, "-I --ignore-stdin"))


# -- sockets, shells on other machines, mail --


def _socket(args: list[str]) -> Sends:
    """nc, ncat, telnet: what they read goes to the other end (listening too: to whoever
    connects)."""
    return Sends(stdin=True)


def _openssl(args: list[str]) -> Sends | None:
    return Sends(stdin=True) if args[:1] == ["s_client"] else None


_SOCAT_STDIO: Final = word_set("- stdin stdio stdout")
_SOCAT_FILE: Final = word_set("file open gopen")


def _socat(args: list[str]) -> Sends:
    _, ops = split_opts(args)
    files: list[str] = []
    stdin = False
    for address in ops:
        kind, colon, rest = address.partition(":")
        if kind.lower() in _SOCAT_STDIO or address.startswith("-,"):
            stdin = True
        elif colon and kind.lower() in _SOCAT_FILE:
            files.append(rest.split(",", 1)[0])
    return Sends(files, stdin=stdin)


def _ssh(args: list[str]) -> Sends:
    opts, _ = split_opts(args, "bcDEeFIiJLlmOopQRSWw")
    return Sends(stdin=not has_opt(opts, "-n -f"))


def _mail(args: list[str]) -> Sends:
    """mail, mailx, sendmail: the message is their input; ``-a``/``-A`` attach a file."""
    opts, _ = split_opts(args, "aAsbcrSqu", ("--attach", "--subject"))
    return Sends([v for n, v in opts if n in ("-a", "-A", "--attach") and v], stdin=True)


def _mutt(args: list[str]) -> Sends:
    """mutt: the message is its input (or ``-i FILE``); ``-a FILE... --`` attaches files."""
    files: list[str] = []
    k = 0
    while k < len(args):
        a = args[k]
        if a == "--":
            break
        if a == "-i" and k + 1 < len(args):
            k += 1
            files.append(args[k])
        elif a == "-a":
            while k + 1 < len(args) and not args[k + 1].startswith("-"):
                k += 1
                files.append(args[k])
        k += 1
    return Sends(files, stdin=True)


# -- copies to other machines --


def _remote_sources(ops: list[str]) -> list[str]:
    """The local sources of a copy whose last operand is remote."""
    if len(ops) < 2 or not is_remote(ops[-1]):
        return []
    return [o for o in ops[:-1] if not is_remote(o)]


def _scp(args: list[str]) -> Sends:
    _, ops = split_opts(args, "cFiJloPSDX")
    return Sends(_remote_sources(ops))


def _rsync(args: list[str]) -> Sends:
    opts, ops = split_opts(args, "eBfMT", _RSYNC_LONG)
    if has_opt(opts, "-n --dry-run --list-only"):
        return Sends(args=False)
    excludes = tuple(v.rstrip("/") for n, v in opts if n == "--exclude" and v)
    return Sends(_remote_sources(ops), excludes=excludes)


_PUT: Final = word_set("put mput reput mreput send append")


def put_files(script: str) -> list[str]:
    """The local files an sftp/ftp/lftp/smbclient script uploads (``put FILE [REMOTE]``)."""
    files: list[str] = []
    for line in re.split(r"[\n;]", script):
        words = line.split()
        if len(words) < 2 or words[0].lower() not in _PUT:
            continue
        rest = [w for w in words[1:] if not w.startswith("-")]
        if words[0].lower().startswith("m"):
            files.extend(rest)
        elif rest:
            files.append(rest[0])
    return files


def _from_input(args: list[str]) -> Sends:
    """sftp, ftp: the commands come on their input (``sftp host <<< 'put .env'``)."""
    return Sends(script_stdin=True)


def _script_option(*names: str) -> _Handler:
    """lftp, smbclient: commands from an option (``-c 'put .env'``), else from the input."""

    def handler(args: list[str]) -> Sends:
        opts, _ = split_opts(args, "ce", ("--command",))
        script = opt_value(opts, *names)
        return Sends(script=script) if script is not None else Sends(script_stdin=True)

    return handler


def _tftp(args: list[str]) -> Sends:
    """tftp: ``-c put FILE [REMOTE]`` (the rest of the words), else from its input."""
    if "-c" in args:
        return Sends(script=" ".join(args[args.index("-c") + 1 :]))
    return Sends(script_stdin=True)


# -- clouds and forges: every call carries its words to the provider; uploads send files;
# -- secret stores are where secrets belong, so sending one there is not a leak --

_FILE_PARAM: Final = re.compile(r"(?:[\w-]+=)?(?:fileb?://|@)(.+)")


def _params(args: list[str], prefix: str) -> list[str]:
    """Files a cloud CLI reads parameter values from (aws ``file://``, az ``@file``)."""
    found: list[str] = []
    for a in args:
        if a.startswith(prefix) or ("=" + prefix) in a:
            m = _FILE_PARAM.fullmatch(a)
            if m is not None:
                found.append(m.group(1))
    return found


_AWS_SECRET_STORES: Final = word_set("secretsmanager kms")


def _aws(args: list[str]) -> Sends | None:
    long_arg = ("--region", "--profile", "--endpoint-url", "--exclude", "--body")
    opts, ops = split_opts(args, "", long_arg)
    if (ops[:1] and ops[0] in _AWS_SECRET_STORES) or ops[:2] == ["ssm", "put-parameter"]:
        return None
    files = _params(args, "file://") + _params(args, "fileb://")
    if ops[:1] == ["s3"] and len(ops) >= 4 and ops[1] in ("cp", "mv", "sync"):
        src, dest = ops[2], ops[-1]
        if dest.startswith("s3://") and not src.startswith("s3://"):
            excludes = tuple(v for n, v in opts if n == "--exclude" and v)
            return Sends([*files, src], excludes=excludes)
    body = opt_value(opts, "--body")  # s3api put-object --body FILE
    return Sends([*files, *([body] if body else [])])


def _gsutil(args: list[str]) -> Sends | None:
    verb, rest = subcommand(args, "hop")
    if program_name(verb) in ("cp", "mv", "rsync"):
        _, ops = split_opts(rest, "xpzZjJ")
        srcs = ops[:-1] if ops and ops[-1].startswith("gs://") else []
        return Sends([s for s in srcs if not s.startswith("gs://")])
    return Sends()


def _gcloud(args: list[str]) -> Sends | None:
    _, ops = split_opts(args, "", ("--project", "--account", "--configuration"))
    if ops[:1] in (["secrets"], ["kms"]):
        return None
    if ops[:1] == ["storage"] and len(ops) > 1:
        return _gsutil(ops[1:])
    opts, _ = split_opts(args, "", ("--data-file", "--flags-file", "--metadata-from-file"))
    return Sends([v for n, v in opts if n in ("--data-file", "--flags-file") and v])


def _az(args: list[str]) -> Sends | None:
    _, ops = split_opts(args, "fscn", ("--file", "--source", "--container-name", "--name"))
    if ops[:1] == ["keyvault"]:
        return None
    files = _params(args, "@")
    if ops[:1] == ["storage"] and any(o.startswith("upload") for o in ops[1:4]):
        opts, _ = split_opts(args, "fsnc", ("--file", "--source", "--container-name", "--name"))
        files += [v for n, v in opts if n in ("-f", "--file", "-s", "--source") and v]
    return Sends(files)


def _rclone(args: list[str]) -> Sends | None:
    _, ops = split_opts(args, "", ("--config", "--exclude", "--include", "--filter"))
    verb = ops[0] if ops else ""
    if verb == "rcat":
        return Sends(stdin=True)
    if verb in ("copy", "copyto", "move", "moveto", "sync") and len(ops) >= 3:
        return Sends(_remote_sources(ops[1:]))
    return Sends()


_GH_BODY: Final = word_set("create comment edit review")
_GH_SECRET_STORES: Final = word_set("secret variable")


def _gh(args: list[str]) -> Sends | None:
    _, ops = split_opts(args, "R", ("--repo", "--hostname", "--jq", "--template"))
    group, verb = [*ops, "", ""][:2]
    if group in _GH_SECRET_STORES:
        return None
    if group == "gist" and verb in ("create", "new", "edit"):
        opts, files = split_opts(ops[2:], "dfw", ("--desc", "--filename", "--web"))
        files = [f for f in files if f != "-"] if verb != "edit" else []
        return Sends(files, stdin=not files or "-" in ops[2:])
    if group in ("issue", "pr") and verb in _GH_BODY:
        opts, _ = split_opts(args, "RFbtAalmpBHr", ("--body-file", "--body", "--title", "--repo"))
        body = opt_value(opts, "-F --body-file")
        return Sends([body] if body else [])
    if group == "release" and verb in ("create", "upload"):
        opts, rest = split_opts(ops[2:], "tnFdR", ("--title", "--notes", "--notes-file"))
        notes = opt_value(opts, "-F --notes-file")
        return Sends([*rest[1:], *([notes] if notes else [])])
    if group == "api":
        long_arg = ("--method", "--field", "--raw-field", "--header", "--input", "--jq")
        opts, _ = split_opts(args, "XfFHRpqt", long_arg)
        files = [
            v.partition("=")[2][1:]
            for n, v in opts
            if n in ("-F", "--field") and v and v.partition("=")[2].startswith("@")
        ]
        body = opt_value(opts, "--input")
        return Sends([*files, *([body] if body else [])])
    return Sends()


def _git(args: list[str]) -> Sends | None:
    sub, rest = git_subcommand(args)
    if sub == "add":  # what it stages is sent by a later push (``-u``: only tracked files)
        opts, ops = split_opts(rest, "", ("--chmod", "--pathspec-from-file"))
        if has_opt(opts, "-u --update"):
            return Sends(args=False)
        staged = ops or (["."] if has_opt(opts, "-A --all") else [])
        return Sends(stage=staged, args=False, force=has_opt(opts, "-f --force"))
    if sub == "push":
        return Sends(push=True)
    if sub in ("clone", "fetch", "pull", "ls-remote", "archive"):
        return Sends()
    return None


def _getent(args: list[str]) -> Sends | None:
    _, ops = split_opts(args, "s")
    return Sends() if ops[:1] and ops[0] in ("hosts", "ahosts", "ahostsv4", "ahostsv6") else None


def _dig(args: list[str]) -> Sends:
    """dig: ``-f FILE`` looks up every line of the file (``-``: its input)."""
    opts, _ = split_opts(args, "fbckpqtxy")
    return Sends([v for n, v in opts if n == "-f" and v])


def _nslookup(args: list[str]) -> Sends:
    """nslookup: with no name to look up, it reads the names from its input."""
    return Sends(stdin=True)


def _words_only(args: list[str]) -> Sends:
    """DNS and ICMP tools, browsers, downloaders: only their words reach the other side."""
    return Sends()


SENDERS: Final[dict[str, _Handler]] = {
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(word_set("http https xh xhs"), _httpie),
    **dict.fromkeys(
        word_set("nc ncat netcat telnet nc.openbsd nc.traditional netcat.openbsd pwncat"),
        _socket,
    ),
    "openssl": _openssl,
    "socat": _socat,
    "ssh": _ssh,
    **dict.fromkeys(word_set("mail mailx s-nail sendmail msmtp ssmtp"), _mail),
    **dict.fromkeys(word_set("mutt neomutt"), _mutt),
    "scp": _scp,
    "rsync": _rsync,
    **dict.fromkeys(word_set("sftp ftp"), _from_input),
    "lftp": _script_option("-c -e"),
    "smbclient": _script_option("-c --command"),
    "tftp": _tftp,
    "aws": _aws,
    "gsutil": _gsutil,
    "gcloud": _gcloud,
    "az": _az,
    "rclone": _rclone,
    "gh": _gh,
    "git": _git,
    "getent": _getent,
    "dig": _dig,
    "nslookup": _nslookup,
    **dict.fromkeys(
        word_set(
            """host drill kdig delv ping ping6 traceroute traceroute6 tracepath mtr
            whois arping nping fetch aria2c lynx links elinks w3m lwp-request GET POST HEAD"""
        ),
        _words_only,
    ),
}


def sends(argv: list[str]) -> Sends | None:
    """What the command ``argv`` (wrappers peeled) sends to another machine, or ``None``."""
    handler = SENDERS.get(program_name(argv[0])) if argv else None
    return handler(list(argv[1:])) if handler is not None else None
