"""Per-request cost of appframework's middleware stack vs Django's default stack.

Run from the repository root:

    .venv/bin/python benchmarks/middleware_stack.py [--rounds 11] [--batch-seconds 0.15] [--clock cpu|wall] [--quick | --smoke] [--json]

Two ``WSGIHandler`` instances are built in one process, one per MIDDLEWARE list:

* suite  - the MIDDLEWARE of testproject/settings.py but TenantMiddleware
           (SecurityMiddleware, SecurityHeadersMiddleware, SessionMiddleware,
           CommonMiddleware, appframework CsrfMiddleware, AuthenticationMiddleware,
           MessageMiddleware, ErrorMiddleware)
* django - what ``django-admin startproject`` generates (SecurityMiddleware,
           SessionMiddleware, CommonMiddleware, CsrfViewMiddleware,
           AuthenticationMiddleware, MessageMiddleware, XFrameOptionsMiddleware)

plus, for reference only, a handler with no middleware at all ("bare"), which shows
how much of a request is the handler/URL resolution/response plumbing that both stacks
share.

Each request is a full WSGI round trip: ``handler(environ, start_response)``, the body
iterated and ``close()`` called (which fires ``request_finished``), as a WSGI server does.

Scenarios:

a) anonymous GET ``/`` with no cookies (first visit);
b) anonymous GET ``/`` carrying the CSRF cookie that *that stack* handed out earlier
   (a returning browser); for Django the cookie comes from a view calling
   ``get_token()``, since Django sends none for a view that does not use it;
c) logged-in GET ``/me`` with the session cookie and that stack's CSRF cookie; the view
   reads ``request.user.is_authenticated`` (one SELECT of the user, session-hash check).

The stacks run in alternating rounds (order flipped every round, ABBA-style), each
round timing N requests per stack (N sized so a batch takes ~0.15 s, or ``--requests``);
us is the median of the per-round mean per-request times and the ratio is the median of
the per-round suite/django ratios, so machine noise hits both stacks alike. Times are
this process's CPU time by default (``--clock wall`` for perf_counter): on a shared
2-core machine wall time mostly measures the neighbours. "mw ratio" compares only the
middleware-attributable part (stack minus bare handler). ``--quick``: 7 rounds of 0.1 s
batches. ``--json``: see benchlib.py.
Target: suite/django <= 1.05 in every scenario.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from http.cookies import SimpleCookie
from typing import Any

import benchlib
from django.conf import settings
from wsgi_driver import call, run_batch

# The suite's stack, apps and auth backends are read from testproject/settings.py (a plain
# module import: it does not configure Django), so the benchmark follows the project.
import testproject.settings as project_settings
from appframework.env import apply_environment

# Without TenantMiddleware (tenancy has its own benchmark) and Django's LocaleMiddleware
# (the demo's language selector; a project's choice, not the suite's): the core stack vs
# Django's here.
SUITE_MIDDLEWARE = [
    m
    for m in project_settings.MIDDLEWARE
    if m
    not in (
        "appframework_tenancy.middleware.TenantMiddleware",
        "django.middleware.locale.LocaleMiddleware",
    )
]

DJANGO_MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

TARGET = 1.05
USER_EMAIL = "bench@example.com"

SCENARIOS = {
    "a": "a) anonymous GET, no cookies",
    "b": "b) anonymous GET, csrf cookie",
    "c": "c) logged-in GET, session+csrf, user read",
}
RATIO_NAMES = {
    "a": "suite/django a) anonymous",
    "b": "suite/django b) csrf cookie",
    "c": "suite/django c) logged in",
}


def configure() -> None:
    ns: dict[str, Any] = dict(
        ALLOWED_HOSTS=["testserver"],
        INSTALLED_APPS=list(project_settings.INSTALLED_APPS),
        MIDDLEWARE=SUITE_MIDDLEWARE,
        ROOT_URLCONF=__name__,
        TEMPLATES=project_settings.TEMPLATES,
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        CACHES={"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
        AUTH_USER_MODEL=project_settings.AUTH_USER_MODEL,  # blog.User
        AUTHENTICATION_BACKENDS=list(project_settings.AUTHENTICATION_BACKENDS),
        APPFRAMEWORK={},  # the suite's defaults, filled in below
        STATIC_URL="static/",
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
    )
    # The suite's defaults, as testproject gets them (its SESSION_ENGINE, the csrf_token
    # cookie name, security headers...), but from an empty environment so that shell
    # variables cannot skew runs.
    apply_environment(ns, environ={})
    benchlib.configure_django(**ns)


# -- URLconf (this module is ROOT_URLCONF) ---------------------------------------------
def index(request: Any) -> Any:
    from django.http import HttpResponse

    return HttpResponse("ok")


def me(request: Any) -> Any:
    from django.http import HttpResponse

    user = getattr(request, "user", None)
    if user is None:  # the "bare" reference handler has no AuthenticationMiddleware
        return HttpResponse("ok")
    return HttpResponse("ok" if user.is_authenticated else "anonymous")


def issue_token(request: Any) -> Any:
    """A page with a form: makes Django's CsrfViewMiddleware send its cookie."""
    from django.http import HttpResponse
    from django.middleware.csrf import get_token

    get_token(request)
    return HttpResponse("ok")


def do_login(request: Any) -> Any:
    from django.contrib.auth import get_user_model
    from django.http import HttpResponse

    from appframework.auth import login

    user = get_user_model()._default_manager.get(email=USER_EMAIL)
    login(request, user)
    return HttpResponse("ok")


def _urlpatterns() -> list[Any]:
    from django.urls import path

    return [
        path("", index),
        path("me", me),
        path("token", issue_token),
        path("login", do_login),
    ]


urlpatterns: list[Any] = []


# -- WSGI driving -------------------------------------------------------------------------
def base_environ(path: str, cookies: dict[str, str] | None = None) -> dict[str, Any]:
    """A WSGI environ as Django's RequestFactory builds it (GET, no body)."""
    from django.test import RequestFactory

    environ = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD="GET")
    environ["HTTP_ACCEPT"] = "text/html,application/xhtml+xml,*/*;q=0.8"
    environ["HTTP_USER_AGENT"] = "Mozilla/5.0 (benchmark)"
    if cookies:
        environ["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    else:
        environ.pop("HTTP_COOKIE", None)
    return environ


def set_cookies(headers: list[tuple[str, str]]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            for key, morsel in SimpleCookie(value).items():
                jar[key] = morsel.value
    return jar


# -- set-up -------------------------------------------------------------------------------
def build_handlers() -> dict[str, Any]:
    from django.core.handlers.wsgi import WSGIHandler
    from django.test.utils import override_settings

    handlers = {}
    for name, middleware in (
        ("suite", SUITE_MIDDLEWARE),
        ("django", DJANGO_MIDDLEWARE),
        ("bare", []),
    ):
        with override_settings(MIDDLEWARE=middleware):
            handlers[name] = WSGIHandler()
    return handlers


def prepare_db() -> None:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    get_user_model()._default_manager.create_user(USER_EMAIL, "benchmark password 1")


def scenario_environs(handlers: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """scenario -> stack -> environ, with each stack's own cookies, plus sanity checks."""
    csrf_name = settings.CSRF_COOKIE_NAME
    session_name = settings.SESSION_COOKIE_NAME
    assert csrf_name == "csrf_token", csrf_name
    scenarios: dict[str, dict[str, dict[str, Any]]] = {"a": {}, "b": {}, "c": {}}

    # Log in once through the suite's stack: a real login (new session, the suite's
    # per-login CSRF nonce, last_login update). Both stacks run the same
    # SessionMiddleware/AuthenticationMiddleware, so the session cookie fits both.
    status, headers, _ = call(handlers["suite"], base_environ("/login"))
    assert status.startswith("200"), status
    session_cookie = set_cookies(headers)[session_name]

    for stack in ("suite", "django", "bare"):
        handler = handlers[stack]
        scenarios["a"][stack] = base_environ("/")

        # b) the stack's own CSRF cookie, as a browser would have stored it.
        status, headers, _ = call(handler, base_environ("/token"))
        anon_csrf = set_cookies(headers).get(csrf_name)
        assert stack == "bare" or anon_csrf, (stack, headers)
        scenarios["b"][stack] = base_environ("/", {csrf_name: anon_csrf} if anon_csrf else None)

        # c) session + the stack's CSRF cookie for that session.
        status, headers, _ = call(handler, base_environ("/token", {session_name: session_cookie}))
        user_csrf = set_cookies(headers).get(csrf_name)
        assert stack == "bare" or user_csrf, (stack, headers)
        cookies = {session_name: session_cookie}
        if user_csrf:
            cookies[csrf_name] = user_csrf
        scenarios["c"][stack] = base_environ("/me", cookies)

    # Sanity: every timed request is a 200 on the intended path.
    for scenario, by_stack in scenarios.items():
        for stack, environ in by_stack.items():
            status, headers, body = call(handlers[stack], environ)
            assert status.startswith("200"), (scenario, stack, status)
            expected = b"ok"
            assert body == expected, (scenario, stack, body)
            cookies_set = set_cookies(headers)
            if scenario in ("b", "c") and stack != "bare":
                # A returning browser: nothing to re-issue.
                assert csrf_name not in cookies_set, (scenario, stack, cookies_set)
            if scenario == "c":
                assert session_name not in cookies_set, (scenario, stack, cookies_set)
    return scenarios


# -- main ------------------------------------------------------------------------------------
def main() -> int:
    parser = benchlib.Parser(__doc__.split("\n")[0])
    parser.add_scaled("--rounds", int, 11, 7, smoke=2)
    parser.add_argument(
        "--requests",
        type=int,
        default=0,
        help="requests per stack per round (default: sized so a batch takes --batch-seconds)",
    )
    parser.add_scaled("--batch-seconds", float, 0.15, 0.1, smoke=0.02)
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--no-bare", action="store_true", help="skip the no-middleware reference")
    parser.add_clock("cpu")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per request under valgrind (callgrind): repeatable on a busy machine",
    )
    parser.add_argument(
        "--_count", nargs=3, metavar=("STACK", "SCENARIO", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.instructions:
        return instructions_report(args)
    if args._count:
        stack, scenario, n = args._count
        _count_child(stack, scenario, int(n))
        return 0

    configure()
    urlpatterns[:] = _urlpatterns()
    prepare_db()
    handlers = build_handlers()
    scenarios = scenario_environs(handlers)
    stacks = ["suite", "django"] + ([] if args.no_bare else ["bare"])

    print("suite  MIDDLEWARE:", ", ".join(m.rsplit(".", 1)[1] for m in SUITE_MIDDLEWARE))
    print("django MIDDLEWARE:", ", ".join(m.rsplit(".", 1)[1] for m in DJANGO_MIDDLEWARE))
    print(f"SESSION_ENGINE {settings.SESSION_ENGINE}")
    print(
        f"{benchlib.platform()}; "
        f"{args.rounds} rounds x N requests per stack per scenario, {args.clock} clock;\n"
        "us = median of round means per request; ratio = median of per-round suite/django"
    )
    header = f"{'scenario':<44}{'N':>6}{'suite us':>10}{'django us':>11}{'ratio':>8}"
    if not args.no_bare:
        header += f"{'bare us':>10}{'mw ratio':>10}"
    print(header)
    ratios: list[benchlib.Ratio] = []
    info: dict[str, float] = {}
    for key, label in SCENARIOS.items():
        environs = scenarios[key]
        for stack in stacks:
            per_request = run_batch(
                handlers[stack], environs[stack], args.warmup, time.perf_counter
            )
            if stack == "django":
                n = args.requests or max(100, round(args.batch_seconds / per_request))
        # Not rotated: suite and django always run back to back; who goes first alternates.
        samples = benchlib.interleave(
            {s: partial(run_batch, handlers[s], environs[s], n, args.timer) for s in stacks},
            args.rounds,
            rotate=False,
        )
        med = {s: statistics.median(v) * 1e6 for s, v in samples.items()}
        ratio = benchlib.median_ratio(samples["suite"], samples["django"])
        ratios.append(benchlib.Ratio(RATIO_NAMES[key], ratio, "<=", TARGET))
        line = f"{label:<44}{n:>6}{med['suite']:>10.1f}{med['django']:>11.1f}{ratio:>8.3f}"
        if not args.no_bare:
            # Ratio of the middleware-attributable part alone (stack minus bare handler).
            d_suite = med["suite"] - med["bare"]
            d_django = med["django"] - med["bare"]
            mw = d_suite / d_django if d_django > 0 else float("nan")
            info[f"mw ratio {key}"] = mw
            line += f"{med['bare']:>10.1f}{mw:>10.3f}"
        print(line, flush=True)
    return benchlib.finish(args, "middleware_stack", ratios, info)


# -- instruction counts (callgrind) ---------------------------------------------------------
def _count_child(stack: str, scenario: str, n: int) -> None:
    """Run inside valgrind: set up, then serve ``n`` requests between the toggles."""
    configure()
    urlpatterns[:] = _urlpatterns()
    prepare_db()
    handlers = build_handlers()
    environ = scenario_environs(handlers)[scenario][stack]
    run_batch(handlers[stack], environ, 50, time.perf_counter)  # warm caches (imports, URLs...)
    run_batch(handlers[stack], environ, n, time.perf_counter)


def instructions_report(args: argparse.Namespace) -> int:
    """Instructions per request = difference of two runs (N=300 and N=100) / 200, so
    set-up cost cancels out. Takes several minutes (everything runs under valgrind)."""
    print(f"instructions per request (callgrind), suite vs django; target ratio <= {TARGET}")
    ratios = []
    for scenario in SCENARIOS:
        per = benchlib.instructions_by_side(__file__, scenario, ("suite", "django"))
        ratio = per["suite"] / per["django"]
        ratios.append(benchlib.Ratio(f"{RATIO_NAMES[scenario]} (instr.)", ratio, "<=", TARGET))
        print(
            f"  {scenario}) suite {per['suite']:>10.0f}  django {per['django']:>10.0f}  ratio {ratio:.3f}",
            flush=True,
        )
    return benchlib.finish(args, "middleware_stack", ratios)


if __name__ == "__main__":
    sys.exit(main())
