"""A fake Anthropic Messages API on loopback, for running the real Claude Code CLI offline.

The Claude Code CLI (the one bundled in the claude-agent-sdk wheel, or an
installed ``claude``) talks to ``$ANTHROPIC_BASE_URL``. Point it here and it
runs its real tool loop, real permission checks and real hooks against
scripted model turns: no network, no key. Every request body is kept, so a test
can read the ``tool_result`` blocks (and hook context) the model was shown.

Stdlib only: ``http.server.ThreadingHTTPServer`` on ``127.0.0.1``, port 0.
"""

from __future__ import annotations

import itertools
import json
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

__all__ = [
    "APIError",
    "FakeMessagesAPI",
    "MessagesRequest",
    "Reply",
    "Script",
    "claude_cli_env",
    "text_block",
    "tool_use",
]

#: one content block of an assistant turn, in the Messages API shape
Block: TypeAlias = dict[str, Any]
#: what a script answers: text, one block, a list of blocks (``None``: end the turn with
#: "Done."), or an :class:`APIError` the request fails with
Reply: TypeAlias = "str | Block | Sequence[Block] | APIError | None"
#: a list of replies (one per agent-loop request, in order) or a function of the request
Script: TypeAlias = "Sequence[Reply] | Callable[[MessagesRequest], Reply]"

_ids = itertools.count(1)


def text_block(value: str) -> Block:
    """A text block for a scripted assistant turn."""
    return {"type": "text", "text": value}


def tool_use(name: str, input: Mapping[str, Any], id: str | None = None) -> Block:
    """A ``tool_use`` block: the model calls ``name`` with ``input``."""
    return {
        "type": "tool_use",
        "id": id or f"toolu_fake{next(_ids):06d}",
        "name": name,
        "input": dict(input),
    }


@dataclass(frozen=True)
class APIError:
    """A scripted reply the request fails with: the Messages API's error JSON with an HTTP
    status, e.g. ``APIError(429, "rate_limit_error", "slow down")`` or
    ``APIError(529, "overloaded_error", "busy")``. Claude Code retries these (set
    ``CLAUDE_CODE_MAX_RETRIES=0`` in its environment to fail at once) and, when they
    persist, ends the turn with a StopFailure."""

    status: int
    type: str
    message: str = "scripted error"


@dataclass
class MessagesRequest:
    """One ``POST /v1/messages`` the CLI made: its path, headers and JSON body."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> list[dict[str, Any]]:
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def system(self) -> str:
        """The system prompt as one string (the API accepts a string or text blocks)."""
        return _text_of(self.body.get("system"))

    @property
    def tool_names(self) -> list[str]:
        return [t.get("name", "") for t in self.body.get("tools") or [] if isinstance(t, dict)]

    @property
    def turn(self) -> int:
        """How many assistant turns this conversation already has (0 on its first request)."""
        return sum(1 for m in self.messages if m.get("role") == "assistant")

    def blocks(self, kind: str) -> list[Block]:
        """Every content block of type ``kind`` in the conversation, oldest first."""
        found: list[Block] = []
        for m in self.messages:
            content = m.get("content")
            if isinstance(content, list):
                found.extend(b for b in content if isinstance(b, dict) and b.get("type") == kind)
        return found

    def tool_results(self) -> list[Block]:
        """The ``tool_result`` blocks the model is shown in this request, oldest first."""
        return self.blocks("tool_result")

    def last_tool_result(self) -> Block | None:
        results = self.tool_results()
        return results[-1] if results else None

    def result_for(self, tool_use_id: str) -> Block | None:
        """The ``tool_result`` answering the ``tool_use`` with this id, if the model has it."""
        return next((b for b in self.tool_results() if b.get("tool_use_id") == tool_use_id), None)

    def text(self) -> str:
        """Every text the model is shown in this request's messages: prompts, tool results,
        hook context and reminders (Claude Code sends some as ``role: system`` messages)."""
        parts = [_text_of(m.get("content")) for m in self.messages]
        return "\n".join(p for p in parts if p)

    def last_text(self) -> str:
        """What came back since the model's last turn: tool results, hook feedback and
        context, reminders (the CLI may add a reminder after a result, so this is not
        just the newest message)."""
        since: list[dict[str, Any]] = []
        for m in reversed(self.messages):
            if m.get("role") == "assistant":
                break
            since.append(m)
        parts = [_text_of(m.get("content")) for m in reversed(since)]
        return "\n".join(p for p in parts if p)

    def header(self, name: str) -> str | None:
        lowered = name.lower()
        return next((v for k, v in self.headers.items() if k.lower() == lowered), None)

    @property
    def agent_id(self) -> str | None:
        """The subagent this request belongs to (``None`` on the main thread).

        Claude Code sends it as the ``x-claude-code-agent-id`` header; it equals the
        ``agent_id`` its hooks receive.
        """
        return self.header("x-claude-code-agent-id")

    @property
    def session_id(self) -> str | None:
        return self.header("x-claude-code-session-id")


def _text_of(content: Any) -> str:
    """The text in a message content (string, blocks, nested tool_result content)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for b in content:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text" and isinstance(b.get("text"), str):
            parts.append(b["text"])
        elif b.get("type") == "tool_result":
            parts.append(_text_of(b.get("content")))
    return "\n".join(parts)


class FakeMessagesAPI:
    """Serve scripted assistant turns as the Anthropic Messages API, on 127.0.0.1.

    ``script`` is a list of replies, used one per request in order, across
    every conversation (after the last one, every turn ends with "Done."), or
    a function of the :class:`MessagesRequest` that returns the reply, so a
    scenario can react to what came back (a denied call, then a corrected one)
    and tell a subagent's conversation (``request.agent_id``) from the main
    one. A reply is a string (text), a block (:func:`text_block`,
    :func:`tool_use`) or a list of blocks; a turn holding a ``tool_use`` ends
    with ``stop_reason: tool_use``, else ``end_turn``.

    Use it as a context manager (or ``start()`` / ``close()``); ``base_url``
    and :meth:`env` point a CLI at it; ``requests`` holds every messages request.

        with FakeMessagesAPI([tool_use("Bash", {"command": "ls"}), "Done."]) as api:
            options = ClaudeAgentOptions(env=api.env(tmp_home), ...)
    """

    def __init__(self, script: Script | None = None, *, model: str = "claude-fake-1") -> None:
        self.script: Script = script if script is not None else []
        self.model = model
        self.requests: list[MessagesRequest] = []
        #: every other request the CLI made: (method, path)
        self.other_requests: list[tuple[str, str]] = []
        #: exceptions the script raised (each one ended its turn with a text block)
        self.errors: list[Exception] = []
        self._next = 0
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------

    def start(self) -> FakeMessagesAPI:
        if self._server is not None:
            return self
        from http.server import ThreadingHTTPServer

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(  # a short poll: close() returns within 50 ms
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-messages-api",
            daemon=True,
        )
        self._thread.start()
        return self

    def close(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def __enter__(self) -> FakeMessagesAPI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeMessagesAPI is not started (use it as a context manager)")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def env(self, home: str | os.PathLike[str] | None = None) -> dict[str, str]:
        """Environment for a CLI process that talks only to this server (see ``claude_cli_env``)."""
        return claude_cli_env(self.base_url, home)

    # --- answering --------------------------------------------------------------------

    def answer(self, request: MessagesRequest) -> list[Block] | APIError:
        """The assistant turn's blocks, or the :class:`APIError` the script chose."""
        with self._lock:
            self.requests.append(request)
            try:
                reply = self._reply(request)
                return reply if isinstance(reply, APIError) else _blocks(reply)
            except Exception as exc:
                self.errors.append(exc)
                return [text_block(f"fake script failed: {type(exc).__name__}: {exc}")]

    def _reply(self, request: MessagesRequest) -> Any:
        if callable(self.script):
            return self.script(request)
        index = self._next
        self._next += 1
        return self.script[index] if index < len(self.script) else None

    def reply_for(self, request: MessagesRequest) -> list[Block]:
        """The content blocks of the assistant turn answering ``request``.

        A script that raises (or answers nonsense) is kept in ``errors`` and the
        turn ends with its message, so the CLI finishes instead of retrying.
        """
        found = self.answer(request)
        if isinstance(found, APIError):
            return [text_block(f"API error {found.status} {found.type}: {found.message}")]
        return found

    def raise_errors(self) -> None:
        """Re-raise the first script error, for a test that wants it to fail loudly."""
        if self.errors:
            raise self.errors[0]

    def message(self, request: MessagesRequest) -> dict[str, Any] | APIError:
        """The whole (non-streamed) Messages API response for ``request``, or the error."""
        content = self.answer(request)
        if isinstance(content, APIError):
            return content
        stop = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        return {
            "id": f"msg_fake{next(_ids):06d}",
            "type": "message",
            "role": "assistant",
            "model": request.body.get("model") or self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 10},
        }


def _blocks(reply: Any) -> list[Block]:
    if reply is None:
        return [text_block("Done.")]
    if isinstance(reply, str):
        return [text_block(reply)]
    if isinstance(reply, dict):
        return [reply]
    blocks = list(reply)
    if not blocks or not all(isinstance(b, dict) and "type" in b for b in blocks):
        raise TypeError(f"a scripted reply must be text, a block or a list of blocks: {reply!r}")
    return blocks


def _sse(message: dict[str, Any]) -> Iterator[bytes]:
    """The Messages API streaming events for ``message``."""

    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    head = {**message, "content": [], "stop_reason": None}
    head["usage"] = {"input_tokens": 10, "output_tokens": 1}
    yield event("message_start", {"type": "message_start", "message": head})
    for i, block in enumerate(message["content"]):
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        elif block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:  # anything else is sent whole
            start, delta = block, None
        yield event(
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": start},
        )
        if delta is not None:
            yield event(
                "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
            )
        yield event("content_block_stop", {"type": "content_block_stop", "index": i})
    yield event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": 10},
        },
    )
    yield event("message_stop", {"type": "message_stop"})


def _handler_for(owner: FakeMessagesAPI) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``owner`` (``http.server`` loads only here)."""
    from http.server import BaseHTTPRequestHandler

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return

        def _send_json(self, status: int, data: Any) -> None:
            body = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> Any:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                return json.loads(raw or b"{}")
            except json.JSONDecodeError:
                return {}

        def do_GET(self) -> None:
            owner.other_requests.append(("GET", self.path))
            self._send_json(404, _error("not_found_error", f"no {self.path} here"))

        def do_HEAD(self) -> None:
            owner.other_requests.append(("HEAD", self.path))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_POST(self) -> None:
            path = self.path.split("?", 1)[0]
            body = self._body()
            if path.endswith("/v1/messages/count_tokens"):
                owner.other_requests.append(("POST", self.path))
                self._send_json(200, {"input_tokens": 10})
                return
            if not path.endswith("/v1/messages") or not isinstance(body, dict):
                owner.other_requests.append(("POST", self.path))
                self._send_json(404, _error("not_found_error", f"no {self.path} here"))
                return
            request = MessagesRequest(self.path, body, dict(self.headers.items()))
            message = owner.message(request)
            if isinstance(message, APIError):
                self._send_json(message.status, _error(message.type, message.message))
                return
            if not body.get("stream"):
                self._send_json(200, message)
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Connection", "close")
            self.end_headers()
            for chunk in _sse(message):
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

    return Handler


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def claude_cli_env(base_url: str, home: str | os.PathLike[str] | None = None) -> dict[str, str]:
    """Environment that keeps a Claude Code CLI offline and isolated.

    ``ANTHROPIC_BASE_URL`` points at ``base_url`` with a dummy key; ``HOME`` and
    ``CLAUDE_CONFIG_DIR`` go to ``home`` (a new temporary folder if ``None``), so
    the user's own settings, hooks and sessions are neither read nor written;
    telemetry, auto-update and other non-essential traffic are off.
    """
    if home is None:
        import tempfile

        home = tempfile.mkdtemp(prefix="hookrails-home-")
    home = os.fspath(home)
    config = os.path.join(home, ".claude")
    os.makedirs(config, exist_ok=True)
    return {
        "ANTHROPIC_BASE_URL": base_url,
        "ANTHROPIC_API_KEY": "sk-ant-fake-key",
        "HOME": home,
        "CLAUDE_CONFIG_DIR": config,
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "DISABLE_BUG_COMMAND": "1",
        "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1",
    }
