"""Standard Webhooks signing, proved by the official verifiers.

Every delivery carries ``webhook-id`` (= ``X-Webhook-Id``), ``webhook-timestamp`` and
``webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`` beside the suite's
own headers. Real deliveries, received by a local receiver, are handed to the
``standardwebhooks`` Python package and to the npm ``standardwebhooks`` and ``svix``
packages under Node.js: each accepts them before, during and after a secret rotation,
and refuses a tampered body, another secret and a stale timestamp. Secrets are shown in
the ``whsec_<base64>`` form; a secret set before that form existed is the same key.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import standardwebhooks
from django.utils import timezone

from appframework_webhooks import (
    WebhookEndpoint,
    new_secret,
    verify_signature,
    verify_webhook,
    whsec,
)
from appframework_webhooks import delivery as delivery_module
from appframework_webhooks.delivery import webhook_headers
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.rotation import rotate_secret
from appframework_webhooks.signing import secret_key, sign, sign_v2, signing_keys
from tests.conftest import skip_or_fail_on_ci

from .receiver import Hit, Receiver

VERIFIERS = Path(__file__).with_name("verifiers")
EVENT = "order.paid"
LEGACY_SECRET = "a-secret-set-before-whsec"


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture(scope="session")
def node() -> str:
    """``node`` with the verifiers' npm packages installed (from package-lock.json)."""
    node_path, npm = shutil.which("node"), shutil.which("npm")
    if node_path is None or npm is None:
        skip_or_fail_on_ci("Node.js and npm are not installed")
    packages = json.loads((VERIFIERS / "package.json").read_text())["dependencies"]
    if any(not (VERIFIERS / "node_modules" / name).exists() for name in packages):
        subprocess.run(
            [str(npm), "ci", "--no-audit", "--no-fund", "--silent"],
            cwd=VERIFIERS,
            check=True,
            timeout=300,
        )
    return str(node_path)


def _deliver(receiver: Receiver, capture: Any, endpoint: WebhookEndpoint, n: int) -> Hit:
    before = len(receiver.hits)
    with capture(execute=True):
        [delivery_id] = WebhookManager().fire_sync(EVENT, {"id": n, "note": "été"})
    hit = receiver.wait_for(before + 1)[before]
    assert hit.headers["webhook-id"] == delivery_id
    return hit


def _stale(receiver: Receiver, capture: Any, endpoint: WebhookEndpoint, monkeypatch: Any) -> Hit:
    """A real delivery whose attempt was signed ten minutes ago (past every library's
    five minutes' tolerance)."""
    past = time.time() - 600
    monkeypatch.setattr(delivery_module.time, "time", lambda: past)
    try:
        return _deliver(receiver, capture, endpoint, 99)
    finally:
        monkeypatch.undo()


def _tampered(hit: Hit) -> Hit:
    body = hit.body.replace(b'"id":', b'"id":1')
    assert body != hit.body
    return Hit(hit.method, hit.path, hit.headers, body)


def _python_verdict(secret: str, hit: Hit) -> str:
    try:
        standardwebhooks.Webhook(secret).verify(hit.body, hit.headers)
    except standardwebhooks.webhooks.WebhookVerificationError as exc:
        return f"refused: {exc}"
    return "ok"


def _node_verdicts(node: str, cases: list[tuple[str, Hit]]) -> list[dict[str, str]]:
    payload = {
        "cases": [
            {"secret": secret, "headers": hit.headers, "body": hit.body.decode("utf-8")}
            for secret, hit in cases
        ]
    }
    done = subprocess.run(
        [node, str(VERIFIERS / "verify.mjs")],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def _verdicts(node: str, cases: list[tuple[str, Hit]]) -> list[dict[str, str]]:
    """Each case's verdict from the three official verifiers."""
    results = _node_verdicts(node, cases)
    for result, (secret, hit) in zip(results, cases, strict=True):
        result["python standardwebhooks"] = _python_verdict(secret, hit)
    return results


def _accepted(result: dict[str, str]) -> bool:
    assert len(result) == 3
    return all(verdict == "ok" for verdict in result.values())


def _refused(result: dict[str, str]) -> bool:
    assert len(result) == 3
    return all(verdict != "ok" for verdict in result.values())


# -- the official verifiers ------------------------------------------------------------------
@pytest.mark.django_db
def test_the_official_verifiers_accept_deliveries_before_during_and_after_a_rotation(
    node: str,
    receiver: Receiver,
    loopback_allowed: None,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: Any,
) -> None:
    old = new_secret()
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret=old)
    before = _deliver(receiver, django_capture_on_commit_callbacks, endpoint, 1)

    new = rotate_secret(endpoint, overlap=3600)
    during = _deliver(receiver, django_capture_on_commit_callbacks, endpoint, 2)
    assert len(during.headers["webhook-signature"].split(" ")) == 2

    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        previous_secret_expires_at=timezone.now() - timezone.timedelta(seconds=1)
    )
    after = _deliver(receiver, django_capture_on_commit_callbacks, endpoint, 3)
    assert len(after.headers["webhook-signature"].split(" ")) == 1

    other = new_secret()
    cases = [
        (old, before),  # 0: before, the old secret
        (old, during),  # 1: during, the old secret
        (new, during),  # 2: during, the new one
        (new, after),  # 3: after, the new one
        (old, after),  # 4: after, the old one: expired
        (new, before),  # 5: the new one never signed what came before
        (other, during),  # 6: another secret
        (new, _tampered(during)),  # 7: a tampered body
        (old, _tampered(before)),  # 8: a tampered body
    ]
    stale = _stale(receiver, django_capture_on_commit_callbacks, endpoint, monkeypatch)
    cases.append((new, stale))  # 9: a stale timestamp, correctly signed
    results = _verdicts(node, cases)
    assert [_accepted(r) for r in results[:4]] == [True] * 4, results[:4]
    assert [_refused(r) for r in results[4:]] == [True] * 6, results[4:]
    assert "too old" in results[9]["standardwebhooks"]
    assert "too old" in results[9]["python standardwebhooks"]


@pytest.mark.django_db
def test_the_official_verifiers_accept_an_existing_plain_secret_in_its_whsec_form(
    node: str, receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret=LEGACY_SECRET)
    hit = _deliver(receiver, django_capture_on_commit_callbacks, endpoint, 1)
    shown = whsec(LEGACY_SECRET)
    assert shown.startswith("whsec_")
    [result] = _verdicts(node, [(shown, hit)])
    assert _accepted(result), result
    # The suite's own headers still verify under the plain secret, as before.
    assert verify_signature(LEGACY_SECRET, hit.body, hit.headers["X-Webhook-Signature"])
    assert hit.headers["X-Webhook-Signature"] == sign(LEGACY_SECRET, hit.body)


# -- the headers ---------------------------------------------------------------------------------
def test_the_standard_headers_sign_the_same_message_as_the_v2_header() -> None:
    secret, body, stamp = new_secret(), b'{"event":"e","data":{}}', 1_700_000_000
    headers = webhook_headers("e", body, secret, "msg-1", stamp)
    assert headers["webhook-id"] == headers["X-Webhook-Id"] == "msg-1"
    assert headers["webhook-timestamp"] == headers["X-Webhook-Timestamp"] == str(stamp)
    digest = hmac.new(secret_key(secret), b"msg-1.1700000000." + body, hashlib.sha256).digest()
    assert headers["webhook-signature"] == "v1," + base64.b64encode(digest).decode()
    assert headers["X-Webhook-Signature-V2"] == "v2=" + digest.hex()
    assert headers["X-Webhook-Signature-V2"] == sign_v2(secret, "msg-1", stamp, body)


def test_an_unsigned_endpoint_still_gets_the_id_and_timestamp_but_no_signature() -> None:
    headers = webhook_headers("e", b"{}", None, "msg-1", 5)
    assert (headers["webhook-id"], headers["webhook-timestamp"]) == ("msg-1", "5")
    assert not {"webhook-signature", "X-Webhook-Signature"} & set(headers)


def test_during_an_overlap_the_suite_headers_carry_the_previous_secret() -> None:
    """Receivers that verify the suite's own headers keep working until the old secret
    expires; webhook-signature carries both, the newest first."""
    old, new, body = "old-secret", new_secret(), b"{}"
    headers = webhook_headers("e", body, signing_keys(new, old), "msg-1", int(time.time()))
    assert headers["X-Webhook-Signature"] == sign(old, body)
    first, second = headers["webhook-signature"].split(" ")
    assert verify_webhook(new, {**headers, "webhook-signature": first}, body)
    assert verify_webhook(old, {**headers, "webhook-signature": second}, body)


def test_a_new_secret_is_whsec_and_24_random_bytes() -> None:
    one, two = new_secret(), new_secret()
    assert one != two
    assert one.startswith("whsec_") and len(base64.b64decode(one[6:])) == 24
    assert whsec(one) == one
    assert secret_key(one) == base64.b64decode(one[6:])


def test_a_plain_secret_is_its_utf8_bytes_and_shows_as_their_base64() -> None:
    assert secret_key("s3cret") == b"s3cret"
    assert whsec("s3cret") == "whsec_" + base64.b64encode(b"s3cret").decode()
    # "whsec_" followed by what is no base64 is a plain secret like any other.
    assert secret_key("whsec_not base64!") == b"whsec_not base64!"


# -- verify_webhook ----------------------------------------------------------------------------
def _standard(secret: str, body: bytes, stamp: int | None = None) -> dict[str, str]:
    return webhook_headers("e", body, secret, "msg-9", stamp or int(time.time()))


def test_verify_webhook_accepts_the_standard_headers_under_either_form_of_the_secret() -> None:
    body = b'{"event":"e","data":{"id":1}}'
    headers = _standard("s3cret", body)
    only_standard = {k: v for k, v in headers.items() if not k.startswith("X-Webhook")}
    assert verify_webhook("s3cret", only_standard, body)
    assert verify_webhook(whsec("s3cret"), only_standard, body)
    assert verify_webhook(whsec("s3cret"), headers, body)


def test_verify_webhook_accepts_the_suite_headers_alone_as_before() -> None:
    body = b"{}"
    headers = {k: v for k, v in _standard("s3cret", body).items() if k.startswith("X-")}
    assert verify_webhook("s3cret", headers, body)
    assert verify_webhook(whsec("s3cret"), headers, body)


def test_verify_webhook_takes_several_secrets_during_a_rotation() -> None:
    body = b"{}"
    headers = _standard("old-secret", body)
    assert verify_webhook([new_secret(), "old-secret"], headers, body)
    assert not verify_webhook([new_secret()], headers, body)


@pytest.mark.parametrize(
    "change",
    ["body", "secret", "stale", "future", "no id", "no timestamp", "garbage signature", "v2 tag"],
)
def test_verify_webhook_refuses_what_the_standard_refuses(change: str) -> None:
    secret, body = new_secret(), b'{"a":1}'
    stamp = (
        int(time.time()) - (600 if change == "stale" else 0) + (600 if change == "future" else 0)
    )
    headers = {k: v for k, v in _standard(secret, body, stamp).items() if not k.startswith("X-")}
    if change == "body":
        body = b'{"a":2}'
    elif change == "secret":
        secret = new_secret()
    elif change == "no id":
        del headers["webhook-id"]
    elif change == "no timestamp":
        del headers["webhook-timestamp"]
    elif change == "garbage signature":
        headers["webhook-signature"] = "v1,@@@ v1"
    elif change == "v2 tag":
        headers["webhook-signature"] = headers["webhook-signature"].replace("v1,", "v2,")
    assert not verify_webhook(secret, headers, body)


def test_verify_webhook_finds_the_headers_whatever_their_case() -> None:
    body = b"{}"
    headers = {k.upper(): v for k, v in _standard("s", body).items() if not k.startswith("X-")}
    assert verify_webhook("s", headers, body)
