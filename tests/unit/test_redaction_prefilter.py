"""The redactor's prefilter: text without any word a built-in kind needs skips the combined
pattern (it is compiled on first need), and that never changes what is masked.

Each check compares :meth:`Redactor.redact_text` with the combined pattern run on
every text, as it was before the prefilter.
"""

from __future__ import annotations

import random

import pytest

from guardrails import _redaction
from guardrails._redaction import KINDS, Redactor
from guardrails._secret_patterns import _BUILTIN_PATTERNS

#: one secret per built-in kind, and case folds ``re.IGNORECASE`` makes (dotless i,
#: dotted capital I, long s, Kelvin sign) that ``str.lower`` does not
SECRETS = [
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    "sk-ant-" + "a1" * 12,
    "sk-proj-" + "a1" * 12,
    "AKIA" + "ABCDEFGHIJKLMNOP",
    "aws_secret_access_key=" + "A" * 40,
    "ghp_" + "a" * 36,
    "github_pat_" + "a" * 22,
    "xoxb-1234567890ab",
    "https://hooks.slack.com/services/T000/B000/XXXX",
    "Authorization: Basic Zm9vOmJhcg==",
    "Bearer abcdefgh12345678",
    "https://user:hunter2@example.com",
    "API_KEY=abc123",
    "apiKey: 'x1'",
    "DB_PASSWORD=hunter2",
    "MY_TOKEN=abc",
    "author\u0131zation: basic Zm9vOmJhcg==",
    "AUTHOR\u0130ZATION: Basic Zm9vOmJhcg==",
    "DB_PA\u017fS=hunter2",
    "API_\u212aEY=abc123",
    "my password is hunter2",
    "the api key = abc123",
    "my pa\u017fsword is hunter2",
]
#: pieces the random texts are made of: kind prefixes, separators, lookalikes, masks
FRAGMENTS = [
    "sk-", "ant-", "AKIA", "ASIA", "aws_secret_access_key", "ghp_", "github_pat_", "xoxb-",
    "https://", "hooks.slack.com/services/", "Authorization", "Bearer ", "://", "user:",
    "pw@", "API_KEY", "apiKey", "Token", "PASS", "secret", "=", ": ", '"', "'", "\\n", "\n",
    " ", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----", "ABCDEFGHIJKLMNOP",
    "abcdefghijklmnopqrstuvwxyz0123456789", "0123456789", "x", "_",
    "\u017f", "\u212a", "\u0131", "\u0130", "[REDACTED:env_key]", "=>", "(", "$", "None",
    "rm -rf build", "ls", "café", " is ", " was ", "password", "api key", "required", ".",
]  # fmt: skip


def _unfiltered(redactor: Redactor, text: str) -> str:
    """The built-in pass without the prefilter."""
    return redactor._builtin().sub(redactor._builtin_replacer(None), text)


@pytest.mark.parametrize("text", SECRETS)
def test_every_kind_passes_the_prefilter(text: str) -> None:
    redactor = Redactor()
    masked = redactor.redact_text(text)
    assert masked != text
    assert masked == _unfiltered(redactor, text)


def test_the_secrets_cover_every_kind() -> None:
    redactor = Redactor()
    assert {kind for text in SECRETS for kind in redactor.found(text)} == set(KINDS)


@pytest.mark.parametrize("seed", range(4))
def test_random_texts_are_masked_as_without_the_prefilter(seed: int) -> None:
    redactor = Redactor()
    rng = random.Random(seed)
    for _ in range(5000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8)))
        assert redactor.redact_text(text) == _unfiltered(redactor, text), text


def test_text_without_a_trigger_word_never_compiles_the_pattern() -> None:
    redactor = Redactor(mask="<{kind}>")  # a mask no other test uses: not in the cache
    assert redactor.redact({"command": "rm -rf build", "description": "clean"}) == {
        "command": "rm -rf build",
        "description": "clean",
    }
    assert redactor._pattern is None
    assert redactor.redact_text("API_KEY=abc123") == "API_KEY=<env_key>"
    assert redactor._pattern is not None


@pytest.mark.parametrize("seed", range(2))
def test_the_word_by_word_search_answers_as_the_regex(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process's first texts are searched word by word (no regex to compile in a hook
    process); the answer is the regex's, for every text."""
    rng = random.Random(seed)
    texts = ["".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(1, 8))) for _ in range(3000)]
    monkeypatch.setattr(_redaction, "_by_words", 0)
    by_regex = [_redaction._may_hold_secret(t) for t in texts]
    monkeypatch.setattr(_redaction, "_by_words", len(texts))
    assert [_redaction._may_hold_secret(t) for t in texts] == by_regex
    assert _redaction._by_words == len([t for t in texts if not t.isascii()])


def test_the_kinds_are_the_patterns_in_order() -> None:
    assert tuple(kind for kind, _ in _BUILTIN_PATTERNS) == KINDS
