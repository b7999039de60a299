"""Per-request cost of the JSON API (the browser client) vs the account pages it mirrors.

Run from the repository root:

    .venv/bin/python benchmarks/headless.py [--rounds 9] [--batch-seconds 0.2] [--clock cpu|wall] [--quick | --smoke] [--json]
    .venv/bin/python benchmarks/headless.py --instructions [--requests 50]

One ``WSGIHandler`` over the demo (testproject: its settings, middleware and URLconf)
on in-memory SQLite, driven in-process, each request a full WSGI round trip:

a) a password login: ``POST /login`` (the form, with the CSRF field) vs
   ``POST /api/auth/browser/v1/auth/login`` (JSON, with the ``X-CSRF-Token`` header);
   each request signs a fresh anonymous browser in (a new session, the per-login
   nonce, ``last_login``);
b) a signed-in status: ``GET /account/mfa`` (the two-factor page: who, TOTP, recovery
   codes, passkeys, trusted browsers) vs ``GET /api/auth/browser/v1/session`` (who,
   their address and factors, what is pending).

Password hashing would be most of a login on both sides and tell nothing about either
path: the benchmark lowers PBKDF2's iterations to 1,000 for both (the stored hash is
made with the same count, so no re-hash happens). Pages and API alternate in every
round (ABBA); the ratio is the median of the per-round API/page ratios; CPU time by
default. ``--instructions`` counts instructions per request under valgrind instead (a run
of 3N requests minus a run of N, over 2N), which does not move with the machine's load.
Target: API/page <= 1.05 in both.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from functools import partial
from http.cookies import SimpleCookie
from typing import Any

import benchlib
from wsgi_driver import call, run_batch

import testproject.settings as project_settings
from appframework.env import apply_environment

TARGET = 1.05
EMAIL = "bench@example.com"
PASSWORD = "benchmark password 1"
ITERATIONS = 1000


def configure() -> None:
    ns: dict[str, Any] = {
        name: getattr(project_settings, name) for name in dir(project_settings) if name.isupper()
    }
    ns.update(
        ALLOWED_HOSTS=["testserver"],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        CACHES={
            "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
            "revocations": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
        },
        EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend",
        DEBUG=False,
        LOGGING={"version": 1, "disable_existing_loggers": False, "root": {"level": "CRITICAL"}},
    )
    # Without TenantMiddleware: it has its own benchmark, and costs both sides alike.
    ns["MIDDLEWARE"] = [
        m for m in ns["MIDDLEWARE"] if m != "appframework_tenancy.middleware.TenantMiddleware"
    ]
    ns["APPFRAMEWORK"] = json.loads(json.dumps(ns["APPFRAMEWORK"], default=str))
    ns["APPFRAMEWORK"]["AUTH"]["EMAIL_VERIFICATION"] = "none"
    ns["APPFRAMEWORK"]["RATE_LIMIT"] = {"LOGIN_ATTEMPTS": 10**9}
    apply_environment(ns, environ={})
    benchlib.configure_django(**ns)
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    PBKDF2PasswordHasher.iterations = ITERATIONS


def prepare() -> Any:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.core.wsgi import get_wsgi_application

    call_command("migrate", verbosity=0, interactive=False)
    get_user_model()._default_manager.create_user(EMAIL, PASSWORD)
    return get_wsgi_application()


def environ(method: str, path: str, cookies: dict[str, str], **extra: Any) -> dict[str, Any]:
    from django.test import RequestFactory

    env = RequestFactory()._base_environ(PATH_INFO=path, REQUEST_METHOD=method)
    env["HTTP_USER_AGENT"] = "Mozilla/5.0 (benchmark)"
    env["HTTP_HOST"] = "testserver"
    if cookies:
        env["HTTP_COOKIE"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
    env.update(extra)
    return env


def cookies_set(headers: list[tuple[str, str]]) -> dict[str, str]:
    jar: dict[str, str] = {}
    for name, value in headers:
        if name.lower() == "set-cookie":
            for key, morsel in SimpleCookie(value).items():
                jar[key] = morsel.value
    return jar


def anonymous_csrf(handler: Any) -> str:
    status, headers, _ = call(handler, environ("GET", "/login", {}, HTTP_ACCEPT="text/html"))
    assert status.startswith("200"), status
    return cookies_set(headers)["csrf_token"]


def login_requests(handler: Any) -> dict[str, tuple[dict[str, Any], bytes]]:
    """(environ, body) of each login; both answer as a fresh anonymous browser would."""
    from urllib.parse import urlencode

    token = anonymous_csrf(handler)
    form = urlencode({"email": EMAIL, "password": PASSWORD, "csrfmiddlewaretoken": token}).encode()
    page = environ(
        "POST",
        "/login",
        {"csrf_token": token},
        CONTENT_TYPE="application/x-www-form-urlencoded",
        CONTENT_LENGTH=str(len(form)),
        HTTP_ACCEPT="text/html",
        HTTP_ORIGIN="http://testserver",
    )
    body = json.dumps({"email": EMAIL, "password": PASSWORD}).encode()
    api = environ(
        "POST",
        "/api/auth/browser/v1/auth/login",
        {"csrf_token": token},
        CONTENT_TYPE="application/json",
        CONTENT_LENGTH=str(len(body)),
        HTTP_ACCEPT="application/json",
        HTTP_ORIGIN="http://testserver",
        HTTP_X_CSRF_TOKEN=token,
    )
    return {"page": (page, form), "api": (api, body)}


def status_requests(handler: Any) -> dict[str, tuple[dict[str, Any], bytes]]:
    from django.conf import settings

    (env, body) = login_requests(handler)["page"]
    status, headers, _ = call(handler, env, body)
    assert status.startswith("302"), status
    jar = cookies_set(headers)
    session = {settings.SESSION_COOKIE_NAME: jar[settings.SESSION_COOKIE_NAME]}
    status, headers, _ = call(
        handler, environ("GET", "/account/mfa", session, HTTP_ACCEPT="text/html")
    )
    session["csrf_token"] = cookies_set(headers).get("csrf_token", "")
    return {
        "page": (environ("GET", "/account/mfa", session, HTTP_ACCEPT="text/html"), b""),
        "api": (
            environ("GET", "/api/auth/browser/v1/session", session, HTTP_ACCEPT="application/json"),
            b"",
        ),
    }


def check(handler: Any, scenario: str, requests: dict[str, tuple[dict[str, Any], bytes]]) -> None:
    """Each timed request answers as intended (a sign-in, or the signed-in user)."""
    for side, (env, body) in requests.items():
        status, _headers, content = call(handler, env, body)
        if scenario == "login":
            expected = "302" if side == "page" else "200"
            assert status.startswith(expected), (scenario, side, status, content[:200])
            if side == "api":
                assert json.loads(content)["status"] == "authenticated", content
        else:
            assert status.startswith("200"), (scenario, side, status)
            assert EMAIL.encode() in content, (scenario, side, content[:300])


SCENARIOS = {
    "login": ("a) password login", login_requests),
    "status": ("b) signed-in status", status_requests),
}


def _count_child(side: str, scenario: str, n: int) -> None:
    """Run inside valgrind: set up, then serve ``n`` requests of one side."""
    configure()
    handler = prepare()
    env, body = SCENARIOS[scenario][1](handler)[side]
    run_batch(handler, env, 20, time.perf_counter, body)  # warm caches (imports, URLs...)
    run_batch(handler, env, n, time.perf_counter, body)


def instructions_report(args: Any) -> int:
    """API/page in instructions per request (callgrind): the same ratio on a busy
    machine. Takes a few minutes (every request runs under valgrind)."""
    print(f"instructions per request (callgrind), api vs page; target ratio <= {TARGET}")
    ratios: list[benchlib.Ratio] = []
    for key, (label, _requests) in SCENARIOS.items():
        per = benchlib.instructions_by_side(
            __file__, key, ("page", "api"), high=args.requests * 3, low=args.requests
        )
        ratio = per["api"] / per["page"]
        ratios.append(benchlib.Ratio(f"api/page {label} (instr.)", ratio, "<=", TARGET))
        print(
            f"  {label:<24} page {per['page']:>10.0f}  api {per['api']:>10.0f}  ratio {ratio:.3f}",
            flush=True,
        )
    return benchlib.finish(args, "headless", ratios)


def main() -> int:
    parser = benchlib.Parser(__doc__.split("\n")[0])
    parser.add_scaled("--rounds", int, 9, 5, smoke=2)
    parser.add_scaled("--batch-seconds", float, 0.2, 0.1, smoke=0.02)
    parser.add_clock("cpu")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions per request under valgrind (callgrind): repeatable on a busy machine",
    )
    parser.add_argument(
        "--requests", type=int, default=50, help="with --instructions: requests of the short run"
    )
    parser.add_argument(
        "--_count", nargs=3, metavar=("SIDE", "SCENARIO", "N"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.instructions:
        return instructions_report(args)
    if args._count:
        side, scenario, n = args._count
        _count_child(side, scenario, int(n))
        return 0

    configure()
    handler = prepare()
    scenarios = {key: (label, make(handler)) for key, (label, make) in SCENARIOS.items()}
    print(
        f"{benchlib.platform()}; {args.rounds} rounds x N requests per side, {args.clock} clock; "
        f"PBKDF2 at {ITERATIONS} iterations on both sides"
    )
    print(f"{'scenario':<26}{'N':>6}{'page us':>10}{'api us':>10}{'ratio':>8}")
    ratios: list[benchlib.Ratio] = []
    info: dict[str, float] = {}
    for key, (label, requests) in scenarios.items():
        check(handler, key, requests)
        warm = {
            side: run_batch(handler, env, 20, time.perf_counter, body)
            for side, (env, body) in requests.items()
        }
        n = max(10, round(args.batch_seconds / max(warm.values())))
        samples = benchlib.interleave(
            {
                side: partial(run_batch, handler, env, n, args.timer, body)
                for side, (env, body) in requests.items()
            },
            args.rounds,
            rotate=False,
        )
        med = {side: statistics.median(v) * 1e6 for side, v in samples.items()}
        ratio = benchlib.median_ratio(samples["api"], samples["page"])
        print(f"{label:<26}{n:>6}{med['page']:>10.1f}{med['api']:>10.1f}{ratio:>8.3f}")
        ratios.append(benchlib.Ratio(f"api/page {label}", ratio, "<=", TARGET))
        info[f"{key} page us"] = med["page"]
        info[f"{key} api us"] = med["api"]
    return benchlib.finish(args, "headless", ratios, info)


if __name__ == "__main__":
    raise SystemExit(main())
