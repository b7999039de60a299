"""Per-call cost of verifying one passkey answer through ``appframework.passkeys`` vs
``webauthn.verify_authentication_response`` (py_webauthn) called bare.

Run from the repository root:

    .venv/bin/python benchmarks/passkeys.py [--rounds 15] [--calls 2000] [--db-calls 200] [--clock wall|cpu] [--quick] [--json]

One EC P-256 credential of the test suite's software authenticator
(tests/passkeys/authenticator.py), one signed answer (user verified, counter 1), the
same JSON text given to both:

* suite - ``verify_assertion(read_assertion(text), ...)``: the JSON parsed once, the
          origin, RP id and user-verification checks with their own codes, the
          library's whole verification, then the counter
* bare  - ``verify_authentication_response(credential=text, ...)`` with the same
          expected challenge, RP id, origin, public key and counter: the floor

and, on an in-memory SQLite database with a signed-cookie session (reference, no
target):

* authenticate - ``authenticate(request, text, "login")``: the challenge spent from
                 the session and recorded in the cache, the credential row read with
                 SELECT ... FOR UPDATE, verified, its counter and last use written

Interleaved rounds (order rotated every round), ``--calls`` calls per round for the pure
checks and ``--db-calls`` for ``authenticate`` (each with its own challenge and answer,
made before the clock starts), wall clock by default; medians over rounds. The ratio
suite/bare is the median of the per-round paired ratios; target <= 1.1. ``--quick``: 7
rounds x 1000 calls (100 database calls). ``--json``: see benchlib.py.
"""

from __future__ import annotations

import gc
import statistics
import sys
from collections.abc import Callable
from functools import partial
from importlib import metadata
from typing import Any

import benchlib

TARGET = 1.1


def configure() -> None:
    benchlib.configure_django(
        INSTALLED_APPS=[
            "django.contrib.contenttypes",
            "django.contrib.auth",
            "django.contrib.sessions",
            "appframework.auth",
            "appframework.passkeys",
        ],
        DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
        SESSION_ENGINE="django.contrib.sessions.backends.signed_cookies",
        ALLOWED_HOSTS=["testserver"],
        AUTHENTICATION_BACKENDS=["appframework.auth.AuthManager"],
    )


def build() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.middleware import SessionMiddleware
    from django.core.management import call_command
    from django.http import HttpResponse
    from django.test import RequestFactory
    from webauthn import verify_authentication_response

    from appframework.passkeys import ceremonies
    from appframework.passkeys.models import Passkey
    from tests.passkeys.authenticator import SoftAuthenticator, b64url

    call_command("migrate", run_syncdb=True, verbosity=0)
    authenticator = SoftAuthenticator()
    authenticator.rp_id = "testserver"
    user = get_user_model().objects.create_user("bench", "bench@example.com", "x")
    authenticator.user_handle = b"bench-handle"
    Passkey.objects.create(
        user=user,
        name="bench",
        credential_id=authenticator.id,
        public_key=authenticator.cose_key(),
        user_handle=b64url(authenticator.user_handle),
    )
    challenge = b"c" * 32
    text = authenticator.get({"challenge": b64url(challenge), "rpId": "testserver"}, sign_count=1)
    rp = ceremonies.RelyingParty("testserver", "bench", ("http://testserver",))
    public_key = authenticator.cose_key()

    def suite() -> Any:
        return ceremonies.verify_assertion(
            ceremonies.read_assertion(text),
            challenge=challenge,
            rp=rp,
            public_key=public_key,
            sign_count=0,
            require_user_verification=True,
        )

    def bare() -> Any:
        return verify_authentication_response(
            credential=text,
            expected_challenge=challenge,
            expected_rp_id=rp.id,
            expected_origin=list(rp.origins),
            credential_public_key=public_key,
            credential_current_sign_count=0,
            require_user_verification=True,
        )

    # Sanity: both accept the same answer with the same result.
    assert suite().new_sign_count == bare().new_sign_count == 1

    def new_request() -> Any:
        request = RequestFactory().post("/login/passkey")
        SessionMiddleware(lambda r: HttpResponse()).process_request(request)
        return request

    # Every challenge of a batch stays pending in the one session.
    ceremonies._STORE.max_pending = 1_000_000
    return {
        "suite": suite,
        "bare": bare,
        "authenticator": authenticator,
        "new_request": new_request,
        "ceremonies": ceremonies,
    }


def pure_batch(call: Callable[[], Any], n: int, clock: Callable[[], float]) -> float:
    start = clock()
    for _ in range(n):
        call()
    return (clock() - start) / n


def authenticate_batch(env: dict[str, Any], n: int, clock: Callable[[], float]) -> float:
    ceremonies, authenticator = env["ceremonies"], env["authenticator"]
    request = env["new_request"]()
    answers = [
        authenticator.get(ceremonies.authentication_options(request, ceremonies.LOGIN))
        for _ in range(n)
    ]
    start = clock()
    for answer in answers:
        ceremonies.authenticate(request, answer, ceremonies.LOGIN)
    return (clock() - start) / n


def main() -> int:
    parser = benchlib.Parser(__doc__)
    parser.add_scaled("--rounds", int, 15, 7, smoke=2)
    parser.add_scaled(
        "--calls", int, 2000, 1000, "verifications per contender per round", smoke=200
    )
    parser.add_scaled("--db-calls", int, 200, 100, "authenticate calls per round", smoke=20)
    parser.add_clock("wall")
    args = parser.parse_args()
    clock = args.timer

    configure()
    env = build()
    contenders: dict[str, Callable[[], float]] = {
        "suite": partial(pure_batch, env["suite"], args.calls, clock),
        "bare": partial(pure_batch, env["bare"], args.calls, clock),
        "authenticate": partial(authenticate_batch, env, args.db_calls, clock),
    }
    for batch in contenders.values():
        batch()  # warm-up
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        samples = benchlib.interleave(contenders, args.rounds, after_round=gc.collect)
    finally:
        if gc_was_enabled:
            gc.enable()

    def us(name: str) -> float:
        return statistics.median(samples[name]) * 1e6

    print(f"webauthn {metadata.version('webauthn')}, SQLite :memory:, {benchlib.platform()}")
    print(
        f"{args.rounds} rounds x {args.calls} verifications / {args.db_calls} database calls "
        f"per contender, clock={args.clock}; per-call medians:"
    )
    for name, values in samples.items():
        print(
            f"  {name:<13} {us(name):8.2f} us/call   "
            f"(min {min(values) * 1e6:.2f}, max {max(values) * 1e6:.2f})"
        )
    info = {
        "suite verify us": us("suite"),
        "bare verify us": us("bare"),
        "authenticate us": us("authenticate"),
    }
    print(
        f"  authenticate (challenge, row lock, verify, counter write): "
        f"{info['authenticate us']:.1f} us (no target)"
    )
    ratios = [
        benchlib.Ratio(
            "suite verify/webauthn bare",
            benchlib.median_ratio(samples["suite"], samples["bare"]),
            "<=",
            TARGET,
        )
    ]
    return benchlib.finish(args, "passkeys", ratios, info)


if __name__ == "__main__":
    sys.exit(main())
