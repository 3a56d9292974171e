"""Secret redaction (``guardrails._redaction``): every kind, nesting, user patterns, negatives.

Fake secrets are built by concatenation so that no realistic-looking secret
literal sits in the repository (push-protection scanners). A case's template
holds ``<S>`` where its value goes; the expected output is the template with
the mask in its place, so the surrounding text is checked character for
character.
"""

from __future__ import annotations

import copy
import json
import re
import string
from typing import Any, NamedTuple, cast

import pytest
from hypothesis import assume, given, note, settings
from hypothesis import strategies as st

from guardrails._redaction import (
    DEFAULT_REDACTOR,
    KINDS,
    MAX_DEPTH,
    Redactor,
    is_secret_key,
    redact,
)
from guardrails.errors import DefinitionError

# --- fake secrets (concatenated, never one literal) ---------------------------------
ANTHROPIC = "sk-ant-" + "api03-" + "Ab3_-" * 18
OPENAI_PROJECT = "sk-" + "proj-" + "T3stK3y_" * 8
OPENAI_LEGACY = "sk-" + "a1B2c3" * 8
AWS_ACCESS = "AKIA" + "FAKE" + "2345" * 3
AWS_SESSION = "ASIA" + "Q" * 8 + "7" * 8
AWS_SECRET = "fAkE/" * 4 + "n0t+" * 5
GITHUB_CLASSIC = "ghp" + "_" + "x1Y2" * 9
GITHUB_OAUTH = "gho" + "_" + "Zz09" * 10
GITHUB_FINE = "github" + "_pat_" + "11ABC_" * 5
SLACK_BOT = "xoxb" + "-" + "1234-" + "abcd" * 4
SLACK_HOOK_PATH = "T0000/B0000/" + "x" * 24
JWT_LIKE = "eyJ" + "abc123." * 4 + "sig"
PEM_BODY = "\n".join(["MIIB" + "a1" * 30] * 3)
PEM_RSA = "-----BEGIN RSA PRIVATE KEY-----\n" + PEM_BODY + "\n-----END RSA PRIVATE KEY-----"
PEM_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n" + PEM_BODY + "\n-----END OPENSSH PRIVATE KEY-----"
)
PEM_PLAIN = "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY + "\n-----END PRIVATE KEY-----"
PEM_EC = "-----BEGIN EC PRIVATE KEY-----\n" + PEM_BODY + "\n-----END EC PRIVATE KEY-----"


def mask(kind: str) -> str:
    return f"[REDACTED:{kind}]"


class Case(NamedTuple):
    id: str
    kind: str
    template: str  # "<S>" marks where the value goes
    value: str
    raw: str = ""  # the part that must not survive; the whole value when empty

    @property
    def text(self) -> str:
        return self.template.replace("<S>", self.value)

    @property
    def expected(self) -> str:
        return self.template.replace("<S>", mask(self.kind))

    @property
    def secret(self) -> str:
        return self.raw or self.value


CASES: list[Case] = [
    # --- vendor prefixes: the whole token is masked --------------------------------
    Case("anthropic", "anthropic", "using key <S> for the eval run", ANTHROPIC),
    Case("anthropic-not-openai", "anthropic", "client = Anthropic(<S>)", ANTHROPIC),
    Case("openai-project", "openai", "set it to <S> and retry", OPENAI_PROJECT),
    Case("openai-legacy", "openai", "old key <S>, rotated", OPENAI_LEGACY),
    Case("aws-access-key", "aws_access_key", "aws_access_key_id: <S>\nregion: x", AWS_ACCESS),
    Case("aws-session-key", "aws_access_key", "creds (<S>) expire soon", AWS_SESSION),
    Case("github-classic", "github", "git clone https://<S>@github.com/o/r", GITHUB_CLASSIC),
    Case("github-oauth", "github", "cached <S> in hosts.yml", GITHUB_OAUTH),
    Case("github-fine-grained", "github", "gh auth login --with-token <S> ok", GITHUB_FINE),
    Case("slack-token", "slack", "bot <S> joined #general", SLACK_BOT),
    Case("own-line", "openai", "keys:\n<S>\nend", OPENAI_LEGACY),
    # --- secret after a context that is kept ------------------------------------------
    Case(
        "aws-secret-ini",
        "aws_secret",
        "[default]\naws_secret_access_key = <S>\nregion = eu-west-1",
        AWS_SECRET,
    ),
    Case("aws-secret-env", "aws_secret", "export AWS_SECRET_ACCESS_KEY=<S>; ls", AWS_SECRET),
    Case(
        "slack-webhook",
        "slack",
        "curl -X POST https://hooks.slack.com/services/<S> -d @msg.json",
        SLACK_HOOK_PATH,
    ),
    Case("env-stripe", "env_key", "STRIPE_API_KEY=<S>\nDEBUG=1", "sk_live_" + "abc123"),
    Case("env-export-quoted", "env_key", "export DB_PASSWORD='<S>' && run", "hunter" + "2"),
    Case("env-json-in-string", "env_key", 'body {"api_key": "<S>", "n": 1}', "abc" + "123"),
    Case("env-json-compact", "env_key", '{"client_secret":"<S>","id":7}', "cs" + "-9f8e7d"),
    Case("env-yaml", "env_key", "db:\n  password: <S>\n  host: db", "s3cr" + "et!x"),
    Case("env-camel", "env_key", "const apiKey = '<S>';", "k-" + "4242"),
    Case("env-header-style", "env_key", "X-Api-Key: <S>\nAccept: */*", "ak" + "_77aa"),
    Case("env-cli-flag", "env_key", "tool --auth-token=<S> --verbose", "t0k" + "en"),
    Case("env-keeps-scheme", "env_key", "GITHUB_TOKEN: token <S>", "abc" + "def1"),
    Case("env-own-line", "env_key", "A=1\nAPI_TOKEN=<S>\nB=2", "t0k" + "en-42"),
    Case("env-wins-over-vendor", "env_key", "OPENAI_API_KEY=<S>", OPENAI_PROJECT),
    Case("bearer-header", "bearer", "Authorization: Bearer <S>\nHost: x", JWT_LIKE),
    Case("bearer-bare", "bearer", '{"auth": "Bearer <S>"}', JWT_LIKE),
    Case("bearer-basic", "bearer", 'curl -H "Authorization: Basic <S>" x', "dXNlcjpw" + "YXNz"),
    Case(
        "url-password",
        "url_password",
        "DATABASE_URL=postgres://app:<S>@db.internal:5432/app",
        "p4ss" + "w0rd!",
    ),
    Case("url-password-no-user", "url_password", "redis://:<S>@cache:6379/0", "r3dis" + "pw"),
    # --- whole private key blocks -------------------------------------------------------
    Case("pem-rsa", "private_key", "$ cat id_rsa\n<S>\n$ next", PEM_RSA, raw=PEM_BODY),
    Case("pem-openssh", "private_key", "key:\n<S>\n", PEM_OPENSSH, raw=PEM_BODY),
    Case("pem-plain", "private_key", "<S> trailing", PEM_PLAIN, raw=PEM_BODY),
    Case("pem-ec", "private_key", "ec <S>", PEM_EC, raw=PEM_BODY),
    Case(
        "pem-cut-off",
        "private_key",
        "head -3 key.pem\n<S>",
        "-----BEGIN PRIVATE KEY-----\n" + PEM_BODY,
        raw=PEM_BODY,
    ),
    # --- secrets said in words (a user prompt) -------------------------------------------
    Case("prose-is", "prose", "my password is <S>", "hunter" + "2"),
    Case("prose-is-sentence-end", "prose", "The password is <S>. Log in.", "hunter" + "2"),
    Case("prose-is-comma", "prose", "my password is <S>, use it", "hunter" + "2"),
    Case("prose-was", "prose", "the old password was <S> until May", "swordf" + "ish"),
    Case("prose-is-colon", "prose", "password is: <S>", "Tr0ub4" + "dor&3"),
    Case("prose-is-set-to", "prose", "the password is set to <S>", "pa55" + "-word"),
    Case("prose-quoted", "prose", 'the passphrase is "<S>" ok', "correct horse " + "battery"),
    Case("prose-single-quoted", "prose", "my secret is '<S>'", "launch at " + "dawn"),
    Case("prose-api-key-is", "prose", "Our API key is <S> for now", "9f8e7d" + "6c5b"),
    Case("prose-api-key-equals", "prose", "api key = <S>", "k3y" + "-4242"),
    Case("prose-api-key-colon", "prose", "the api key: <S>\nthanks", "ak" + "_77aa"),
    Case("prose-access-token-is", "prose", "my access token is <S>", "eyJh" + "bGci0"),
    Case("prose-identifier-is", "prose", "DB_PASSWORD is <S> on staging", "s3cr" + "et!x"),
    Case("prose-token-is", "prose", "the token is <S>", "abc" + "123def"),
    Case("prose-client-secret", "prose", "client secret is <S>", "cs" + "-9f8e7d"),
    Case("prose-in-json-text", "prose", '{"prompt": "my password is <S>"}', "hunter" + "2"),
]

# (id, text): ordinary text that stays as it is
NEGATIVES: list[tuple[str, str]] = [
    ("key-in-drawer", "the key is in the drawer"),
    ("git-push", "git push origin main"),
    ("tokenizer", "tokenizer"),
    ("tokenizer-config", "tokenizer: bert-base-uncased"),
    ("sha1", "commit " + "2fd4e1c67a2d28fced849ee1bb76e7391b93eb12"),
    ("sha256", "sha256:" + "e3b0c44298fc1c149afbf4c8996fb924" + "27ae41e4649b934ca495991b7852b855"),
    ("uuid", "id 550e8400-e29b-41d4-a716-446655440000"),
    ("sk-learn", "pip install sk-learn"),
    ("sk-short-words", "sk-this-is-not-a-key-at-all"),
    ("password-policy", "password policy: 8 chars"),
    ("max-tokens", "max_tokens: 1024"),
    ("token-count", "token_count=5"),
    ("bare-key-kwarg", "sorted(xs, key=len)"),
    ("monkey", "monkey: banana"),
    ("bypass", "bypass: yes"),
    ("key-id", "KEY_ID=12"),
    ("bearer-prose", "Bearer authentication is described in RFC 6750"),
    ("url-port", "see https://example.com:8080/a@b"),
    ("ssh-remote", "git@github.com:org/repo.git"),
    ("env-reference", "API_KEY=$API_KEY"),
    ("env-none", "password = None"),
    ("env-call", "password = getpass()"),
    ("env-lookup", 'token = os.environ["TOKEN"]'),
    ("public-key", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"),
    ("aws-lowercase", "akia" + "fake2345" * 2),
    ("pwd", "PWD=/srv/app"),
    # --- prose that names a secret but says none ------------------------------------------
    ("password-field", "the password field is required"),
    ("token-count", "token count"),
    ("password-is-required", "password is required"),
    ("password-is-incorrect", "The password is incorrect."),
    ("password-too-short", "your password is too short"),
    ("password-is-not-set", "the password is not set"),
    ("password-is-hashed", "the password is hashed with bcrypt"),
    ("password-case-sensitive", "the password is case-sensitive"),
    ("password-is-a", "password is a required field"),
    ("token-is-expired", "The token is expired."),
    ("token-is-valid", "the token is valid for 24 hours"),
    ("token-length", "the token is 42 characters long"),
    ("api-key-missing", "Your API key is missing"),
    ("api-key-is-the", "the api key is the one from the dashboard"),
    ("secret-is-out", "the secret is out"),
    ("secret-is-safe", "the secret is safe with me"),
    ("secret-is-that", "the secret is that we ship on Fridays"),
    ("password-reset", "reset the password if it is lost"),
    ("password-is-variable", "the password is $DB_PASSWORD"),
    ("password-is-call", "password is getpass()"),
    ("api-key-lookup", 'api key = os.environ["API_KEY"]'),
    ("tokens-plural", "tokens is the plural"),
    ("token-limit", "the token limit is 4096"),
    ("max-tokens-prose", "max tokens is 1024"),
    ("passwd-no-separator", "passwd hunter2"),
    ("key-is-in-the-drawer", "the key is in the drawer"),
    ("this-is", "this is fine"),
]


def nest(leaf: Any) -> dict[str, Any]:
    """``leaf`` under seven levels of dicts in lists in dicts."""
    return {"session": [{"turns": {"calls": [{"input": {"args": [{"ctx": {"text": leaf}}]}}]}}]}


# --- each kind ------------------------------------------------------------------------


def test_every_builtin_kind_has_a_case() -> None:
    assert sorted(KINDS) == sorted({case.kind for case in CASES})


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kind_is_masked_in_text(case: Case) -> None:
    out = DEFAULT_REDACTOR.redact_text(case.text)
    assert case.secret not in out
    assert out == case.expected


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_found_names_the_kind(case: Case) -> None:
    assert DEFAULT_REDACTOR.found(case.text) == [case.kind]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kind_is_masked_deep_in_a_structure(case: Case) -> None:
    out = redact(nest(case.text))
    assert case.secret not in json.dumps(out)
    assert out == nest(case.expected)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_serialized_json_is_masked_like_the_structure(case: Case) -> None:
    text = DEFAULT_REDACTOR.redact_text(json.dumps(nest(case.text)))
    assert json.loads(text) == redact(nest(case.text))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_redacting_twice_equals_once(case: Case) -> None:
    once = redact(nest(case.text))
    assert redact(once) == once


# texts where a second pass once found more than the first (hypothesis finds)
SECOND_PASS_EDGES: list[tuple[str, str]] = [
    ("kind-wins-then-quote", 'aws_secret_access_key="' + "0" * 40 + ' "'),
    ("token-glued-to-name", GITHUB_CLASSIC + "API_KEY=API_KEY"),
    ("scheme-word-kept", "token: Bearer " + "abc" + "123456"),
    ("mask-inside-quotes", 'password="[REDACTED:custom] rest"'),
    ("string-prefix-then-quote", 'API_KEY=u"API_KEY"'),
    ("secret-in-a-name", "KEY-----" + GITHUB_CLASSIC + "0API_KEY=API_KEY"),
]


@pytest.mark.parametrize(("id_", "text"), SECOND_PASS_EDGES, ids=[e[0] for e in SECOND_PASS_EDGES])
@pytest.mark.parametrize("mask_", ["[REDACTED:{kind}]", "***", "<{kind}>"])
def test_second_pass_finds_nothing_new(id_: str, text: str, mask_: str) -> None:
    redactor = Redactor(mask=mask_)
    once = redactor.redact_text(text)
    assert redactor.redact_text(once) == once


def test_kept_context_is_searched_too() -> None:
    text = "git remote add o https://" + GITHUB_CLASSIC + ":x-oauth-basic@github.com/o/r"
    out = DEFAULT_REDACTOR.redact_text(text)
    assert (
        out == "git remote add o https://[REDACTED:github]:[REDACTED:url_password]@github.com/o/r"
    )
    assert DEFAULT_REDACTOR.found(text) == ["github", "url_password"]


def test_several_secrets_in_one_text() -> None:
    text = " | ".join(case.text for case in CASES)
    out = DEFAULT_REDACTOR.redact_text(text)
    assert out == " | ".join(case.expected for case in CASES)
    assert DEFAULT_REDACTOR.found(text) == [case.kind for case in CASES]


# --- negatives ------------------------------------------------------------------------


@pytest.mark.parametrize(("id_", "text"), NEGATIVES, ids=[n[0] for n in NEGATIVES])
def test_ordinary_text_is_unchanged(id_: str, text: str) -> None:
    assert DEFAULT_REDACTOR.redact_text(text) == text
    assert DEFAULT_REDACTOR.found(text) == []


# --- dict keys that name a secret ------------------------------------------------------

SECRET_KEYS = [
    "password",
    "PASSWORD",
    "passwd",
    "secret",
    "api_key",
    "apikey",
    "apiKey",
    "X-Api-Key",
    "token",
    "access_token",
    "refresh_token",
    "Authorization",
    "private_key",
    "client_secret",
    "stripe_key",
    "github_token",
    "webhook_secret",
    "db_password",
    "sessionToken",
]
PLAIN_KEYS = ["max_tokens", "key", "token_count", "tokenizer", "keyboard", "description", "pk"]


@pytest.mark.parametrize("key", SECRET_KEYS)
def test_value_under_a_secret_key_is_masked_whole(key: str) -> None:
    value = "plain words " + "hunter2"
    assert is_secret_key(key)
    assert redact(nest({key: value, "other": value})) == nest({key: mask("field"), "other": value})


@pytest.mark.parametrize("key", PLAIN_KEYS)
def test_value_under_a_plain_key_is_kept(key: str) -> None:
    value = "plain words " + "hunter2"
    assert not is_secret_key(key)
    assert redact({key: value}) == {key: value}


@pytest.mark.parametrize(
    "value",
    [12345, 1.5, None, True, b"raw", "", ["x", {"y": "z"}]],
    ids=["int", "float", "none", "bool", "bytes", "empty", "container"],
)
def test_non_string_or_empty_value_under_a_secret_key_is_kept(value: Any) -> None:
    assert redact({"token": value}) == {"token": value}


def test_container_under_a_secret_key_is_still_searched() -> None:
    data = {"token": {"note": "fallback " + OPENAI_LEGACY}}
    assert redact(data) == {"token": {"note": "fallback " + mask("openai")}}


def test_dict_keys_are_kept_even_when_secret_looking() -> None:
    data = {"api_key": "v", "PASSWORD": "w"}
    assert list(redact(data)) == ["api_key", "PASSWORD"]


# --- dict keys that are secrets ---------------------------------------------------------

# (id, the dict, what redact() gives): a secret used as a key is masked like text; two keys
# that mask alike stay two (``#2``, ``#3``), in order, and never take another key's place
KEY_CASES: list[tuple[str, dict[Any, Any], dict[Any, Any]]] = [
    ("token-key", {GITHUB_CLASSIC: 1}, {mask("github"): 1}),
    ("token-key-and-value", {GITHUB_CLASSIC: GITHUB_OAUTH}, {mask("github"): mask("github")}),
    ("nested", nest({OPENAI_LEGACY: "x"}), nest({mask("openai"): "x"})),
    ("env-style-key", {"API_KEY=abc123": True}, {"API_KEY=" + mask("env_key"): True}),
    (
        "two-alike",
        {GITHUB_CLASSIC: 1, GITHUB_OAUTH: 2},
        {mask("github"): 1, mask("github") + "#2": 2},
    ),
    (
        "three-alike",
        {GITHUB_CLASSIC: 1, GITHUB_OAUTH: 2, "ghs_" + "q9" * 20: 3},
        {mask("github"): 1, mask("github") + "#2": 2, mask("github") + "#3": 3},
    ),
    (
        "alike-a-later-plain-key",
        {GITHUB_CLASSIC: 1, mask("github"): 2},
        {mask("github") + "#2": 1, mask("github"): 2},
    ),
    (
        "alike-a-plain-key-with-the-suffix",
        {GITHUB_CLASSIC: 1, GITHUB_OAUTH: 2, mask("github") + "#2": 3},
        {mask("github"): 1, mask("github") + "#3": 2, mask("github") + "#2": 3},
    ),
    ("plain-keys", {"command": "ls", "path": "/tmp"}, {"command": "ls", "path": "/tmp"}),
    ("non-string-keys", {1: OPENAI_LEGACY, (2, 3): "x"}, {1: mask("openai"), (2, 3): "x"}),
    (
        "secret-key-name-kept",
        {"password": "x", "token": ""},
        {"password": mask("field"), "token": ""},
    ),
]


@pytest.mark.parametrize(("id_", "data", "expected"), KEY_CASES, ids=[c[0] for c in KEY_CASES])
def test_secret_dict_keys_are_masked_and_never_merged(
    id_: str, data: dict[Any, Any], expected: dict[Any, Any]
) -> None:
    out = redact(data)
    assert out == expected
    assert list(out) == list(expected)  # the order too
    assert redact(out) == out  # a second pass changes nothing
    assert GITHUB_CLASSIC not in repr(out)


def test_a_redactor_remembers_plain_keys_only() -> None:
    redactor = Redactor()
    redactor.redact({"command": "ls", GITHUB_CLASSIC: 1})
    assert "command" in redactor._keys and GITHUB_CLASSIC not in redactor._keys


# --- user patterns --------------------------------------------------------------------

USER_CASES: list[tuple[str, list[str | re.Pattern[str]], str, str]] = [
    ("whole-match", [r"ACME-\d{6}"], "ticket ACME-123456 ok", "ticket [REDACTED:custom] ok"),
    (
        "secret-group",
        [r"session=(?P<secret>[0-9a-f]{16})"],
        "GET /?session=" + "0123456789abcdef" + " 200",
        "GET /?session=[REDACTED:custom] 200",
    ),
    (
        "compiled-ignorecase",
        [re.compile(r"internal-[a-z]{4}\d", re.IGNORECASE)],
        "use INTERNAL-ABCD9 now",
        "use [REDACTED:custom] now",
    ),
    ("secret-group-absent", [r"tok(?:=(?P<secret>\w+))?"], "tok alone", "tok alone"),
    ("empty-match-ignored", [r"x*"], "abc", "abc"),
    (
        "with-builtins",
        [r"ACME-\d{6}"],
        "ACME-123456 and " + OPENAI_LEGACY,
        "[REDACTED:custom] and [REDACTED:openai]",
    ),
    (
        "never-inside-a-mask",
        [r"[A-Z]{5,}"],
        "[REDACTED:openai] ABCDEF",
        "[REDACTED:openai] [REDACTED:custom]",
    ),
]


@pytest.mark.parametrize(
    ("id_", "patterns", "text", "expected"), USER_CASES, ids=[u[0] for u in USER_CASES]
)
def test_user_pattern(
    id_: str, patterns: list[str | re.Pattern[str]], text: str, expected: str
) -> None:
    redactor = Redactor(patterns)
    assert redactor.redact_text(text) == expected
    assert redactor.redact_text(expected) == expected


def test_user_pattern_kind_is_custom_and_comes_after_builtins() -> None:
    assert Redactor([r"ACME-\d{6}"]).found("ACME-123456 " + AWS_ACCESS) == [
        "aws_access_key",
        "custom",
    ]


def test_user_pattern_does_not_shield_the_rest_of_a_quoted_secret() -> None:
    redactor = Redactor([r"ACME-\d{6}"])
    text = 'password="ACME-123456 ' + "hunter" + '2"'
    assert redactor.redact_text(text) == 'password="[REDACTED:env_key]"'


@pytest.mark.parametrize("bad", ["(unclosed", "a{2,1}", "(?P<x>a)(?P<x>b)"])
def test_bad_user_regex_is_a_definition_error_naming_it(bad: str) -> None:
    with pytest.raises(DefinitionError, match=re.escape(repr(bad))):
        Redactor([bad])


def test_bytes_user_pattern_is_a_definition_error() -> None:
    with pytest.raises(DefinitionError, match="bytes"):
        Redactor([cast(Any, re.compile(b"x"))])


def test_custom_mask() -> None:
    redactor = Redactor(mask="<{kind} hidden>")
    text = "k=" + AWS_ACCESS
    assert redactor.redact_text(text) == "k=<aws_access_key hidden>"
    assert redactor.redact({"password": "x"}) == {"password": "<field hidden>"}


@pytest.mark.parametrize("bad", ["{nope}", "{", "{0}", "", "REDACTED", "{kind}", "[x]-", "=x="])
def test_bad_mask_is_a_definition_error(bad: str) -> None:
    with pytest.raises(DefinitionError, match="mask"):
        Redactor(mask=bad)


# --- values: copies, types, cycles, depth ------------------------------------------------


def test_redact_does_not_mutate_its_input() -> None:
    data = {"a": [{"token": "t0k", "text": "x " + GITHUB_CLASSIC}], "b": ("c", ANTHROPIC)}
    before = copy.deepcopy(data)
    out = redact(data)
    assert data == before
    assert out is not data
    assert out["a"] is not data["a"]
    assert out["a"][0] is not data["a"][0]


def test_container_types_are_kept_and_scalars_pass_through() -> None:
    sentinel = object()
    data = {
        "t": ("x", OPENAI_LEGACY),
        "s": {OPENAI_LEGACY},
        "f": frozenset({"y"}),
        "n": [1, 2.5, None, True, b"sk-bytes", sentinel],
    }
    out = redact(data)
    assert out["t"] == ("x", mask("openai"))
    assert out["s"] == {mask("openai")}
    assert type(out["f"]) is frozenset
    assert out["n"] == [1, 2.5, None, True, b"sk-bytes", sentinel]
    assert out["n"][5] is sentinel


def test_cyclic_list_stops_at_the_cycle() -> None:
    loop: list[Any] = ["x " + AWS_ACCESS]
    loop.append(loop)
    assert redact(loop) == ["x " + mask("aws_access_key"), mask("cycle")]


def test_cyclic_dict_stops_at_the_cycle() -> None:
    loop: dict[str, Any] = {"password": "p"}
    loop["self"] = {"back": loop}
    assert redact(loop) == {"password": mask("field"), "self": {"back": mask("cycle")}}


def test_nesting_deeper_than_max_depth_is_masked() -> None:
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 10):
        deep = [deep]
    out = redact(deep)
    for _ in range(MAX_DEPTH):
        assert isinstance(out, list)
        out = out[0]
    assert out == mask("depth")


def test_nesting_up_to_max_depth_is_kept() -> None:
    deep: Any = "x " + ANTHROPIC
    for _ in range(MAX_DEPTH):
        deep = [deep]
    out = redact(deep)
    for _ in range(MAX_DEPTH):
        out = out[0]
    assert out == "x " + mask("anthropic")


def test_shared_containers_are_copied_once() -> None:
    # 2**40 paths but 40 distinct lists: without sharing this would never finish
    shared: Any = ["x " + SLACK_BOT]
    for _ in range(40):
        shared = [shared, shared]
    out = redact(shared)
    assert out[0] is out[1]
    for _ in range(40):
        out = out[1]
    assert out == ["x " + mask("slack")]


# --- properties -----------------------------------------------------------------------

B64 = string.ascii_letters + string.digits + "+/"
ALNUM = string.ascii_letters + string.digits
TOKEN_CHARS = ALNUM + "._~+/-"
URL_PASSWORD_CHARS = ALNUM + "-_.~!$*+=%"
ENV_VALUE_CHARS = ALNUM + "-_.!@%^*+=/~:"
PROSE_VALUE_CHARS = ALNUM + "-_.!@%^*+=/~:&#"


def chars(alphabet: str, min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=min_size, max_size=max_size)


@st.composite
def fake_secret(draw: st.DrawFn) -> tuple[str, str, str]:
    """(kind, text holding the secret, the secret part that must not survive)."""
    kind = draw(st.sampled_from(KINDS))
    if kind == "anthropic":
        secret = "sk-ant-" + draw(st.sampled_from(["api03-", "admin01-", ""]))
        secret += draw(chars(ALNUM + "_-", 80, 110))
        return kind, secret, secret
    if kind == "openai":
        body = draw(chars(ALNUM + "_-", 20, 160)) + draw(chars(string.digits, 1, 3))
        secret = "sk-" + draw(st.sampled_from(["proj-", "svcacct-", ""])) + body
        return kind, secret, secret
    if kind == "aws_access_key":
        secret = draw(st.sampled_from(["AKIA", "ASIA"]))
        secret += draw(chars(string.ascii_uppercase + string.digits, 16, 16))
        return kind, secret, secret
    if kind == "aws_secret":
        secret = draw(chars(B64, 40, 40))
        sep = draw(st.sampled_from(["=", " = ", ": ", '="']))
        name = draw(st.sampled_from(["aws_secret_access_key", "AWS_SECRET_ACCESS_KEY"]))
        return kind, name + sep + secret, secret
    if kind == "github":
        if draw(st.booleans()):
            secret = "gh" + draw(st.sampled_from("pousr")) + "_" + draw(chars(ALNUM, 36, 60))
        else:
            secret = "github_pat_" + draw(chars(ALNUM + "_", 22, 90))
        return kind, secret, secret
    if kind == "slack":
        if draw(st.booleans()):
            secret = "xox" + draw(st.sampled_from("abprs")) + "-"
            secret += draw(chars(ALNUM, 1, 5)) + draw(chars(ALNUM + "-", 10, 50))
            return kind, secret, secret
        path = draw(chars(ALNUM, 8, 12)) + "/" + draw(chars(ALNUM + "_-", 24, 30))
        return kind, "https://hooks.slack.com/services/" + path, path
    if kind == "bearer":
        token = draw(chars(ALNUM, 4, 4)) + draw(chars(TOKEN_CHARS, 16, 60))
        prefix = draw(st.sampled_from(["Authorization: Bearer ", "Bearer ", "bearer "]))
        return kind, prefix + token, token
    if kind == "url_password":
        password = draw(chars(string.digits, 1, 2)) + draw(chars(URL_PASSWORD_CHARS, 8, 30))
        user = draw(chars(ALNUM, 0, 8))
        scheme = draw(st.sampled_from(["https", "postgres", "redis", "amqp+ssl"]))
        return kind, f"{scheme}://{user}:{password}@host.example:5432/db", password
    if kind == "env_key":
        name = draw(
            st.sampled_from(
                ["API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "client_secret", "apiKey", "passwd"]
            )
        )
        value = draw(chars(ALNUM, 1, 4)) + draw(chars(string.digits, 1, 2))
        value += draw(chars(ENV_VALUE_CHARS, 6, 30))
        form = draw(st.sampled_from(["{n}={v}", "{n}: {v}", "{n} = '{v}'", '"{n}": "{v}"']))
        return kind, form.format(n=name, v=value), value
    if kind == "prose":
        name = draw(
            st.sampled_from(
                ["password", "my password", "The API key", "DB_PASSWORD", "access token", "secret"]
            )
        )
        value = draw(chars(ALNUM, 1, 4)) + draw(chars(string.digits, 1, 2))
        value += draw(chars(PROSE_VALUE_CHARS, 4, 20)) + draw(chars(ALNUM, 1, 2))
        form = draw(st.sampled_from(["{n} is {v}", "{n} was {v}", "{n} is: {v}", "{n} is '{v}'"]))
        return kind, form.format(n=name, v=value), value
    assert kind == "private_key", kind
    label = draw(st.sampled_from(["RSA ", "EC ", "OPENSSH ", "", "ENCRYPTED "]))
    body = "\n".join(draw(st.lists(chars(B64, 16, 64), min_size=1, max_size=4)))
    block = f"-----BEGIN {label}PRIVATE KEY-----\n{body}\n-----END {label}PRIVATE KEY-----"
    return kind, block, body


PROSE = st.text(alphabet=string.printable, max_size=120)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(before=PROSE, after=PROSE, secret=fake_secret())
def test_inserted_secret_never_survives(
    before: str, after: str, secret: tuple[str, str, str]
) -> None:
    kind, inserted, raw = secret
    assume(raw not in before and raw not in after)
    # the secret is a word of its own: a space on each side of it
    text = f"{before} {inserted} {after}"
    out = DEFAULT_REDACTOR.redact_text(text)
    note(f"{kind}: {out!r}")
    assert raw not in out


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(before=PROSE, after=PROSE, secret=fake_secret())
def test_serialized_json_stays_valid_without_the_secret(
    before: str, after: str, secret: tuple[str, str, str]
) -> None:
    kind, inserted, raw = secret
    assume(raw not in before and raw not in after)
    document = json.dumps({"a": [before], "b": {"text": f"{before} {inserted} {after}"}})
    out = json.loads(DEFAULT_REDACTOR.redact_text(document))
    note(f"{kind}: {out!r}")
    assert raw not in out["b"]["text"]


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(before=PROSE, after=PROSE, secret=fake_secret())
def test_redact_text_is_idempotent(before: str, after: str, secret: tuple[str, str, str]) -> None:
    once = DEFAULT_REDACTOR.redact_text(f"{before} {secret[1]} {after}")
    assert DEFAULT_REDACTOR.redact_text(once) == once


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200))
def test_random_text_redaction_is_idempotent(text: str) -> None:
    once = DEFAULT_REDACTOR.redact_text(text)
    assert DEFAULT_REDACTOR.redact_text(once) == once


@pytest.mark.parametrize("key", ["idempotency_key", "primaryKey", "public_key", "sort-key"])
def test_identifier_keys_ending_in_key_stay_readable(key: str) -> None:
    assert redact({key: "order-42"}) == {key: "order-42"}
