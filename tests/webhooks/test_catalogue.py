"""The event catalogue: events declared on AppConfigs (name, description, JSON Schema of
``data``), subscriptions to a name, a prefix wildcard or ``*``, firing an unregistered
name an error in DEBUG and tests (logged otherwise), checks E002 and W003, and the
catalogue served as JSON."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from django.core import checks
from django.test import Client, override_settings

from appframework.exceptions import ValidationException
from appframework_webhooks import EventCatalogue, WebhookEndpoint, WebhookEvent, catalogue
from appframework_webhooks import tasks as webhook_tasks
from appframework_webhooks.checks import check_catalogue, check_subscriptions
from appframework_webhooks.manager import WebhookManager
from appframework_webhooks.sql import subscription_patterns

from .conftest import webhook_settings


@pytest.fixture
def fresh_catalogue() -> Iterator[EventCatalogue]:
    """The process's catalogue, read again from the apps after the test."""
    yield catalogue
    catalogue.reset()


def test_the_providers_and_the_apps_events_are_read_from_their_app_configs() -> None:
    names = catalogue.names()
    assert {"user.registered", "user.passkey_added", "webhook.test"} <= set(names)
    assert "order.shipped" in names  # tests/webhooks/events_app's AppConfig
    registered = catalogue.get("user.registered")
    assert registered is not None
    assert registered.schema["required"] == ["user_id"]


def test_a_name_receives_its_exact_subscription_each_prefix_wildcard_above_it_and_star() -> None:
    assert subscription_patterns("order.item.paid") == [
        "order.item.paid",
        "order.*",
        "order.item.*",
        "*",
    ]
    assert subscription_patterns("e") == ["e", "*"]


@pytest.mark.django_db
def test_fire_reaches_exact_wildcard_and_star_subscriptions_and_no_other(
    django_capture_on_commit_callbacks: Any, monkeypatch: Any
) -> None:
    def endpoint(event: str) -> int:
        return WebhookEndpoint.objects.create(url=f"https://h.example/{event}", event=event).pk

    exact, prefix, star = endpoint("order.paid"), endpoint("order.*"), endpoint("*")
    endpoint("order.shipped")
    endpoint("invoice.*")
    endpoint("order")  # no wildcard: not a prefix subscription
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        WebhookManager().fire_sync("order.paid", {"id": 1})
    [publish] = callbacks
    sent: list[Any] = []
    monkeypatch.setattr(
        webhook_tasks, "publish_jobs", lambda event, body, jobs, **kw: sent.extend(jobs)
    )
    publish()
    assert sorted(pk for pk, _ in sent) == sorted([exact, prefix, star])


@pytest.mark.django_db
def test_firing_an_unregistered_name_is_an_error_in_tests_and_nothing_is_queued(
    django_capture_on_commit_callbacks: Any,
) -> None:
    WebhookEndpoint.objects.create(url="https://h.example/a", event="*")
    with (
        django_capture_on_commit_callbacks() as callbacks,
        pytest.raises(ValidationException) as raised,
    ):
        WebhookManager().fire_sync("order.unknown", {})
    assert raised.value.code == "unknown_event"
    assert "catalogue" in str(raised.value.detail)
    assert callbacks == []


@pytest.mark.django_db
def test_outside_debug_and_tests_an_unregistered_name_is_logged_once_and_delivered(
    caplog: Any, django_capture_on_commit_callbacks: Any
) -> None:
    WebhookEndpoint.objects.create(url="https://h.example/a", event="legacy.event")
    caplog.set_level(logging.WARNING, logger="appframework.webhooks")
    with webhook_settings(STRICT_EVENTS=False), django_capture_on_commit_callbacks():
        assert len(WebhookManager().fire_sync("legacy.event", {})) == 1
        assert len(WebhookManager().fire_sync("legacy.event", {})) == 1
    warnings = [r for r in caplog.records if "not in the event catalogue" in r.getMessage()]
    assert len(warnings) == 1


@pytest.mark.django_db
def test_strict_events_auto_follows_debug(django_capture_on_commit_callbacks: Any) -> None:
    from appframework_webhooks.catalogue import strict_events

    assert strict_events()  # Django's test environment
    with webhook_settings(STRICT_EVENTS=False):
        assert not strict_events()
    with webhook_settings(STRICT_EVENTS=True), override_settings(DEBUG=False):
        assert strict_events()


def test_register_adds_an_event_and_refuses_a_different_one_of_the_same_name(
    fresh_catalogue: EventCatalogue,
) -> None:
    event = WebhookEvent("invoice.void", "An invoice was voided.")
    catalogue.register(event)
    catalogue.register(event)  # the same definition again: fine
    assert catalogue.get("invoice.void") == event
    with pytest.raises(ValueError, match="registered already"):
        catalogue.register(WebhookEvent("invoice.void", "Something else."))
    with pytest.raises(ValueError, match="not an event name"):
        catalogue.register(WebhookEvent("Invoice Void"))


@pytest.mark.parametrize(
    ("pattern", "ok"),
    [
        ("order.paid", True),
        ("order.*", True),
        ("*", True),
        ("user.*", True),
        ("order.nothing", False),
        ("nothing.*", False),
        ("", False),
    ],
)
def test_a_subscription_must_match_the_catalogue(pattern: str, ok: bool) -> None:
    if ok:
        assert catalogue.check_pattern(pattern) == pattern
    else:
        with pytest.raises(ValidationException):
            catalogue.check_pattern(pattern)


def test_the_catalogue_is_served_as_json(client: Client) -> None:
    response = client.get("/webhooks/events")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    events = response.json()["events"]
    names = [event["name"] for event in events]
    assert names == sorted(names)
    [registered] = [event for event in events if event["name"] == "user.registered"]
    assert registered == {
        "name": "user.registered",
        "description": "A new account was created.",
        "schema": catalogue.get("user.registered").schema,  # type: ignore[union-attr]
    }
    assert client.post("/webhooks/events").status_code == 405


class _BadConfig:
    label = "bad"
    webhook_events = [WebhookEvent("Bad Name"), "not an event"]


def test_check_e002_reports_a_bad_declaration(
    fresh_catalogue: EventCatalogue, monkeypatch: Any
) -> None:
    from django.apps import apps

    real = apps.get_app_configs
    monkeypatch.setattr(apps, "get_app_configs", lambda: [*real(), _BadConfig()])
    catalogue.reset()
    messages = check_catalogue()
    assert [m.id for m in messages] == ["appframework_webhooks.E002"]
    assert "not a WebhookEvent" in messages[0].msg
    assert catalogue.get("order.paid") is not None  # the good apps are still read


@pytest.mark.django_db
def test_check_w003_lists_the_subscriptions_the_catalogue_lacks() -> None:
    WebhookEndpoint.objects.create(url="https://h.example/a", event="order.paid")
    WebhookEndpoint.objects.create(url="https://h.example/b", event="legacy.thing")
    WebhookEndpoint.objects.create(url="https://h.example/c", event="gone.*")
    [warning] = check_subscriptions(databases=["default"])
    assert warning.id == "appframework_webhooks.W003"
    assert warning.level == checks.WARNING
    assert "gone.*, legacy.thing" in warning.msg
    assert check_subscriptions(databases=None) == []
