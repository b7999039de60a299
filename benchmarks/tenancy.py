"""Per-query cost of the tenant scope: ``Model.objects`` (the late-binding ``TenantScope``)
vs the same query with the tenant filter written by hand on ``Model.unscoped``.

Run from the repository root:

    .venv/bin/python benchmarks/tenancy.py [--rounds 15] [--batch-seconds 0.1] [--clock cpu|wall] [--quick] [--json]

One tenant model, ``Item(TenantModel)``: the indexed ``tenant_id`` of TenantModel, an
indexed ``number`` and a short ``name``, in an in-memory SQLite database. 100,000 rows,
alternately of tenant 1 and tenant 2 (50,000 each), ``number`` uniformly random in
[0, 1,000,000) (fixed seed); then ANALYZE, so that the planner picks the ``number`` index
as it would on a database with statistics. Two query kinds, each in a
``with as_tenant(1):`` block entered per query, so that only the filter differs:

* page  - the first 50 rows by id with ``number`` in [500,000, 502,000) (~100 of the
          tenant's rows match):
          scoped        list(Item.objects.filter(number__gte=LO, number__lt=HI)
                                 .order_by("id")[:50])
          hand-written  list(Item.unscoped.filter(tenant_id=1)
                                 .filter(number__gte=LO, number__lt=HI).order_by("id")[:50])
* count - the same filter, ``.count()``, on each manager.

Before timing the script asserts that both contenders of a kind run the same number of
queries (one each, CaptureQueriesContext) with the same SQL and parameters (printed once)
and return the same rows. A third pair, "compile", builds the page queryset and compiles
it (``query.get_compiler().as_sql()``) without running it: the scope's ORM overhead alone,
reported for information.

The six contenders run in interleaved rounds (15; 7 with ``--quick``), each timing N
queries (N sized so that a batch takes ~``--batch-seconds``, 0.1 s; 0.05 s with
``--quick``); the order is reversed every other round and the two contenders of a kind
always run back to back. us is the median over rounds of the per-query time, the ratio
the median of the per-round scoped/hand-written ratios. Times are this process's CPU
time by default (``--clock wall`` for perf_counter): SQLite runs in-process on an
in-memory database, so CPU time is the whole cost and is robust to other load.
``--json``: see benchlib.py.
Target: scoped/hand-written <= 1.05 for page and count.
"""

from __future__ import annotations

import gc
import random
import statistics
import sys
from collections.abc import Callable
from functools import partial
from typing import Any

import benchlib

TARGET = 1.05
ROWS = 100_000
TENANT = 1
LO, HI = 500_000, 502_000  # 0.2 % of the number range
PAGE = 50

KINDS = {
    "page": "page: 50 rows by id, number range",
    "count": "count: number range",
    "compile": "compile: build + as_sql, no DB",
}


def configure() -> None:
    benchlib.configure_django(
        INSTALLED_APPS=["django.contrib.contenttypes", "appframework_tenancy"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        APPFRAMEWORK={},  # the suite's defaults: TENANCY STRICT off (no check runs)
    )


def build() -> Any:
    """The model, its table and rows."""
    from django.db import connection, models

    from appframework_tenancy import TenantModel

    class Item(TenantModel):
        number = models.IntegerField(db_index=True)
        name = models.CharField(max_length=40)

        class Meta:
            app_label = "appframework_tenancy"

    with connection.schema_editor() as editor:
        editor.create_model(Item)
    rng = random.Random(20240601)
    Item.unscoped.bulk_create(
        (
            Item(tenant_id=i % 2 + 1, number=rng.randrange(1_000_000), name=f"item {i}")
            for i in range(ROWS)
        ),
        batch_size=5000,
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return Item


def contenders(Item: Any) -> dict[str, Callable[[], Any]]:
    from appframework_tenancy import as_tenant

    scoped, unscoped = Item.objects, Item.unscoped

    # Hand-written: tenant_id in its own filter() call, first, as the scope adds it. In
    # one call Django sorts the keyword arguments and tenant_id would come last in the
    # WHERE clause; the SQL would differ in order only.
    def page_scoped() -> list[Any]:
        with as_tenant(TENANT):
            return list(scoped.filter(number__gte=LO, number__lt=HI).order_by("id")[:PAGE])

    def page_hand() -> list[Any]:
        with as_tenant(TENANT):
            return list(
                unscoped.filter(tenant_id=TENANT)
                .filter(number__gte=LO, number__lt=HI)
                .order_by("id")[:PAGE]
            )

    def count_scoped() -> int:
        with as_tenant(TENANT):
            return int(scoped.filter(number__gte=LO, number__lt=HI).count())

    def count_hand() -> int:
        with as_tenant(TENANT):
            return int(
                unscoped.filter(tenant_id=TENANT).filter(number__gte=LO, number__lt=HI).count()
            )

    def compile_scoped() -> tuple[str, tuple[Any, ...]]:
        with as_tenant(TENANT):
            qs = scoped.filter(number__gte=LO, number__lt=HI).order_by("id")[:PAGE]
            return qs.query.get_compiler(qs.db).as_sql()  # type: ignore[no-any-return]

    def compile_hand() -> tuple[str, tuple[Any, ...]]:
        with as_tenant(TENANT):
            qs = (
                unscoped.filter(tenant_id=TENANT)
                .filter(number__gte=LO, number__lt=HI)
                .order_by("id")[:PAGE]
            )
            return qs.query.get_compiler(qs.db).as_sql()  # type: ignore[no-any-return]

    return {
        "page scoped": page_scoped,
        "page hand-written": page_hand,
        "count scoped": count_scoped,
        "count hand-written": count_hand,
        "compile scoped": compile_scoped,
        "compile hand-written": compile_hand,
    }


def check(ops: dict[str, Callable[[], Any]]) -> dict[str, int]:
    """Same queries, same SQL, same results; returns the query count per operation by kind."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts: dict[str, int] = {}
    for kind in KINDS:
        sql: dict[str, list[str]] = {}
        results: dict[str, Any] = {}
        for side in ("scoped", "hand-written"):
            with CaptureQueriesContext(connection) as ctx:
                results[side] = ops[f"{kind} {side}"]()
            sql[side] = [q["sql"] for q in ctx.captured_queries]
        assert len(sql["scoped"]) == len(sql["hand-written"]), (kind, sql)
        assert sql["scoped"] == sql["hand-written"], (kind, sql)
        assert results["scoped"] == results["hand-written"], kind
        counts[kind] = len(sql["scoped"])
        if kind == "page":
            rows = results["scoped"]
            assert len(rows) == PAGE and all(r.tenant_id == TENANT for r in rows), rows
            assert [r.pk for r in rows] == sorted(r.pk for r in rows)
        elif kind == "count":
            assert results["scoped"] > PAGE, results  # the page is a real LIMIT
        if sql["scoped"]:
            what = f"{len(results['scoped'])} rows" if kind == "page" else results["scoped"]
            print(f"{kind} ({what}), the SQL of both contenders:")
            print("\n".join(f"  {line}" for line in sql["scoped"]))
    assert counts == {"page": 1, "count": 1, "compile": 0}, counts
    return counts


def batch(op: Callable[[], Any], n: int, clock: Callable[[], float]) -> float:
    start = clock()
    for _ in range(n):
        op()
    return (clock() - start) / n


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled(
        "--batch-seconds", float, 0.1, 0.05, "seconds per contender per round", smoke=0.01
    )
    parser.add_clock("cpu")
    args = parser.parse_args()
    clock = args.timer

    configure()
    Item = build()
    ops = contenders(Item)
    counts = check(ops)

    from appframework_tenancy import as_tenant

    with as_tenant(TENANT):
        plan = Item.objects.filter(number__gte=LO, number__lt=HI).order_by("id")[:PAGE].explain()
    print("page plan (SQLite):", " | ".join(line.strip() for line in plan.splitlines()))

    # Warm-up, and N per kind from the hand-written side.
    sizes: dict[str, int] = {}
    for kind in KINDS:
        for side in ("scoped", "hand-written"):
            batch(ops[f"{kind} {side}"], 20, clock)
        per_op = batch(ops[f"{kind} hand-written"], 50, clock)
        sizes[kind] = max(20, round(args.batch_seconds / per_op))

    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        # Not rotated: the two sides of a kind stay back to back; who goes first alternates.
        samples = benchlib.interleave(
            {name: partial(batch, op, sizes[name.split()[0]], clock) for name, op in ops.items()},
            args.rounds,
            rotate=False,
            after_round=gc.collect,
        )
    finally:
        if gc_was_enabled:
            gc.enable()

    def ratio(kind: str) -> float:
        return benchlib.median_ratio(samples[f"{kind} scoped"], samples[f"{kind} hand-written"])

    print(f"{ROWS} rows, 2 tenants; {benchlib.platform()}")
    print(
        f"{args.rounds} rounds x N operations per contender, clock={args.clock}; "
        "us = median per operation, ratio = median of per-round scoped/hand-written"
    )
    print(f"{'kind':<34}{'N':>6}{'queries':>9}{'scoped us':>11}{'hand us':>10}{'ratio':>8}")
    info: dict[str, float] = {}
    for kind, label in KINDS.items():
        med = {
            side: statistics.median(samples[f"{kind} {side}"]) * 1e6
            for side in ("scoped", "hand-written")
        }
        r = ratio(kind)
        print(
            f"{label:<34}{sizes[kind]:>6}{counts[kind]:>9}"
            f"{med['scoped']:>11.1f}{med['hand-written']:>10.1f}{r:>8.3f}"
        )
        info[f"{kind} scoped us"] = med["scoped"]
        info[f"{kind} hand-written us"] = med["hand-written"]
    info["compile scoped/hand-written"] = ratio("compile")
    print(
        f"  scope overhead per query (compile): "
        f"{info['compile scoped us'] - info['compile hand-written us']:.1f} us"
    )
    ratios = [
        benchlib.Ratio(f"scoped/hand-written {kind}", ratio(kind), "<=", TARGET)
        for kind in ("page", "count")
    ]
    return benchlib.finish(args, "tenancy", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
