"""Mask secrets in text and JSON-like values before they are stored or shown.

The ledger runs tool inputs and outputs through :func:`redact` before writing them; the
``redact_secrets`` built-in reuses the same :class:`Redactor` to mask what the model sees.
Stdlib only; the combined pattern is compiled (~5 ms) when a text first holds one of the words
every kind needs (``key``, ``token``, ``://``, ``sk-``...), so a hook process recording plain
commands never pays for it. Every built-in kind is a named alternative of a single pattern, so
``redact_text`` is one ``re.sub`` pass (the context a match keeps, such as ``NAME=`` or
``scheme://user:``, is searched again on its own), then one pass per user pattern. The
leftmost match wins; at the same place, the earlier kind below. Text may be JSON: a secret
after a ``\\n`` escape is found, and masking never crosses a JSON string's quotes, so JSON
text stays valid JSON. Redacting twice gives the same text as redacting once (masks are never
re-masked, nor read as part of a word, a name or a value).

Built-in kinds:

``private_key``
    whole ``-----BEGIN ... PRIVATE KEY-----`` ... ``-----END ... PRIVATE KEY-----`` blocks
    (RSA, EC, DSA, OPENSSH, ENCRYPTED, PGP ``... KEY BLOCK``, plain), real or ``\\n``-escaped
    newlines; a block cut off before its END line is masked through its base64 body.
``anthropic``
    ``sk-ant-`` + 20 or more ``[A-Za-z0-9_-]``.
``openai``
    ``sk-`` (``sk-proj-``, ``sk-svcacct-``, ...) + 20 or more ``[A-Za-z0-9_-]`` holding at
    least one digit; never ``sk-ant-``. ``sk-learn`` stays.
``aws_access_key``
    ``AKIA``/``ASIA`` + 16 uppercase letters or digits, as a whole word.
``aws_secret``
    the 40 base64 characters after ``aws_secret_access_key`` and ``=`` or ``:``.
``github``
    ``ghp_``/``gho_``/``ghu_``/``ghs_``/``ghr_`` + 36 or more letters or digits, and
    ``github_pat_`` + 22 or more ``[A-Za-z0-9_]``.
``slack``
    ``xox[abprs]-`` tokens, and the path of ``https://hooks.slack.com/services/``
    (``workflows/``, ``triggers/``) webhook URLs.
``bearer``
    the credentials after ``Authorization: Bearer|Basic|Token`` (any length), and after a bare
    ``Bearer`` when they are 8+ token characters holding a digit or 20+ of them (so the prose
    "Bearer authentication" stays).
``url_password``
    ``scheme://user:PASSWORD@host`` keeps ``scheme://user:`` and ``@host``.
``env_key``
    the value of ``NAME=value``, ``NAME = value``, ``NAME: value`` (a space after the colon),
    ``"NAME": "value"``, ``'NAME' => 'value'``, with the name quoted or not (``\\"``-escaped
    quotes too), where NAME is one identifier (no spaces: ``password policy: 8 chars`` stays)
    ending in TOKEN, SECRET, PASSWORD, PASSWD or PASSPHRASE (any case: ``authToken``,
    ``DB_PASSWORD``), PASS as a segment (``DB_PASS``, not ``bypass``) or KEY after another
    segment (``API_KEY``, ``api-key``, ``apiKey``, ``apikey``; not a bare ``key``, not
    ``monkey``), optionally followed by digits (``API_KEY_2``). ``max_tokens``, ``tokenizer``,
    ``KEY_ID`` do not qualify. Quotes around the value are kept; a quoted value is masked
    whole (spaces included), an unquoted one up to whitespace or one of ``"'`,;&(){}[]<>\\``.
    Not masked: ``$VAR`` references, the literals ``None null nil true false True False
    undefined``, and a value followed by ``(`` or ``[`` (``getpass()``, ``os.environ["X"]``:
    code, not a secret).
``prose``
    a secret said in words, as in a user prompt: the word after ``NAME is``, ``NAME was``,
    ``NAME is set to`` or ``NAME is:``, where NAME is ``password``, ``passwd``,
    ``passphrase``, ``passcode``, ``secret``, ``token``, ``api key`` (``apikey``,
    ``api_key``), an identifier ending in one of them (``DB_PASSWORD``), or two words such as
    ``access token``, ``client secret``, ``private key``; and after ``api key =`` or ``api
    key:`` (two words, ending in ``key``: one identifier is ``env_key``'s). A quoted value is
    masked whole; an unquoted one up to whitespace or one of ``"'`,;(){}[]<>\\``, without
    trailing ``.!?:``. Not masked, so that ordinary prose stays: a value that is a common word
    (``is required``, ``is the``, ``is not``, ``is too short``), one ending in -ed, -ing, -ly,
    -ble, -ive, -ous, -ful or -less (``is hashed``, ``is case-sensitive``), a number followed
    by a unit (``is 42 characters long``), ``$VAR`` and code (``getpass()``). ``the password
    field is required`` and ``token count`` hold no separator at all.

Known limits. Missed: anything without a recognisable prefix or ``NAME=`` context (a bare
password, a JWT, Stripe/Google/npm/PyPI tokens: add them with ``extra_patterns``); the rest of
an unquoted value after a space; ``NAME value`` without a separator (``--api-key abc``,
``passwd hunter2``); a password that is a word of the ``prose`` list (``the password is
secret``); a secret glued to a word (``xsk-ant-...``, ``AKIA...`` followed by a letter); a
quoted value that already holds a mask (its other words stay). Over-masked: code and config
such as ``api_key=api_key`` or ``sort_key = lambda``, and ``Token: word`` lines whose NAME
ends in one of the words above.

:meth:`Redactor.redact` also masks, whole and with kind ``field``, non-empty
string values of dict keys that name a secret (see :func:`is_secret_key`), and
redacts dict keys like any text (``{"ghp_...": 1}``): two keys that mask to the same
text stay two, the later ones suffixed ``#2``, ``#3`` (never merged, never dropped).
"""

from __future__ import annotations

import functools
import re
from _collections_abc import Mapping  # collections.abc's source, loaded at start-up (it is not)

from .errors import DefinitionError

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any, Final

__all__ = [
    "DEFAULT_MASK",
    "DEFAULT_REDACTOR",
    "KINDS",
    "MAX_DEPTH",
    "Redactor",
    "is_secret_key",
    "redact",
]

DEFAULT_MASK: Final = "[REDACTED:{kind}]"
#: containers nested deeper than this are replaced by the ``depth`` mask
MAX_DEPTH: Final = 64
#: dict keys a Redactor remembers as holding no secret
_KEY_CACHE = 4096

#: the built-in kinds, in alternation order (their patterns: ``_secret_patterns``, loaded
#: with the combined pattern's first compile)
KINDS: Final[tuple[str, ...]] = (
    "private_key", "anthropic", "openai", "aws_access_key", "aws_secret", "github", "slack",
    "bearer", "url_password", "env_key", "prose",
)  # fmt: skip
#: kinds that are not patterns: user patterns, secret dict keys, depth and cycle guards
_OTHER_KINDS: Final = ("custom", "field", "depth", "cycle")
_KEEP = "_keep"
#: the characters a token holds (``[A-Za-z0-9_.+/=~-]``): a set, not a regex compiled at import
_TOKEN_EDGE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+/=~-")
#: every built-in kind's match holds one of these (ignoring case): text without them holds
#: no built-in secret, so the combined pattern is neither compiled nor run for it
_TRIGGER_WORDS = (
    "-----begin", "sk-", "akia", "asia", "aws", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
    "github_pat_", "xox", "authorization", "bearer", "://", "token", "secret", "pass", "key",
)  # fmt: skip


def _may_hold_secret(text: str) -> bool:
    """Whether ``text`` holds a trigger word. ASCII text is searched with ASCII case
    folding (the same answer as ``re.IGNORECASE``, which folds only non-ASCII letters further);
    other text goes through the regex, which also folds the dotless i, the dotted capital
    I and the long s onto ASCII letters. A process's first ASCII texts are searched word by
    word: compiling the regex (~0.4 ms) would cost a hook process more than it saves."""
    global _by_words
    if text.isascii():
        if _by_words > 0:
            _by_words -= 1  # a racy count only moves the switch
            low = text.lower()
            return any(word in low for word in _TRIGGER_WORDS)
        return _trigger_ascii().search(text) is not None
    return _trigger().search(text) is not None


#: ASCII texts :func:`_may_hold_secret` searches word by word before compiling its regex
_by_words = 64


@functools.cache
def _trigger() -> re.Pattern[str]:
    return re.compile("|".join(map(re.escape, _TRIGGER_WORDS)), re.IGNORECASE)


@functools.cache
def _trigger_ascii() -> re.Pattern[str]:
    """The trigger words for ASCII text: ASCII case folding only (one regex search is a
    few times faster than a ``in`` test per word)."""
    return re.compile("|".join(map(re.escape, _TRIGGER_WORDS)), re.IGNORECASE | re.ASCII)


def _secret_groups(pattern: re.Pattern[str]) -> dict[str, tuple[str, ...]]:
    groups: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for name in pattern.groupindex:
        kind, sep, _ = name.partition("__s")
        if sep and kind in groups:
            groups[kind].append(name)
    return {kind: tuple(names) for kind, names in groups.items()}


@functools.lru_cache(maxsize=8)
def _compile(masks: tuple[str, ...]) -> re.Pattern[str]:
    """The combined pattern; ``masks`` (the rendered masks) are matched first and kept."""
    from ._secret_patterns import _BUILTIN_PATTERNS, _MASK_ENDS, _MASK_STARTS, _NOT_A_MASK

    keep = "|".join(map(re.escape, sorted({m for m in masks if m}, key=len, reverse=True)))
    not_a_mask = f"(?!{keep})" if keep else ""
    ends = "".join(map(re.escape, sorted({m[-1] for m in masks if m})))
    starts = "".join(map(re.escape, sorted({m[0] for m in masks if m})))
    alternatives = [
        f"(?P<{kind}>"
        + source.replace(_NOT_A_MASK, not_a_mask)
        .replace(_MASK_ENDS, ends)
        .replace(_MASK_STARTS, starts)
        + ")"
        for kind, source in _BUILTIN_PATTERNS
    ]
    if keep:
        alternatives.insert(0, f"(?P<{_KEEP}>{keep})")
    return re.compile("|".join(alternatives), re.VERBOSE)


_SECRET_KEY_NAMES: Final = frozenset(
    {
        "password",
        "passwd",
        "secret",
        "api_key",
        "apikey",
        "token",
        "access_token",
        "refresh_token",
        "authorization",
        "private_key",
        "client_secret",
    }
)
_SECRET_KEY_SUFFIXES: Final = ("_key", "_token", "_secret", "_password", "_passwd")

_key_splitters = functools.cache(  # camelCase humps, and - . or space: compiled when first used
    lambda: (re.compile(r"(?<=[a-z0-9])(?=[A-Z])"), re.compile(r"[-. ]"))
)


@functools.lru_cache(maxsize=4096)
def is_secret_key(key: str) -> bool:
    """Whether a dict key names a secret: its value is masked whole.

    Case-insensitive, after camelCase, ``-``, ``.`` and spaces become ``_``
    (``apiKey``, ``X-Api-Key``, ``client.secret``): one of ``password passwd
    secret api_key apikey token access_token refresh_token authorization
    private_key client_secret``, or a name ending in ``_key``, ``_token``,
    ``_secret``, ``_password`` or ``_passwd``. ``max_tokens``, ``key`` and
    ``token_count`` do not qualify, nor do identifiers that merely end in
    ``_key`` (``idempotency_key``, ``primary_key``, ``public_key``, ...).
    """
    hump, separators = _key_splitters()
    name = separators.sub("_", hump.sub("_", key)).lower()
    if name in _NOT_SECRET_KEYS:
        return False
    return name in _SECRET_KEY_NAMES or name.endswith(_SECRET_KEY_SUFFIXES)


#: ``*_key`` names that are identifiers, not credentials: their values stay readable
_NOT_SECRET_KEYS = frozenset(
    {
        "idempotency_key",
        "primary_key",
        "foreign_key",
        "sort_key",
        "partition_key",
        "cache_key",
        "dedup_key",
        "dedupe_key",
        "lookup_key",
        "object_key",
        "s3_key",
        "public_key",
        "hotkey",
        "hot_key",
    }
)


class Redactor:
    """Masks secrets: built-in kinds plus ``extra_patterns``.

    ``extra_patterns`` are regexes (strings or compiled); a match is masked with
    kind ``custom`` -- only its group named ``secret`` when the pattern has one
    (nothing when that group did not take part), else the whole match. They run
    after the built-ins, one pass each, and never inside an existing mask (so a
    user pattern cannot hide the rest of a quoted secret from ``env_key``).
    ``mask`` is a ``str.format`` template with ``{kind}``; it must start and end
    with a character no token holds (not a letter, digit or one of ``_-.+/=~``),
    so that a mask never merges with its neighbours into something a second pass
    would mask again: ``[REDACTED:{kind}]``, ``<{kind}>`` and ``***`` are fine,
    ``REDACTED`` is not.
    """

    __slots__ = ("_keys", "_masks", "_pattern", "_secret_groups", "_split_masks", "_user")

    def __init__(
        self,
        extra_patterns: Iterable[str | re.Pattern[str]] = (),
        *,
        mask: str = DEFAULT_MASK,
    ) -> None:
        expected = "a str.format template such as '[REDACTED:{kind}]'"
        try:
            self._masks = {kind: mask.format(kind=kind) for kind in (*KINDS, *_OTHER_KINDS)}
        except (IndexError, KeyError, ValueError, AttributeError) as exc:
            raise DefinitionError(
                f"invalid redaction mask {mask!r}: {exc}", expected=expected
            ) from None
        for rendered in self._masks.values():
            if not rendered or rendered[0] in _TOKEN_EDGE or rendered[-1] in _TOKEN_EDGE:
                raise DefinitionError(
                    f"invalid redaction mask {mask!r}: it must start and end with a character"
                    " no token holds (not a letter, digit or one of _-.+/=~)",
                    expected=expected,
                )
        self._user = tuple(_compile_user(p) for p in extra_patterns)
        # compiled when first needed: the built-in pattern costs ~5 ms to compile, and
        # a hook process often redacts nothing that could hold a secret (_TRIGGER_WORDS)
        self._pattern: re.Pattern[str] | None = None
        self._secret_groups: dict[str, tuple[str, ...]] = {}
        self._split_masks: re.Pattern[str] | None = None
        #: dict keys seen that hold no secret: keys repeat, and each costs a prefilter
        self._keys: set[str] = set()

    def _key(self, key: str) -> str:
        """``key`` redacted; the same object when it holds no secret."""
        keys = self._keys
        if key in keys:
            return key
        masked = self._run(key, None)
        if masked == key:
            if len(keys) < _KEY_CACHE and len(key) <= 128:
                keys.add(key)
            return key
        return masked

    def _builtin(self) -> re.Pattern[str]:
        """The combined built-in pattern, compiled on first use."""
        pattern = self._pattern
        if pattern is None:
            pattern = _compile(tuple(self._masks.values()))
            self._secret_groups = _secret_groups(pattern)
            self._pattern = pattern
        return pattern

    def _mask_splitter(self) -> re.Pattern[str]:
        """Splits text at the masks (capturing them), compiled on first use."""
        splitter = self._split_masks
        if splitter is None:
            masks = sorted({m for m in self._masks.values() if m}, key=len, reverse=True)
            splitter = self._split_masks = re.compile("(" + "|".join(map(re.escape, masks)) + ")")
        return splitter

    # -- text ------------------------------------------------------------------------

    def leaves(self, text: str) -> bool:
        """Whether :meth:`redact_text` would surely leave ``text`` as it is, and
        :meth:`redact` every string in a value whose JSON text this is (every secret key
        name holds a trigger word too, and JSON escapes none of their characters): no
        trigger word and no user pattern. A cheap test that lets the hot path skip the
        walk of a value."""
        return not self._user and not _may_hold_secret(text)

    def redact_text(self, text: str) -> str:
        """``text`` with every secret replaced by its mask."""
        return self._run(text, None)

    def found(self, text: str) -> list[str]:
        """The kinds :meth:`redact_text` masks in ``text``, one per secret, in order.

        Built-in kinds first, then the user patterns' (kind ``custom``).
        """
        kinds: list[str] = []
        self._run(text, kinds)
        return kinds

    def _run(self, text: str, kinds: list[str] | None) -> str:
        if not text:
            return text
        if _may_hold_secret(text):  # else no built-in kind can match
            text = self._builtin().sub(self._builtin_replacer(kinds), text)
        for user in self._user:
            text = self._outside_masks(user, text, kinds)
        return text

    def _builtin_replacer(self, kinds: list[str] | None) -> Callable[[re.Match[str]], str]:
        pattern = self._builtin()
        masks, secret_groups = self._masks, self._secret_groups

        def replace(m: re.Match[str]) -> str:
            kind = m.lastgroup
            if kind is None or kind == _KEEP:
                return m.group()
            for group in secret_groups[kind]:
                start, end = m.span(group)
                if start >= 0:
                    break
            else:
                start, end = m.span()
            base = m.start()
            whole = m.group()
            # the kept context (NAME=, scheme://user:) may hold a secret of its own
            before = pattern.sub(replace, whole[: start - base]) if start > base else ""
            if kind == "prose" and _ordinary(m.group("prose__s2")):
                return before + whole[start - base :]  # "password is required": prose
            if kinds is not None:
                kinds.append(kind)
            after = pattern.sub(replace, whole[end - base :]) if end < m.end() else ""
            return before + masks[kind] + after

        return replace

    def _outside_masks(self, pattern: re.Pattern[str], text: str, kinds: list[str] | None) -> str:
        mask = self._masks["custom"]
        has_secret = "secret" in pattern.groupindex

        def replace(m: re.Match[str]) -> str:
            start, end = m.span("secret") if has_secret else m.span()
            if start < 0 or start == end:
                return m.group()
            if kinds is not None:
                kinds.append("custom")
            base = m.start()
            whole = m.group()
            return whole[: start - base] + mask + whole[end - base :]

        # odd pieces are existing masks (never empty: __init__ checks): a user pattern
        # never rewrites them
        pieces = self._mask_splitter().split(text)
        for i in range(0, len(pieces), 2):
            if pieces[i]:
                pieces[i] = pattern.sub(replace, pieces[i])
        return "".join(pieces)

    # -- values ----------------------------------------------------------------------

    def redact(self, value: Any) -> Any:
        """A deep copy of ``value`` with the secrets in every nested string masked.

        Dicts (any mapping: a plain ``dict`` comes back), lists, tuples, sets and
        frozensets are copied; a string dict key is redacted like any text (a masked
        key that reads like one before it, or like another key of the dict, gets
        ``#2``, ``#3``...: the dict keeps every entry), and a non-empty string value
        under a key that names a secret (:func:`is_secret_key`) is masked whole with
        kind ``field``. Other values (numbers, ``None``, bytes,
        objects) are returned unchanged. A container met again while inside itself
        becomes the ``cycle`` mask, one nested deeper than ``MAX_DEPTH`` the
        ``depth`` mask; a container shared (not cyclic) is copied once.
        """
        return self._value(value, 0, {}, set())

    def _value(self, value: Any, depth: int, memo: dict[int, Any], active: set[int]) -> Any:
        if isinstance(value, str):
            return self._run(value, None)
        if not isinstance(value, (dict, list, tuple, set, frozenset, Mapping)):
            return value
        key = id(value)
        if key in active:
            return self._masks["cycle"]
        if key in memo:
            return memo[key]
        if depth >= MAX_DEPTH:
            return self._masks["depth"]
        active.add(key)
        try:
            result: Any
            if isinstance(value, Mapping):
                field = self._masks["field"]
                result = {}
                for k, v in value.items():
                    v = (
                        field
                        if isinstance(k, str) and isinstance(v, str) and v and is_secret_key(k)
                        else self._value(v, depth + 1, memo, active)
                    )
                    if isinstance(k, str):
                        masked = self._key(k)
                        if masked is not k:  # a secret used as a key: never merge two keys
                            k = _unique_key(masked, result, value)
                    result[k] = v
            else:
                items = [self._value(v, depth + 1, memo, active) for v in value]
                if isinstance(value, list):
                    result = items
                elif isinstance(value, tuple):
                    result = tuple(items)
                else:
                    result = frozenset(items) if isinstance(value, frozenset) else set(items)
        finally:
            active.discard(key)
        memo[key] = result
        return result


def _ordinary(value: str | None) -> bool:
    """Whether an unquoted ``prose`` value is an ordinary word of _PROSE_STOP (``case``
    in ``case-sensitive`` too): a Python check, so the combined pattern stays quick to
    compile (the words as a regex alternation doubled its compile time)."""
    if value is None:
        return False
    from ._secret_patterns import _PROSE_STOP  # loaded already: a match of the pattern

    first, *rest = value.split("-")
    return first.lower() in _PROSE_STOP and all(p.isascii() and p.isalpha() for p in rest)


def _unique_key(key: str, taken: Mapping[Any, Any], original: Mapping[Any, Any]) -> str:
    """``key`` (a masked dict key), or ``key#2``, ``key#3``... when a key masked before it
    or a key of the original dict already reads that way."""
    found, n = key, 1
    while found in taken or found in original:
        n += 1
        found = f"{key}#{n}"
    return found


def _compile_user(pattern: str | re.Pattern[str]) -> re.Pattern[str]:
    if isinstance(pattern, re.Pattern):
        if not isinstance(pattern.pattern, str):
            raise DefinitionError(
                f"redaction pattern {pattern.pattern!r} is a bytes pattern", expected="a str regex"
            )
        return pattern
    if not isinstance(pattern, str):
        raise DefinitionError(
            f"redaction pattern {pattern!r} is not a string", expected="a str regex"
        )
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise DefinitionError(
            f"invalid redaction pattern {pattern!r}: {exc}", expected="a Python regex"
        ) from None


DEFAULT_REDACTOR: Final = Redactor()


def redact(value: Any) -> Any:
    """:meth:`Redactor.redact` with the built-in kinds and the default mask."""
    return DEFAULT_REDACTOR.redact(value)
