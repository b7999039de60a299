"""The two statements every delivery attempt runs: the endpoint read and the log
insert, written from the models' metadata and sent through the connection's cursor.

Built through the ORM they cost 0.2-0.3 ms of CPU each (query building, model
instances, a transaction around a bulk insert): as much as the HTTP attempt itself.
Here they are plain parameterised SQL in the connection's own quoting and value
adaptation, and one log insert carries every row of a batch.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NamedTuple, cast

from django.db import models
from django.db.backends.base.base import BaseDatabaseWrapper
from django.utils import timezone

__all__ = [
    "EndpointRow",
    "LogRow",
    "insert_log_rows",
    "read_endpoints",
    "subscribed_endpoint_ids",
    "subscription_patterns",
]


class EndpointRow(NamedTuple):
    url: str
    secret: str | None
    #: The secret before the last rotation, while its overlap lasts; else None.
    previous_secret: str | None
    #: Deliveries in a row that failed for good (a success sets it back to 0).
    failure_streak: int
    #: The tenant owning the endpoint; None: the operator's.
    tenant_id: int | None = None


@dataclass(frozen=True)
class LogRow:
    endpoint_id: int
    event: str
    status_code: int | None
    success: bool
    error: str | None
    delivery_id: str
    attempt: int
    duration_ms: int
    request_body: str
    response_body: str
    final: bool


_LOG_FIELDS = (
    "endpoint",
    "event",
    "status_code",
    "success",
    "error",
    "delivery_id",
    "attempt",
    "duration_ms",
    "request_body",
    "response_body",
    "final",
    "created_at",
)


def _fields(model: type[models.Model], names: Iterable[str]) -> list[models.Field[Any, Any]]:
    return [cast("models.Field[Any, Any]", model._meta.get_field(name)) for name in names]


_QUOTED: dict[tuple[str, str, tuple[str, ...]], tuple[str, dict[str, str]]] = {}


def _quoted(
    connection: BaseDatabaseWrapper, model: type[models.Model], names: tuple[str, ...]
) -> tuple[str, dict[str, str]]:
    """``model``'s table and ``{field name: column}``, quoted for ``connection``'s
    database: worked out once per database vendor, not on every attempt."""
    key = (connection.vendor, model._meta.label, names)
    found = _QUOTED.get(key)
    if found is None:
        quote = connection.ops.quote_name
        found = _QUOTED[key] = (
            quote(model._meta.db_table),
            {field.name: quote(str(field.column)) for field in _fields(model, names)},
        )
    return found


def subscription_patterns(event: str) -> list[str]:
    """The subscriptions that receive ``event``: its name, each prefix wildcard above it
    and ``*`` (``order.item.paid``: ``order.item.paid``, ``order.*``, ``order.item.*``,
    ``*``), so that an indexed ``IN`` finds them all."""
    parts = event.split(".")
    return [event, *(".".join(parts[:n]) + ".*" for n in range(1, len(parts))), "*"]


def _integer(tenant_id: Any) -> int | None:
    # Endpoints store integer tenant ids; a project whose tenants have other ids (UUIDs)
    # has no tenant-owned endpoints, and its events reach the operator's only.
    if tenant_id is None or isinstance(tenant_id, bool):
        return None
    try:
        return int(tenant_id)
    except (TypeError, ValueError):
        return None


def subscribed_endpoint_ids(
    connection: BaseDatabaseWrapper, event: str, tenant_id: Any = None
) -> list[int]:
    """The ids of the active endpoints subscribed to ``event`` (by name, prefix wildcard
    or ``*``) that may receive it under ``tenant_id``: the operator's endpoints (no
    tenant) always, and with a tenant, that tenant's own; never another tenant's."""
    from .models import WebhookEndpoint

    table, column = _quoted(connection, WebhookEndpoint, ("id", "event", "active", "tenant_id"))
    patterns = subscription_patterns(event)
    marks = ", ".join(["%s"] * len(patterns))
    params: list[Any] = [*patterns, True]
    tenant = f"{column['tenant_id']} IS NULL"
    owner = _integer(tenant_id)
    if owner is not None:
        tenant = f"({tenant} OR {column['tenant_id']} = %s)"
        params.append(owner)
    sql = (
        f"SELECT {column['id']} FROM {table} "
        f"WHERE {column['event']} IN ({marks}) AND {column['active']} = %s AND {tenant}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


@contextmanager
def _cursor(connection: BaseDatabaseWrapper, prepared: bool) -> Iterator[Any]:
    """The connection's cursor; with ``prepared`` on PostgreSQL (psycopg 3), a cursor
    with server-side parameters, which psycopg prepares after a few runs: the server
    then skips parsing and planning the statements every attempt repeats. Errors are
    Django's either way."""
    if not (prepared and connection.vendor == "postgresql"):
        with connection.cursor() as cursor:
            yield cursor
        return
    import psycopg

    connection.ensure_connection()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        yield cursor


def read_endpoints(
    connection: BaseDatabaseWrapper, ids: Sequence[int], *, prepared: bool = False
) -> dict[int, EndpointRow]:
    """The endpoints among ``ids`` that exist and are active; the previous secret only
    while its rotation's overlap lasts."""
    from .models import WebhookEndpoint

    if not ids:
        return {}
    names = (
        "id",
        "url",
        "secret",
        "previous_secret",
        "previous_secret_expires_at",
        "failure_streak",
        "active",
        "tenant_id",
    )
    table, column = _quoted(connection, WebhookEndpoint, names)
    expires = _fields(WebhookEndpoint, ["previous_secret_expires_at"])[0]
    now = expires.get_db_prep_value(timezone.now(), connection)
    marks = ", ".join(["%s"] * len(ids))
    sql = (
        f"SELECT {column['id']}, {column['url']}, {column['secret']}, "
        f"CASE WHEN {column['previous_secret_expires_at']} > %s "
        f"THEN {column['previous_secret']} END, {column['failure_streak']}, "
        f"{column['tenant_id']} "
        f"FROM {table} WHERE {column['id']} IN ({marks}) AND {column['active']} = %s"
    )
    with _cursor(connection, prepared) as cursor:
        cursor.execute(sql, [now, *ids, True])
        return {
            row[0]: EndpointRow(row[1], row[2], row[3], row[4], row[5]) for row in cursor.fetchall()
        }


def insert_log_rows(
    connection: BaseDatabaseWrapper, rows: Iterable[LogRow], *, prepared: bool = False
) -> None:
    """Insert the rows in as few statements as the database's parameter limit allows
    (one for a batch of 100 on PostgreSQL and on SQLite >= 3.32)."""
    from .models import WebhookDelivery

    rows = list(rows)
    if not rows:
        return
    fields = _fields(WebhookDelivery, _LOG_FIELDS)
    table, column = _quoted(connection, WebhookDelivery, _LOG_FIELDS)
    now = timezone.now()
    values: list[list[Any]] = [
        [
            field.get_db_prep_save(value, connection)
            for field, value in zip(
                fields,
                (
                    row.endpoint_id,
                    row.event,
                    row.status_code,
                    row.success,
                    row.error,
                    row.delivery_id,
                    row.attempt,
                    row.duration_ms,
                    row.request_body,
                    row.response_body,
                    row.final,
                    now,
                ),
                strict=True,
            )
        ]
        for row in rows
    ]
    head = f"INSERT INTO {table} ({', '.join(column[name] for name in _LOG_FIELDS)}) VALUES "
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    size = max(1, connection.ops.bulk_batch_size(fields, values))
    with _cursor(connection, prepared) as cursor:
        for start in range(0, len(values), size):
            chunk = values[start : start + size]
            cursor.execute(head + ", ".join([one] * len(chunk)), [v for row in chunk for v in row])
