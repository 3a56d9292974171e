"""``FakeMessagesAPI`` answers a scripted :class:`APIError` with the Messages API's error
JSON and status, and a scripted turn as before."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from guardrails.testing import APIError, FakeMessagesAPI


def post(api: FakeMessagesAPI) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{api.base_url}/v1/messages",
        data=json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize(("status", "kind"), [(429, "rate_limit_error"), (529, "overloaded_error")])
def test_a_scripted_api_error_is_the_status_and_error_json(status: int, kind: str) -> None:
    with FakeMessagesAPI([APIError(status, kind, "later"), "Hello."]) as api:
        assert post(api) == (status, {"type": "error", "error": {"type": kind, "message": "later"}})
        code, body = post(api)
    assert code == 200 and body["content"] == [{"type": "text", "text": "Hello."}]
    assert len(api.requests) == 2
