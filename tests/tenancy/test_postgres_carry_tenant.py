"""``TENANCY["ROW_LEVEL_SECURITY"]``: every query on the database carries the current
tenant in the session setting the row-level-security policy compares, with no
``rls_tenant()`` block and no transaction of its own. Raw SQL, the unscoped manager and
a view's raw SQL see only the current tenant's rows; the value follows ``as_tenant()``
on the same connection; a rolled-back transaction or savepoint that changed it is noticed;
it costs one statement per change of tenant.

As in test_postgres_rls.py, everything runs inside the test's transaction as a plain
role (``SET LOCAL ROLE``), so the policy, the role and the grants never outlive the test.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.management import call_command
from django.db import ProgrammingError, connection, connections, transaction
from django.http import HttpRequest, JsonResponse
from django.test import Client
from django.urls import path

from appframework_tenancy import all_tenants, as_tenant
from appframework_tenancy import postgres as rls
from appframework_tenancy.postgres import (
    SETTING,
    carry_tenant,
    install_carry_tenant,
    rls_drop_sql,
)
from tests.tenancy.conftest import row_level_security
from tests.tenancy.lab.models import Post
from tests.tenancy.test_postgres_rls import (
    APP_ROLE,
    TABLE,
    A,
    B,
    enable_policy,
    execute,
    grant_app_role,
    insert,
    titles,
)

pytestmark = [pytest.mark.postgresql, pytest.mark.django_db]

TX_ROLE = f"{APP_ROLE}_tx_{os.getpid()}"


@contextmanager
def carried() -> Iterator[None]:
    """``carry_tenant`` on the connection for the block (already there when the settings
    turn it on, and left there then)."""
    installed = carry_tenant in connection.execute_wrappers
    if not installed:
        connection.execute_wrappers.insert(0, carry_tenant)
    try:
        yield
    finally:
        if not installed:
            connection.execute_wrappers.remove(carry_tenant)


@pytest.fixture
def carrying(two_tenants: dict[str, Any]) -> Iterator[None]:
    """The policy on the lab's post table, and the connection as a plain role with
    ``carry_tenant`` on it, inside the test's transaction."""
    assert connection.vendor == "postgresql"
    assert connection.in_atomic_block
    enable_policy()
    grant_app_role()
    with carried():
        execute(f"SET LOCAL ROLE {APP_ROLE}")
        try:
            yield
        finally:
            execute("RESET ROLE")


@pytest.fixture
def applies(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each value the wrapper gives the session's setting, in order."""
    seen: list[str] = []
    original = rls._apply

    def counting(wrapper: Any, value: str) -> None:
        seen.append(value)
        original(wrapper, value)

    monkeypatch.setattr(rls, "_apply", counting)
    return seen


def session_setting() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting(%s, true)", [SETTING])
        return str(cursor.fetchone()[0])


def test_raw_sql_under_a_tenant_sees_only_its_rows_without_an_rls_tenant_block(
    carrying: None,
) -> None:
    with as_tenant(A):
        assert titles() == ["A-post"]
    with as_tenant(B):
        assert titles() == ["B-post"]


def test_with_no_tenant_or_under_all_tenants_raw_sql_sees_no_row(carrying: None) -> None:
    with as_tenant(A):
        assert titles() == ["A-post"]
    assert titles() == []
    with all_tenants():
        assert titles() == []


def test_the_unscoped_manager_sees_only_the_current_tenants_rows(carrying: None) -> None:
    with as_tenant(B):
        assert [p.title for p in Post.unscoped.all()] == ["B-post"]


def test_a_raw_insert_into_another_tenant_is_refused_and_into_the_current_one_accepted(
    carrying: None,
) -> None:
    with as_tenant(A):
        with pytest.raises(ProgrammingError, match="row-level security"), transaction.atomic():
            insert("smuggled", B)
        insert("A-raw", A)
        assert titles() == ["A-post", "A-raw"]


def test_a_rolled_back_savepoint_that_changed_the_tenant_does_not_leave_the_old_one_in_use(
    carrying: None,
) -> None:
    """The savepoint was made under A and B was set inside it; rolling it back (here under
    B) puts A's value back in the session. A query under B right after must set B again,
    not trust that B is still there and read A's rows."""
    with as_tenant(A):
        assert titles() == ["A-post"]
        savepoint = transaction.savepoint()
    with as_tenant(B):
        assert titles() == ["B-post"]
        transaction.savepoint_rollback(savepoint)
        assert titles() == ["B-post"]
        assert session_setting() == str(B)


@pytest.fixture
def carrying_across_transactions(db: Any, transactional_db: Any) -> Iterator[None]:
    """As ``carrying``, for a test whose transactions really commit and roll back: the
    role is the session's, and everything is undone by hand afterwards. Roles belong to
    the whole server, so this one has a name of its own (other test processes check that
    theirs never outlives a test)."""
    from tests.tenancy.lab.models import Post as LabPost

    with as_tenant(A):
        LabPost.objects.create(title="A-post")
    with as_tenant(B):
        LabPost.objects.create(title="B-post")
    enable_policy()
    grant_app_role(TX_ROLE)
    with carried():
        execute(f"SET ROLE {TX_ROLE}")
        try:
            yield
        finally:
            execute("RESET ROLE")
            execute("SELECT set_config(%s, '', false)", [SETTING])
    for statement in rls_drop_sql(TABLE):
        execute(statement)
    execute(f"REVOKE ALL ON {TABLE} FROM {TX_ROLE}")
    execute(f"REVOKE USAGE ON SCHEMA public FROM {TX_ROLE}")
    execute(f"DROP ROLE {TX_ROLE}")


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_transaction_that_changed_the_tenant_does_not_leave_the_old_one_in_use(
    carrying_across_transactions: None,
) -> None:
    """A set in autocommit; B set inside a transaction that rolls back (as a view under a
    switched tenant that fails): the session holds A again, and the next query under B
    must set B, not read A's rows."""
    with as_tenant(A):
        assert titles() == ["A-post"]
    with as_tenant(B):
        with pytest.raises(ZeroDivisionError), transaction.atomic():
            assert titles() == ["B-post"]
            1 / 0  # noqa: B018 - roll the transaction back
        assert titles() == ["B-post"]
    with as_tenant(B), transaction.atomic():
        assert titles() == ["B-post"]
    with as_tenant(B):
        assert titles() == ["B-post"]  # committed: still B


@pytest.mark.django_db(transaction=True)
def test_a_transaction_begun_and_rolled_back_in_raw_sql_does_not_leave_the_old_tenant_in_use(
    carrying_across_transactions: None,
) -> None:
    """BEGIN and ROLLBACK sent as SQL, behind Django's back: B set inside is undone by the
    ROLLBACK, and the next query under B must set it again."""
    with as_tenant(A):
        assert titles() == ["A-post"]
    execute("BEGIN")
    with as_tenant(B):
        assert titles() == ["B-post"]
        execute("ROLLBACK")
        assert titles() == ["B-post"]


@pytest.mark.django_db(transaction=True)
def test_a_rollback_under_manual_transaction_management_does_not_leave_the_old_tenant(
    carrying_across_transactions: None,
) -> None:
    with as_tenant(A):
        assert titles() == ["A-post"]
    transaction.set_autocommit(False)
    try:
        with as_tenant(B):
            assert titles() == ["B-post"]
            transaction.rollback()  # no statement through the wrappers
            assert titles() == ["B-post"]
            transaction.rollback()
    finally:
        transaction.set_autocommit(True)


def test_a_failed_savepoint_under_another_tenant_rolls_back_cleanly(carrying: None) -> None:
    """The database error aborts the transaction; Django's ROLLBACK TO SAVEPOINT then runs
    under the outer tenant, and the wrapper must let it through rather than try to set the
    value in the failed transaction (which would doom the outer one)."""
    with as_tenant(A):
        assert titles() == ["A-post"]
        with pytest.raises(ProgrammingError), transaction.atomic(), as_tenant(B):
            insert("smuggled", A)  # refused by the policy: the transaction has failed
        assert titles() == ["A-post"]


def test_a_set_of_the_setting_in_raw_sql_is_noticed(carrying: None) -> None:
    with as_tenant(A):
        assert titles() == ["A-post"]
        execute(f"SET {SETTING} = '{B}'")
        assert titles() == ["A-post"]


def test_the_setting_is_given_once_per_change_of_tenant_not_once_per_query(
    carrying: None, applies: list[str]
) -> None:
    with as_tenant(A):
        for _ in range(5):
            titles()
    with as_tenant(B):
        titles()
        titles()
    with as_tenant(A):
        titles()
    assert applies == [str(A), str(B), str(A)]


def test_a_query_in_a_doomed_transaction_raises_its_own_error_not_one_of_the_wrapper(
    carrying: None, applies: list[str]
) -> None:
    from django.db.transaction import TransactionManagementError

    with as_tenant(A):
        titles()
    with transaction.atomic():
        with contextlib.suppress(ZeroDivisionError), transaction.atomic(savepoint=False):
            raise ZeroDivisionError  # dooms the enclosing block
        with as_tenant(B), pytest.raises(TransactionManagementError, match="atomic"):
            titles()
    assert str(B) not in applies


def passing(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
    return execute(sql, params, many, context)


def test_a_new_connection_of_a_listed_database_gets_the_wrapper_first_in_line() -> None:
    """First, so that a connection opened inside a user's ``execute_wrapper()`` block
    keeps it when that block pops the last wrapper on the way out."""
    other = connections.create_connection("default")
    try:
        with row_level_security(["default"]), other.execute_wrapper(passing):
            other.ensure_connection()
            assert other.execute_wrappers == [carry_tenant, passing]
        assert other.execute_wrappers == [carry_tenant]
    finally:
        other.close()


def test_a_new_connection_of_a_database_not_listed_gets_no_wrapper() -> None:
    other = connections.create_connection("default")
    try:
        with row_level_security([]):
            other.ensure_connection()
        assert carry_tenant not in other.execute_wrappers
    finally:
        other.close()


def test_the_receiver_installs_the_wrapper_once_per_connection() -> None:
    other = connections.create_connection("default")
    with row_level_security(["default"]):
        install_carry_tenant(sender=None, connection=other)
        install_carry_tenant(sender=None, connection=other)
    assert other.execute_wrappers.count(carry_tenant) == 1


# -- through requests, sync and async --------------------------------------------------------------
def _raw_titles() -> list[str]:
    return titles()


def raw_titles_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"titles": _raw_titles()})


async def async_raw_titles_view(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"titles": await sync_to_async(_raw_titles)()})


urlpatterns = [
    path("raw", raw_titles_view),
    path("araw", async_raw_titles_view),
]


@pytest.mark.urls(__name__)
@pytest.mark.parametrize("url", ["/raw", "/araw"], ids=["sync view", "async view"])
def test_a_views_raw_sql_runs_under_the_requests_tenant(
    carrying: None, url: str, settings: Any
) -> None:
    settings.MIDDLEWARE = [
        "django.contrib.sessions.middleware.SessionMiddleware",
        "appframework_tenancy.middleware.TenantMiddleware",
    ]
    settings.APPFRAMEWORK = {
        **settings.APPFRAMEWORK,
        "TENANCY": {
            **settings.APPFRAMEWORK.get("TENANCY", {}),
            "RESOLVER": "tests.tenancy.test_postgres_carry_tenant.header_tenant",
        },
    }
    client = Client()
    assert client.get(url, HTTP_X_LAB_TENANT=str(A)).json() == {"titles": ["A-post"]}
    assert client.get(url, HTTP_X_LAB_TENANT=str(B)).json() == {"titles": ["B-post"]}
    assert client.get(url).json() == {"titles": []}


def header_tenant(request: HttpRequest) -> int | None:
    value = request.headers.get("X-Lab-Tenant")
    return int(value) if value else None


def test_the_demos_tenant_page_counts_only_the_current_tenants_posts_with_raw_sql(
    demo_stack: None,
) -> None:
    """blog 0007 put the policy on blog_post; as a plain role, /tenant's raw count is
    Acme's three posts, not the six of both tenants."""
    call_command("seed_demo", stdout=io.StringIO())
    if carry_tenant not in connection.execute_wrappers:
        pytest.fail("the demo's settings turn ROW_LEVEL_SECURITY on for PostgreSQL")
    grant_app_role()
    execute(f"GRANT ALL ON ALL TABLES IN SCHEMA public TO {APP_ROLE}")
    execute(f"GRANT ALL ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE}")
    execute(f"SET LOCAL ROLE {APP_ROLE}")
    try:
        page = Client().get("/tenant").content.decode()
    finally:
        execute("RESET ROLE")
    assert '<strong id="raw-count">3</strong>' in page
    assert "Row-level security is on" in page
