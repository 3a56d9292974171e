"""Canonical JSON (``guardrails._canonical_json``): equal inputs, byte-identical text.

Idempotency keys and the ledger's ``arguments_hash`` rest on it; the form is
documented in the module docstring and pinned here case by case.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import hashlib
import json
import math
from collections import OrderedDict
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from guardrails._canonical_json import canonical_bytes, canonical_hash, canonical_json, input_hash


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ({"b": 1, "a": 2}, '{"a":2,"b":1}'),
        ({"a": {"d": 1, "c": [1, 2]}}, '{"a":{"c":[1,2],"d":1}}'),
        ({"B": 1, "a": 2, "_": 3}, '{"B":1,"_":3,"a":2}'),  # code point order
        ({"é": 1, "z": 2}, '{"z":2,"é":1}'),
        ([], "[]"),
        ({}, "{}"),
        (None, "null"),
        (True, "true"),
        (False, "false"),
        ("café ☕ 日本", '"café ☕ 日本"'),
        ('q"b\\', '"q\\"b\\\\"'),
        ("a\nb\tc\x01", '"a\\nb\\tc\\u0001"'),
        ((1, "a"), '[1,"a"]'),
    ],
    ids=[
        "sorted-keys",
        "nested-sorted-no-spaces",
        "code-point-order",
        "non-ascii-key-order",
        "empty-array",
        "empty-object",
        "null",
        "true",
        "false",
        "non-ascii-kept",
        "quote-backslash",
        "control-chars",
        "tuple-is-array",
    ],
)
def test_canonical_text(value: Any, text: str) -> None:
    assert canonical_json(value) == text


def test_non_ascii_is_utf8_bytes() -> None:
    assert canonical_bytes({"to": "José"}) == '{"to":"José"}'.encode()
    assert b"\\u" not in canonical_bytes("日本")


@pytest.mark.parametrize(
    ("number", "text"),
    [
        (1, "1"),
        (1.0, "1"),
        (-0.0, "0"),
        (0.0, "0"),
        (1.5, "1.5"),
        (0.1, "0.1"),
        (1e-7, "1e-07"),
        (1.5e-10, "1.5e-10"),
        (123456.789, "123456.789"),
        (1e20, "100000000000000000000"),
        (2**70, "1180591620717411303424"),
        (float(2**70), "1180591620717411303424"),
        (-(2**70), "-1180591620717411303424"),
        (2**53 + 1, "9007199254740993"),
    ],
)
def test_canonical_numbers(number: Any, text: str) -> None:
    assert canonical_json(number) == text


def test_equal_numbers_give_equal_text() -> None:
    assert canonical_json({"n": 1}) == canonical_json({"n": 1.0})
    assert canonical_json(0.1 + 0.2) == canonical_json(0.30000000000000004)


def test_booleans_are_not_numbers() -> None:
    assert canonical_json([True, 1]) == "[true,1]"


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_rejected_with_their_place(bad: float) -> None:
    with pytest.raises(ValueError, match=r"is not a JSON number at \$\.x\[1\]"):
        canonical_json({"x": [0, bad]})


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ({"tags": {"a"}}, r"set is not a JSON value \(use a sorted list\) at \$\.tags"),
        ({"tags": frozenset()}, r"frozenset is not a JSON value"),
        ([b"raw"], r"bytes is not a JSON value .* at \$\[0\]"),
        ({"b": bytearray(b"x")}, r"bytearray is not a JSON value"),
        ({"o": object()}, r"object is not a JSON value at \$\.o"),
        ({"d": decimal.Decimal("1.5")}, r"Decimal is not a JSON value"),
        ({"t": datetime.date(2024, 1, 1)}, r"date is not a JSON value"),
        ({"a b": {"c": [{1}]}}, r'at \$\["a b"\]\.c\[0\]'),
        ({1: "a"}, r"object keys must be strings, got int at \$$"),
        ({"x": {None: 1}}, r"object keys must be strings, got NoneType at \$\.x$"),
    ],
    ids=[
        "set",
        "frozenset",
        "bytes",
        "bytearray",
        "object",
        "decimal",
        "date",
        "quoted-path",
        "int-key",
        "nested-none-key",
    ],
)
def test_non_json_values_are_rejected_naming_type_and_place(value: Any, words: str) -> None:
    with pytest.raises(TypeError, match=words):
        canonical_json(value)


def test_nesting_too_deep_is_a_value_error() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(ValueError, match="nested too deeply"):
        canonical_json(deep)


def test_circular_value_is_a_value_error() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValueError, match="circular"):
        canonical_json(loop)


def test_integer_beyond_pythons_digit_limit_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="canonical JSON"):
        canonical_json(10**5000)


def test_lone_surrogate_is_written_as_its_escape() -> None:
    text = canonical_json({"s": "a\ud800é"})
    assert text == '{"s":"a\\ud800é"}'
    assert json.loads(text) == {"s": "a\ud800é"}
    text.encode("utf-8")  # encodable


class Color(enum.IntEnum):
    RED = 1


class Mood(enum.StrEnum):
    HAPPY = "happy"


class Loud(str):
    def __str__(self) -> str:
        return "LOUD"


@pytest.mark.parametrize(
    ("value", "plain"),
    [
        ({"c": Color.RED}, {"c": 1}),
        ({"m": Mood.HAPPY}, {"m": "happy"}),
        ({"s": Loud("quiet")}, {"s": "quiet"}),
        (OrderedDict([("b", 1), ("a", 2)]), {"a": 2, "b": 1}),
        ({Mood.HAPPY: 1}, {"happy": 1}),
    ],
    ids=["int-enum", "str-enum", "str-subclass-data-not-str", "ordered-dict", "str-enum-key"],
)
def test_subclasses_count_as_their_base_type(value: Any, plain: Any) -> None:
    assert canonical_json(value) == canonical_json(plain)


def test_canonical_hash_is_sha256_of_the_bytes() -> None:
    assert canonical_hash({"a": 1}) == hashlib.sha256(b'{"a":1}').hexdigest()


def test_canonical_hash_raises_on_non_json() -> None:
    with pytest.raises(TypeError):
        canonical_hash({"a": {1, 2}})


def test_input_hash_never_raises_and_stays_deterministic() -> None:
    assert input_hash({"a": {1, 2}}) == input_hash({"a": {1, 2}})
    assert input_hash({"a": math.nan}) != input_hash({"a": 1})
    assert input_hash({"a": 1.0}) == input_hash({"a": 1}) == canonical_hash({"a": 1})


def test_input_hash_of_an_unrepresentable_value_is_by_type() -> None:
    deep: list[Any] = []
    for _ in range(100_000):
        deep = [deep]
    assert len(input_hash(deep)) == 64


def test_unchanged_input_is_not_copied() -> None:
    from guardrails._canonical_json import _norm

    value = {"a": [1, "x", {"b": None}], "c": 1.5}
    assert _norm(value) is value


# --- properties ---------------------------------------------------------------------------------

JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow
@given(JSON)
def test_text_is_valid_json_that_canonicalizes_to_itself(value: Any) -> None:
    text = canonical_json(value)
    assert canonical_json(json.loads(text)) == text


@pytest.mark.slow
@given(JSON)
def test_text_parses_back_to_an_equal_value(value: Any) -> None:
    assert json.loads(canonical_json(value)) == value


@pytest.mark.slow
@given(st.dictionaries(st.text(), st.integers(), max_size=8))
def test_key_insertion_order_does_not_matter(value: dict[str, int]) -> None:
    reversed_ = dict(reversed(list(value.items())))
    assert canonical_json(reversed_) == canonical_json(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_equal_floats_give_equal_text(x: float) -> None:
    assert canonical_json(x) == canonical_json(float(repr(x)))
    if x.is_integer():
        assert canonical_json(x) == canonical_json(int(x))
