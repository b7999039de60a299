"""Webhook signatures on the receiver side.

``verify_signature(secret, body, signature)`` checks ``X-Webhook-Signature`` (hex
HMAC-SHA256 of the exact body): a bool, compared in constant time, and never an
exception whatever the receiver hands it. ``verify_webhook(secret, headers, body)``
checks ``X-Webhook-Signature-V2`` (id, timestamp and body) and refuses a timestamp
outside the tolerance, so a captured request cannot be replayed later."""

from __future__ import annotations

import hashlib
import hmac
import time
from typing import Any

import pytest
from django.test import RequestFactory
from hypothesis import given
from hypothesis import strategies as st

from appframework_webhooks import signing, verify_signature, verify_webhook
from appframework_webhooks.delivery import webhook_headers
from appframework_webhooks.signing import sign, sign_v2

SECRET = "whsec-test-secret"
BODY = b'{"event":"order.paid","data":{"id":7,"name":"\xc3\xa9t\xc3\xa9"}}'
WEBHOOK_ID = "0f8e2c6a9b4d4e1f8a7c3b2d1e0f9a8b"


def _hex(secret: str, body: bytes) -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


# -- verify_signature: the right signature --------------------------------------------------------


def test_sign_is_the_hex_hmac_sha256_of_the_body() -> None:
    assert sign(SECRET, BODY) == _hex(SECRET, BODY)
    assert sign(SECRET, BODY.decode("utf-8")) == _hex(SECRET, BODY)


def test_verify_signature_accepts_the_correct_hex_for_a_bytes_body() -> None:
    assert verify_signature(SECRET, BODY, _hex(SECRET, BODY)) is True


def test_verify_signature_accepts_the_correct_hex_for_a_str_body() -> None:
    """A str body is the UTF-8 text of the bytes that were signed."""
    assert verify_signature(SECRET, BODY.decode("utf-8"), _hex(SECRET, BODY)) is True


def test_verify_signature_accepts_upper_case_hex_and_surrounding_whitespace() -> None:
    signature = _hex(SECRET, BODY)
    assert verify_signature(SECRET, BODY, signature.upper()) is True
    assert verify_signature(SECRET, BODY, f"  {signature}\n") is True


def test_verify_signature_accepts_a_bytes_signature_holding_the_hex() -> None:
    assert verify_signature(SECRET, BODY, _hex(SECRET, BODY).encode("ascii")) is True


def test_verify_signature_accepts_a_bytes_secret() -> None:
    assert verify_signature(SECRET.encode(), BODY, _hex(SECRET, BODY)) is True


# -- verify_signature: everything else is False ---------------------------------------------------


def test_verify_signature_rejects_a_wrong_signature() -> None:
    good = _hex(SECRET, BODY)
    wrong = ("0" if good[0] != "0" else "1") + good[1:]
    assert verify_signature(SECRET, BODY, wrong) is False


def test_verify_signature_rejects_a_signature_made_with_another_secret() -> None:
    assert verify_signature(SECRET, BODY, _hex("another-secret", BODY)) is False


def test_verify_signature_rejects_a_signature_of_a_different_body() -> None:
    signature = _hex(SECRET, BODY)
    assert verify_signature(SECRET, BODY + b" ", signature) is False
    assert verify_signature(SECRET, BODY.replace(b"7", b"8"), signature) is False


@pytest.mark.parametrize(
    "signature",
    [
        None,
        "",
        "é" * 64,
        "abc",
        "z" * 64,
        "sha256=" + "0" * 64,
        b"\xff" * 64,
        12345,
        1.5,
        ["0" * 64],
        object(),
    ],
    ids=[
        "none",
        "empty",
        "non-ascii",
        "too-short",
        "non-hex",
        "prefixed",
        "bytes-non-ascii",
        "int",
        "float",
        "list",
        "object",
    ],
)
def test_verify_signature_returns_false_for_a_missing_or_malformed_signature(
    signature: Any,
) -> None:
    assert verify_signature(SECRET, BODY, signature) is False


def test_verify_signature_returns_false_without_a_secret() -> None:
    assert verify_signature(None, BODY, _hex(SECRET, BODY)) is False


def test_verify_signature_returns_false_without_a_body() -> None:
    assert verify_signature(SECRET, None, _hex(SECRET, BODY)) is False


def test_verify_signature_truncated_correct_signature_is_false() -> None:
    assert verify_signature(SECRET, BODY, _hex(SECRET, BODY)[:-1]) is False


_anything = st.one_of(
    st.none(),
    st.text(),
    st.binary(),
    st.integers(),
    st.floats(allow_nan=True),
    st.lists(st.text(), max_size=3),
)


@given(secret=_anything, body=_anything, signature=_anything)
def test_verify_signature_always_returns_a_bool_and_never_raises(
    secret: Any, body: Any, signature: Any
) -> None:
    # Random input is never the HMAC of the random body under the random secret, so the
    # answer is the bool False, not an exception and not a truthy/falsy stand-in.
    assert verify_signature(secret, body, signature) is False


@given(signature=st.one_of(st.none(), st.text(), st.binary()))
def test_verify_signature_of_arbitrary_text_or_bytes_is_false_unless_it_is_the_hex(
    signature: Any,
) -> None:
    expected = _hex(SECRET, BODY).encode("ascii")
    if isinstance(signature, str):
        raw = signature.encode("ascii") if signature.isascii() else None
    else:
        raw = signature
    matches = raw is not None and raw.strip().lower() == expected
    assert verify_signature(SECRET, BODY, signature) is matches


def test_verify_signature_compares_with_hmac_compare_digest(monkeypatch: Any) -> None:
    """Constant time: the comparison is hmac.compare_digest, never ``==``."""
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signing.hmac, "compare_digest", spy)
    signature = _hex(SECRET, BODY)
    assert verify_signature(SECRET, BODY, signature) is True
    assert verify_signature(SECRET, BODY, "0" * 64) is False
    assert len(calls) == 2
    assert calls[0] == (signature.encode(), signature.encode())


def test_verify_webhook_compares_with_hmac_compare_digest(monkeypatch: Any) -> None:
    calls: list[tuple[Any, Any]] = []
    real = hmac.compare_digest

    def spy(a: Any, b: Any) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(signing.hmac, "compare_digest", spy)
    assert verify_webhook(SECRET, _v2_headers(), BODY) is True
    assert len(calls) == 1


# -- verify_webhook --------------------------------------------------------------------------------


def _v2_headers(
    *, timestamp: int | None = None, webhook_id: str = WEBHOOK_ID, body: bytes = BODY
) -> dict[str, str]:
    stamp = int(time.time()) if timestamp is None else timestamp
    return {
        "X-Webhook-Id": webhook_id,
        "X-Webhook-Timestamp": str(stamp),
        "X-Webhook-Signature-V2": sign_v2(SECRET, webhook_id, stamp, body),
    }


def test_sign_v2_signs_id_timestamp_and_body() -> None:
    expected = hmac.new(
        SECRET.encode(), f"{WEBHOOK_ID}.1700000000.".encode() + BODY, hashlib.sha256
    ).hexdigest()
    assert sign_v2(SECRET, WEBHOOK_ID, 1700000000, BODY) == "v2=" + expected


def test_verify_webhook_accepts_valid_headers_within_the_tolerance() -> None:
    assert verify_webhook(SECRET, _v2_headers(), BODY) is True
    assert verify_webhook(SECRET, _v2_headers(), BODY.decode("utf-8")) is True


def test_verify_webhook_accepts_the_headers_a_delivery_sends() -> None:
    headers = webhook_headers("order.paid", BODY, SECRET, WEBHOOK_ID, int(time.time()))
    assert verify_webhook(SECRET, headers, BODY) is True
    assert verify_signature(SECRET, BODY, headers["X-Webhook-Signature"]) is True


def test_verify_webhook_accepts_a_timestamp_at_the_edge_of_the_tolerance() -> None:
    now = 1_700_000_000
    assert verify_webhook(SECRET, _v2_headers(timestamp=now - 300), BODY, now=now) is True
    assert verify_webhook(SECRET, _v2_headers(timestamp=now + 300), BODY, now=now) is True


def test_verify_webhook_rejects_a_timestamp_older_than_the_tolerance() -> None:
    now = 1_700_000_000
    headers = _v2_headers(timestamp=now - 301)
    assert verify_webhook(SECRET, headers, BODY, now=now) is False
    assert verify_webhook(SECRET, headers, BODY, now=now, tolerance=600) is True
    stale = _v2_headers(timestamp=int(time.time()) - 3600)
    assert verify_webhook(SECRET, stale, BODY) is False


def test_verify_webhook_rejects_a_timestamp_in_the_future_beyond_the_tolerance() -> None:
    now = 1_700_000_000
    assert verify_webhook(SECRET, _v2_headers(timestamp=now + 301), BODY, now=now) is False
    future = _v2_headers(timestamp=int(time.time()) + 3600)
    assert verify_webhook(SECRET, future, BODY) is False


def test_verify_webhook_rejects_a_tampered_id() -> None:
    headers = _v2_headers()
    headers["X-Webhook-Id"] = "f" * 32
    assert verify_webhook(SECRET, headers, BODY) is False


def test_verify_webhook_rejects_a_tampered_timestamp() -> None:
    headers = _v2_headers()
    headers["X-Webhook-Timestamp"] = str(int(headers["X-Webhook-Timestamp"]) - 1)
    assert verify_webhook(SECRET, headers, BODY) is False


def test_verify_webhook_rejects_a_tampered_body() -> None:
    assert verify_webhook(SECRET, _v2_headers(), BODY + b" ") is False


def test_verify_webhook_rejects_another_secret() -> None:
    assert verify_webhook("another-secret", _v2_headers(), BODY) is False
    assert verify_webhook(None, _v2_headers(), BODY) is False


@pytest.mark.parametrize(
    "missing", ["X-Webhook-Id", "X-Webhook-Timestamp", "X-Webhook-Signature-V2"]
)
def test_verify_webhook_rejects_missing_headers(missing: str) -> None:
    headers = _v2_headers()
    del headers[missing]
    assert verify_webhook(SECRET, headers, BODY) is False
    assert verify_webhook(SECRET, {}, BODY) is False


@pytest.mark.parametrize(
    "headers",
    [
        None,
        "X-Webhook-Id",
        {"X-Webhook-Id": WEBHOOK_ID, "X-Webhook-Timestamp": "soon", "X-Webhook-Signature-V2": "x"},
        {"X-Webhook-Id": WEBHOOK_ID, "X-Webhook-Timestamp": "1e9", "X-Webhook-Signature-V2": "x"},
        {"X-Webhook-Id": WEBHOOK_ID, "X-Webhook-Timestamp": "1", "X-Webhook-Signature-V2": "é"},
    ],
    ids=["none", "not-a-mapping", "word-timestamp", "float-timestamp", "non-ascii-signature"],
)
def test_verify_webhook_returns_false_for_malformed_input_without_raising(headers: Any) -> None:
    assert verify_webhook(SECRET, headers, BODY) is False


def test_verify_webhook_reads_django_request_headers_case_insensitively() -> None:
    headers = _v2_headers()
    request = RequestFactory().post(
        "/hooks",
        data=BODY,
        content_type="application/json",
        HTTP_X_WEBHOOK_ID=headers["X-Webhook-Id"],
        HTTP_X_WEBHOOK_TIMESTAMP=headers["X-Webhook-Timestamp"],
        HTTP_X_WEBHOOK_SIGNATURE_V2=headers["X-Webhook-Signature-V2"],
    )
    assert verify_webhook(SECRET, request.headers, request.body) is True
    assert verify_webhook(SECRET, request.headers, request.body + b"x") is False


def test_verify_webhook_with_django_request_headers_rejects_a_replay_outside_the_tolerance() -> (
    None
):
    stamp = int(time.time()) - 1000
    headers = _v2_headers(timestamp=stamp)
    request = RequestFactory().post(
        "/hooks",
        data=BODY,
        content_type="application/json",
        HTTP_X_WEBHOOK_ID=headers["X-Webhook-Id"],
        HTTP_X_WEBHOOK_TIMESTAMP=headers["X-Webhook-Timestamp"],
        HTTP_X_WEBHOOK_SIGNATURE_V2=headers["X-Webhook-Signature-V2"],
    )
    assert verify_webhook(SECRET, request.headers, request.body) is False
    assert verify_webhook(SECRET, request.headers, request.body, now=stamp + 10) is True


@given(
    secret=_anything,
    headers=st.one_of(
        st.none(),
        st.dictionaries(
            st.sampled_from(["X-Webhook-Id", "X-Webhook-Timestamp", "X-Webhook-Signature-V2"]),
            st.one_of(st.text(), st.binary(), st.integers(), st.none()),
        ),
    ),
    body=_anything,
)
def test_verify_webhook_always_returns_a_bool_and_never_raises(
    secret: Any, headers: Any, body: Any
) -> None:
    # Random headers never carry a V2 signature of their own id, timestamp and body.
    assert verify_webhook(secret, headers, body) is False


def test_a_signature_under_an_empty_secret_never_verifies() -> None:
    # Anyone can compute an HMAC with an empty key: a receiver configured without its
    # secret must refuse everything rather than accept a forgery.
    from appframework_webhooks.signing import sign, sign_v2, verify_webhook

    body = b'{"event": "x", "data": {}}'
    assert not verify_signature("", body, sign("", body))
    assert not verify_signature(b"", body, sign(b"", body))
    headers = {
        "X-Webhook-Id": "abc",
        "X-Webhook-Timestamp": "1000",
        "X-Webhook-Signature-V2": sign_v2("", "abc", 1000, body),
    }
    assert not verify_webhook("", headers, body, now=1000)
