"""The built-in secret kinds' pattern sources (see :mod:`guardrails._redaction`).

Apart from the redaction engine: a hook process imports the engine for every event, and
needs these only when a text holds a trigger word, so they are loaded with the combined
pattern's first compile (``_redaction._compile``).
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: importing typing costs a hook process ~3 ms
if TYPE_CHECKING:
    from typing import Final

# The env_key NAME: an identifier taken whole (atomic, up to its last letter), then
# fixed-width lookbehinds test how it ends: one check per identifier, not per character.
_KEY_PREFIXES = (
    "api", "private", "secret", "access", "auth", "client", "master", "signing",
    "encryption", "license", "pass", "app",
)  # fmt: skip
_SECRET_NAME = (
    r"(?>[A-Za-z0-9_.-]*[A-Za-z])(?:"
    + "|".join(
        [
            *(
                f"(?<=(?i:{word}))"
                for word in ("token", "secret", "passwd", "password", "passphrase")
            ),
            r"(?<=(?i:pass))(?<![A-Za-z0-9](?i:pass))",  # DB_PASS, --pass; not bypass
            r"(?<=[A-Za-z0-9][_.-](?i:key))",  # API_KEY, api-key, x.key; not a bare key
            r"(?<=[a-z0-9]Key)",  # apiKey, secretKey
            *(f"(?<=(?i:{prefix}key))" for prefix in _KEY_PREFIXES),  # apikey, PRIVATEKEY
        ]
    )
    + r")(?:[_-]?[0-9]+)?"  # API_KEY_2, TOKEN2
)
#: characters that end an unquoted value
_VALUE_STOP = r"""\s"'`,;&(){}\[\]<>\\"""
_TOKEN_CHARS = r"A-Za-z0-9._~+/-"
#: where a broad value class must not run over an existing mask (so a second pass
#: finds nothing new); ``_compile`` puts the redactor's masks in
_NOT_A_MASK = "(?!_MASKS_)"
_MASK_ENDS = "_MASK_ENDS_"
#: in a "not followed by" class: the first characters of the masks
_MASK_STARTS = "_MASK_STARTS_"


def _starts_word(word_chars: str, after: int = 0) -> str:
    """A word starts ``after`` characters back: not preceded by one of ``word_chars``,
    a backslash or the end of a mask (a second pass must not find a word start the
    first did not), or just after a ``\\n``, ``\\t`` or ``\\r`` escape (in JSON text a
    secret opening a line follows an ``n``). Placed after a literal prefix, so that
    the combined pattern rejects most positions on their first character."""
    skip = f".{{{after}}}" if after else ""
    return rf"(?:(?<![\\{_MASK_ENDS}{word_chars}]{skip})|(?<=\\[nrt]{skip}))"


#: the prose kind's names: a word (``password``, ``DB_PASSWORD``, ``token``) before
#: ``is``/``was``, and two words (``api key``, ``access token``) before that or ``=``/``:``
_PROSE_WORD = (
    r"(?:[A-Za-z0-9]+[_-])*(?i:password|passwd|passphrase|passcode|secret|token|api[_-]?key)"
)
_PROSE_PAIR = (
    r"(?i:api|access|secret|private|auth|client|signing|encryption|session|refresh|bearer"
    r"|master|app)[ \t]+(?i:key|token|secret|password)"
)
#: words after ``password is`` that are prose, not a password; so are words that end
#: in one of _PROSE_ENDINGS (``is hashed``, ``is readable``)
_PROSE_STOP = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "not", "no", "none", "now",
    "never", "still", "also", "only", "just", "already", "always", "usually", "often", "being",
    "been", "be", "set", "unset", "empty", "blank", "missing", "required", "optional", "needed",
    "necessary", "mandatory", "invalid", "valid", "incorrect", "correct", "wrong", "right",
    "expired", "revoked", "rotated", "weak", "strong", "short", "long", "too", "very", "case",
    "sensitive", "secret", "private", "public", "secure", "insecure", "safe", "unsafe", "good",
    "bad", "fine", "ok", "okay", "same", "different", "unique", "known", "unknown", "new", "old",
    "in", "on", "at", "for", "from", "of", "to", "with", "by", "as", "into", "via", "under",
    "over", "per", "about", "here", "there", "what", "which", "where", "how", "why", "when",
    "who", "your", "my", "our", "their", "his", "her", "yours", "mine", "ours", "theirs",
    "something", "nothing", "anything", "everything", "null", "nil", "true", "false", "undefined",
    "out", "up", "off", "gone", "lost", "back",
    "hidden", "shown", "sent", "stored", "saved", "hashed", "encrypted", "visible", "available",
    "unavailable", "ready",
))  # fmt: skip
_PROSE_ENDINGS = "ed|ing|ly|ble|ive|ous|ful|less"
_PROSE_UNITS = (
    "char|character|digit|letter|byte|bit|symbol|word|day|hour|minute|second|week|month|year"
)
#: characters that end a prose value: env_key's but ``&`` (``Tr0ub4dor&3`` is one password)
_PROSE_VALUE_STOP = r"""\s"'`,;(){}\[\]<>\\"""
#: a word ends: trailing punctuation, then a character that ends a value or the text
_PROSE_END = rf"[.!?:]*(?:[{_PROSE_VALUE_STOP}]|\Z)"

#: (kind, pattern); a group named ``<kind>__s...`` marks the part to mask, else the
#: whole match is masked. The patterns are joined into one alternation (VERBOSE).
_BUILTIN_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    (
        "private_key",
        r"""
        -----BEGIN[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
        (?:
            (?:(?!-----BEGIN[ ])[^"])*?                     # not past a BEGIN or a quote
            -----END[ ](?:[A-Z0-9]+[ ])*PRIVATE[ ]KEY(?:[ ]BLOCK)?-----
          | (?:[A-Za-z0-9+/=]|\r?\n|\\[rn]|(?:Proc-Type|DEK-Info):[^\n\\]*)*  # cut off: no END
        )
        """,
    ),
    ("anthropic", "sk-ant-" + _starts_word("A-Za-z0-9_-", 7) + "[A-Za-z0-9_-]{20,}"),
    (
        "openai",
        "sk-"
        + _starts_word("A-Za-z0-9_-", 3)
        + r"""
        (?!ant-)
        (?=[A-Za-z0-9_-]*[0-9])[A-Za-z0-9_-]{20,}
        """,
    ),
    (
        "aws_access_key",
        "A[KS]IA" + _starts_word("A-Za-z0-9", 4) + rf"[A-Z0-9]{{16}}(?![{_MASK_STARTS}A-Za-z0-9])",
    ),
    (
        "aws_secret",
        rf"""
        (?i:aws_?secret_?access_?key)\\?["']?[ \t]*(?:=>|[:=])[ \t]*(?:\\?["'])?
        (?P<aws_secret__s>[A-Za-z0-9/+]{{40}})(?![{_MASK_STARTS}A-Za-z0-9/+=])
        """,
    ),
    (
        "github",
        rf"""
        gh[pousr]_{_starts_word("A-Za-z0-9_", 4)}[A-Za-z0-9]{{36,}}
      | github_pat_{_starts_word("A-Za-z0-9_", 11)}[A-Za-z0-9_]{{22,}}
        """,
    ),
    (
        "slack",
        "xox[abprs]-"
        + _starts_word("A-Za-z0-9", 5)
        + r"""
        [A-Za-z0-9-]{10,}
      | https://hooks\.slack\.com/(?:services|workflows|triggers)/
        (?P<slack__s>[A-Za-z0-9/_-]+)
        """,
    ),
    (
        "bearer",
        rf"""
        (?i:authorization)\\?["']?[ \t]*[:=][ \t]*(?:\\?["'])?
        (?i:bearer|basic|token)[ \t]+(?P<bearer__s>[{_TOKEN_CHARS}]+=*)
      | (?i:bearer){_starts_word("A-Za-z0-9_", 6)}[ \t]+
        (?=[{_TOKEN_CHARS}]*[0-9]|[{_TOKEN_CHARS}]{{20}})
        (?P<bearer__s2>[{_TOKEN_CHARS}]{{8,}}+=*)(?![{_MASK_STARTS}{_TOKEN_CHARS}=])
        """,
    ),
    (
        "url_password",
        "[A-Za-z]"
        + _starts_word("A-Za-z0-9+.-", 1)
        + r"""
        [A-Za-z0-9+.-]*://
        (?:"""
        + _NOT_A_MASK
        + r"""[^\s:/@?#"'<>\[\]])*:
        (?P<url_password__s>(?:"""
        + _NOT_A_MASK
        + r"""[^\s/@?#"'<>])+)
        @(?=[^\s@/])
        """,
    ),
    (
        "env_key",
        rf"""
        (?=[\\"'A-Za-z0-9_.-]){_starts_word("A-Za-z0-9_.-")}
        (?P<env_key_q>\\?["'])?
        {_SECRET_NAME}
        (?(env_key_q)(?P=env_key_q)[ \t]*(?:=>|[:=])|(?:[ \t]*(?:=>|:?=)|:(?=[ \t])))
        [ \t]*(?!=)
        (?>(?:(?i:bearer|basic|token)[ \t]+)?)           # kept, never backed out of
        (?:
            (?:[rbfuRBFU]{{1,2}}(?=["'`]))?
            (?P<env_key_vq>\\?["'`])(?P<env_key__s>(?:{_NOT_A_MASK}(?:\\.|[^\\\n"]))+?)(?P=env_key_vq)
          | (?![rbfuRBFU]{{1,2}}["'`]|\$|-----BEGIN)
            (?!(?:None|null|nil|true|false|True|False|undefined)(?![^{_VALUE_STOP}]))
            (?P<env_key__s2>(?:{_NOT_A_MASK}[^{_VALUE_STOP}])++)(?![{_MASK_STARTS}(\[])
        )
        """,
    ),
    (
        "prose",
        rf"""
        (?<![A-Za-z0-9_])(?:{_PROSE_PAIR}|{_PROSE_WORD})(?![A-Za-z0-9_])
        (?:
            [ \t]+(?i:is|was)(?:[ \t]+(?i:set[ \t]+to))?(?:[ \t]*:)?
          | (?<=(?i:key))[ \t]*(?:=|:(?=[ \t]))                 # api key = X, api key: X
        )
        [ \t]+
        (?:
            (?P<prose_q>\\?["'`])(?P<prose__s>(?:{_NOT_A_MASK}(?:\\.|[^\\\n"]))+?)(?P=prose_q)
          |                                          # "is required": _ordinary() vetoes
            (?![A-Za-z-]*[A-Za-z](?i:{_PROSE_ENDINGS}){_PROSE_END})  # "is hashed", "is readable"
            (?![0-9]+[ \t]+(?i:{_PROSE_UNITS})s?\b)               # "is 42 characters long"
            (?!\$|-----BEGIN)
            (?P<prose__s2>(?:{_NOT_A_MASK}[^{_PROSE_VALUE_STOP}])*?[^{_PROSE_VALUE_STOP}.!?:])
            (?={_PROSE_END})(?![.!?:]*[{_MASK_STARTS}(\[])
        )
        """,
    ),
)
