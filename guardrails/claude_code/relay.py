"""``hookrails hook`` with a PostgreSQL ledger: this machine's ``hookrails serve`` decides.

A command hook is a new process per event; opening a PostgreSQL connection in it (psycopg
alone takes ~0.2 s to import, then a TCP connection and authentication) would cost more
than the whole hook. So when the ledger is a ``postgresql://`` URL, the hook process loads
the definition (from the compiled cache, as always), checks its ``--covers`` tag, and
POSTs the event, as Claude Code sent it, to the ``hookrails serve`` of its machine
(``$HOOKRAILS_RELAY``, by default ``http://127.0.0.1:8787``): one warm process with a
connection pool, which runs the hooks, claims idempotency keys and settles the session's
state in the shared database, and answers what the hook prints (docs/design.md §9).

The request names the definition file's digest and the ledger: a ``serve`` that decides
for another definition (or an older version of the file), or records elsewhere, answers
409 and the hook decides itself. When nothing was delivered (no ``serve`` listening,
a refusal, ``HOOKRAILS_RELAY=off``), the hook decides in its own process with a ledger
that never connects (:class:`~guardrails.ledger.postgres_spool.SpoolOnlyLedger`): records
go to this machine's spool, which ``serve`` ships when it runs (``hookrails ledger
recover`` otherwise), and idempotency claims fail closed. An answer that was asked for
but could not be read is not decided twice: the event fails by its policy.

A hand-written HTTP/1.1 exchange on a socket, not ``http.client``: that module imports
the ``email`` package, several milliseconds a hook process would pay on every event.
"""

from __future__ import annotations

import os
import time

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Any

    from ..dispatch.guard import Guard

__all__ = [
    "DEFAULT_RELAY",
    "RELAY_ENV",
    "NotDelivered",
    "definition_tag",
    "ledger_tag",
    "post",
    "refusal",
    "relay",
    "relay_url",
    "served_tags",
]

RELAY_ENV = "HOOKRAILS_RELAY"
DEFAULT_RELAY = "http://127.0.0.1:8787"
#: seconds to reach ``serve`` (loopback refuses at once; a relay on another host may not)
CONNECT_TIMEOUT = 1.0
_OFF = ("off", "none", "0", "no")
#: ``http_server.HOOK_ROUTE`` (not imported: ``http.server`` is heavy; a test holds them equal)
ROUTE = "/v1/claude/hook"


class NotDelivered(Exception):
    """``serve`` did not take the event (not listening, refused it): decide here."""


def relay_url() -> str | None:
    """Where this machine's ``serve`` listens (``$HOOKRAILS_RELAY``), ``None`` when off."""
    url = os.environ.get(RELAY_ENV, "").strip() or DEFAULT_RELAY
    return None if url.lower() in _OFF else url


def _digest(data: bytes) -> str:
    import hashlib

    return hashlib.sha256(data).hexdigest()[:16]


def definition_tag(path: str | None) -> str:
    """The digest of a definition file's bytes ("" when it cannot be read)."""
    if not path:
        return ""
    try:
        with open(path, "rb") as fh:
            return _digest(fh.read())
    except OSError:
        return ""


def ledger_tag(location: str) -> str:
    """The digest of a ledger location, its password left out."""
    from ..ledger.common import safe_url

    return _digest(safe_url(location).encode("utf-8", "surrogateescape"))


def served_tags(guard: Guard) -> tuple[str, str]:
    """What a ``serve`` decides with (its definition file's digest, read when it starts)
    and records into: a relayed event must name the same."""
    ledger = guard.ledger
    return definition_tag(guard.definition.source), "" if ledger is None else ledger_tag(
        ledger.path
    )


def refusal(tags: tuple[str, str], query: dict[str, list[str]]) -> str | None:
    """Why ``serve`` must not decide a relayed event (another definition or ledger than
    the hook's), or ``None`` (also for Claude Code's own http hooks, which name neither)."""
    definition = query.get("definition", [None])[-1]
    ledger = query.get("ledger", [None])[-1]
    if definition is not None and definition != tags[0]:
        return (
            "this hookrails serve decides with another definition (or an older version of "
            "it): restart it with the hook's --config"
        )
    if ledger is not None and ledger != tags[1]:
        return "this hookrails serve records into another ledger than the hook's"
    return None


def post(url: str, body: bytes, query: str, token: str | None, timeout: float) -> bytes:
    """POST ``body`` to ``url``'s hook route; the answer's body. Raises
    :class:`NotDelivered` when ``serve`` did not take it, ``OSError``/``ValueError`` when it
    did but the answer could not be read."""
    import socket

    host, port, prefix = _split(url)
    shown = f"[{host}]" if ":" in host else host
    head = [
        f"POST {prefix}{ROUTE}?{query} HTTP/1.1",
        f"Host: {shown}:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(body)}",
        "Connection: close",
    ]
    if token:
        head.append(f"Authorization: Bearer {token}")
    request = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body
    try:
        sock = socket.create_connection((host, port), timeout=CONNECT_TIMEOUT)
    except OSError as exc:
        raise NotDelivered(f"no hookrails serve at {url} ({exc.strerror or exc})") from None
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            sock.sendall(request)
        except OSError as exc:  # not all of it went: serve cannot have decided
            raise NotDelivered(f"hookrails serve at {url} dropped the event ({exc})") from None
        sock.settimeout(max(timeout, 0.1))
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        sock.close()
    raw = b"".join(chunks)
    header, sep, content = raw.partition(b"\r\n\r\n")
    status_line = header.split(b"\r\n", 1)[0].split()
    if not sep or len(status_line) < 2 or not status_line[1].isdigit():
        raise ValueError(f"not an HTTP answer ({raw[:60]!r})")
    status = int(status_line[1])
    if status != 200:  # the hook route decides with 200 only: nothing was decided
        said = content[:200].decode("utf-8", "replace")
        raise NotDelivered(f"hookrails serve at {url} refused the event ({status}: {said})")
    for line in header.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and len(content) < int(value):
            raise ValueError(f"the answer was cut short ({len(content)} of {int(value)} bytes)")
    return content


def _split(url: str) -> tuple[str, int, str]:
    """(host, port, path) of an ``http://host[:port][/path]`` URL (``urllib.parse`` costs a
    hook process milliseconds)."""
    rest = url[7:] if url[:7].lower() == "http://" else ""
    netloc, slash, path = rest.partition("/")
    if netloc.startswith("["):
        host, _, port = netloc[1:].partition("]")
        port = port[1:] if port.startswith(":") else ""
    else:
        host, _, port = netloc.rpartition(":") if ":" in netloc else (netloc, "", "")
    if not host or "@" in netloc or (port and not port.isdigit()):
        raise NotDelivered(f"${RELAY_ENV} must be an http://HOST[:PORT] URL, got {url!r}")
    return host, int(port or 80), (slash + path).rstrip("/")


def relay(
    location: str, raw: bytes, event: str, config: str, deadline_at: float, stale: str | None
) -> tuple[int, str, str] | None:
    """Have this machine's ``serve`` decide the event: ``hookrails hook``'s answer (exit
    code, stdout, the refusal to fall back on), or ``None`` when it did not take it (said
    on stderr; the caller decides here). Raises ``hook_command``'s undecided error when the
    event was sent but no answer could be read: it may have been decided, so it is not
    decided again; it fails by its policy."""
    from .hook_command import _Undecided

    url = relay_url()
    why = f"${RELAY_ENV} is off"
    if url is not None:
        # an event name and hex digests: nothing to escape
        query = f"event={event}&definition={definition_tag(config)}&ledger={ledger_tag(location)}"
        # what is left of this process's deadline: serve answers by then, not by its own
        # full deadline (the hook process would answer the failure first, and both record)
        query += f"&within={max(0.0, deadline_at - time.monotonic()):.3f}"
        token = os.environ.get("HOOKRAILS_TOKEN") or None
        try:
            body: bytes | None = post(url, raw, query, token, deadline_at - time.monotonic() + 1)
        except NotDelivered as exc:
            body, why = None, str(exc)
        except (OSError, ValueError) as exc:
            said = f"hookrails serve at {url} took the event, no answer came: {exc}"
            raise _Undecided(said) from None
        if body is not None:
            try:
                return _answer(body, stale, event)
            except ValueError as exc:
                said = f"hookrails serve at {url} answered what is not JSON: {exc}"
                raise _Undecided(said) from None
    _note(
        f"hookrails: {why}; deciding here: records spool on this machine until hookrails "
        "serve (or `hookrails ledger recover`) ships them, idempotency claims are refused"
    )
    return None


def _answer(body: bytes, stale: str | None, event: str = "") -> tuple[int, str, str]:
    """``serve``'s Claude answer as this command hook prints it. PreCompact is text, as
    ``hookrails hook`` deciding itself prints it: Claude adds a PreCompact hook's whole
    stdout to the compaction's instructions, so JSON would land there (serve answers the
    instructions in ``systemMessage``, where an http hook's Claude reads them)."""
    import json

    answer: Any = json.loads(body)
    if not isinstance(answer, dict):
        raise ValueError(f"an answer that is {type(answer).__name__}, not an object")
    specific = answer.get("hookSpecificOutput")
    decision = specific.get("permissionDecision") if isinstance(specific, dict) else None
    behavior = specific.get("decision") if isinstance(specific, dict) else None
    refused = (
        decision == "deny"
        or answer.get("decision") == "block"
        or answer.get("continue") is False
        or (isinstance(behavior, dict) and behavior.get("behavior") == "deny")
    )
    fallback = ""
    if refused:
        said = answer.get("reason") or answer.get("stopReason")
        if isinstance(specific, dict):
            said = said or specific.get("permissionDecisionReason")
        fallback = str(said or "blocked by hookrails")
    if event == "PreCompact" and not refused:
        text = answer.get("systemMessage")
        return 0, text if isinstance(text, str) else "", ""
    if stale is not None:
        said = answer.get("systemMessage")
        stale = f"hookrails: {stale}"
        answer["systemMessage"] = f"{said}\n{stale}" if said else stale
        return 0, json.dumps(answer, ensure_ascii=True, separators=(",", ":")), fallback
    return 0, body.decode("utf-8"), fallback


def _note(line: str) -> None:
    import sys

    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
