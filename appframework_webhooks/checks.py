"""System checks of the WebhooksServiceProvider (ids ``appframework_webhooks.E0xx`` /
``W0xx``; docs/checks.md)."""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.core import checks

from appframework.checks import check_error, check_warning
from appframework.conf import AUTO, app_settings

from .catalogue import catalogue

_NUMBERS = ("CONNECT_TIMEOUT", "READ_TIMEOUT", "DEADLINE", "BACKOFF_BASE", "BACKOFF_CAP")
REDIS_VISIBILITY_DEFAULT = 3600


def check_settings(**kwargs: Any) -> list[checks.CheckMessage]:
    """E001: values of APPFRAMEWORK["WEBHOOKS"]."""
    conf = app_settings.WEBHOOKS
    problems = []
    attempts = conf.MAX_ATTEMPTS
    if not isinstance(attempts, int) or isinstance(attempts, bool) or not 1 <= attempts <= 20:
        problems.append(f"MAX_ATTEMPTS must be an int from 1 to 20, got {attempts!r}")
    for key in _NUMBERS:
        value = getattr(conf, key)
        if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
            problems.append(f"{key} must be a positive number, got {value!r}")
    for key, low in (("BATCH_SIZE", 1), ("BATCH_CONCURRENCY", 1), ("BATCH_MIN_ENDPOINTS", 2)):
        value = getattr(conf, key)
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            problems.append(f"{key} must be an int >= {low}, got {value!r}")
    limit = conf.RESPONSE_BODY_LIMIT
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        problems.append(f"RESPONSE_BODY_LIMIT must be an int >= 0, got {limit!r}")
    overlap = conf.SECRET_OVERLAP
    if not isinstance(overlap, int | float) or isinstance(overlap, bool) or overlap < 0:
        problems.append(f"SECRET_OVERLAP must be a number of seconds >= 0, got {overlap!r}")
    problems.extend(_disable_after_problems(conf.DISABLE_AFTER))
    if conf.STRICT_EVENTS is not AUTO and not isinstance(conf.STRICT_EVENTS, bool):
        problems.append(f"STRICT_EVENTS must be AUTO, True or False, got {conf.STRICT_EVENTS!r}")
    for entry in conf.ALLOWED_NETWORKS or ():
        try:
            ipaddress.ip_network(str(entry), strict=False)
        except ValueError:
            problems.append(f"ALLOWED_NETWORKS entry {entry!r} is not a network (CIDR)")
    return [
        check_error(
            "appframework_webhooks.E001",
            f"APPFRAMEWORK['WEBHOOKS']: {problem}.",
            "Fix the value named in the message.",
        )
        for problem in problems
    ]


def _disable_after_problems(value: Any) -> list[str]:
    if value is None:
        return []
    failures = value.get("FAILURES") if isinstance(value, dict) else None
    seconds = value.get("SECONDS") if isinstance(value, dict) else None
    if (
        not isinstance(value, dict)
        or set(value) != {"FAILURES", "SECONDS"}
        or not isinstance(failures, int)
        or isinstance(failures, bool)
        or failures < 1
        or not isinstance(seconds, int | float)
        or isinstance(seconds, bool)
        or seconds < 0
    ):
        return [
            "DISABLE_AFTER must be None or {'FAILURES': int >= 1, 'SECONDS': seconds >= 0}, "
            f"got {value!r}"
        ]
    return []


def check_catalogue(**kwargs: Any) -> list[checks.CheckMessage]:
    """E002: an app's ``webhook_events`` that cannot be read, or declares a bad event."""
    catalogue.names()  # loads it
    return [
        check_error(
            "appframework_webhooks.E002",
            f"Webhook event catalogue: {problem}.",
            "Declare WebhookEvent objects with dotted lower-case names, one definition per name.",
        )
        for problem in catalogue.problems
    ]


def check_subscriptions(databases: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """W003 (database): endpoints subscribed to names the catalogue does not have."""
    if not databases:
        return []
    from django.db import DatabaseError

    from .models import WebhookEndpoint

    unknown: set[str] = set()
    for alias in databases:
        try:
            patterns = WebhookEndpoint.objects.using(alias).values_list("event", flat=True)
            unknown.update(catalogue.unregistered(set(patterns)))
        except DatabaseError:
            continue  # not migrated yet: nothing subscribes to anything
    if not unknown:
        return []
    return [
        check_warning(
            "appframework_webhooks.W003",
            "Webhook endpoints subscribe to events the catalogue does not have: "
            f"{', '.join(sorted(unknown))}. Firing them raises under STRICT_EVENTS "
            "(DEBUG, tests) and they are missing from the catalogue customers see.",
            "Declare them in an AppConfig's webhook_events, or fix the endpoints' event.",
        )
    ]


def check_visibility_timeout(**kwargs: Any) -> list[checks.CheckMessage]:
    """W001: the longest retry wait must stay below the broker's visibility timeout."""
    conf = app_settings.WEBHOOKS
    try:
        from .schedule import MAX_JITTER, time_limits

        # The longest wait, plus an attempt running into Celery's hard time limit.
        longest = float(conf.BACKOFF_CAP) * MAX_JITTER + time_limits()[1]
    except (TypeError, ValueError):
        return []
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", None) or {}
    visibility = options.get("visibility_timeout", REDIS_VISIBILITY_DEFAULT)
    if isinstance(visibility, int | float) and longest >= visibility / 2:
        return [
            check_warning(
                "appframework_webhooks.W001",
                f"The longest webhook retry wait ({longest:.0f} s) is not far below the "
                f"broker's visibility timeout ({visibility} s): Redis would hand the "
                "waiting job to another worker, and the receiver gets it twice or more.",
                "Lower WEBHOOKS['BACKOFF_CAP'] or raise "
                "CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'].",
            )
        ]
    return []


def check_ssrf_guard(**kwargs: Any) -> list[checks.CheckMessage]:
    """W002 (deploy): the private-address guard is off."""
    if app_settings.WEBHOOKS.BLOCK_PRIVATE_NETWORK_TARGETS:
        return []
    return [
        check_warning(
            "appframework_webhooks.W002",
            "WEBHOOKS['BLOCK_PRIVATE_NETWORK_TARGETS'] is off: an endpoint URL can make "
            "the server POST to its own network (metadata service, internal admin pages).",
            "Turn it on and list trusted internal networks in WEBHOOKS['ALLOWED_NETWORKS'].",
        )
    ]
