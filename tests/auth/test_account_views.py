"""The library's account pages (appframework.auth.urls), mounted as a project would:
log in (login CSRF, throttle, same-site ``next``), the TOTP code form, two-factor setup,
log out, ``LOGIN_URL = "appframework:login"`` and template overrides."""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyotp
import pytest
import segno
from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse

from appframework.conf import app_settings
from appframework.mfa import provisioning_uri
from appframework.mfa.views import qr_code_svg
from tests.conftest import enable_totp, login_client

from .account_pages import (
    COOKIE,
    HTML,
    RECOVERY,
    URLCONF,
    age_proof,
    browser,
    next_step_code,
    pending,
    post,
    session_cookie,
    signed_in,
    wrong_code,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]

LOGIN = "/accounts/login/"
CHALLENGE = "/accounts/login/code/"
SETUP = "/accounts/two-factor/"
TOTP_ON = "/accounts/two-factor/totp/on/"
TOTP_OFF = "/accounts/two-factor/totp/off/"
CODES = "/accounts/two-factor/recovery-codes/"
REAUTH = "/accounts/reauthenticate/"
LOGOUT = "/accounts/logout/"


def _rate_limit(**keys: Any) -> Any:
    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.setdefault("RATE_LIMIT", {}).update(keys)
    return override_settings(APPFRAMEWORK=app)


def _password(
    client: Client, user: Any, password: str, next_url: str | None = None, **extra: Any
) -> Any:
    client.get(LOGIN)
    data = {"email": user.email, "password": password}
    if next_url is not None:
        data["next"] = next_url
    return post(client, LOGIN, data, **extra)


@pytest.fixture
def totp_user(user: Any) -> dict[str, Any]:
    secret, codes = enable_totp(user)
    return {"user": user, "secret": secret, "codes": codes}


@pytest.fixture
def challenged(user: Any, password: str, totp_user: dict[str, Any]) -> Client:
    client = browser()
    response = _password(client, user, password)
    assert response.status_code == 302
    assert response["Location"] == CHALLENGE
    return client


# -- URL names -----------------------------------------------------------------------
def test_the_url_names_are_in_the_appframework_namespace() -> None:
    assert reverse("appframework:login") == LOGIN
    assert reverse("appframework:mfa-challenge") == CHALLENGE
    assert reverse("appframework:mfa-setup") == SETUP
    assert reverse("appframework:logout") == LOGOUT


# -- log in --------------------------------------------------------------------------
def test_the_login_form_labels_the_username_field_after_the_user_model() -> None:
    response = browser().get(LOGIN)
    assert response.status_code == 200
    page = response.content.decode()
    # The demo's model signs in with `email` (verbose name "email").
    assert re.search(r'<label for="id_email">Email</label>\s*<input type="email" name="email"', page)
    assert 'name="csrfmiddlewaretoken" value="' in page
    assert response.cookies[COOKIE].value


def test_a_wrong_password_is_a_401_form_that_keeps_the_name_and_drops_the_password(
    user: Any,
) -> None:
    client = browser()
    response = _password(client, user, "hunter2-secret")
    assert response.status_code == 401
    page = response.content.decode()
    assert "Wrong email or password." in page
    assert f'value="{user.email}"' in page
    assert "hunter2-secret" not in page
    assert session_cookie(client) is None


def test_the_right_password_signs_in_and_lands_on_login_redirect_url(
    user: Any, password: str
) -> None:
    client = browser()
    response = _password(client, user, password)
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(client)


def test_a_login_post_without_a_token_is_403(user: Any, password: str) -> None:
    """Another site's auto-submitting form with the attacker's own credentials."""
    client = browser()
    response = client.post(LOGIN, {"email": user.email, "password": password}, **HTML)
    assert response.status_code == 403
    assert session_cookie(client) is None


def test_a_login_post_from_a_foreign_origin_is_403_even_with_the_token(
    user: Any, password: str
) -> None:
    client = browser()
    response = _password(client, user, password, HTTP_ORIGIN="https://evil.example")
    assert response.status_code == 403
    assert session_cookie(client) is None


def test_an_authorization_header_does_not_exempt_the_login_form(user: Any, password: str) -> None:
    client = browser()
    response = client.post(
        LOGIN,
        {"email": user.email, "password": password},
        HTTP_AUTHORIZATION="Basic x",
        **HTML,
    )
    assert response.status_code == 403
    assert session_cookie(client) is None


def test_other_methods_are_405() -> None:
    # A client that skips the CSRF check: the method is what is refused.
    response = Client().put(LOGIN, **HTML)
    assert response.status_code == 405
    assert response["Allow"] == "GET, HEAD, POST"


def test_too_many_wrong_passwords_are_a_429_with_retry_after(user: Any, password: str) -> None:
    client = browser()
    with _rate_limit(LOGIN_ATTEMPTS=2, LOGIN_WINDOW=300):
        assert [_password(client, user, "wrong").status_code for _ in range(2)] == [401, 401]
        response = _password(client, user, password)
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 300
    assert response["Content-Type"].startswith("text/html")
    assert not signed_in(client)


def test_the_throttle_answers_429_without_error_middleware(user: Any, password: str) -> None:
    """The pages answer their own 429: a project without ErrorMiddleware gets no 400 or
    500 in its place."""
    middleware = [m for m in settings.MIDDLEWARE if not m.endswith(".ErrorMiddleware")]
    client = browser()
    with _rate_limit(LOGIN_ATTEMPTS=1, LOGIN_WINDOW=300), override_settings(MIDDLEWARE=middleware):
        assert _password(client, user, "wrong").status_code == 401
        response = _password(client, user, password)
    assert response.status_code == 429
    assert response["Retry-After"]


@pytest.mark.parametrize(
    ("next_url", "lands_on"),
    [
        ("/private/", "/private/"),
        ("https://evil.example/phish", "/"),
        ("//evil.example/phish", "/"),
        ("http://testserver/private/", "http://testserver/private/"),
    ],
)
def test_only_a_same_site_next_is_followed(
    user: Any, password: str, next_url: str, lands_on: str
) -> None:
    client = browser()
    client.get(LOGIN, {"next": next_url})
    response = post(client, LOGIN, {"email": user.email, "password": password, "next": next_url})
    assert response.status_code == 302
    assert response["Location"] == lands_on


def test_the_form_carries_next_from_the_query_string() -> None:
    page = browser().get(LOGIN, {"next": "/private/"}).content.decode()
    assert '<input type="hidden" name="next" value="/private/">' in page


def test_login_url_as_the_url_name_sends_login_required_pages_to_the_form_and_back(
    user: Any, password: str
) -> None:
    client = browser()
    with override_settings(LOGIN_URL="appframework:login"):
        response = client.get("/private/")
        assert response.status_code == 302
        assert response["Location"] == f"{LOGIN}?next=/private/"
        form = client.get(response["Location"])
        assert 'name="next" value="/private/"' in form.content.decode()
        signed = post(
            client, LOGIN, {"email": user.email, "password": password, "next": "/private/"}
        )
    assert signed["Location"] == "/private/"
    assert client.get("/private/").content == b"private page of alice@example.com"


# -- the TOTP code form --------------------------------------------------------------
def test_the_password_of_a_totp_user_leads_to_the_code_form_and_signs_nobody_in(
    challenged: Client, user: Any
) -> None:
    assert not signed_in(challenged)
    assert str(pending(challenged)["uid"]) == str(user.pk)
    form = challenged.get(CHALLENGE)
    assert form.status_code == 200
    assert 'name="code"' in form.content.decode()


def test_the_code_form_without_a_pending_sign_in_goes_to_the_login_form() -> None:
    client = browser()
    assert client.get(CHALLENGE)["Location"] == LOGIN
    assert post(client, CHALLENGE, {"code": "123456"})["Location"] == LOGIN


def test_the_right_code_signs_in(
    challenged: Client, totp_user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    code = next_step_code(monkeypatch, totp_user["secret"])
    response = post(challenged, CHALLENGE, {"code": code})
    assert response.status_code == 302
    assert response["Location"] == settings.LOGIN_REDIRECT_URL
    assert signed_in(challenged)
    assert pending(challenged) is None


def test_a_wrong_code_is_a_401_and_the_sign_in_stays_pending(
    challenged: Client, totp_user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    response = post(challenged, CHALLENGE, {"code": wrong_code(totp_user["secret"])})
    assert response.status_code == 401
    assert "That code is not valid." in response.content.decode()
    assert pending(challenged) is not None
    assert not signed_in(challenged)
    # The retry works.
    code = next_step_code(monkeypatch, totp_user["secret"])
    assert post(challenged, CHALLENGE, {"code": code}).status_code == 302


def test_a_code_of_a_spent_step_is_refused(
    user: Any, password: str, totp_user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    code = next_step_code(monkeypatch, totp_user["secret"])
    first = browser()
    _password(first, user, password)
    assert post(first, CHALLENGE, {"code": code}).status_code == 302
    # Another browser, the same 30-second step's code: refused.
    second = browser()
    _password(second, user, password)
    response = post(second, CHALLENGE, {"code": code})
    assert response.status_code == 401
    assert not signed_in(second)


def test_a_recovery_code_signs_in_once(user: Any, password: str, totp_user: dict[str, Any]) -> None:
    spent = totp_user["codes"][0]
    client = browser()
    _password(client, user, password)
    assert post(client, CHALLENGE, {"code": spent}).status_code == 302
    assert signed_in(client)
    other = browser()
    _password(other, user, password)
    assert post(other, CHALLENGE, {"code": spent}).status_code == 401
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 9


def test_the_sixth_code_in_a_minute_is_a_429_even_when_right(
    challenged: Client, user: Any, totp_user: dict[str, Any]
) -> None:
    wrong = wrong_code(totp_user["secret"])
    assert [post(challenged, CHALLENGE, {"code": wrong}).status_code for _ in range(5)] == [401] * 5
    response = post(challenged, CHALLENGE, {"code": totp_user["codes"][0]})
    assert response.status_code == 429
    assert int(response["Retry-After"]) >= 1
    assert not signed_in(challenged)
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 10


def test_the_code_form_needs_the_csrf_token(
    challenged: Client, user: Any, totp_user: dict[str, Any]
) -> None:
    response = challenged.post(CHALLENGE, {"code": totp_user["codes"][0]}, **HTML)
    assert response.status_code == 403
    assert not signed_in(challenged)
    user.refresh_from_db()
    assert len(user.mfa_recovery_codes) == 10


def test_next_survives_the_code_form(
    user: Any, password: str, totp_user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    client.get(LOGIN, {"next": "/private/"})
    response = post(client, LOGIN, {"email": user.email, "password": password, "next": "/private/"})
    assert response["Location"] == CHALLENGE
    code = next_step_code(monkeypatch, totp_user["secret"])
    assert post(client, CHALLENGE, {"code": code})["Location"] == "/private/"


def test_a_foreign_next_is_dropped_before_the_code_form(
    user: Any, password: str, totp_user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    client = browser()
    _password(client, user, password, "https://evil.example/")
    code = next_step_code(monkeypatch, totp_user["secret"])
    assert post(client, CHALLENGE, {"code": code})["Location"] == settings.LOGIN_REDIRECT_URL


# -- two-factor setup ----------------------------------------------------------------
@pytest.fixture
def signed(user: Any) -> Client:
    """Signed in just now: the session has a recent proof (force_login is a sign-in)."""
    return login_client(browser(), user)


def _enroll(client: Client) -> tuple[str, str]:
    response = client.get(TOTP_ON)
    assert response.status_code == 200
    page = response.content.decode()
    match = re.search(r"type the secret <code>([A-Z2-7]+)</code>", page)
    assert match, page
    return match.group(1), page


def test_the_setup_page_sends_anonymous_browsers_to_the_login_form() -> None:
    response = browser().get(SETUP, **HTML)
    assert response.status_code == 302
    assert response["Location"] == f"{LOGIN}?next={SETUP}"


def test_the_setup_page_answers_anonymous_api_clients_401() -> None:
    response = browser().get(SETUP, HTTP_ACCEPT="application/json")
    assert response.status_code == 401
    assert response.json()["code"] == "not_authenticated"


def test_the_overview_says_off_and_links_each_change(signed: Client) -> None:
    page = signed.get(SETUP).content.decode()
    assert "Off" in page
    assert f'href="{TOTP_ON}"' in page


def test_enrolling_shows_the_qr_code_as_inline_svg_and_the_secret(
    signed: Client, user: Any
) -> None:
    secret, page = _enroll(signed)
    uri = provisioning_uri(secret, user.email, str(app_settings.MFA.ISSUER))
    # Inline: no <img> URL that would carry the secret to a log.
    assert qr_code_svg(uri) in page
    assert segno.make(uri, error="m").svg_inline(scale=4, dark="#000", light="#fff") in page
    assert "<img" not in page
    user.refresh_from_db()
    assert user.mfa_secret == secret and user.mfa_enabled is False


def test_a_second_visit_shows_the_same_pending_secret(signed: Client) -> None:
    assert _enroll(signed)[0] == _enroll(signed)[0]


def test_confirming_with_a_wrong_code_is_422_and_leaves_it_off(signed: Client, user: Any) -> None:
    secret, _ = _enroll(signed)
    response = post(signed, TOTP_ON, {"code": wrong_code(secret)})
    assert response.status_code == 422
    assert 'role="alert"' in response.content.decode()
    user.refresh_from_db()
    assert user.mfa_enabled is False


def test_confirming_shows_ten_recovery_codes_once(signed: Client, user: Any) -> None:
    secret, _ = _enroll(signed)
    response = post(signed, TOTP_ON, {"code": pyotp.TOTP(secret).now()})
    assert response.status_code == 200
    codes = RECOVERY.findall(response.content.decode())
    assert len(set(codes)) == 10
    for page in (signed.get(SETUP).content.decode(), signed.get(TOTP_ON).content.decode()):
        assert RECOVERY.search(page) is None
    assert "10 left" in signed.get(SETUP).content.decode()
    user.refresh_from_db()
    assert user.mfa_enabled is True


def test_new_recovery_codes_need_a_current_code_and_replace_the_old_ones(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret, old = enable_totp(user)
    client = login_client(browser(), user)
    refused = post(client, CODES, {"code": wrong_code(secret)})
    assert refused.status_code == 422
    assert RECOVERY.search(refused.content.decode()) is None
    code = next_step_code(monkeypatch, secret)
    response = post(client, CODES, {"code": code})
    assert response.status_code == 200
    new = RECOVERY.findall(response.content.decode())
    assert len(set(new)) == 10 and not set(new) & set(old)
    # An old code no longer signs in; a new one does.
    from appframework.mfa import verify_and_consume

    user.refresh_from_db()
    assert not verify_and_consume(user, old[1])
    assert verify_and_consume(user, new[1])


def test_turning_it_off_needs_a_current_code(user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    secret, _ = enable_totp(user)
    client = login_client(browser(), user)
    for code in (wrong_code(secret), ""):
        response = post(client, TOTP_OFF, {"code": code})
        assert response.status_code == 422
        user.refresh_from_db()
        assert user.mfa_enabled is True
    response = post(client, TOTP_OFF, {"code": next_step_code(monkeypatch, secret)})
    assert response.status_code == 302
    assert response["Location"] == SETUP
    assert "Two-factor authentication is off." in client.get(SETUP).content.decode()
    user.refresh_from_db()
    assert user.mfa_enabled is False and user.mfa_secret is None


def test_codes_asked_on_the_setup_pages_are_rate_limited(user: Any) -> None:
    secret, codes = enable_totp(user)
    client = login_client(browser(), user)
    wrong = wrong_code(secret)
    statuses = [post(client, TOTP_OFF, {"code": wrong}).status_code for _ in range(5)]
    assert statuses == [422] * 5
    response = post(client, CODES, {"code": codes[0]})
    assert response.status_code == 429
    assert response["Retry-After"]
    user.refresh_from_db()
    assert user.mfa_enabled is True and len(user.mfa_recovery_codes) == 10


def test_setup_posts_need_the_csrf_token(signed: Client, user: Any) -> None:
    secret, _ = _enroll(signed)
    response = signed.post(TOTP_ON, {"code": pyotp.TOTP(secret).now()}, **HTML)
    assert response.status_code == 403
    user.refresh_from_db()
    assert user.mfa_enabled is False


def test_each_change_asks_a_session_without_a_recent_proof_to_confirm_first(
    user: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A copied session cookie, hours old: every change goes to "Confirm it's you" and
    back, and changes nothing."""
    secret, _ = enable_totp(user)
    client = login_client(browser(), user)
    age_proof(client)
    for page in (TOTP_OFF, CODES):
        response = post(client, page, {"code": next_step_code(monkeypatch, secret)})
        assert response.status_code == 302
        assert response["Location"] == f"{REAUTH}?next={page}"
    user.refresh_from_db()
    assert user.mfa_enabled is True and len(user.mfa_recovery_codes) == 10


# -- log out -------------------------------------------------------------------------
def test_a_logout_link_asks_to_confirm_and_logs_nobody_out(signed: Client) -> None:
    response = signed.get(LOGOUT)
    assert response.status_code == 200
    assert 'method="post"' in response.content.decode()
    assert signed_in(signed)


def test_logout_without_the_token_is_403(signed: Client) -> None:
    assert signed.post(LOGOUT, **HTML).status_code == 403
    assert signed_in(signed)


def test_logout_with_an_authorization_header_still_needs_the_token(signed: Client) -> None:
    assert signed.post(LOGOUT, HTTP_AUTHORIZATION="Basic x", **HTML).status_code == 403
    assert signed_in(signed)


def test_logout_signs_out_and_follows_a_same_site_next(signed: Client) -> None:
    signed.get(LOGIN)
    response = post(signed, LOGOUT, {"next": "/private/"})
    assert response.status_code == 302
    assert response["Location"] == "/private/"
    assert not signed_in(signed)


# -- templates -----------------------------------------------------------------------
@pytest.fixture
def project_templates(tmp_path: Path) -> Iterator[Path]:
    """A project template folder listed before the apps' folders, as in a project."""
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [tmp_path]
    with override_settings(TEMPLATES=templates):
        yield tmp_path


def _write(root: Path, name: str, text: str) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_a_project_template_of_the_same_name_replaces_a_page(project_templates: Path) -> None:
    _write(project_templates, "appframework/login.html", "project login {{ username_label }}")
    page = browser().get(LOGIN).content.decode()
    assert page == "project login Email"


def test_a_project_base_template_wraps_every_page(project_templates: Path) -> None:
    _write(
        project_templates,
        "appframework/base.html",
        "<main id=project>{% block content %}{% endblock %}</main>",
    )
    page = browser().get(LOGIN).content.decode()
    assert page.startswith("<main id=project>")
    assert 'name="password"' in page


def test_an_override_can_extend_the_librarys_page_and_fill_the_sso_block(
    project_templates: Path,
) -> None:
    _write(
        project_templates,
        "appframework/login.html",
        '{% extends "appframework/login.html" %}{% block sso %}<a id=sso>SSO</a>{% endblock %}',
    )
    page = browser().get(LOGIN).content.decode()
    assert "<a id=sso>SSO</a>" in page
    assert 'name="password"' in page
