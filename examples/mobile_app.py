#!/usr/bin/env python3
"""A mobile app's sign-in through the suite's JSON API (the ``app`` client), step by step:

    password -> a pending second factor -> a TOTP code -> an app session (X-Session-Token)
    -> a call to the project's DRF API with it -> logout -> the same token is refused.

Run it against the demo (``scripts/demo`` serves http://127.0.0.1:8000)::

    python examples/mobile_app.py --base-url http://127.0.0.1:8000 \\
        --login you@example.com --password '...' --totp-secret BASE32SECRET

``--login`` is whatever the site signs in with: the app asks ``config`` which field that
is (``login_field``: ``email`` on the demo, ``username`` on a project that signs in by
username) and sends it under that name.

The app sends no cookies: its session travels in the ``X-Session-Token`` header (empty on
the first request; each answer may carry a new one). Exit status 0 when every step
answered as expected, 1 otherwise (the step and the answer are printed).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import pyotp
import requests

API = "/api/auth/app/v1"


class Step(Exception):
    """A step that did not answer as expected."""


class App:
    """The app's side: one base URL, the session token it holds, no cookie jar."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = ""
        self.http = requests.Session()
        self.http.trust_env = False

    def call(self, method: str, path: str, expect: int, body: Any = None) -> dict[str, Any]:
        answer = self.http.request(
            method,
            self.base_url + path,
            json=body,
            headers={"X-Session-Token": self.token, "Accept": "application/json"},
            timeout=30,
        )
        self.http.cookies.clear()  # an app keeps no cookies
        print(f"{method} {path} -> {answer.status_code}")
        if answer.status_code != expect:
            raise Step(
                f"{method} {path}: expected {expect}, got {answer.status_code}: {answer.text[:300]}"
            )
        self.token = answer.headers.get("X-Session-Token", self.token)
        data: dict[str, Any] = answer.json() if answer.content else {}
        return data


def run(base_url: str, login: str, password: str, totp_secret: str) -> None:
    app = App(base_url)
    field = str(app.call("GET", f"{API}/config", 200).get("login_field") or "email")
    status = app.call("POST", f"{API}/auth/login", 200, {field: login, "password": password})
    if status.get("status") != "second_factor_required":
        raise Step(f"after the password, a second factor should be pending: {status}")
    code = pyotp.TOTP(totp_secret).now()
    status = app.call("POST", f"{API}/auth/second-factor", 200, {"code": code})
    if status.get("status") != "authenticated" or not app.token:
        raise Step(f"after the code, the app should be signed in with a token: {status}")
    print(f"  signed in as {login}; session token {app.token[:8]}…")

    posts = app.call("GET", "/api/drf/posts/", 200)
    print(f"  the DRF API answered the app session: {posts.get('count', '?')} post(s)")

    held = app.token
    app.call("DELETE", f"{API}/session", 200)
    app.token = held  # as if someone had copied the token before the logout
    refused = app.call("GET", "/api/drf/posts/", 401)
    print(f"  after logout the old token is refused: {refused.get('code')}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", default=os.environ.get("BASE_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--login", "--email", dest="login", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--totp-secret", default=os.environ.get("TOTP_SECRET"), required=False)
    args = parser.parse_args(argv)
    if not args.totp_secret:
        parser.error("--totp-secret (or TOTP_SECRET) is required")
    try:
        run(args.base_url, args.login, args.password, args.totp_secret)
    except (Step, requests.RequestException) as exc:
        print(f"FAILED: {exc}", file=sys.stderr)
        return 1
    print("OK: every step answered as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())
