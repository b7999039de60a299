"""Endpoint health: after ``DISABLE_AFTER`` (a count of deliveries in a row that failed
for good, and a time span since the first of them: both) the endpoint is disabled, the
``endpoint_disabled`` signal fires once and its owner gets an email; a success forgets
the failures, re-enabling clears them, and a disabled endpoint gets nothing."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import mail
from django.test import override_settings
from django.utils import timezone

from appframework_webhooks import WebhookDelivery, WebhookEndpoint, endpoint_disabled
from appframework_webhooks.health import DISABLED_FAILING, DISABLED_MANUALLY, disable_endpoint
from appframework_webhooks.manager import WebhookManager
from testproject.blog.models import User

from .conftest import webhook_settings
from .receiver import Receiver

pytestmark = pytest.mark.django_db
EVENT = "order.paid"
THRESHOLD = {"FAILURES": 3, "SECONDS": 60}


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    module_receiver.respond = lambda n: (503, {}, b"down")
    return module_receiver


@pytest.fixture
def one_attempt(loopback_allowed: None) -> Iterator[None]:
    """Each delivery has one attempt, so each failure is final at once."""
    with webhook_settings(
        ALLOWED_NETWORKS=["127.0.0.0/8"], MAX_ATTEMPTS=1, DISABLE_AFTER=THRESHOLD
    ):
        yield


@pytest.fixture
def disabled_signals() -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def record(sender: Any, **kwargs: Any) -> None:
        seen.append(kwargs)

    endpoint_disabled.connect(record, dispatch_uid="test-health")
    yield seen
    endpoint_disabled.disconnect(dispatch_uid="test-health")


def _owner() -> Any:
    return User.objects.create_user("owner@example.com", "pw")


def _fire(capture: Any, times: int = 1) -> list[list[str]]:
    fired = []
    for n in range(times):
        with capture(execute=True):
            fired.append(WebhookManager().fire_sync(EVENT, {"id": n}))
    return fired


def _age(endpoint: WebhookEndpoint, seconds: float) -> None:
    """The endpoint's failures started ``seconds`` ago (no waiting in the test)."""
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(
        failing_since=timezone.now() - datetime.timedelta(seconds=seconds)
    )


def test_an_endpoint_is_disabled_once_both_the_count_and_the_time_span_are_reached(
    receiver: Receiver,
    one_attempt: None,
    django_capture_on_commit_callbacks: Any,
    disabled_signals: list[dict[str, Any]],
) -> None:
    endpoint = WebhookEndpoint.objects.create(
        url=receiver.url, event=EVENT, secret="s", owner=_owner()
    )
    _fire(django_capture_on_commit_callbacks, 3)
    endpoint.refresh_from_db()
    assert endpoint.failure_streak == 3
    assert endpoint.active, "three failures, but all within the last minute"
    assert disabled_signals == []

    _age(endpoint, 61)
    _fire(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    assert not endpoint.active
    assert (endpoint.failure_streak, endpoint.disabled_reason) == (4, DISABLED_FAILING)
    assert endpoint.disabled_at is not None
    [signal] = disabled_signals
    assert signal["endpoint"].pk == endpoint.pk
    assert signal["failures"] == 4
    assert signal["since"] == endpoint.failing_since
    [email] = mail.outbox
    assert email.to == ["owner@example.com"]
    assert endpoint.url in email.subject
    assert "recover" in email.body

    # Disabled: the next event does not even select it; nothing is sent.
    hits = len(receiver.hits)
    assert _fire(django_capture_on_commit_callbacks) == [[]]
    assert len(receiver.hits) == hits
    assert len(disabled_signals) == 1


def test_a_long_time_span_with_too_few_failures_keeps_the_endpoint(
    receiver: Receiver, one_attempt: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    _fire(django_capture_on_commit_callbacks)
    _age(endpoint, 3600)
    _fire(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    assert endpoint.active and endpoint.failure_streak == 2


def test_retried_attempts_count_once_per_delivery_and_only_when_final(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.0/8"], MAX_ATTEMPTS=3):
        _fire(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    assert WebhookDelivery.objects.count() == 3
    assert endpoint.failure_streak == 1


def test_a_success_forgets_the_failures(
    receiver: Receiver, one_attempt: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    _fire(django_capture_on_commit_callbacks, 2)
    receiver.respond = lambda n: (200, {}, b"ok")
    _fire(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    assert (endpoint.failure_streak, endpoint.failing_since) == (0, None)


def test_re_enabling_clears_the_failures(
    receiver: Receiver, one_attempt: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    _fire(django_capture_on_commit_callbacks, 3)
    _age(endpoint, 61)
    _fire(django_capture_on_commit_callbacks)
    endpoint = WebhookEndpoint.objects.get(pk=endpoint.pk)
    assert not endpoint.active

    endpoint.active = True
    endpoint.save()
    endpoint.refresh_from_db()
    assert endpoint.active
    assert (endpoint.failure_streak, endpoint.failing_since) == (0, None)
    assert (endpoint.disabled_at, endpoint.disabled_reason) == (None, "")


def test_disable_after_none_never_disables(
    receiver: Receiver, loopback_allowed: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    with webhook_settings(ALLOWED_NETWORKS=["127.0.0.0/8"], MAX_ATTEMPTS=1, DISABLE_AFTER=None):
        _fire(django_capture_on_commit_callbacks, 2)
        _age(endpoint, 10**7)
        _fire(django_capture_on_commit_callbacks)
    endpoint.refresh_from_db()
    assert endpoint.active and endpoint.failure_streak == 3


def test_the_default_threshold_is_twenty_failures_over_five_days() -> None:
    from appframework.conf import DEFAULTS

    assert DEFAULTS["WEBHOOKS"]["DISABLE_AFTER"] == {"FAILURES": 20, "SECONDS": 432000}


def test_final_failures_in_a_batch_count_per_endpoint(
    receiver: Receiver, one_attempt: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoints = [
        WebhookEndpoint.objects.create(url=f"{receiver.url}/{n}", event=EVENT, secret="s")
        for n in range(10)
    ]
    _fire(django_capture_on_commit_callbacks)
    assert WebhookDelivery.objects.count() == 10
    assert set(
        WebhookEndpoint.objects.filter(pk__in=[e.pk for e in endpoints]).values_list(
            "failure_streak", flat=True
        )
    ) == {1}


def test_without_an_owner_no_email_is_sent_but_the_signal_fires(
    receiver: Receiver,
    one_attempt: None,
    django_capture_on_commit_callbacks: Any,
    disabled_signals: list[dict[str, Any]],
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    _fire(django_capture_on_commit_callbacks, 2)
    _age(endpoint, 61)
    _fire(django_capture_on_commit_callbacks)
    assert len(disabled_signals) == 1
    assert mail.outbox == []


def test_the_email_templates_are_overridable_by_name(
    receiver: Receiver,
    one_attempt: None,
    django_capture_on_commit_callbacks: Any,
    tmp_path: Path,
) -> None:
    folder = tmp_path / "appframework_webhooks" / "email"
    folder.mkdir(parents=True)
    (folder / "endpoint_disabled_subject.txt").write_text("Hook {{ endpoint.pk }} is off")
    (folder / "endpoint_disabled.txt").write_text("{{ failures }} failures.")
    templates = [{**settings.TEMPLATES[0], "DIRS": [tmp_path, *settings.TEMPLATES[0]["DIRS"]]}]
    endpoint = WebhookEndpoint.objects.create(
        url=receiver.url, event=EVENT, secret="s", owner=_owner()
    )
    with override_settings(TEMPLATES=templates):
        _fire(django_capture_on_commit_callbacks, 2)
        _age(endpoint, 61)
        _fire(django_capture_on_commit_callbacks)
    [email] = mail.outbox
    assert (email.subject, email.body) == (f"Hook {endpoint.pk} is off", "3 failures.")


def test_a_manual_disable_says_so_and_the_endpoint_gets_nothing(
    receiver: Receiver, one_attempt: None, django_capture_on_commit_callbacks: Any
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event=EVENT, secret="s")
    disable_endpoint(endpoint)
    endpoint.refresh_from_db()
    assert not endpoint.active and endpoint.disabled_reason == DISABLED_MANUALLY
    assert _fire(django_capture_on_commit_callbacks) == [[]]
