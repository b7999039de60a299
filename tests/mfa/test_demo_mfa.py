"""The demo's two-factor pages (the library's, at the demo's paths) as a browser uses
them, with CSRF enforced.

/account/mfa turns TOTP on (an inline SVG QR code of the otpauth URI and the secret,
then a live code to confirm, then ten recovery codes shown once) and off (only with a
current code). After the password, a user with TOTP on lands on /login/mfa and is not
signed in until a live code or an unused recovery code is entered; wrong codes keep
the sign-in pending, and the sixth try in a minute is a 429 page.
"""

from __future__ import annotations

import html
import json
import re
import time
from types import SimpleNamespace
from typing import Any

import pyotp
import pytest
import segno
from django.test import Client

from appframework.conf import app_settings
from appframework.container import container
from appframework.mfa import provisioning_uri
from appframework.mfa import totp as totp_module
from appframework.mfa.flows import PENDING_SESSION_KEY
from appframework.mfa.views import qr_code_svg
from appframework.ratelimit import RateLimiter

pytestmark = pytest.mark.django_db

COOKIE = "csrf_token"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
RECOVERY = re.compile(r"\b[a-z2-9]{4}-[a-z2-9]{4}-[a-z2-9]{4}\b")
ANONYMOUS = "You are anonymous."
TOTP_ON = "/account/mfa/totp/on"
TOTP_OFF = "/account/mfa/totp/off"
OFF = '<span class="af-badge">Off</span>'
ON = '<span class="af-badge af-badge-on">On</span>'


# -- helpers -----------------------------------------------------------------------------------
def _post(client: Client, path: str, data: dict[str, str] | None = None) -> Any:
    """A form POST as the browser sends it: the CSRF cookie's value in ``_token``."""
    if COOKIE not in client.cookies:
        client.get("/login")
    body = {**(data or {}), "_token": client.cookies[COOKIE].value}
    return client.post(path, body, **HTML)


def _password_login(client: Client, user: Any, password: str) -> Any:
    client.get("/login")
    return _post(client, "/login", {"email": user.email, "password": password})


def _logout(client: Client) -> None:
    assert _post(client, "/logout").status_code == 302
    assert ANONYMOUS in client.get("/").content.decode()


def _signed_in_as(client: Client, user: Any) -> bool:
    return f"Signed in as <strong>{user.email}</strong>" in client.get("/").content.decode()


def _pending(client: Client) -> Any:
    return client.session.get(PENDING_SESSION_KEY)


def _freeze_totp_clock(monkeypatch: pytest.MonkeyPatch, at: float) -> None:
    """The TOTP check (only) sees ``at`` as now: a later step without sleeping."""
    monkeypatch.setattr(totp_module, "time", SimpleNamespace(time=lambda: at))


def _wrong_code(secret: str, at: float) -> str:
    """Six digits that are no code of ``secret`` within one step of ``at``."""
    totp = pyotp.TOTP(secret)
    live = {totp.at(at + 30 * k) for k in (-1, 0, 1)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in live)


def _clear_of_a_clock_minute(margin: float = 3.0) -> None:
    """Wait out the last ``margin`` seconds of a clock minute, so that a burst of tries
    that must count together does not straddle one."""
    left = 60.0 - time.time() % 60.0
    if left < margin:
        time.sleep(left + 0.05)


def _enroll(client: Client) -> tuple[str, str]:
    """Open the page that turns TOTP on; returns the secret shown and the page."""
    response = client.get(TOTP_ON)
    assert response.status_code == 200
    page = response.content.decode()
    match = re.search(r"type the secret <code>([A-Z2-7]+)</code>", page)
    assert match, page
    return match.group(1), page


def _confirm(client: Client, secret: str) -> tuple[list[str], str, str]:
    """Confirm with a live code; returns the recovery codes shown, the code used and the
    page."""
    code = pyotp.TOTP(secret).now()
    response = _post(client, TOTP_ON, {"code": code})
    assert response.status_code == 200, response.content.decode()
    page = response.content.decode()
    block = re.search(r"<pre[^>]*>(.*?)</pre>", page, re.S)
    assert block, page
    return RECOVERY.findall(block.group(1)), code, page


def _turn_on(client: Client, user: Any, password: str) -> dict[str, Any]:
    """Sign in, turn TOTP on through the pages and sign out; returns what the user saw."""
    assert _password_login(client, user, password).status_code == 302
    secret, _ = _enroll(client)
    codes, code, _ = _confirm(client, secret)
    assert len(codes) == 10
    _logout(client)
    return {"secret": secret, "codes": codes, "confirm_code": code, "after": time.time()}


@pytest.fixture
def browser() -> Client:
    return Client(enforce_csrf_checks=True)


@pytest.fixture
def enrolled(browser: Client, user: Any, password: str) -> dict[str, Any]:
    return _turn_on(browser, user, password)


@pytest.fixture
def challenged(browser: Client, user: Any, password: str, enrolled: dict[str, Any]) -> Client:
    """Password verified, code awaited."""
    response = _password_login(browser, user, password)
    assert response.status_code == 302
    assert response["Location"] == "/login/mfa"
    return browser


# -- the landing page --------------------------------------------------------------------------
def test_the_landing_page_links_the_two_factor_page_and_says_what_to_look_for() -> None:
    page = Client().get("/").content.decode()
    tour = page.split('<ol id="tour">', 1)[1]
    line = next(li for li in re.findall(r"<li>.*?</li>", tour, re.S) if 'href="/account/mfa"' in li)
    assert "QR code" in line
    assert "recovery codes are shown once" in line
    assert "a wrong code six times in a minute is a 429" in line


# -- enrollment --------------------------------------------------------------------------------
def test_the_account_page_says_off_for_a_user_without_two_factor(
    browser: Client, user: Any, password: str
) -> None:
    _password_login(browser, user, password)
    response = browser.get("/account/mfa")
    assert response.status_code == 200
    page = response.content.decode()
    assert OFF in page
    assert f'href="{TOTP_ON}"' in page


def test_enroll_shows_an_inline_svg_qr_code_of_the_otpauth_uri_and_the_secret(
    browser: Client, user: Any, password: str
) -> None:
    _password_login(browser, user, password)
    secret, page = _enroll(browser)
    assert "<svg" in page
    user.refresh_from_db()
    assert user.mfa_secret == secret
    assert len(secret) == 32
    assert user.mfa_enabled is False
    uri = provisioning_uri(secret, user.email, str(app_settings.MFA.ISSUER))
    assert uri.startswith("otpauth://totp/")
    assert f"secret={secret}" in uri
    # The QR code on the page is the one of exactly this URI.
    assert qr_code_svg(uri) in page
    assert segno.make(uri, error="m").svg_inline(scale=4, dark="#000", light="#fff") in page
    # While pending the overview still says off (nothing is on until a code confirms it).
    assert OFF in browser.get("/account/mfa").content.decode()


def test_a_second_visit_shows_the_same_pending_secret(
    browser: Client, user: Any, password: str
) -> None:
    """Reloading the page (or scanning late) keeps the secret the app may have scanned."""
    _password_login(browser, user, password)
    first, _ = _enroll(browser)
    second, _ = _enroll(browser)
    assert first == second
    user.refresh_from_db()
    assert user.mfa_secret == first and user.mfa_enabled is False


def test_confirm_with_a_wrong_code_is_422_and_leaves_two_factor_off(
    browser: Client, user: Any, password: str
) -> None:
    _password_login(browser, user, password)
    secret, _ = _enroll(browser)
    response = _post(browser, TOTP_ON, {"code": _wrong_code(secret, time.time())})
    assert response.status_code == 422
    page = response.content.decode()
    assert 'role="alert"' in page
    assert RECOVERY.search(page) is None
    user.refresh_from_db()
    assert user.mfa_enabled is False
    assert user.mfa_recovery_codes is None


def test_confirm_with_a_live_code_shows_ten_recovery_codes_once_and_stores_only_hashes(
    browser: Client, user: Any, password: str
) -> None:
    _password_login(browser, user, password)
    secret, _ = _enroll(browser)
    codes, _, page = _confirm(browser, secret)
    assert len(codes) == 10
    assert len(set(codes)) == 10
    assert "shown <strong>once</strong>" in page
    # Reloading: on, and the codes are gone for good.
    again = browser.get("/account/mfa").content.decode()
    assert ON in again
    assert RECOVERY.search(again) is None
    assert not any(c in again for c in codes)
    # The database holds ten salted hashes and none of the codes.
    user.refresh_from_db()
    assert user.mfa_enabled is True
    stored = user.mfa_recovery_codes
    assert len(stored) == 10
    assert all(h.startswith("sha256$") for h in stored)
    row = json.dumps(type(user).objects.filter(pk=user.pk).values()[0], default=str).lower()
    for c in codes:
        assert c not in row
        assert c.replace("-", "") not in row


def test_enrolling_needs_the_csrf_token(browser: Client, user: Any, password: str) -> None:
    _password_login(browser, user, password)
    secret, _ = _enroll(browser)
    response = browser.post(TOTP_ON, {"code": pyotp.TOTP(secret).now()}, **HTML)
    assert response.status_code == 403
    user.refresh_from_db()
    assert user.mfa_enabled is False


# -- signing in --------------------------------------------------------------------------------
def test_the_password_alone_leads_to_the_code_form_and_signs_nobody_in(
    browser: Client, user: Any, password: str, enrolled: dict[str, Any]
) -> None:
    response = _password_login(browser, user, password)
    assert response.status_code == 302
    assert response["Location"] == "/login/mfa"
    assert ANONYMOUS in browser.get("/").content.decode()
    form = browser.get("/login/mfa")
    assert form.status_code == 200
    assert 'name="code"' in form.content.decode()
    assert str(_pending(browser)["uid"]) == str(user.pk)


def test_a_wrong_code_is_a_401_page_with_an_error_and_the_sign_in_stays_pending(
    challenged: Client, user: Any, enrolled: dict[str, Any]
) -> None:
    response = _post(
        challenged, "/login/mfa", {"code": _wrong_code(enrolled["secret"], time.time())}
    )
    assert response.status_code == 401
    assert "That code is not valid." in response.content.decode()
    assert str(_pending(challenged)["uid"]) == str(user.pk)
    assert ANONYMOUS in challenged.get("/").content.decode()
    assert challenged.get("/login/mfa").status_code == 200


def test_the_code_that_confirmed_enrollment_cannot_sign_in(
    challenged: Client, user: Any, enrolled: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    response = _post(challenged, "/login/mfa", {"code": enrolled["confirm_code"]})
    assert response.status_code == 401
    assert not _signed_in_as(challenged, user)
    # Refused as spent, not for some other reason: the sign-in is still pending and a
    # live unused code (the next step's) then completes it.
    assert str(_pending(challenged)["uid"]) == str(user.pk)
    later = enrolled["after"] + 30
    _freeze_totp_clock(monkeypatch, later)
    live = pyotp.TOTP(enrolled["secret"]).at(later)
    response = _post(challenged, "/login/mfa", {"code": live})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _signed_in_as(challenged, user)


def test_the_next_steps_code_signs_in(
    challenged: Client, user: Any, enrolled: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    later = enrolled["after"] + 30
    _freeze_totp_clock(monkeypatch, later)
    # A wrong code first: the retry still works.
    secret = enrolled["secret"]
    wrong = _post(challenged, "/login/mfa", {"code": _wrong_code(secret, later)})
    assert wrong.status_code == 401
    response = _post(challenged, "/login/mfa", {"code": pyotp.TOTP(secret).at(later)})
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _signed_in_as(challenged, user)
    assert _pending(challenged) is None
    # Signed in, the code form has nothing to ask.
    assert challenged.get("/login/mfa")["Location"] == "/login"


def test_a_code_signs_in_once(
    browser: Client,
    user: Any,
    password: str,
    enrolled: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    later = enrolled["after"] + 30
    _freeze_totp_clock(monkeypatch, later)
    code = pyotp.TOTP(enrolled["secret"]).at(later)
    _password_login(browser, user, password)
    assert _post(browser, "/login/mfa", {"code": code}).status_code == 302
    _logout(browser)
    _password_login(browser, user, password)
    assert _post(browser, "/login/mfa", {"code": code}).status_code == 401
    assert not _signed_in_as(browser, user)


def test_a_recovery_code_signs_in_once(
    browser: Client, user: Any, password: str, enrolled: dict[str, Any]
) -> None:
    spent = enrolled["codes"][3]
    _password_login(browser, user, password)
    response = _post(browser, "/login/mfa", {"code": spent})
    assert response.status_code == 302
    assert _signed_in_as(browser, user)
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 9
    _logout(browser)

    _password_login(browser, user, password)
    again = _post(browser, "/login/mfa", {"code": spent})
    assert again.status_code == 401
    assert not _signed_in_as(browser, user)
    assert _pending(browser) is not None
    # Another unused one still works.
    assert _post(browser, "/login/mfa", {"code": enrolled["codes"][4].upper()}).status_code == 302
    assert _signed_in_as(browser, user)


def test_the_code_form_without_a_pending_sign_in_redirects_to_login(
    browser: Client, user: Any, enrolled: dict[str, Any]
) -> None:
    response = browser.get("/login/mfa")
    assert response.status_code == 302
    assert response["Location"] == "/login"
    posted = _post(browser, "/login/mfa", {"code": enrolled["codes"][0]})
    assert posted.status_code == 302
    assert posted["Location"] == "/login"
    assert not _signed_in_as(browser, user)
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 10


def test_the_code_form_post_without_a_csrf_token_is_403(
    challenged: Client, user: Any, enrolled: dict[str, Any]
) -> None:
    response = challenged.post("/login/mfa", {"code": enrolled["codes"][0]}, **HTML)
    assert response.status_code == 403
    assert not _signed_in_as(challenged, user)
    assert _pending(challenged) is not None
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 10


def test_the_sixth_wrong_code_in_a_minute_is_a_429_page_with_retry_after(
    challenged: Client, user: Any, enrolled: dict[str, Any]
) -> None:
    wrong = _wrong_code(enrolled["secret"], time.time())
    _clear_of_a_clock_minute()
    statuses = [_post(challenged, "/login/mfa", {"code": wrong}).status_code for _ in range(5)]
    assert statuses == [401] * 5
    response = _post(challenged, "/login/mfa", {"code": wrong})
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert response["Content-Type"].startswith("text/html")
    assert not _signed_in_as(challenged, user)
    # Past the limit even an unused recovery code is refused, and stays unused.
    assert _post(challenged, "/login/mfa", {"code": enrolled["codes"][0]}).status_code == 429
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 10


def test_six_wrong_codes_within_a_minute_are_a_429_even_when_they_straddle_a_clock_minute(
    challenged: Client, user: Any, enrolled: dict[str, Any]
) -> None:
    """Five wrong codes at hh:mm:58 and a sixth at hh:mm+1:02, four seconds later: six
    tries within 60 s, so the sixth is refused like any other sixth."""
    minute = (int(time.time()) // 60 + 1) * 60
    now = [minute - 2.0]
    original = container.resolve(RateLimiter)
    # The bound limiter as configured, on a clock the test controls.
    container.bind(
        RateLimiter,
        RateLimiter(
            original.cache_alias,
            algorithm=original.algorithm,
            prefix=original.prefix,
            clock=lambda: now[0],
        ),
    )
    try:
        wrong = _wrong_code(enrolled["secret"], time.time())
        statuses = [_post(challenged, "/login/mfa", {"code": wrong}).status_code for _ in range(5)]
        assert statuses == [401] * 5
        now[0] = minute + 2.0
        response = _post(challenged, "/login/mfa", {"code": wrong})
    finally:
        container.bind(RateLimiter, original)
    assert response.status_code == 429
    assert response["Retry-After"]


# -- turning it off ----------------------------------------------------------------------------
def test_turning_two_factor_off_needs_a_current_code(
    browser: Client,
    user: Any,
    password: str,
    enrolled: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = enrolled["secret"]
    later = enrolled["after"] + 30
    _freeze_totp_clock(monkeypatch, later)
    _password_login(browser, user, password)
    assert _post(browser, "/login/mfa", {"code": pyotp.TOTP(secret).at(later)}).status_code == 302

    # A wrong code (and the code just spent) change nothing.
    for code in (_wrong_code(secret, later), "", pyotp.TOTP(secret).at(later)):
        response = _post(browser, TOTP_OFF, {"code": code})
        assert response.status_code == 422
        assert 'role="alert"' in response.content.decode()
        user.refresh_from_db()
        assert user.mfa_enabled is True
        assert user.mfa_secret == secret
        assert len(user.mfa_recovery_codes) == 10

    # The next step's code turns it off: secret and recovery codes gone.
    later += 30
    _freeze_totp_clock(monkeypatch, later)
    response = _post(browser, TOTP_OFF, {"code": pyotp.TOTP(secret).at(later)})
    assert (response.status_code, response["Location"]) == (302, "/account/mfa")
    page = html.unescape(browser.get("/account/mfa").content.decode())
    assert "Two-factor authentication is off." in page
    user.refresh_from_db()
    assert user.mfa_enabled is False
    assert user.mfa_secret is None
    assert user.mfa_recovery_codes is None
    assert OFF in browser.get("/account/mfa").content.decode()

    # The password alone signs in again.
    _logout(browser)
    response = _password_login(browser, user, password)
    assert response.status_code == 302
    assert response["Location"] == "/"
    assert _signed_in_as(browser, user)
