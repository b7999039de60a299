"""Per-query cost of ``TENANCY["ROW_LEVEL_SECURITY"]`` on PostgreSQL: the same scoped
query with ``carry_tenant`` on the connection and without it.

Run from the repository root (PostgreSQL: a table of its own is created in the named
database and dropped at the end):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        .venv/bin/python benchmarks/tenancy_rls.py [--rounds 15] [--batch-seconds 0.2] [--quick] [--json]

One tenant model, ``Item(TenantModel)``, 20,000 rows of tenants 1 and 2, with the
policy of ``rls_policy_sql`` on its table. The connection is an ordinary role (neither a
superuser nor ``BYPASSRLS``), so PostgreSQL applies the policy. Query: the first 50 rows
by id with ``number`` in a range (about 100 rows of a tenant match), scoped by the
manager.

* same tenant - every query under tenant 1: the wrapper only compares the tenant with
  what the session holds. Its baseline gives the session that tenant once by hand (the
  policy still holds it to the tenant): what ``rls_tenant()`` or a hand-written
  ``SET`` would cost when the tenant never changes;
* alternating - tenants 1 and 2 in turn: the wrapper sets the session's value before
  every query (one more statement). Its baseline sets the value by hand before each
  query, as a middleware doing it per request would.

Before timing, the script checks that every contender returns only its tenant's rows.
Times are wall clock (a round trip to the server is part of the cost); ratios are the
median of per-round ratios. Target: same tenant <= 1.05 (the check is all it adds);
alternating is reported for information.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import benchlib

TARGET = 1.05
ROWS = 20_000
LO, HI = 500_000, 510_000
PAGE = 50
ROLE = f"bench_rls_{os.getpid()}"
TABLE = f"bench_rls_item_{os.getpid()}"


def configure() -> None:
    url = os.environ.get("DATABASE_URL", "")
    if not url.startswith(("postgres://", "postgresql://")):
        raise SystemExit("tenancy_rls.py needs DATABASE_URL=postgres://... (row-level security)")
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from testproject.settings import database_from_url  # the demo's one URL parser

    benchlib.configure_django(
        INSTALLED_APPS=["django.contrib.contenttypes", "appframework_tenancy"],
        DATABASES={"default": database_from_url(url)},
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        APPFRAMEWORK={},
    )


def build() -> Any:
    from django.db import connection, models

    from appframework_tenancy import TenantModel
    from appframework_tenancy.postgres import rls_policy_sql

    class Item(TenantModel):
        number = models.IntegerField(db_index=True)
        name = models.CharField(max_length=40)

        class Meta:
            app_label = "appframework_tenancy"
            db_table = TABLE

    with connection.schema_editor() as editor:
        editor.create_model(Item)
    rng = random.Random(20241126)
    Item.unscoped.bulk_create(
        (
            Item(tenant_id=i % 2 + 1, number=rng.randrange(1_000_000), name=f"item {i}")
            for i in range(ROWS)
        ),
        batch_size=5000,
    )
    with connection.cursor() as cursor:
        for statement in rls_policy_sql(TABLE):
            cursor.execute(statement)
        cursor.execute(f"CREATE ROLE {ROLE} NOLOGIN NOSUPERUSER NOBYPASSRLS")
        cursor.execute(f"GRANT SELECT ON {TABLE} TO {ROLE}")
        cursor.execute(f"ANALYZE {TABLE}")
        cursor.execute(f"SET ROLE {ROLE}")
    return Item


def teardown() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("RESET ROLE")
        cursor.execute(f"DROP TABLE IF EXISTS {TABLE}")
        cursor.execute(f"DROP ROLE IF EXISTS {ROLE}")


def set_by_hand(tenant: int) -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('app.tenant_id', %s, false)", [str(tenant)])


def contenders(Item: Any) -> dict[str, Callable[[int], Any]]:
    """Each runs ``n`` queries and returns the rows of the last."""
    from django.db import connection

    from appframework_tenancy import as_tenant
    from appframework_tenancy.postgres import carry_tenant

    def forget() -> None:
        # The "by hand" contenders change the session's value behind the wrapper's back
        # (which an application must not do): make it look again, once per batch.
        connection._appframework_rls_applied = None  # type: ignore[attr-defined]

    def page() -> list[Any]:
        return list(Item.objects.filter(number__gte=LO, number__lt=HI).order_by("id")[:PAGE])

    def same_carried(n: int) -> Any:
        forget()
        with connection.execute_wrapper(carry_tenant), as_tenant(1):
            for _ in range(n):
                rows = page()
        return rows

    def same_by_hand(n: int) -> Any:
        set_by_hand(1)
        with as_tenant(1):
            for _ in range(n):
                rows = page()
        return rows

    def alternating_carried(n: int) -> Any:
        forget()
        with connection.execute_wrapper(carry_tenant):
            for i in range(n):
                with as_tenant(i % 2 + 1):
                    rows = page()
        return rows

    def alternating_by_hand(n: int) -> Any:
        for i in range(n):
            with as_tenant(i % 2 + 1):
                set_by_hand(i % 2 + 1)
                rows = page()
        return rows

    return {
        "same tenant carried": same_carried,
        "same tenant by hand": same_by_hand,
        "alternating carried": alternating_carried,
        "alternating by hand": alternating_by_hand,
    }


def check(ops: dict[str, Callable[[int], Any]]) -> None:
    for name, op in ops.items():
        for n in (1, 2):
            # The last query's tenant: always 1, or 1 then 2 when alternating.
            tenant = n if name.startswith("alternating") else 1
            rows = op(n)
            assert rows and all(row.tenant_id == tenant for row in rows), (name, n)
    set_by_hand(0)  # no tenant: the policy shows nothing


def batch(op: Callable[[int], Any], n: int, clock: Callable[[], float]) -> float:
    start = clock()
    op(n)
    return (clock() - start) / n


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled(
        "--batch-seconds", float, 0.2, 0.1, "seconds per contender per round", smoke=0.02
    )
    parser.add_clock("wall")
    args = parser.parse_args()
    clock = args.timer

    configure()
    Item = build()
    try:
        ops = contenders(Item)
        check(ops)
        for op in ops.values():
            batch(op, 50, clock)  # warm-up
        n = max(20, round(args.batch_seconds / batch(ops["same tenant by hand"], 100, clock)))
        samples = benchlib.interleave(
            {name: partial(batch, op, n, clock) for name, op in ops.items()},
            args.rounds,
            rotate=False,
        )
    finally:
        teardown()

    print(f"{ROWS} rows, 2 tenants, policy on, an ordinary role; {benchlib.platform()}")
    print(f"{args.rounds} rounds x {n} queries per contender, clock={args.clock}")
    info: dict[str, float] = {}
    ratios = []
    for kind in ("same tenant", "alternating"):
        med = {
            side: statistics.median(samples[f"{kind} {side}"]) * 1e6
            for side in ("carried", "by hand")
        }
        r = benchlib.median_ratio(samples[f"{kind} carried"], samples[f"{kind} by hand"])
        print(
            f"  {kind:<12} carried {med['carried']:8.1f} us   by hand {med['by hand']:8.1f} us"
            f"   ratio {r:.3f}"
        )
        info[f"{kind} carried us"] = med["carried"]
        info[f"{kind} by hand us"] = med["by hand"]
        if kind == "same tenant":
            ratios.append(benchlib.Ratio("carried/by hand, same tenant", r, "<=", TARGET))
        else:
            info["carried/by hand, alternating"] = r
    return benchlib.finish(args, "tenancy_rls", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
