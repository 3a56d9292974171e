"""JSON Schema formats, and the one place a schema becomes a validator.

``compile_validator`` builds the validator of the draft named by ``$schema``
(Draft 2020-12 when absent) with formats checked. The format checks jsonschema
leaves to optional packages (``uri``, ``date-time``, ``hostname``...) are filled
in here from the standard library, so ``format: uri`` is enforced without extra
dependencies. ``FORMAT_SAMPLES`` holds one valid value per format, for examples
and denial messages.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable
from typing import Any

__all__ = ["FORMAT_SAMPLES", "compile_validator", "format_checker"]

#: a valid sample value per JSON Schema format
FORMAT_SAMPLES: dict[str, str] = {
    "email": "user@example.com",
    "idn-email": "user@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
    "iri": "https://example.com/",
    "uri-reference": "https://example.com/",
    "iri-reference": "https://example.com/",
    "uri-template": "https://example.com/{id}",
    "date": "2024-01-01",
    "date-time": "2024-01-01T00:00:00Z",
    "time": "12:00:00Z",
    "duration": "P1D",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "hostname": "example.com",
    "idn-hostname": "example.com",
    "json-pointer": "/example",
    "relative-json-pointer": "0",
    "regex": "^example$",
}

_URI_CHARS = re.compile(r"[^\s<>\"{}|\\^`\x00-\x1f\x7f]*\Z")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")
_DATE_TIME = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z"
)
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))\Z")
_DURATION = re.compile(
    r"P(?!\Z)(\d+Y)?(\d+M)?(\d+W)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?\Z"
)
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")
_JSON_POINTER = re.compile(r"(/([^~/]|~[01])*)*\Z")
_UUID = re.compile(r"[0-9a-fA-F]{8}-([0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\Z")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})\Z")
_REL_POINTER = re.compile(r"(0|[1-9]\d*)(#|(/([^~/]|~[01])*)*)\Z")


def _uri(value: object, *, iri: bool = False, reference: bool = False) -> bool:
    if not isinstance(value, str):
        return True
    if not iri and not value.isascii():
        return False
    if not _URI_CHARS.match(value) or _BAD_ESCAPE.search(value):
        return False
    return reference or _SCHEME.match(value) is not None


def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _DATE_TIME.match(value)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        datetime.date(year, month, day)
    except ValueError:
        return False
    # RFC 3339 allows a leap second (60)
    return hour < 24 and minute < 60 and second <= 60 and _offset_ok(m.group(8))


def _matches_date(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _DATE.match(value)
    if m is None:
        return False
    try:
        datetime.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return False
    return True


def _offset_ok(offset: str) -> bool:
    if offset in ("Z", "z"):
        return True
    return int(offset[1:3]) < 24 and int(offset[4:6]) < 60


def _time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    m = _TIME.match(value)
    if m is None:
        return False
    hour, minute, second = int(m.group(1)), int(m.group(2)), int(m.group(3))
    return hour < 24 and minute < 60 and second <= 60 and _offset_ok(m.group(5))


def _hostname(value: object) -> bool:
    if not isinstance(value, str):
        return True
    name = value[:-1] if value.endswith(".") else value
    return 0 < len(name) <= 253 and all(_LABEL.match(label) for label in name.split("."))


def _matches(pattern: re.Pattern[str]) -> Callable[[object], bool]:
    def check(value: object) -> bool:
        return not isinstance(value, str) or pattern.match(value) is not None

    return check


def _uri_template(value: object) -> bool:
    if not isinstance(value, str):
        return True
    depth = 0
    for ch in value:
        depth += (ch == "{") - (ch == "}")
        if depth not in (0, 1):
            return False
    return depth == 0 and not any(c.isspace() for c in value)


#: stdlib checks for the formats jsonschema only checks with optional packages installed
_EXTRA_FORMATS: dict[str, Callable[[object], bool]] = {
    "uri": _uri,
    "uri-reference": lambda v: _uri(v, reference=True),
    "iri": lambda v: _uri(v, iri=True),
    "iri-reference": lambda v: _uri(v, iri=True, reference=True),
    "uri-template": _uri_template,
    "date": _matches_date,
    "date-time": _date_time,
    "time": _time,
    "duration": _matches(_DURATION),
    "hostname": _hostname,
    "uuid": _matches(_UUID),
    "json-pointer": _matches(_JSON_POINTER),
    "relative-json-pointer": _matches(_REL_POINTER),
}

_CHECKERS: dict[Any, Any] = {}


def _jsonschema() -> Any:
    """``jsonschema``, imported on first use (by name: it ships no type stubs)."""
    import importlib

    module = importlib.import_module("jsonschema")
    importlib.import_module("jsonschema.validators")
    return module


def format_checker(validator_class: Any = None) -> Any:
    """The ``FormatChecker`` for a draft (default 2020-12): jsonschema's checks for that
    draft, plus the stdlib checks above for the formats it has no checker for."""
    checker = _CHECKERS.get(validator_class)
    if checker is None:
        jsonschema = _jsonschema()
        cls = validator_class or jsonschema.Draft202012Validator
        checker = jsonschema.FormatChecker(formats=())
        checker.checkers = dict(cls.FORMAT_CHECKER.checkers)
        for name, check in _EXTRA_FORMATS.items():
            if name not in checker.checkers:
                checker.checks(name)(check)
        _CHECKERS[validator_class] = checker
    return checker


def compile_validator(schema: Any) -> Any:
    """A validator for ``schema``: the draft its ``$schema`` names (default 2020-12), formats
    checked. Raises ``jsonschema.SchemaError`` for a schema that is not valid JSON Schema."""
    import warnings

    jsonschema = _jsonschema()
    with warnings.catch_warnings():  # an unknown $schema URI falls back to the default
        warnings.simplefilter("ignore", DeprecationWarning)
        cls: Any = jsonschema.validators.validator_for(
            schema, default=jsonschema.Draft202012Validator
        )
    cls.check_schema(schema)
    return cls(schema, format_checker=format_checker(cls))
