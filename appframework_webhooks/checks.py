"""System checks of the WebhooksServiceProvider (ids ``appframework_webhooks.E0xx`` /
``W0xx``; docs/checks.md)."""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.core import checks

from appframework.checks import check_error, check_warning
from appframework.conf import app_settings

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
