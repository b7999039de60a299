"""Per-request cost of appframework_graphql's endpoint vs graphene-django and strawberry.

Run one contender set inside one venv (see setup_envs.sh and run.sh, which runs both):

    .venvs/bench-graphene/bin/python benchmarks/graphql/bench.py \\
        --contenders ours,ours-nocache,graphene,floor --samples A.json
    .venvs/bench-strawberry/bin/python benchmarks/graphql/bench.py \\
        --contenders ours,ours-nocache,strawberry,strawberry-cached,floor --samples B.json
    .venvs/bench-graphene/bin/python benchmarks/graphql/bench.py report [--json] A.json B.json

The last one prints the combined table and the target ratios (``--json``: also as one
JSON object on stdout, see benchlib.py).

Contenders (all the same schema, see bench_schemas.py, and the same request):

* ours              appframework_graphql.views.graphql_view, DOCUMENT_CACHE_SIZE default (256)
* ours-nocache      the same view with APPFRAMEWORK["GRAPHQL"]["DOCUMENT_CACHE_SIZE"] = 0
* graphene          graphene_django.views.GraphQLView(graphiql=False), in csrf_exempt
* strawberry        strawberry.django.views.GraphQLView(graphql_ide=None), in csrf_exempt
* strawberry-cached the same with strawberry.extensions.ParserCache + ValidationCache
* floor             a trivial JSON view: json.loads the body, graphql-core ``execute`` of
                    a document parsed and validated once at import, json.dumps the result

Request: POST /graphql (each contender has its own one-pattern URLconf), Content-Type
and Accept application/json, body {"query": "query Q($n: String) { hello(name: $n) node { id child { id child { id } } } }",
 "variables": {"n": "bench"}}. Every contender's response JSON is checked to be identical.

Django set-up, the same for every contender: DEBUG=False, MIDDLEWARE=[] (``--middleware
common`` adds only CommonMiddleware), INSTALLED_APPS=[appframework_graphql], one
WSGIHandler. Each request is a full WSGI round trip (``handler(environ, start_response)``,
body iterated, ``close()`` called so request_finished fires), no socket.

Timing: contenders run in interleaved rounds (order rotated and reversed round by round);
each round times one batch per contender, sized so a batch takes about --batch-seconds.
Every batch runs inside ``override_settings`` (that contender's ROOT_URLCONF; for
ours-nocache also APPFRAMEWORK, which rebuilds the document cache) and is preceded by a
few untimed requests that bring it back to its steady state. Times are this process's
CPU time by default (``--clock wall`` for perf_counter): on a shared 2-core VM wall time
mostly measures the neighbours. us = median over rounds of the batch mean; a ratio =
median over rounds of the per-round ratio. ``--quick``: 7 rounds of ~0.15 s batches.

``--profile CONTENDER`` runs that contender under cProfile instead and prints where the
time goes, grouped by package and by function.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
for _path in (HERE, HERE.parent):  # bench_schemas; the shared benchlib and wsgi_driver
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import benchlib  # noqa: E402
import wsgi_driver  # noqa: E402
from bench_schemas import EXPECTED, QUERY, VARIABLES  # noqa: E402

ALL_CONTENDERS = ("ours", "ours-nocache", "graphene", "strawberry", "strawberry-cached", "floor")
BODY = json.dumps({"query": QUERY, "variables": VARIABLES}).encode()

TARGETS = {
    # name: (numerator, denominator, venv, comparison, target)
    "graphene/ours": ("graphene", "ours", "bench-graphene", ">=", 5.0),
    "strawberry-cached/ours": ("strawberry-cached", "ours", "bench-strawberry", ">=", 1.3),
    "ours/floor (gql-core 3.2)": ("ours", "floor", "bench-graphene", "<=", 1.25),
    "ours/floor (gql-core 3.3)": ("ours", "floor", "bench-strawberry", "<=", 1.25),
}
INFO_RATIOS = {
    "strawberry/ours": ("strawberry", "ours", "bench-strawberry"),
    "ours-nocache/ours (gql-core 3.2)": ("ours-nocache", "ours", "bench-graphene"),
    "ours-nocache/ours (gql-core 3.3)": ("ours-nocache", "ours", "bench-strawberry"),
}


# -- Django set-up ---------------------------------------------------------------------------
def configure(middleware: str) -> None:
    benchlib.configure_django(
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=["appframework_graphql"],
        MIDDLEWARE=["django.middleware.common.CommonMiddleware"] if middleware == "common" else [],
        ROOT_URLCONF=urlconf_name("ours"),  # replaced per contender, see install_urls
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        TEMPLATES=[
            {
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
            }
        ],
        APPFRAMEWORK={"GRAPHQL": {"SCHEMA": "bench_schemas.CORE_SCHEMA"}},
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
    )


NOCACHE_SETTINGS = {"GRAPHQL": {"SCHEMA": "bench_schemas.CORE_SCHEMA", "DOCUMENT_CACHE_SIZE": 0}}


def make_floor_view() -> Any:
    from bench_schemas import CORE_SCHEMA
    from django.http import HttpResponse
    from graphql import execute, parse, validate

    document = parse(QUERY)
    assert not validate(CORE_SCHEMA, document)

    def floor_view(request: Any) -> HttpResponse:
        body = json.loads(request.body)
        result = execute(
            CORE_SCHEMA,
            document,
            context_value={"request": request},
            variable_values=body.get("variables"),
            operation_name=body.get("operationName"),
        )
        out: dict[str, Any] = {"data": result.data}
        if result.errors:
            out["errors"] = [e.formatted for e in result.errors]
        return HttpResponse(json.dumps(out, separators=(",", ":")), content_type="application/json")

    return floor_view


def make_views(contenders: list[str]) -> dict[str, Any]:
    import bench_schemas
    from django.views.decorators.csrf import csrf_exempt

    views: dict[str, Any] = {}
    schemas: dict[str, Any] = {"core": bench_schemas.CORE_SCHEMA}
    for name in contenders:
        if name in ("ours", "ours-nocache"):
            from appframework_graphql.views import graphql_view

            views[name] = graphql_view
        elif name == "floor":
            views[name] = make_floor_view()
        elif name == "graphene":
            from graphene_django.views import GraphQLView as GrapheneView

            schema = bench_schemas.build_graphene_schema()
            schemas[name] = schema
            views[name] = csrf_exempt(GrapheneView.as_view(schema=schema, graphiql=False))
        elif name in ("strawberry", "strawberry-cached"):
            from strawberry.django.views import GraphQLView as StrawberryView
            from strawberry.extensions import ParserCache, ValidationCache

            extensions = [ParserCache, ValidationCache] if name == "strawberry-cached" else []
            schema = bench_schemas.build_strawberry_schema(extensions)
            schemas[name] = schema
            views[name] = csrf_exempt(StrawberryView.as_view(schema=schema, graphql_ide=None))
        else:
            raise SystemExit(f"unknown contender {name!r}; known: {', '.join(ALL_CONTENDERS)}")
    bench_schemas.check_equivalent(schemas)
    return views


def install_urls(views: dict[str, Any]) -> None:
    """One URLconf module per contender, each with the single pattern ``graphql``, so every
    contender pays the same URL resolution (in one shared URLconf, later patterns would pay
    for the earlier ones' failed matches). A contender's batches run with its URLconf as
    ROOT_URLCONF (see Contender.__enter__)."""
    import types

    from django.urls import path

    for name, view in views.items():
        module = types.ModuleType(urlconf_name(name))
        module.urlpatterns = [path("graphql", view)]  # type: ignore[attr-defined]
        sys.modules[module.__name__] = module


def urlconf_name(contender: str) -> str:
    return "_graphql_bench_urls_" + contender.replace("-", "_")


# -- WSGI driving ------------------------------------------------------------------------------
def environ_for(name: str) -> dict[str, Any]:
    from django.test import RequestFactory

    environ = RequestFactory()._base_environ(
        PATH_INFO="/graphql",
        REQUEST_METHOD="POST",
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(len(BODY)),
        HTTP_ACCEPT="application/json",
    )
    environ.pop("HTTP_COOKIE", None)
    return environ


def call(handler: Any, environ: dict[str, Any]) -> tuple[str, bytes]:
    status, _headers, body = wsgi_driver.call(handler, environ, BODY)
    return status, body


def run_batch(handler: Any, environ: dict[str, Any], n: int, clock: Any) -> float:
    """Mean seconds per request over ``n`` requests."""
    return wsgi_driver.run_batch(handler, environ, n, clock, BODY)


class Contender:
    """One endpoint; its requests run under its own ROOT_URLCONF (and, for
    ``ours-nocache``, DOCUMENT_CACHE_SIZE 0) via override_settings."""

    def __init__(self, name: str, handler: Any) -> None:
        self.name = name
        self.handler = handler
        self.environ = environ_for(name)
        self.n = 0

    def __enter__(self) -> Contender:
        from django.test.utils import override_settings

        changes: dict[str, Any] = {"ROOT_URLCONF": urlconf_name(self.name)}
        if self.name == "ours-nocache":
            changes["APPFRAMEWORK"] = NOCACHE_SETTINGS
        self._override = override_settings(**changes)
        self._override.enable()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._override.disable()

    def check(self) -> None:
        with self:
            status, body = call(self.handler, self.environ)
            if self.name.startswith("ours"):
                from appframework_graphql.execution import document_cache

                call(self.handler, self.environ)
                cache = document_cache()
                want = (0, 0) if self.name == "ours-nocache" else (256, 1)
                assert (cache.maxsize, cache.hits) == want, (self.name, cache.maxsize, cache.hits)
        assert status.startswith("200"), (self.name, status, body)
        assert json.loads(body) == EXPECTED, (self.name, body)

    def batch(self, clock: Any) -> float:
        with self:
            run_batch(self.handler, self.environ, 5, clock)  # untimed: back to steady state
            return run_batch(self.handler, self.environ, self.n, clock)


# -- measuring -----------------------------------------------------------------------------------
def measure(args: argparse.Namespace, contenders: list[Contender]) -> dict[str, list[float]]:
    clock = args.timer
    # Calibrate: warm up each contender and size its batch to about --batch-seconds.
    for c in contenders:
        with c:
            run_batch(c.handler, c.environ, args.warmup, clock)
            per = run_batch(c.handler, c.environ, args.warmup, clock)
        c.n = max(20, min(20000, round(args.batch_seconds / per)))
    return benchlib.interleave({c.name: partial(c.batch, clock) for c in contenders}, args.rounds)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0]}
    for dist in (
        "Django",
        "graphql-core",
        "graphene",
        "graphene-django",
        "strawberry-graphql",
        "appframework",
    ):
        with contextlib.suppress(PackageNotFoundError):
            out[dist] = version(dist)
    return out


def profile(args: argparse.Namespace, contenders: list[Contender]) -> None:
    import cProfile
    import pstats

    (c,) = [c for c in contenders if c.name == args.profile]
    with c:
        run_batch(c.handler, c.environ, args.warmup, time.perf_counter)
        prof = cProfile.Profile()
        prof.enable()
        run_batch(c.handler, c.environ, args.profile_requests, time.perf_counter)
        prof.disable()
    stats = pstats.Stats(prof)
    n = args.profile_requests
    total = sum(v[2] for v in stats.stats.values())  # type: ignore[attr-defined]

    def group(filename: str) -> str:
        if filename.startswith(str(HERE)):
            return "benchmark harness"
        for key in (
            "appframework_graphql",
            "appframework",
            "graphene_django",
            "graphene",
            "strawberry",
            "graphql",
            "django",
            "asgiref",
            "json",
        ):
            if f"/{key}/" in filename:
                return key
        if filename == "~":
            return "builtins (C)"
        return "stdlib/other"

    by_group: dict[str, float] = {}
    for (filename, _line, _func), (_cc, _nc, tt, _ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        g = group(filename)
        by_group[g] = by_group.get(g, 0.0) + tt
    print(
        f"\ncProfile of {c.name}: {n} requests, {total / n * 1e6:.1f} us/request under the profiler"
    )
    print("self time by package (us/request, share):")
    for g, tt in sorted(by_group.items(), key=lambda kv: -kv[1]):
        print(f"  {g:<22}{tt / n * 1e6:>9.1f}  {tt / total:>6.1%}")

    rows = []
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        rows.append((ct, tt, nc, f"{group(filename)}:{Path(filename).name}:{line}({func})"))
    print("\ntop functions by cumulative time (us/request cum, self, calls/request):")
    for ct, tt, nc, label in sorted(rows, reverse=True)[: args.profile_top]:
        print(f"  {ct / n * 1e6:>8.1f} {tt / n * 1e6:>8.1f} {nc / n:>6.1f}  {label}")
    print("\nappframework / appframework_graphql functions (us/request cum, self, calls/request):")
    for ct, tt, nc, label in sorted(rows, reverse=True):
        if label.startswith("appframework"):
            print(f"  {ct / n * 1e6:>8.1f} {tt / n * 1e6:>8.1f} {nc / n:>6.1f}  {label}")
    print("\ntop functions by self time:")
    for ct, tt, nc, label in sorted(rows, key=lambda r: -r[1])[: args.profile_top]:
        print(f"  {ct / n * 1e6:>8.1f} {tt / n * 1e6:>8.1f} {nc / n:>6.1f}  {label}")


def run(args: argparse.Namespace) -> int:
    names = [n.strip() for n in args.contenders.split(",") if n.strip()]
    configure(args.middleware)
    from django.core.handlers.wsgi import WSGIHandler

    install_urls(make_views(names))
    handler = WSGIHandler()
    contenders = [Contender(name, handler) for name in names]
    for c in contenders:
        c.check()

    if args.profile:
        profile(args, contenders)
        return 0

    vers = versions()
    print(" ".join(f"{k}={v}" for k, v in vers.items()))
    print(
        f"MIDDLEWARE={'[CommonMiddleware]' if args.middleware == 'common' else '[]'}, DEBUG=False; "
        f"{args.rounds} rounds, ~{args.batch_seconds}s batches, {args.clock} clock",
        flush=True,
    )
    samples = measure(args, contenders)
    for c in contenders:
        med = statistics.median(samples[c.name]) * 1e6
        lo, hi = min(samples[c.name]) * 1e6, max(samples[c.name]) * 1e6
        print(f"  {c.name:<18}{med:>9.1f} us/request  (min {lo:.1f}, max {hi:.1f}, n={c.n}/batch)")
    if args.samples:
        out = {
            "venv": args.venv,
            "versions": vers,
            "middleware": args.middleware,
            "clock": args.clock,
            "samples": samples,
        }
        Path(args.samples).write_text(json.dumps(out))
    return 0


# -- the combined table --------------------------------------------------------------------------
def report(argv: list[str]) -> int:
    parser = benchlib.Parser("The combined table of runs' --samples files.", measures=False)
    parser.add_argument("samples", nargs="+", help="--samples files of bench.py runs")
    args = parser.parse_args(argv)
    runs = {}
    for p in args.samples:
        data = json.loads(Path(p).read_text())
        runs[data["venv"]] = data
    for venv, data in runs.items():
        v = data["versions"]
        print(
            f"[{venv}] Django {v.get('Django')}, graphql-core {v.get('graphql-core')}"
            + (f", graphene-django {v['graphene-django']}" if "graphene-django" in v else "")
            + (
                f", strawberry-graphql {v['strawberry-graphql']}"
                if "strawberry-graphql" in v
                else ""
            )
            + f"; MIDDLEWARE={'[CommonMiddleware]' if data['middleware'] == 'common' else '[]'}"
            + f", {data['clock']} clock"
        )
    print()
    print(f"{'contender':<20}" + "".join(f"{venv + ' us':>20}" for venv in runs))
    names = [n for n in ALL_CONTENDERS if any(n in d["samples"] for d in runs.values())]
    for name in names:
        cells = ""
        for data in runs.values():
            s = data["samples"].get(name)
            cells += f"{statistics.median(s) * 1e6:>20.1f}" if s else f"{'-':>20}"
        print(f"{name:<20}{cells}")

    def ratio(num: str, den: str, venv: str) -> float | None:
        data = runs.get(venv)
        if not data or num not in data["samples"] or den not in data["samples"]:
            return None
        return benchlib.median_ratio(data["samples"][num], data["samples"][den])

    print("\nratios (median of per-round ratios):")
    info: dict[str, float] = {}
    for label, (num, den, venv) in INFO_RATIOS.items():
        value = ratio(num, den, venv)
        if value is not None:
            info[label] = value
            print(f"  {label:<34}{value:>8.3f}  (info)")
    ratios = []
    for label, (num, den, venv, op, target) in TARGETS.items():
        value = ratio(num, den, venv)
        if value is None:
            print(f"  {label:<34}{'-':>8}  not run")
        else:
            ratios.append(benchlib.Ratio(label, value, op, target))
    return benchlib.finish(args, "graphql", ratios, info)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "report":
        return report(sys.argv[2:])
    parser = benchlib.Parser(__doc__.split("\n")[0], reports=False)
    parser.add_argument(
        "--contenders",
        default="ours,ours-nocache,floor",
        help=f"comma-separated, from: {', '.join(ALL_CONTENDERS)}",
    )
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled("--batch-seconds", float, 0.3, 0.15, smoke=0.03)
    parser.add_argument("--warmup", type=int, default=100, help="requests per calibration pass")
    parser.add_clock("cpu")
    parser.add_argument("--middleware", choices=("none", "common"), default="none")
    parser.add_argument("--samples", help="write the raw samples here (for the report mode)")
    parser.add_argument("--venv", default=Path(sys.prefix).name, help="label for the report")
    parser.add_argument("--profile", metavar="CONTENDER", help="cProfile this contender instead")
    parser.add_argument("--profile-requests", type=int, default=3000)
    parser.add_argument("--profile-top", type=int, default=30)
    return run(parser.parse_args())


if __name__ == "__main__":
    sys.exit(main())
