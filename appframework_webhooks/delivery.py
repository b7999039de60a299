"""One delivery attempt: sign, POST the exact bytes to the pinned address, read a
capped piece of the answer, and say whether to retry."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from appframework.conf import app_settings

from .exceptions import UnsafeWebhookUrlError
from .signing import SigningKeys, signature_headers, signing_keys
from .transport import SendError, post

__all__ = ["AttemptResult", "deliver_once", "error_code", "failed_attempt", "webhook_headers"]

logger = logging.getLogger("appframework.webhooks")

ERROR_LIMIT = 2000


@dataclass(frozen=True)
class AttemptResult:
    success: bool
    status_code: int | None
    error: str | None
    duration_ms: int
    response_body: str
    retryable: bool


def webhook_headers(
    event: str,
    body: bytes,
    secret: str | SigningKeys | None,
    delivery_id: str,
    timestamp: int,
) -> dict[str, str]:
    """The request's headers: the Standard Webhooks set (``webhook-id``,
    ``webhook-timestamp``, ``webhook-signature``) beside the suite's own (``X-Webhook-*``),
    both signed once per attempt (signing.signature_headers)."""
    stamp = str(timestamp)
    headers = {
        "Content-Type": "application/json",
        "X-Webhook-Event": event,
        "X-Webhook-Id": delivery_id,
        "X-Webhook-Timestamp": stamp,
        "webhook-id": delivery_id,
        "webhook-timestamp": stamp,
        "User-Agent": "appframework-webhooks",
    }
    keys = signing_keys(secret)
    if keys is not None:
        headers.update(signature_headers(keys, delivery_id, timestamp, body))
    return headers


def _clip(text: str) -> str:
    return text if len(text) <= ERROR_LIMIT else text[: ERROR_LIMIT - 1] + "…"


def _printable(text: str) -> str:
    # NUL cannot be stored in a PostgreSQL text column; the log must never fail.
    return text.replace("\x00", "\ufffd")


#: The exception class names an ``error`` starts with (``"<name>: <message>"``, as this
#: module and the job write them), by the code shown in their place.
_CODES_BY_EXCEPTION = {
    "UnsafeWebhookUrlError": "unsafe_url",
    "ConnectTimeout": "timeout",
    "ReadTimeout": "timeout",
    "Timeout": "timeout",
    "SoftTimeLimitExceeded": "timeout",
    "TimeLimitExceeded": "timeout",
    "SSLError": "tls_error",
    "ConnectionError": "connection_error",
    "ProxyError": "connection_error",
    "ChunkedEncodingError": "bad_answer",
    "ContentDecodingError": "bad_answer",
    "InvalidHeader": "bad_answer",
}


def error_code(error: str | None, status_code: int | None = None) -> str:
    """A short, stable code for a logged attempt's outcome: ``""`` when it has no error,
    ``http_<status>`` when the receiver answered, else what stopped it
    (``unsafe_url``, ``timeout``, ``tls_error``, ``connection_error``, ``bad_answer``,
    or ``error``). For pages that must not show the message itself: it can name
    addresses of the internal network (the guard's refusal, the pinned address a
    connection failed to reach)."""
    if not error:
        return ""
    if status_code is not None:
        return f"http_{status_code}"
    name = error.split(":", 1)[0].strip()
    return _CODES_BY_EXCEPTION.get(name, "error")


def failed_attempt(error: str, duration_ms: int = 0) -> AttemptResult:
    """A failed, retryable attempt whose error is stored the way every error is
    (clipped, no NUL byte)."""
    return AttemptResult(False, None, _printable(_clip(error)), duration_ms, "", True)


def deliver_once(
    url: str,
    event: str,
    body: bytes,
    secret: str | SigningKeys | None,
    delivery_id: str,
    *,
    tenant_id: Any = None,
) -> AttemptResult:
    """One attempt: sign, POST the exact bytes to the checked address, read a capped
    piece of the answer within ``DEADLINE``. Never raises for what a receiver does.
    ``tenant_id``: the endpoint's (None: the operator's), which decides whether
    ALLOWED_NETWORKS let it through."""
    conf = app_settings.WEBHOOKS
    started = time.monotonic()

    def result(
        success: bool, status: int | None, error: str | None, text: str = "", retry: bool = True
    ) -> AttemptResult:
        elapsed = int((time.monotonic() - started) * 1000)
        return AttemptResult(
            success,
            status,
            _printable(_clip(error)) if error else None,
            elapsed,
            _printable(text),
            retry,
        )

    if not secret:
        logger.warning("Webhook %s to %s is sent unsigned: the endpoint has no secret.", event, url)
    headers = webhook_headers(event, body, secret, delivery_id, int(time.time()))
    try:
        answer = post(
            url,
            body,
            headers,
            connect_timeout=float(conf.CONNECT_TIMEOUT),
            read_timeout=float(conf.READ_TIMEOUT),
            limit=int(conf.RESPONSE_BODY_LIMIT),
            deadline=started + float(conf.DEADLINE),
            tenant_id=tenant_id,
        )
    except UnsafeWebhookUrlError as exc:
        return result(False, None, f"UnsafeWebhookUrlError: {exc}", retry=False)
    except SendError as exc:
        return result(False, None, str(exc), retry=exc.retryable)
    status = answer.status
    if 200 <= status < 300:
        return result(True, status, None, answer.text)
    error = f"HTTP {status}"
    if 300 <= status < 400:
        error += f": redirects are not followed (Location: {answer.location})"
    return result(False, status, error, answer.text)
