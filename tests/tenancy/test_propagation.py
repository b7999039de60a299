"""Where the current tenant goes, and where it does not: threads and executors (lost
unless the callable is wrapped in ``tenant_bound``), asyncio and asgiref hops (kept),
``on_commit`` callbacks, Celery tasks in a real worker, and management commands."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from io import StringIO
from typing import Any

import celery._state
import pytest
from asgiref.sync import async_to_sync, sync_to_async
from celery import Celery, signals
from celery.contrib.testing.worker import start_worker
from celery.worker import state as worker_state
from django.core.management import ManagementUtility, call_command
from django.core.management.base import CommandError
from django.db import connections, transaction

from appframework_tenancy import (
    ALL_TENANTS,
    all_tenants,
    as_tenant,
    current_tenant_id,
    on_commit,
    tenant_bound,
)
from appframework_tenancy.celery import HEADER, before_publish
from appframework_tenancy.commands import TenantCommand
from appframework_tenancy.context import _current, tenant_state
from tests.system_checks import celery_worker_checks_skipped
from tests.tenancy.conftest import A, B
from tests.tenancy.lab.models import Post


def titles() -> list[str]:
    return sorted(Post.objects.values_list("title", flat=True))


def in_thread(func: Callable[[], Any]) -> Any:
    """``func()``'s result, run in a new ``threading.Thread``."""
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(func()))
    thread.start()
    thread.join()
    return result[0]


# -- threads and executors start with no tenant ----------------------------------------------
def test_a_plain_thread_starts_with_no_tenant() -> None:
    with as_tenant(A):
        assert in_thread(current_tenant_id) is None


def test_a_thread_running_a_tenant_bound_callable_keeps_the_tenant() -> None:
    with as_tenant(A):
        assert in_thread(tenant_bound(current_tenant_id)) == A


def test_thread_pool_submit_loses_the_tenant_and_keeps_it_with_tenant_bound() -> None:
    with as_tenant(A), ThreadPoolExecutor(max_workers=1) as pool:
        assert pool.submit(current_tenant_id).result() is None
        assert pool.submit(tenant_bound(current_tenant_id)).result() == A


async def test_run_in_executor_loses_the_tenant_and_keeps_it_with_tenant_bound() -> None:
    loop = asyncio.get_running_loop()
    with as_tenant(A):
        assert await loop.run_in_executor(None, current_tenant_id) is None
        assert await loop.run_in_executor(None, tenant_bound(current_tenant_id)) == A
        with ThreadPoolExecutor(max_workers=1) as pool:
            assert await loop.run_in_executor(pool, current_tenant_id) is None
            assert await loop.run_in_executor(pool, tenant_bound(current_tenant_id)) == A


def test_tenant_bound_uses_the_tenant_current_when_wrapped_not_when_called() -> None:
    with as_tenant(A):
        bound = tenant_bound(current_tenant_id)
    assert bound() == A
    with as_tenant(B):
        assert bound() == A
        assert current_tenant_id() == B
    assert current_tenant_id() is None


def test_tenant_bound_carries_all_tenants_and_no_tenant_as_well() -> None:
    with all_tenants():
        every = tenant_bound(tenant_state)
    with as_tenant(A):
        assert in_thread(every) is ALL_TENANTS
        with as_tenant(None):
            none = tenant_bound(tenant_state)
        assert none() is None
        assert current_tenant_id() == A


def test_a_tenant_selected_inside_a_thread_does_not_reach_the_caller() -> None:
    def select_and_report() -> Any:
        _current.set(B)  # set without reset: the thread's own context only
        return current_tenant_id()

    with as_tenant(A):
        assert in_thread(tenant_bound(select_and_report)) == B
        assert current_tenant_id() == A


@pytest.mark.django_db(transaction=True)
def test_a_plain_thread_reads_every_tenant_and_a_tenant_bound_one_only_the_tenant(
    two_tenants: dict[str, Any],
) -> None:
    def read() -> list[str]:
        try:
            return titles()
        finally:
            connections.close_all()

    with as_tenant(A):
        assert in_thread(read) == ["A-post", "B-post"]
        assert in_thread(tenant_bound(read)) == ["A-post"]


# -- asyncio and asgiref hops keep the tenant ------------------------------------------------
async def test_asyncio_to_thread_keeps_the_tenant() -> None:
    with as_tenant(A):
        assert await asyncio.to_thread(current_tenant_id) == A


async def test_sync_to_async_keeps_the_tenant() -> None:
    with as_tenant(A):
        assert await sync_to_async(current_tenant_id)() == A
        assert await sync_to_async(current_tenant_id, thread_sensitive=False)() == A


async def test_asyncio_tasks_keep_the_tenant_they_were_created_under() -> None:
    async def report() -> Any:
        return current_tenant_id()

    with as_tenant(A):
        task = asyncio.create_task(report())
    with as_tenant(B):
        assert await task == A


def test_async_to_sync_keeps_the_tenant() -> None:
    async def report() -> Any:
        return current_tenant_id()

    with as_tenant(B):
        assert async_to_sync(report)() == B


# -- on_commit -------------------------------------------------------------------------------
def recorder(seen: list[Any]) -> Callable[[], None]:
    def callback() -> None:
        seen.append((current_tenant_id(), titles()))

    return callback


@pytest.mark.django_db
def test_tenancy_on_commit_runs_the_callback_under_the_tenant_current_at_registration(
    two_tenants: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    seen: list[Any] = []
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with as_tenant(A):
            on_commit(recorder(seen))
        assert seen == []
    assert len(callbacks) == 1
    assert seen == [(A, ["A-post"])]


@pytest.mark.django_db
def test_plain_transaction_on_commit_runs_the_callback_under_the_tenant_current_at_commit(
    two_tenants: dict[str, Any], django_capture_on_commit_callbacks: Any
) -> None:
    seen: list[Any] = []
    with django_capture_on_commit_callbacks(execute=True), as_tenant(A):
        transaction.on_commit(recorder(seen))
    assert seen == [(None, ["A-post", "B-post"])]


@pytest.mark.django_db(transaction=True)
def test_tenancy_on_commit_keeps_the_registering_tenant_through_a_real_commit(
    two_tenants: dict[str, Any],
) -> None:
    kept: list[Any] = []
    plain: list[Any] = []
    with as_tenant(B):
        with transaction.atomic():
            with as_tenant(A):
                on_commit(recorder(kept))
                transaction.on_commit(recorder(plain))
            assert kept == plain == []
        assert kept == [(A, ["A-post"])]
        assert plain == [(B, ["B-post"])]


@pytest.mark.django_db(transaction=True)
def test_tenancy_on_commit_callback_does_not_run_when_the_transaction_rolls_back(
    two_tenants: dict[str, Any],
) -> None:
    seen: list[Any] = []
    with pytest.raises(ZeroDivisionError), transaction.atomic(), as_tenant(A):
        on_commit(recorder(seen))
        1 / 0  # noqa: B018
    assert seen == []
    committed: list[Any] = []  # the control: the same registration, committed
    with transaction.atomic(), as_tenant(A):
        on_commit(recorder(committed))
    assert committed == [(A, ["A-post"])]
    assert seen == []


# -- Celery ----------------------------------------------------------------------------------
lab_celery = Celery(
    "tenancy_propagation",
    broker="memory://",
    backend="cache+memory://",
    fixups=[],
    set_as_current=False,
)
lab_celery.conf.update(
    task_always_eager=False,
    worker_hijack_root_logger=False,
    broker_transport_options={"polling_interval": 0.01},
)


@lab_celery.task(name="tenancy_propagation.report_tenant")
def report_tenant() -> dict[str, Any]:
    return {"tenant": current_tenant_id(), "all": tenant_state() is ALL_TENANTS}


@lab_celery.task(name="tenancy_propagation.leave_a_tenant_behind")
def leave_a_tenant_behind() -> Any:
    _current.set(B)  # a task body that sets the tenant and never resets it
    return current_tenant_id()


@lab_celery.task(name="tenancy_propagation.wake")
def wake() -> None:
    """Ends the worker's wait for messages, so that it sees the stop request now."""


@pytest.fixture(scope="module")
def celery_worker() -> Iterator[Any]:
    """A real worker in another thread (memory broker, solo pool). The thread starts with
    an empty context, so a task sees a tenant only through the message header."""
    # start_worker makes its app the current and default one; put the demo's back after.
    default_app, current_app = celery._state.default_app, celery._state._tls.current_app
    try:
        with contextlib.ExitStack() as stack:
            with celery_worker_checks_skipped():
                worker = stack.enter_context(
                    start_worker(lab_celery, pool="solo", perform_ping_check=False)
                )
            yield worker
            # The worker checks for a stop between two waits of up to 2 s each (the second
            # one after the check): one message ends each wait.
            worker_state.should_terminate = 0
            wake.delay()
            wake.delay()
    finally:
        celery._state.default_app = default_app
        celery._state._tls.current_app = current_app


def run(task: Any) -> Any:
    return task.delay().get(timeout=10, interval=0.01)


def test_a_task_published_under_a_tenant_runs_under_it_in_a_worker(celery_worker: Any) -> None:
    with as_tenant(A):
        assert run(report_tenant) == {"tenant": A, "all": False}
    with as_tenant(B):
        assert run(report_tenant) == {"tenant": B, "all": False}


def test_a_task_published_with_no_tenant_right_after_a_tenant_task_runs_with_none(
    celery_worker: Any,
) -> None:
    with as_tenant(A):
        assert run(report_tenant)["tenant"] == A
    assert run(report_tenant) == {"tenant": None, "all": False}


def test_a_tenant_a_task_body_leaves_set_does_not_reach_the_next_task(celery_worker: Any) -> None:
    assert run(leave_a_tenant_behind) == B
    assert run(report_tenant) == {"tenant": None, "all": False}
    with as_tenant(A):
        assert run(leave_a_tenant_behind) == B
        assert run(report_tenant) == {"tenant": A, "all": False}


def test_a_task_published_under_all_tenants_runs_under_all_tenants(celery_worker: Any) -> None:
    with all_tenants():
        assert run(report_tenant) == {"tenant": None, "all": True}


def test_an_eager_task_runs_under_the_callers_tenant() -> None:
    with as_tenant(A):
        assert report_tenant.apply().get() == {"tenant": A, "all": False}
    assert report_tenant.apply().get() == {"tenant": None, "all": False}
    with as_tenant(B):
        assert report_tenant.apply().get() == {"tenant": B, "all": False}


def test_publishing_under_a_tenant_adds_the_tenant_header() -> None:
    headers: dict[str, Any] = {}
    with as_tenant(A):
        before_publish(sender="lab.task", headers=headers)
    assert headers == {HEADER: {"id": A}}


def test_publishing_under_all_tenants_adds_the_all_tenants_header() -> None:
    headers: dict[str, Any] = {}
    with all_tenants():
        before_publish(sender="lab.task", headers=headers)
    assert headers == {HEADER: {"all": True}}


def test_publishing_with_no_tenant_adds_no_header() -> None:
    headers: dict[str, Any] = {}
    before_publish(sender="lab.task", headers=headers)
    assert headers == {}


def test_the_publish_receiver_is_connected_to_celerys_before_task_publish_signal() -> None:
    headers: dict[str, Any] = {"task": "lab.task", "id": "0f1e2d"}
    with as_tenant(B):
        signals.before_task_publish.send(
            sender="lab.task",
            body=((), {}, {}),
            exchange="",
            routing_key="celery",
            headers=headers,
            properties={},
            declare=[],
            retry_policy=None,
        )
    assert headers == {"task": "lab.task", "id": "0f1e2d", HEADER: {"id": B}}


# -- management commands ---------------------------------------------------------------------
class ReportCommand(TenantCommand):
    help = "Print the tenant state and the posts this command can read."

    def handle(self, *args: Any, **options: Any) -> None:
        self.stdout.write(
            json.dumps(
                {
                    "tenant": current_tenant_id(),
                    "all": tenant_state() is ALL_TENANTS,
                    "titles": titles(),
                }
            )
        )


def report(*args: Any, **options: Any) -> dict[str, Any]:
    out = StringIO()
    call_command(ReportCommand(), *args, stdout=out, **options)
    return json.loads(out.getvalue())


@pytest.mark.django_db
def test_tenant_command_runs_handle_under_the_tenant_option(two_tenants: dict[str, Any]) -> None:
    result = report("--tenant", str(B))
    assert result["titles"] == ["B-post"]
    assert str(result["tenant"]) == str(B)
    assert report("--tenant=1")["titles"] == ["A-post"]
    assert report(tenant=B)["titles"] == ["B-post"]
    assert current_tenant_id() is None


@pytest.mark.django_db
def test_tenant_command_runs_handle_under_all_tenants_with_the_all_tenants_option(
    two_tenants: dict[str, Any],
) -> None:
    expected = {"tenant": None, "all": True, "titles": ["A-post", "B-post"]}
    assert report("--all-tenants") == expected
    assert report(all_tenants=True) == expected


@pytest.mark.django_db
def test_tenant_command_requires_the_tenant_or_the_all_tenants_option(
    two_tenants: dict[str, Any],
) -> None:
    with pytest.raises(CommandError, match="--tenant"):
        report()
    with pytest.raises(CommandError, match="not allowed"):
        report("--tenant", "1", "--all-tenants")
    with pytest.raises(CommandError, match="needs a tenant id"):
        report("--tenant", " ")


@pytest.mark.django_db
def test_tenant_command_ignores_a_tenant_selected_by_its_caller(
    two_tenants: dict[str, Any],
) -> None:
    with as_tenant(A):
        assert report("--tenant", str(B))["titles"] == ["B-post"]
        assert report("--all-tenants")["titles"] == ["A-post", "B-post"]
        assert current_tenant_id() == A


@pytest.mark.django_db
def test_a_tenant_command_stamps_new_rows_with_its_tenant(db: Any) -> None:
    class CreateCommand(TenantCommand):
        def handle(self, *args: Any, **options: Any) -> None:
            Post.objects.create(title="made by a command")

    call_command(CreateCommand(), "--tenant", str(B))
    assert list(Post.unscoped.values_list("title", "tenant_id")) == [("made by a command", B)]


def dumped(capsys: pytest.CaptureFixture[str]) -> list[tuple[str, int]]:
    rows = json.loads(capsys.readouterr().out)
    return sorted((row["fields"]["title"], row["fields"]["tenant_id"]) for row in rows)


@pytest.mark.django_db
def test_tenant_command_runs_another_command_under_the_tenant(
    two_tenants: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("tenant_command", "--tenant", str(B), "dumpdata", "tenancy_lab.post")
    assert dumped(capsys) == [("B-post", B)]
    call_command("tenant_command", "--tenant=1", "dumpdata", "tenancy_lab.post")
    assert dumped(capsys) == [("A-post", A)]


@pytest.mark.django_db
def test_tenant_command_passes_the_other_commands_own_options_through(
    two_tenants: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    call_command(
        "tenant_command", "--tenant", str(A), "dumpdata", "--indent", "2", "tenancy_lab.post"
    )
    out = capsys.readouterr().out
    assert "\n  " in out
    assert sorted(row["fields"]["title"] for row in json.loads(out)) == ["A-post"]


@pytest.mark.django_db(transaction=True)
def test_tenant_commands_run_from_the_command_line_under_the_tenant_option(
    two_tenants: dict[str, Any], demo_stack: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command line runs the system checks first: with the demo's full middleware."""
    ReportCommand().run_from_argv(["manage.py", "report", "--tenant", str(B)])
    assert json.loads(capsys.readouterr().out)["titles"] == ["B-post"]
    ManagementUtility(
        ["manage.py", "tenant_command", "--tenant", str(A), "dumpdata", "tenancy_lab.post"]
    ).execute()
    assert dumped(capsys) == [("A-post", A)]
    with pytest.raises(SystemExit):
        ReportCommand().run_from_argv(["manage.py", "report"])
    assert "one of the arguments --tenant --all-tenants is required" in capsys.readouterr().err


@pytest.mark.django_db
def test_tenant_command_runs_another_command_under_all_tenants(
    two_tenants: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    call_command("tenant_command", "--all-tenants", "dumpdata", "tenancy_lab.post")
    assert dumped(capsys) == [("A-post", A), ("B-post", B)]


@pytest.mark.django_db
def test_tenant_command_requires_a_tenant_option_before_the_other_command(
    two_tenants: dict[str, Any],
) -> None:
    with pytest.raises(CommandError, match="--tenant"):
        call_command("tenant_command", "dumpdata", "tenancy_lab.post")


@pytest.mark.django_db
def test_tenant_command_options_after_the_other_commands_name_select_no_tenant_and_are_refused(
    two_tenants: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    """Everything after the command's name is that command's; call_command puts keyword
    options after the positional arguments, so ``tenant=`` lands there too."""
    with pytest.raises(CommandError, match="--tenant"):
        call_command("tenant_command", "dumpdata", "tenancy_lab.post", "--tenant", str(B))
    with pytest.raises(CommandError, match="--tenant"):
        call_command("tenant_command", "dumpdata", "tenancy_lab.post", tenant=B)
    assert capsys.readouterr().out == ""


@pytest.mark.django_db
def test_tenant_command_writes_the_other_commands_output_to_its_stdout(
    two_tenants: dict[str, Any],
) -> None:
    out = StringIO()
    call_command("tenant_command", "--tenant", str(B), "dumpdata", "tenancy_lab.post", stdout=out)
    rows = json.loads(out.getvalue())
    assert [row["fields"]["title"] for row in rows] == ["B-post"]
