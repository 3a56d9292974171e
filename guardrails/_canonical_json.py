"""Canonical JSON and hashes of tool inputs: equal inputs always give the same bytes.

``repeated_calls``, ``count_failures`` and idempotency keys depend on two equal
inputs producing byte-identical text, so the form is fixed here:

* **Objects**: keys sorted by Unicode code point; keys must be strings (JSON
  has no other kind: ``{1: "a"}`` is rejected rather than silently read as
  ``{"1": "a"}``). No whitespace: ``{"a":1,"b":[1,2]}``.
* **Strings**: UTF-8 with non-ASCII kept as is (``"café"``, not ``"caf\\u00e9"``);
  ``"`` and ``\\`` escaped, control characters below U+0020 written ``\\n``,
  ``\\r``, ``\\t``, ``\\b``, ``\\f`` or ``\\u00XX``. A lone surrogate (legal in a
  JSON ``\\udXXX`` escape, not in UTF-8) is written as that escape.
* **Numbers**: a number is its value, not its spelling, so ``1``, ``1.0`` and
  ``1e0`` give the same text (a model may write either). Integers are exact
  decimals of any size (``2**70`` is ``1180591620717411303424``; Python refuses
  more than 4300 digits). A float with an integral value is written as that
  integer (``1.0`` -> ``1``, ``-0.0`` -> ``0``, ``1e20`` ->
  ``100000000000000000000``); any other float is Python's shortest round-trip
  ``repr`` (``0.1``, ``1e-07``, ``1.5e-10``), so equal floats give equal text.
  NaN and infinities are rejected (``ValueError``): JSON cannot hold them.
* ``true``, ``false``, ``null``; lists and tuples are arrays. Subclasses of
  ``str``, ``int``, ``float``, ``dict`` and ``list`` (``IntEnum``, ``OrderedDict``)
  count as their base type; ``bool`` stays a boolean (``true`` is not ``1``).
* Anything else (``set``, ``bytes``, ``Decimal``, ``datetime``, objects) is
  rejected with a ``TypeError`` naming the type and where it sits
  (``$.items[2]``), as is nesting deeper than Python's recursion limit
  (``ValueError``).

``canonical_json`` gives the text, ``canonical_bytes`` its UTF-8 bytes,
``canonical_hash`` their sha256; ``input_hash`` never raises (values JSON
cannot hold hash by their ``repr``), for the ledger's ``arguments_hash``.
"""

from __future__ import annotations

import json
import re
import sys

from ._frozen import FrozenDict, FrozenList

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


def _builtin_sha256() -> Callable[[bytes], Any]:
    """CPython's own sha256 (the same digests): ``hashlib`` loads OpenSSL first, which
    costs a hook process recording in the ledger about 2.5 ms."""
    found: Callable[[bytes], Any]
    try:  # no stubs for these private modules: typed by hand
        if sys.version_info >= (3, 12):
            from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]
        else:
            from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
        found = sha256
    except ImportError:  # a build without them
        import hashlib

        found = hashlib.sha256
    return found


_BUILTIN_SHA256 = _builtin_sha256()


def _sha256_hex(data: bytes) -> str:
    """sha256 hex digest: OpenSSL's once ``hashlib`` is loaded (5x faster on big inputs),
    the builtin's until then."""
    hashlib = sys.modules.get("hashlib")
    sha256 = _BUILTIN_SHA256 if hashlib is None else hashlib.sha256
    return str(sha256(data).hexdigest())


__all__ = ["canonical_bytes", "canonical_hash", "canonical_json", "input_hash", "json_encoder"]

_INF = float("inf")
#: patterns compiled (and cached by ``re``) when first used: compiling them costs a hook
#: process 0.3 ms, and most never meet a lone surrogate or a bad value
_SURROGATE = "[\ud800-\udfff]"
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
#: subclass -> the plain value json itself would write (bypassing overridden ``__str__``)
_BASES: tuple[tuple[type, Any], ...] = (
    (str, str.__str__),
    (int, int.__int__),
    (float, float.__float__),
    (dict, dict),
    (list, list),
    (tuple, list),
)


def json_encoder(
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default: Callable[[Any], Any] | None = None,
) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=False, allow_nan=False, ...)`` as one call into
    the C encoder, made once: ``JSONEncoder.encode`` builds that encoder again on every
    call (a few microseconds per value on the ledger's hot path). No check for circular
    containers: they end in ``RecursionError``, which every caller takes."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator: the pure-Python encoder
        return json.JSONEncoder(
            sort_keys=sort_keys,
            separators=separators,
            ensure_ascii=False,
            allow_nan=False,
            default=default,
        ).encode

    def refuse(value: Any) -> Any:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    item_sep, key_sep = separators
    chunks = make(
        None, default or refuse, json.encoder.encode_basestring, None, key_sep, item_sep,
        sort_keys, False, False,
    )  # fmt: skip
    join = "".join

    def encode(value: Any) -> str:
        return join(chunks(value, 0))

    return encode


_dumps = json_encoder(sort_keys=True, separators=(",", ":"))


class _Bad(Exception):
    """Raised inside the walk; carries the path back up as it unwinds."""

    def __init__(self, exc: TypeError | ValueError) -> None:
        self.exc = exc
        self.path: list[str | int] = []
        #: raised about a key: the object holding it is the place, not the key's value
        self.at_key = False


def _norm(v: Any) -> Any:
    """``v`` checked, with integral floats as ints; the same object when nothing changed."""
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if t is float:
        if v != v or v == _INF or v == -_INF:
            raise _Bad(ValueError(f"{v!r} is not a JSON number"))
        return int(v) if v.is_integer() else v
    if t is dict or t is FrozenDict:  # an event's frozen input: a dict to JSON
        out: dict[Any, Any] | None = None
        k: Any = None
        try:
            for k, x in v.items():
                if type(k) is not str and not isinstance(k, str):
                    bad = _Bad(TypeError(f"object keys must be strings, got {type(k).__name__}"))
                    bad.at_key = True
                    raise bad
                y = _norm(x)
                if y is not x:
                    if out is None:
                        out = dict(v)
                    out[k] = y
        except _Bad as bad:
            if bad.at_key:
                bad.at_key = False
            else:
                bad.path.append(str(k))
            raise
        return v if out is None else out
    if t is list or t is tuple or t is FrozenList:
        new: list[Any] | None = None
        i = 0
        try:
            for i, x in enumerate(v):
                y = _norm(x)
                if y is not x:
                    if new is None:
                        new = list(v)
                    new[i] = y
        except _Bad as bad:
            bad.path.append(i)
            raise
        return v if new is None else new
    # subclasses, rarer: coerce to the base type and check again
    for base, plain in _BASES:
        if isinstance(v, base):
            return _norm(plain(v))
    hint = ""
    if isinstance(v, set | frozenset):
        hint = " (use a sorted list)"
    elif isinstance(v, bytes | bytearray | memoryview):
        hint = " (decode it, or encode it as base64 text)"
    raise _Bad(TypeError(f"{type(v).__name__} is not a JSON value{hint}"))


def _where(path: list[str | int]) -> str:
    out = "$"
    for part in reversed(path):
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(_IDENT, part):
            out += f".{part}"
        else:
            out += "[" + json.dumps(part, ensure_ascii=False) + "]"
    return out


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (see the module docstring).

    Raises ``ValueError`` (NaN, infinity, too deep, an integer too long) or
    ``TypeError`` (a value or key JSON cannot hold), naming where it sits.
    """
    try:
        text = _dumps(_norm(value))
    except _Bad as bad:
        exc = bad.exc
        raise type(exc)(f"canonical JSON: {exc} at {_where(bad.path)}") from None
    except RecursionError:
        raise ValueError("canonical JSON: nested too deeply (or circular)") from None
    except ValueError as exc:  # int -> str beyond sys.get_int_max_str_digits()
        raise ValueError(f"canonical JSON: {exc}") from None
    if not text.isascii() and re.search(_SURROGATE, text):
        text = re.sub(_SURROGATE, lambda m: f"\\u{ord(m.group()):04x}", text)
    return text


def canonical_bytes(value: Any) -> bytes:
    """``canonical_json(value)`` as UTF-8."""
    return canonical_json(value).encode("utf-8")


def canonical_hash(value: Any) -> str:
    """sha256 hex of the canonical JSON; raises like :func:`canonical_json`."""
    return _sha256_hex(canonical_bytes(value))


def input_hash(value: Any) -> str:
    """sha256 hex of the canonical JSON; values JSON cannot hold hash by their ``repr``."""
    try:
        data = canonical_bytes(value)
    except (TypeError, ValueError):
        try:
            text = "repr:" + repr(value)
        except RecursionError:
            text = "unrepresentable:" + type(value).__name__
        data = text.encode("utf-8", "surrogatepass")
    return _sha256_hex(data)
