"""When webhook jobs run again and how long they may take: the retry backoff, the
wait for the broker, and Celery's time limits that follow from them. Numbers derived from
``APPFRAMEWORK["WEBHOOKS"]``, read when asked so a settings change is seen."""

from __future__ import annotations

import random

from appframework.conf import app_settings

__all__ = [
    "JITTER",
    "MAX_JITTER",
    "WORKER_PUBLISH_RETRY",
    "backoff",
    "batch_wait",
    "publish_window",
    "time_limits",
]


#: How a job running on a worker retries publishing while the broker is away (kombu's
#: retry policy): about ten seconds, counted in its time limits, before it puts its own
#: message back instead.
WORKER_PUBLISH_RETRY = {
    "max_retries": 5,
    "interval_start": 0.5,
    "interval_step": 1.0,
    "interval_max": 3.0,
}


def publish_window() -> float:
    """The longest a worker's publish waits for the broker: the sum of the retry policy's
    sleeps (kombu's schedule: start, start + step, ..., each at most interval_max)."""
    policy = WORKER_PUBLISH_RETRY
    return sum(
        min(policy["interval_max"], policy["interval_start"] + n * policy["interval_step"])
        for n in range(int(policy["max_retries"]))
    )


#: Retries wait their backoff times a factor within 1 +- JITTER; so at most
#: BACKOFF_CAP x MAX_JITTER.
JITTER = 0.2
MAX_JITTER = 1 + JITTER


def time_limits() -> tuple[float, float]:
    """Celery's (soft, hard) time limits of a job: connecting and the whole attempt (a
    batch waits that long for its slowest endpoint, plus 5 s), the publish of its retries
    waiting for the broker, and 10 s for the DNS lookup and the log write; the hard limit
    15 s later."""
    soft = batch_wait() + publish_window() + 10
    return soft, soft + 15


def batch_wait() -> float:
    """The longest a batch waits for its slowest attempt: connecting and the whole
    attempt, plus 5 s."""
    conf = app_settings.WEBHOOKS
    return float(conf.CONNECT_TIMEOUT) + float(conf.DEADLINE) + 5


def backoff(retries: int) -> float:
    """Seconds before retry number ``retries + 1``: BASE x 2^retries, capped, ±20 %."""
    conf = app_settings.WEBHOOKS
    delay = min(float(conf.BACKOFF_CAP), float(conf.BACKOFF_BASE) * 2**retries)
    return delay * random.uniform(1 - JITTER, MAX_JITTER)
