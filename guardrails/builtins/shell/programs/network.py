"""Programs that talk to other machines: transfers, HTTP clients, GitHub, cluster and cloud CLIs.

Reads (``GET``, ``list``, ``describe`` ...) are read-only; anything that can
change the remote side is a ``network_mutation``.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from typing import Final

from ..options import first, has_opt, opt_value, split_opts, word_set
from ..syntax import SINKS
from .effect import Effect, Handler
from .files import CP

__all__ = ["HANDLERS", "is_remote"]

# -- transfers and HTTP clients --

_READ: Final = word_set("GET HEAD OPTIONS TRACE")
_REMOTE_RE: Final = re.compile(r"(?:[^/:@\s]+@)?[A-Za-z0-9_.\-\[\]]+:(?!//)|[a-z][a-z0-9+.-]*://")


def is_remote(path: str) -> bool:
    """Is a copy operand on another machine (``host:path``, ``user@host:``, ``scheme://``)?"""
    return bool(_REMOTE_RE.match(path)) and not path.startswith(("/", "./", "../", "~"))


def _remote_copy(args: list[str], short_arg: str, long_arg: Iterable[str]) -> Effect:
    """``rsync``/``scp``: a remote destination is a network mutation, a local one a write."""
    opts, ops = split_opts(args, short_arg, long_arg)
    if has_opt(opts, "-n --dry-run --list-only") or len(ops) < 2:
        return Effect("read_only")
    dest = ops[-1]
    kinds = {"network_mutation"} if is_remote(dest) else {"file_write"}
    if any(n.startswith("--delete") or n == "--remove-source-files" for n, _ in opts):
        kinds.add("delete")
    res = Effect(*kinds)
    if not is_remote(dest):
        local = CP(ops)
        res.targets, res.sources = local.targets, local.sources
        if any(src.endswith("/") for src in ops[:-1]):  # rsync a/ b: a's content into b
            res.trees = [("write", dest, None, "all")]
    return res


_RSYNC_LONG: Final = word_set(
    """--rsh --exclude --include --filter --exclude-from --include-from --files-from --port
    --password-file --temp-dir --partial-dir --log-file --chmod --chown --timeout --bwlimit
    --backup-dir --suffix --compare-dest --copy-dest --link-dest --block-size --max-size
    --min-size --remote-option --out-format --rsync-path"""
)


def _rsync(args: list[str]) -> Effect:
    return _remote_copy(args, "eBfMT", _RSYNC_LONG)


def _scp(args: list[str]) -> Effect:
    return _remote_copy(args, "cFiJloPSDX", ())


_CURL_SHORT: Final = "AbcCdDeEFHKmoPQrtTuUwxXyYz"
_CURL_LONG: Final = word_set(
    """--data --data-raw --data-binary --data-urlencode --data-ascii --json --form --form-string
    --upload-file --request --output --header --user --user-agent --referer --cookie --cookie-jar
    --config --max-time --connect-timeout --retry --output-dir --proxy --write-out --dump-header
    --cacert --cert --key --url --resolve --range --limit-rate --trace --trace-ascii
    --oauth2-bearer --netrc-file --interface --retry-delay --retry-max-time --speed-limit
    --speed-time --max-filesize --stderr --unix-socket --aws-sigv4 --variable --url-query
    --max-redirs --cert-type --key-type --pass --capath --ciphers --continue-at --proxy-user
    --expect100-timeout --happy-eyeballs-timeout-ms --local-port --dns-servers"""
)
_CURL_DATA: Final = """-d --data --data-raw --data-binary --data-urlencode --data-ascii --json
    -F --form --form-string -T --upload-file"""


def _url_name(url: str) -> str:
    """The file name ``curl -O``/``wget`` save a URL as (its last path segment)."""
    path = url.partition("://")[2].partition("/")[2] if "://" in url else url
    name = path.split("?")[0].split("#")[0].rstrip("/").rpartition("/")[2]
    return name or "index.html"


def _curl(args: list[str]) -> Effect:
    opts, ops = split_opts(args, _CURL_SHORT, _CURL_LONG)
    method = opt_value(opts, "-X --request")
    if method is not None:
        mutating = method.upper() not in _READ
    else:
        mutating = has_opt(opts, _CURL_DATA) and not has_opt(opts, "-G --get")
    kinds = {"network_mutation"} if mutating else set()
    outputs = word_set("-o --output -D --dump-header -c --cookie-jar")
    targets = [v for n, v in opts if n in outputs and v and v != "-" and v not in SINKS]
    if has_opt(opts, "-O --remote-name --remote-name-all"):
        urls = [*ops, *(v for n, v in opts if n == "--url" and v)]
        where = opt_value(opts, "--output-dir") or ""
        targets.extend(posixpath.join(where, _url_name(u)) for u in urls)
        kinds.add("file_write")
    if targets:
        kinds.add("file_write")
    return Effect(*(kinds or {"read_only"}), targets=targets)


_WGET_LONG: Final = word_set(
    """--output-document --post-data --post-file --method --body-data --body-file --output-file
    --append-output --directory-prefix --header --user-agent --user --password --input-file
    --tries --timeout --wait --level --accept --reject --execute --referer --load-cookies
    --save-cookies"""
)


def _wget(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "aoOPeiBtTwUQlARDIX", _WGET_LONG)
    method = opt_value(opts, "--method")
    kinds: set[str] = set()
    if has_opt(opts, "--post-data --post-file --body-data --body-file") or (
        method is not None and method.upper() not in _READ
    ):
        kinds.add("network_mutation")
    out = opt_value(opts, "-O --output-document")
    targets: list[str] = []
    if not has_opt(opts, "--spider") and out != "-" and out not in SINKS:
        kinds.add("file_write")  # wget saves what it downloads
        if out:
            targets.append(out)
        elif not has_opt(opts, "-r --recursive -m --mirror -i --input-file"):
            where = opt_value(opts, "-P --directory-prefix") or ""
            targets.extend(posixpath.join(where, _url_name(u)) for u in ops)
    return Effect(*(kinds or {"read_only"}), targets=targets)


_HTTPIE_DATA: Final = re.compile(r"[^=:@]*(:=|=@|@|=(?!=))")
_HTTPIE_LONG: Final = word_set(
    """--auth --auth-type --output --print --style --session --verify --cert --cert-key --timeout
    --proxy --pretty --format-options"""
)


def _httpie(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "aAopsv", _HTTPIE_LONG)
    if ops and ops[0].isalpha() and ops[0].isupper():
        mutating = ops[0] not in _READ
    else:
        items = ops[1:]
        mutating = has_opt(opts, "-f --form --raw --multipart") or any(
            _HTTPIE_DATA.match(i) for i in items
        )
    kinds = {"network_mutation"} if mutating else set()
    out = opt_value(opts, "-o --output")
    if out or has_opt(opts, "-d --download"):
        kinds.add("file_write")
    return Effect(*(kinds or {"read_only"}), targets=[out] if out else [])


# -- GitHub, cluster and cloud CLIs --

_REMOTE_READ_VERBS: Final = word_set(
    """view list ls status diff checks search browse watch show get describe logs log token
    version help completion"""
)
_REMOTE_WRITE_VERBS: Final = word_set(
    """create merge close reopen comment edit delete review ready lock unlock transfer pin unpin
    upload fork rename archive unarchive sync set remove add enable disable rerun cancel run
    approve develop deploy update patch apply replace scale start stop restart import"""
)
_GH_API_LONG: Final = word_set(
    "--method --field --raw-field --header --input --hostname --preview --jq --template --cache"
)


def _gh(args: list[str]) -> Effect:
    _, ops = split_opts(args, "R", ("--repo", "--hostname", "--jq", "--template"))
    group, verb = first(ops), first(ops[1:])
    if group == "api":
        aopts, _ = split_opts(args, "XfFHRpqt", _GH_API_LONG)
        method = opt_value(aopts, "-X --method")
        if method is None:
            method = "POST" if has_opt(aopts, "-f -F --field --raw-field --input") else "GET"
        return Effect("read_only" if method.upper() in _READ else "network_mutation")
    if group in ("status", "browse", "search", "completion", "version", "help", ""):
        return Effect("read_only")
    if (group, verb) == ("pr", "checkout"):
        return Effect("git_mutation")
    if (group, verb) == ("repo", "clone") or verb == "download":
        return Effect("file_write")
    if group == "extension" and verb in ("install", "upgrade", "remove"):
        return Effect("package_install")
    if group in ("config", "alias"):
        return Effect("file_write" if verb in ("set", "delete", "import") else "read_only")
    if group == "auth":
        return Effect("read_only" if verb in ("status", "token") else "unknown")
    if verb in _REMOTE_READ_VERBS:
        return Effect("read_only")
    if verb in _REMOTE_WRITE_VERBS:
        return Effect("network_mutation")
    return Effect("unknown")


_KUBECTL_READ: Final = word_set(
    """get describe logs log explain version top api-resources api-versions cluster-info diff
    events wait completion help options plugin kustomize"""
)
_KUBECTL_WRITE: Final = word_set(
    """apply create delete patch replace scale autoscale set edit label annotate expose run exec
    cp drain cordon uncordon taint certificate debug attach port-forward proxy"""
)
_KUBECTL_LONG: Final = word_set(
    """--namespace --context --kubeconfig --cluster --user --server --token --selector --output
    --filename --container"""
)


def _kubectl(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "nslcfo", _KUBECTL_LONG)
    verb, sub = first(ops), first(ops[1:])
    if has_opt(opts, "--dry-run"):
        return Effect("read_only")
    if verb in _KUBECTL_READ or (verb == "auth" and sub in ("can-i", "whoami")):
        return Effect("read_only")
    if verb == "config":
        reads = word_set("view get-contexts current-context get-clusters get-users")
        return Effect("read_only" if sub in reads else "file_write")
    if verb == "rollout":
        return Effect("read_only" if sub in ("status", "history") else "network_mutation")
    if verb in _KUBECTL_WRITE:
        return Effect("network_mutation")
    return Effect("unknown")


def _helm(args: list[str]) -> Effect:
    long_arg = word_set("--namespace --kube-context --kubeconfig --values --set --version --repo")
    opts, ops = split_opts(args, "nfo", long_arg)
    verb = first(ops)
    reads = """list ls status get history show inspect template lint search version env verify
        diff help completion"""
    if has_opt(opts, "--dry-run") or verb in word_set(reads):
        return Effect("read_only")
    if verb in word_set("install upgrade uninstall delete rollback test push"):
        return Effect("network_mutation")
    if verb in word_set("repo dependency dep pull fetch plugin package"):
        return Effect("package_install")
    if verb == "create":
        return Effect("file_write")
    return Effect("unknown")


def _terraform(args: list[str]) -> Effect:
    opts, ops = split_opts(args)
    verb, sub = first(ops), first(ops[1:])
    reads = """plan show validate output graph providers version console test help metadata
        modules query"""
    if verb in word_set(reads):
        return Effect("read_only")
    if verb == "fmt":
        return Effect("read_only" if "-check" in args or has_opt(opts, "--check") else "file_write")
    if verb in ("init", "get"):
        return Effect("package_install")
    if verb == "state":
        return Effect("read_only" if sub in ("list", "show", "pull") else "network_mutation")
    if verb == "workspace":
        return Effect("read_only" if sub in ("list", "show") else "network_mutation")
    if verb in word_set("apply destroy import taint untaint refresh force-unlock"):
        return Effect("network_mutation")
    return Effect("unknown")


def _pulumi(args: list[str]) -> Effect:
    _, ops = split_opts(args, "sC", ("--stack", "--cwd"))
    verb, sub = first(ops), first(ops[1:])
    if verb in word_set("preview whoami version logs about help watch"):
        return Effect("read_only")
    if verb in word_set("up update destroy refresh import cancel"):
        return Effect("network_mutation")
    if verb in ("stack", "config", "state"):
        if sub in word_set("ls output get export history select show") or not sub:
            return Effect("read_only")
        return Effect("network_mutation" if verb != "config" else "file_write")
    return Effect("unknown")


_CLOUD_READ_RE: Final = re.compile(
    r"(describe|list|get|head|lookup|search|scan|query|batch-get|select|filter|validate|"
    r"estimate|preview|check|wait|show|read|tail|print|info|version|help|ls|whoami)([-_].*)?"
)
_CLOUD_WRITE_RE: Final = re.compile(
    r"(create|delete|update|put|set|add|remove|attach|detach|modify|start|stop|reboot|terminate|"
    r"run|invoke|deploy|send|publish|upload|copy|cp|mv|rm|sync|import|register|deregister|"
    r"associate|disassociate|enable|disable|tag|untag|ssh|scp|restore|reset|resize|submit|"
    r"execute|rotate|revoke|grant|cancel|purge)([-_].*)?"
)
_CLOUD_LONG: Final = word_set(
    """--region --profile --output --project --query --format --endpoint-url --subscription
    --resource-group --filter"""
)


def _cloud(args: list[str]) -> Effect:
    """aws, gcloud, az: reads are describe/list/get/show-style verbs, the rest mutate."""
    opts, ops = split_opts(args, "", _CLOUD_LONG)
    if has_opt(opts, "--dry-run --generate-cli-skeleton --help") or not ops:
        return Effect("read_only")
    if ops[0] == "s3" and len(ops) > 1:  # aws s3 ls|cp|mv|rm|sync
        verb = ops[1]
        if verb in ("ls", "presign"):
            return Effect("read_only")
        dest = ops[-1] if len(ops) > 3 else ""
        if verb in ("cp", "sync") and dest and not dest.startswith("s3://"):
            return Effect("file_write", targets=[dest])
        return Effect("network_mutation")
    if ops[0] in ("configure", "config", "init", "login", "auth"):
        reads = any(_CLOUD_READ_RE.fullmatch(o) for o in ops[1:])
        return Effect("read_only" if reads else "file_write")
    for word in ops[1:]:
        if _CLOUD_READ_RE.fullmatch(word):
            return Effect("read_only")
        if word in _REMOTE_WRITE_VERBS or _CLOUD_WRITE_RE.fullmatch(word):
            return Effect("network_mutation")
    return Effect("unknown")


def _aria2c(args: list[str]) -> Effect:
    opts, ops = split_opts(args, "odi", ("--out", "--dir", "--input-file"))
    where = opt_value(opts, "-d --dir") or ""
    out = opt_value(opts, "-o --out")
    names = [out] if out else [_url_name(u) for u in ops]
    return Effect("file_write", targets=[posixpath.join(where, n) for n in names])


HANDLERS: Final[dict[str, Handler]] = {
    "aria2c": _aria2c,
    "rsync": _rsync,
    "scp": _scp,
    "curl": _curl,
    "wget": _wget,
    **dict.fromkeys(word_set("http https xh"), _httpie),
    "gh": _gh,
    "kubectl": _kubectl,
    "oc": _kubectl,
    "helm": _helm,
    **dict.fromkeys(word_set("terraform tofu terragrunt"), _terraform),
    "pulumi": _pulumi,
    **dict.fromkeys(word_set("aws gcloud az"), _cloud),
}
