"""Per-request cost of the suite's DRF and django-ninja classes vs the frameworks' own.

Run from the repository root:

    .venv/bin/python benchmarks/api_frameworks.py [--rounds 15] [--batch-seconds 0.15] [--clock cpu|wall] [--quick] [--json]

One model, ``Article`` (title, body, author, created_at), created with the schema
editor in an in-memory SQLite database where testproject's apps and
``rest_framework.authtoken`` are migrated; 100 rows and one user. Every timed request
is a GET of the first page (20 rows, with the total count) of a list endpoint, a full
WSGI round trip (``wsgi_driver.py``) through one ``WSGIHandler`` whose MIDDLEWARE is the
suite's stack of ``middleware_stack.py`` (testproject's, without TenantMiddleware).
Every contender goes through that same handler and stack with the same cookies, so
only the framework classes differ.

DRF: one ``ModelViewSet`` (queryset ordered by id, a ``ModelSerializer`` of id, title,
body, author_id and created_at, ``PageNumberPagination`` of 20: a COUNT and the page,
JSON renderer), routed by a ``SimpleRouter``, in three subclasses:

* suite   - ``authentication_classes = [BearerTokenAuthentication,
            SessionAuthentication]``, ``permission_classes = [GatePermission]`` and the
            suite's ``exception_handler``; the Gate's policy for Article (shaped like
            testproject's PostPolicy: ``before`` refuses inactive users,
            ``view_article`` grants any signed-in user) answers ``view-article``.
* stock   - DRF's ``[SessionAuthentication, TokenAuthentication]`` (the
            ``rest_framework.authtoken`` table) and ``DjangoObjectPermissions`` whose
            ``perms_map`` requires ``blog.view_article`` for GET/HEAD, a permission the
            user holds through Django's permission system (``user_permissions``; the
            ModelBackend reads it with two queries per request).
* shipped - the same with DRF's own ``DjangoObjectPermissions``, unchanged.

Which DRF permission class: ``DjangoObjectPermissions`` needs an object-permission
backend only for ``has_object_permission``, which DRF calls from ``get_object()``
(detail routes). A list calls ``has_permission``, inherited unchanged from
``DjangoModelPermissions``: signed in, plus ``user.has_perms(perms_map[method])``.
But DRF's ``perms_map`` requires *no* permission for GET, so the class as shipped
checks only that someone is signed in. "stock" therefore overrides ``perms_map`` for
GET/HEAD to the model's view permission (what DRF's source comment suggests for
view permissions), so that it takes the same decision as the Gate; "shipped", which
decides less, is the cheapest stock set-up: the stricter comparison.

django-ninja: the same operation, ``@paginate(PageNumberPagination, page_size=20)``
over the same queryset, one ``Schema`` of the same five fields, on two ``NinjaAPI``s:

* suite - ``auth=[BearerAuth(), SessionAuth()]`` and ``install_exception_handlers``
          (the set-up of testproject's demo API);
* stock - ``auth=ninja.security.django_auth`` (ninja's ``SessionAuth``: Django's CSRF
          check, then ``request.user.is_authenticated``).

Scenarios:

a) session - the session cookie of a real login (``appframework.auth.login``) and the
   CSRF cookie the suite's stack issued for it, as a browser sends them;
b) bearer  - no cookies, ``Authorization: Bearer <token>`` (the suite's signed API
   token, ``TokenManager.issue``) to the suite's contenders and
   ``Authorization: Token <key>`` (a ``rest_framework.authtoken`` token) to DRF's
   (whose ``SessionAuthentication``, listed first, finds no user before the token
   class runs); ninja has no stock token class, so its suite bearer time is reported
   alone.

Before timing, the script checks that every contender answers 200 with the first 20
rows and the count (the same rows within a framework), sets no cookie, answers
401/403 without credentials; that "suite" answers 403 when the Gate's policy refuses
and "stock" when the view permission is taken away (so both really decide); and it
prints the SQL queries per request of each.

Method (as ``middleware_stack.py``): per scenario, ``--rounds`` (15; 7 with
``--quick``) rounds; in each round every contender serves N requests back to back (N
sized so a batch takes ~``--batch-seconds``, 0.15 s; 0.1 s with ``--quick``), order
flipped every round (the contenders of a framework stay neighbours). us = median over
rounds of the mean per-request time; ratio = median of the per-round ratios. Times are
this process's CPU time by default (``--clock wall`` for perf_counter). ``--json``:
see benchlib.py. About 35 s of CPU (``--quick``: about 20 s) on a 2-core machine.
Target, session scenario: suite/stock and suite/shipped <= 1.05 for DRF, suite/stock
<= 1.05 for ninja. The bearer scenario's ratios are information (no target).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime  # at module level: pydantic resolves ArticleOut's annotations here
from functools import partial
from typing import Any

import benchlib
from django.conf import settings
from middleware_stack import SUITE_MIDDLEWARE, base_environ, set_cookies
from wsgi_driver import call, run_batch

import testproject.settings as project_settings
from appframework.env import apply_environment

TARGET = 1.05
ROWS = 100
PAGE = 20
USER_EMAIL = "bench@example.com"
APP_LABEL = "blog"  # testproject's app: the model needs an installed app to live in


def configure() -> None:
    ns: dict[str, Any] = dict(
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=[*project_settings.INSTALLED_APPS, "rest_framework.authtoken"],
        MIDDLEWARE=SUITE_MIDDLEWARE,
        ROOT_URLCONF=__name__,
        TEMPLATES=project_settings.TEMPLATES,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
        AUTH_USER_MODEL=project_settings.AUTH_USER_MODEL,  # blog.User
        AUTHENTICATION_BACKENDS=list(project_settings.AUTHENTICATION_BACKENDS),
        APPFRAMEWORK={},  # the suite's defaults, filled in below
        REST_FRAMEWORK={
            # JSON only: the browsable API's renderer would be picked for no client here,
            # and leaving it out keeps content negotiation identical and short.
            "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
            "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
            "PAGE_SIZE": PAGE,
        },
        STATIC_URL="static/",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
    )
    # As in middleware_stack.py: the suite's defaults from an empty environment, so that
    # shell variables cannot change the stack being measured.
    apply_environment(ns, environ={})
    benchlib.configure_django(**ns)


# -- the model, the APIs, the URLconf (this module is ROOT_URLCONF) -----------------------
urlpatterns: list[Any] = []


def build_model() -> Any:
    from django.db import connection, models

    class Article(models.Model):
        title = models.CharField(max_length=200)
        body = models.TextField(blank=True)
        author = models.ForeignKey(
            settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
        )
        created_at = models.DateTimeField(auto_now_add=True)

        class Meta:
            app_label = APP_LABEL

        def __str__(self) -> str:
            return self.title

    with connection.schema_editor() as editor:
        editor.create_model(Article)
    return Article


class ArticlePolicy:
    """The Gate's rules for Article, shaped like testproject's PostPolicy."""

    def before(self, user: Any, ability: str) -> bool | None:
        return False if not getattr(user, "is_active", False) else None

    def view_article(self, user: Any, article: Any = None) -> bool:
        return bool(user.is_authenticated)


class RefusingPolicy(ArticlePolicy):
    def view_article(self, user: Any, article: Any = None) -> bool:
        return False


def drf_urls(Article: Any) -> list[Any]:
    from django.urls import include, path
    from rest_framework import authentication, permissions, serializers, viewsets
    from rest_framework.routers import SimpleRouter

    from appframework.contrib import drf as suite

    class ArticleSerializer(serializers.ModelSerializer):
        class Meta:
            model = Article
            fields = ["id", "title", "body", "author_id", "created_at"]

    class ArticleViewSet(viewsets.ModelViewSet):
        queryset = Article.objects.order_by("id")
        serializer_class = ArticleSerializer

    class SuiteViewSet(ArticleViewSet):
        authentication_classes = [suite.BearerTokenAuthentication, suite.SessionAuthentication]
        permission_classes = [suite.GatePermission]

        def get_exception_handler(self) -> Any:
            return suite.exception_handler

    view_perm = "%(app_label)s.view_%(model_name)s"

    class ViewObjectPermissions(permissions.DjangoObjectPermissions):
        # DRF's map asks nothing for reads; this asks what the Gate's policy answers.
        perms_map = {
            **permissions.DjangoObjectPermissions.perms_map,
            "GET": [view_perm],
            "HEAD": [view_perm],
        }

    class StockViewSet(ArticleViewSet):
        authentication_classes = [
            authentication.SessionAuthentication,
            authentication.TokenAuthentication,
        ]
        permission_classes = [ViewObjectPermissions]

    class ShippedViewSet(StockViewSet):
        permission_classes = [permissions.DjangoObjectPermissions]

    patterns = []
    for name, viewset in (
        ("suite", SuiteViewSet),
        ("stock", StockViewSet),
        ("shipped", ShippedViewSet),
    ):
        router = SimpleRouter()
        router.register("articles", viewset, basename=f"{name}-article")
        patterns.append(path(f"drf/{name}/", include(router.urls)))
    return patterns


def ninja_urls(Article: Any) -> list[Any]:
    from django.http import HttpRequest
    from django.urls import path
    from ninja import NinjaAPI, Schema
    from ninja.pagination import PageNumberPagination, paginate
    from ninja.security import django_auth

    from appframework.contrib import ninja as suite

    class ArticleOut(Schema):
        id: int
        title: str
        body: str
        author_id: int
        created_at: datetime

    apis = {
        "suite": suite.install_exception_handlers(
            NinjaAPI(
                urls_namespace="bench-ninja-suite",
                auth=[suite.BearerAuth(), suite.SessionAuth()],
            )
        ),
        "stock": NinjaAPI(urls_namespace="bench-ninja-stock", auth=django_auth),
    }
    for api in apis.values():

        @api.get("/articles", response=list[ArticleOut])
        @paginate(PageNumberPagination, page_size=PAGE)
        def list_articles(request: HttpRequest) -> Any:
            return Article.objects.order_by("id")

    return [path(f"ninja/{name}/", api.urls) for name, api in apis.items()]


def do_login(request: Any) -> Any:
    from django.contrib.auth import get_user_model
    from django.http import HttpResponse

    from appframework.auth import login

    login(request, get_user_model()._default_manager.get(email=USER_EMAIL))
    return HttpResponse("ok")


def index(request: Any) -> Any:
    from django.http import HttpResponse

    return HttpResponse("ok")


# -- set-up -------------------------------------------------------------------------------
@dataclass
class Fixture:
    Article: Any
    user: Any
    permission: Any
    suite_token: str
    drf_token: str
    first_ids: list[int]


def prepare() -> Fixture:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType
    from django.core.management import call_command
    from django.urls import path
    from rest_framework.authtoken.models import Token

    from appframework.auth import TokenManager
    from appframework.authorization import Gate
    from appframework.container import container

    call_command("migrate", verbosity=0, interactive=False)
    Article = build_model()
    user = get_user_model()._default_manager.create_user(USER_EMAIL, "benchmark password 1")
    # The table is made by the schema editor, not a migration, so Django's post_migrate
    # never created the model's permissions: the one DRF's check needs, by hand.
    permission = Permission.objects.create(
        codename="view_article",
        name="Can view article",
        content_type=ContentType.objects.get_for_model(Article),
    )
    user.user_permissions.add(permission)
    Article.objects.bulk_create(
        Article(title=f"Article {i}", body=f"Body of article {i}. " * 4, author=user)
        for i in range(ROWS)
    )
    container.resolve(Gate).policy(Article, ArticlePolicy)
    urlpatterns[:] = [
        path("login", do_login),
        path("", index),
        *drf_urls(Article),
        *ninja_urls(Article),
    ]
    return Fixture(
        Article=Article,
        user=user,
        permission=permission,
        suite_token=container.resolve(TokenManager).issue(user),
        drf_token=Token.objects.create(user=user).key,
        first_ids=list(Article.objects.order_by("id").values_list("id", flat=True)[:PAGE]),
    )


def build_handler() -> Any:
    from django.core.handlers.wsgi import WSGIHandler

    return WSGIHandler()


# -- scenarios ----------------------------------------------------------------------------
PATHS = {
    "drf suite": "/drf/suite/articles/",
    "drf stock": "/drf/stock/articles/",
    "drf shipped": "/drf/shipped/articles/",
    "ninja suite": "/ninja/suite/articles",
    "ninja stock": "/ninja/stock/articles",
}

# scenario -> (label, contenders). The session scenarios carry the targets; the bearer
# ones are reported for information (the issue sets no target for them).
TARGETED = ("drf session", "ninja session")
SCENARIOS: dict[str, tuple[str, list[str]]] = {
    "drf session": ("a) DRF, session cookie", ["drf suite", "drf stock", "drf shipped"]),
    "drf bearer": ("b) DRF, token header", ["drf suite", "drf stock", "drf shipped"]),
    "ninja session": ("a) ninja, session cookie", ["ninja suite", "ninja stock"]),
    "ninja bearer": ("b) ninja, token header", ["ninja suite"]),
}


def api_environ(path: str, cookies: dict[str, str] | None, authorization: str | None) -> Any:
    environ = base_environ(path, cookies)
    environ["HTTP_ACCEPT"] = "application/json"  # what a fetch() or a script sends
    if authorization is not None:
        environ["HTTP_AUTHORIZATION"] = authorization
    return environ


def browser_cookies(handler: Any) -> dict[str, str]:
    """The session and CSRF cookies a browser holds after signing in on the site."""
    session_name, csrf_name = settings.SESSION_COOKIE_NAME, settings.CSRF_COOKIE_NAME
    status, headers, _ = call(handler, base_environ("/login"))
    assert status.startswith("200"), status
    cookies = set_cookies(headers)
    assert session_name in cookies and csrf_name in cookies, cookies
    # One more page view: the stack must have nothing left to re-issue.
    status, headers, _ = call(handler, base_environ("/", cookies))
    assert status.startswith("200") and not set_cookies(headers), (status, headers)
    return {session_name: cookies[session_name], csrf_name: cookies[csrf_name]}


def scenario_environs(handler: Any, fx: Fixture) -> dict[str, dict[str, dict[str, Any]]]:
    cookies = browser_cookies(handler)
    suite_bearer, drf_token = f"Bearer {fx.suite_token}", f"Token {fx.drf_token}"
    environs: dict[str, dict[str, dict[str, Any]]] = {}
    for key, (_, contenders) in SCENARIOS.items():
        environs[key] = {}
        for name in contenders:
            if key.endswith("session"):
                environs[key][name] = api_environ(PATHS[name], cookies, None)
            else:
                token = suite_bearer if name.endswith("suite") else drf_token
                environs[key][name] = api_environ(PATHS[name], None, token)
    return environs


def page_of(name: str, body: bytes) -> tuple[int, list[dict[str, Any]]]:
    """(count, rows) of a DRF or ninja page."""
    data = json.loads(body)
    return data["count"], data["results"] if name.startswith("drf") else data["items"]


def check(
    handler: Any, fx: Fixture, environs: dict[str, dict[str, dict[str, Any]]]
) -> dict[str, dict[str, int]]:
    """Every timed request is the intended 200; returns SQL queries per request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from appframework.authorization import Gate
    from appframework.container import container

    queries: dict[str, dict[str, int]] = {}
    for key, by_name in environs.items():
        queries[key] = {}
        pages: dict[str, Any] = {}
        for name, environ in by_name.items():
            with CaptureQueriesContext(connection) as ctx:
                status, headers, body = call(handler, environ)
            assert status.startswith("200"), (key, name, status, body[:300])
            count, rows = pages[name] = page_of(name, body)
            assert count == ROWS and [r["id"] for r in rows] == fx.first_ids, (key, name)
            assert not set_cookies(headers), (key, name, headers)
            queries[key][name] = len(ctx.captured_queries)
        # Within a framework the contenders serialise the very same page (DRF's "next"
        # link names each contender's own path, so the bodies differ there only).
        assert all(page == pages[next(iter(pages))] for page in pages.values()), key

    for name, path in PATHS.items():
        status, _, _ = call(handler, api_environ(path, None, None))
        assert status[:3] in ("401", "403"), (name, status)

    # The suite's contenders ask the Gate: a policy that refuses makes them 403.
    gate = container.resolve(Gate)
    gate.policy(fx.Article, RefusingPolicy)
    try:
        for key in ("drf session", "drf bearer"):
            status, _, _ = call(handler, environs[key]["drf suite"])
            assert status.startswith("403"), (key, status)
    finally:
        gate.policy(fx.Article, ArticlePolicy)

    # "stock" decides on the view permission (and "shipped" does not): without it, 403.
    fx.user.user_permissions.remove(fx.permission)
    try:
        for key in ("drf session", "drf bearer"):
            for name, expected in (("drf stock", "403"), ("drf shipped", "200")):
                status, _, _ = call(handler, environs[key][name])
                assert status.startswith(expected), (key, name, status)
    finally:
        fx.user.user_permissions.add(fx.permission)
    return queries


# -- main ---------------------------------------------------------------------------------
def measure(
    handler: Any, by_name: dict[str, dict[str, Any]], args: argparse.Namespace
) -> tuple[int, dict[str, list[float]]]:
    """N and the per-round seconds per request of each contender of one scenario."""
    names = list(by_name)
    for name in names:
        run_batch(handler, by_name[name], args.warmup, time.perf_counter)
    per_request = run_batch(handler, by_name[names[-1]], 50, time.perf_counter)
    n = args.requests or max(50, round(args.batch_seconds / per_request))
    # Not rotated: a framework's contenders stay back to back; who goes first alternates.
    samples = benchlib.interleave(
        {name: partial(run_batch, handler, env, n, args.timer) for name, env in by_name.items()},
        args.rounds,
        rotate=False,
    )
    return n, samples


def main() -> int:
    parser = benchlib.Parser(__doc__.split("\n")[0])
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_argument(
        "--requests",
        type=int,
        default=0,
        help="requests per contender per round (default: sized so a batch takes --batch-seconds)",
    )
    parser.add_scaled("--batch-seconds", float, 0.15, 0.1, smoke=0.02)
    parser.add_scaled("--warmup", int, 200, 200, "requests per contender before timing", smoke=20)
    parser.add_clock("cpu")
    args = parser.parse_args()

    configure()
    fx = prepare()
    handler = build_handler()
    environs = scenario_environs(handler, fx)
    queries = check(handler, fx, environs)

    import ninja
    import rest_framework

    print("MIDDLEWARE (all):", ", ".join(m.rsplit(".", 1)[1] for m in SUITE_MIDDLEWARE))
    print(f"SESSION_ENGINE {settings.SESSION_ENGINE}")
    print(
        f"{benchlib.platform()}, djangorestframework {rest_framework.__version__}, "
        f"django-ninja {ninja.__version__};\n"
        f"GET of a {PAGE}-row page of {ROWS}; {args.rounds} rounds x N requests per "
        f"contender per scenario, {args.clock} clock;\n"
        "us = median of round means per request (SQL queries per request in brackets);\n"
        "ratios = median of the per-round suite/stock and suite/shipped ratios"
    )
    print(
        f"{'scenario':<26}{'N':>5}{'suite us':>13}{'stock us':>13}{'shipped us':>13}"
        f"{'suite/stock':>13}{'suite/shipped':>15}"
    )
    ratios: list[benchlib.Ratio] = []
    info: dict[str, float] = {}
    for key, (label, _) in SCENARIOS.items():
        n, samples = measure(handler, environs[key], args)
        framework = key.split()[0]
        cells = [f"{label:<26}{n:>5}"]
        for role in ("suite", "stock", "shipped"):
            name = f"{framework} {role}"
            if name in samples:
                us = statistics.median(samples[name]) * 1e6
                info[f"{key} {role} us"] = us
                cells.append(f"{us:>8.1f} ({queries[key][name]})")
            else:
                cells.append(f"{'-':>13}")
        for role, width in (("stock", 13), ("shipped", 15)):
            other = f"{framework} {role}"
            if other not in samples:
                cells.append(f"{'-':>{width}}")
                continue
            ratio = benchlib.median_ratio(samples[f"{framework} suite"], samples[other])
            cells.append(f"{ratio:>{width}.3f}")
            name = f"{framework} suite/{role} {key.split()[1]}"
            if key in TARGETED:
                ratios.append(benchlib.Ratio(name, ratio, "<=", TARGET))
            else:
                info[name] = ratio
        print("".join(cells), flush=True)
    return benchlib.finish(args, "api_frameworks", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
