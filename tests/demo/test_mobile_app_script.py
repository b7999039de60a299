"""examples/mobile_app.py, a Python script acting as a mobile app, against a live demo:
password + TOTP -> an app session -> a DRF call with it -> logout -> the token is dead.
(The app's single sign-on through the local OpenID provider is
tests/demo/test_demo_app_sso.py.)"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pyotp
import pytest
import requests

from tests.e2e.conftest import DemoServer, GraphiqlAssets, serve_demo

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "mobile_app.py"
API = "/api/auth/app/v1"
EMAIL, PASSWORD = "reader@example.com", "reader-password"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoServer]:
    with serve_demo(tmp_path_factory.mktemp("mobile-demo"), GraphiqlAssets(None)) as server:
        yield server


@pytest.fixture(scope="module")
def totp_secret(demo: DemoServer) -> str:
    """TOTP turned on for the reader through the app API itself."""
    http = requests.Session()
    http.trust_env = False

    def call(method: str, path: str, token: str, body: object = None) -> requests.Response:
        answer = http.request(
            method, demo.url + path, json=body, headers={"X-Session-Token": token}, timeout=30
        )
        http.cookies.clear()
        return answer

    signed_in = call("POST", f"{API}/auth/login", "", {"email": EMAIL, "password": PASSWORD})
    assert signed_in.json()["status"] == "authenticated", signed_in.text
    token = signed_in.json()["session_token"]
    secret = call("POST", f"{API}/account/totp", token, {}).json()["secret"]
    # The previous 30-second step's code: the script's code (this step's) is then no replay.
    code = pyotp.TOTP(secret).at(time.time() - 30)
    turned_on = call("POST", f"{API}/account/totp", token, {"code": code})
    assert turned_on.status_code == 200, turned_on.text
    assert call("DELETE", f"{API}/session", token).status_code == 200
    return str(secret)


def _script(demo: DemoServer, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--base-url", demo.url, *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_mobile_app_signs_in_calls_drf_logs_out_and_its_token_is_then_refused(
    demo: DemoServer, totp_secret: str
) -> None:
    done = _script(demo, "--email", EMAIL, "--password", PASSWORD, "--totp-secret", totp_secret)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert f"POST {API}/auth/login -> 200" in lines
    assert f"POST {API}/auth/second-factor -> 200" in lines
    assert "GET /api/drf/posts/ -> 200" in lines
    assert f"DELETE {API}/session -> 200" in lines
    assert "GET /api/drf/posts/ -> 401" in lines  # the same token after the logout
    assert lines[-1] == "OK: every step answered as expected"


def test_the_mobile_app_script_fails_loudly_on_a_wrong_password(
    demo: DemoServer, totp_secret: str
) -> None:
    done = _script(demo, "--email", EMAIL, "--password", "wrong", "--totp-secret", totp_secret)
    assert done.returncode == 1
    assert "expected 200, got 401" in done.stderr
