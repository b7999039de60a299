"""``DELIVERY_LOG_SYNCHRONOUS_COMMIT = False``: on PostgreSQL the jobs' own connections
commit the delivery log with ``synchronous_commit = off`` (the last rows, never a
delivery, can be lost if PostgreSQL itself crashes). The default stays durable, and the
caller's own connection (an eager job inside a transaction) is never changed."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, transaction

from appframework_webhooks import WebhookDelivery, WebhookEndpoint
from appframework_webhooks.connection import close_kept_connections, kept_connection, relax_commit
from appframework_webhooks.tasks import DeliverWebhookJob

from .conftest import webhook_settings
from .receiver import Receiver

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def receiver(module_receiver: Receiver) -> Receiver:
    return module_receiver


@pytest.fixture(autouse=True)
def _fresh_kept_connections() -> Iterator[None]:
    close_kept_connections()
    yield
    close_kept_connections()


def _setting_of_the_kept_connection() -> str:
    with kept_connection("default") as kept, kept.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        return str(cursor.fetchone()[0])


def _run_job_as_a_worker(endpoint: WebhookEndpoint) -> str:
    """The job as a worker runs it: not eager, so on a kept connection of its own."""
    DeliverWebhookJob.push_request(is_eager=False, called_directly=False, retries=0)
    try:
        return str(DeliverWebhookJob.run(endpoint.pk, "order.paid", "{}", "d" * 32))
    finally:
        DeliverWebhookJob.pop_request()


@pytest.mark.parametrize(("synchronous", "expected"), [(True, "on"), (False, "off")])
def test_the_jobs_connection_commits_the_log_as_the_setting_says(
    receiver: Receiver, loopback_allowed: None, synchronous: bool, expected: str
) -> None:
    endpoint = WebhookEndpoint.objects.create(url=receiver.url, event="order.paid", secret="s")
    with webhook_settings(
        ALLOWED_NETWORKS=["127.0.0.0/8"], DELIVERY_LOG_SYNCHRONOUS_COMMIT=synchronous
    ):
        assert _run_job_as_a_worker(endpoint) == "delivered"
    assert _setting_of_the_kept_connection() == expected
    assert WebhookDelivery.objects.filter(success=True).count() == 1
    # The test's (and any request's) own connection is untouched.
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone()[0] == "on"


def test_the_setting_is_sent_once_per_session(django_assert_num_queries: Any) -> None:
    with kept_connection("default") as kept:
        relax_commit(kept)
        with django_assert_num_queries(0, connection=kept):
            relax_commit(kept)


def test_a_connection_inside_a_transaction_is_never_relaxed() -> None:
    with transaction.atomic():
        relax_commit(connection)
        with connection.cursor() as cursor:
            cursor.execute("SHOW synchronous_commit")
            assert cursor.fetchone()[0] == "on"
