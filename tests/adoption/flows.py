"""The adopted project's flows, run inside it (tests.adoption.project.settings) by
tests/adoption/test_adoption.py in a subprocess. Not named test_*.py: the main test run,
with the suite's test settings, must not collect it."""

from __future__ import annotations

import io
import json
import re
import time
from types import SimpleNamespace
from typing import Any

import pyotp
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.core import mail
from django.core.management import call_command
from django.test import Client

from appframework.mfa import confirm, enroll
from appframework.mfa import totp as totp_module

pytestmark = pytest.mark.django_db

PASSWORD = "adoption-Pa55word"
NEW_PASSWORD = "another-Pa55word-2"
HTML = {"HTTP_ACCEPT": "text/html,application/xhtml+xml"}
DB_SESSIONS = "django.contrib.sessions.backends.db"
ENGINES = ["appframework.auth.session_store", DB_SESSIONS]


@pytest.fixture(autouse=True)
def _fast_hashing(monkeypatch: pytest.MonkeyPatch) -> None:
    # Django's 1M+ PBKDF2 rounds cost ~0.3 s a hash; the format stays Django's.
    monkeypatch.setattr(PBKDF2PasswordHasher, "iterations", 1000)


@pytest.fixture(params=ENGINES, ids=["signed-cookie-sessions", "database-sessions"])
def engine(request: pytest.FixtureRequest, settings: Any) -> str:
    """The suite's default session engine, and Django's database sessions kept."""
    settings.SESSION_ENGINE = request.param
    return str(request.param)


@pytest.fixture
def staff(db: Any) -> Any:
    return get_user_model().objects.create_user(
        username="ada",
        email="ada@example.com",
        password=PASSWORD,
        is_staff=True,
        is_superuser=True,
    )


def browser() -> Client:
    return Client(enforce_csrf_checks=True)


def form_post(client: Client, path: str, data: dict[str, str], **extra: Any) -> Any:
    """A form POST as a browser sends it: the page's {% csrf_token %} field."""
    page = client.get(path, **HTML).content.decode()
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, page
    return client.post(path, {**data, "csrfmiddlewaretoken": match.group(1)}, **HTML, **extra)


def log_in(client: Client, username: str, password: str) -> Any:
    return form_post(client, "/accounts/login/", {"username": username, "password": password})


def signed_in(client: Client) -> bool:
    return bool(client.get("/private/", **HTML).status_code == 200)


def in_admin(client: Client) -> bool:
    return bool(client.get("/admin/", **HTML).status_code == 200)


# -- the model, the migrations, the Gate ability of the project's ready() ---------------


def test_the_migrations_are_complete_and_the_new_columns_exist(staff: Any) -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)
    fields = {f.name for f in get_user_model()._meta.get_fields()}
    assert {"mfa_secret", "mfa_enabled", "mfa_recovery_codes", "roles", "username"} <= fields
    assert staff.check_password(PASSWORD) and staff.password.startswith("pbkdf2_sha256$")


def test_the_ability_defined_in_ready_is_bound(staff: Any) -> None:
    from appframework.authorization import Gate
    from appframework.container import container

    gate = container.resolve(Gate)
    assert gate.allows_sync(staff, "see-reports")
    staff.is_staff = False
    assert not gate.allows_sync(staff, "see-reports")


# -- the admin, with and without TOTP ---------------------------------------------------


def test_admin_login_without_totp(staff: Any, engine: str) -> None:
    client = browser()
    response = form_post(client, "/admin/login/", {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert in_admin(client)
    assert client.get("/admin/accounts/user/", **HTML).status_code == 200


def test_admin_login_with_totp(staff: Any, monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    secret = enroll(staff)["secret"]
    recovery = confirm(staff, pyotp.TOTP(secret).now())
    staff.refresh_from_db()
    assert staff.mfa_enabled

    def password_step() -> Client:
        client = browser()
        response = form_post(client, "/admin/login/", {"username": "ada", "password": PASSWORD})
        assert response.status_code == 302 and response["Location"] == "/admin/login/code/"
        assert not in_admin(client)
        return client

    # The code is asked; a wrong one is refused and the sign-in stays pending.
    client = password_step()
    assert 'name="code"' in client.get("/admin/login/code/", **HTML).content.decode()
    live = {pyotp.TOTP(secret).at(time.time() + 30 * k) for k in range(-2, 4)}
    wrong = next(c for c in ("000000", "111111", "222222") if c not in live)
    response = form_post(client, "/admin/login/code/", {"code": wrong})
    assert response.status_code == 200 and "That code is not valid." in response.content.decode()
    assert not in_admin(client)
    # The next 30-second step's code (the confirming step is spent), clock moved there.
    at = time.time() + 30
    monkeypatch.setattr(totp_module, "time", SimpleNamespace(time=lambda: at))
    code = pyotp.TOTP(secret).at(at)
    response = form_post(client, "/admin/login/code/", {"code": code})
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert in_admin(client)
    # The same code again, in another browser: refused.
    again = password_step()
    response = form_post(again, "/admin/login/code/", {"code": code})
    assert "That code is not valid." in response.content.decode()
    assert not in_admin(again)
    # A recovery code works (once).
    rescued = password_step()
    response = form_post(rescued, "/admin/login/code/", {"code": recovery[0]})
    assert response["Location"] == "/admin/" and in_admin(rescued)
    spent = password_step()
    assert (
        "That code is not valid."
        in form_post(spent, "/admin/login/code/", {"code": recovery[0]}).content.decode()
    )


def test_the_admin_login_without_the_csrf_token_is_refused(staff: Any) -> None:
    client = browser()
    client.get("/admin/login/", **HTML)
    response = client.post("/admin/login/", {"username": "ada", "password": PASSWORD}, **HTML)
    assert response.status_code == 403 and not in_admin(client)


# -- management commands -----------------------------------------------------------------


def test_createsuperuser_and_changepassword(monkeypatch: pytest.MonkeyPatch, db: Any) -> None:
    monkeypatch.setenv("DJANGO_SUPERUSER_PASSWORD", PASSWORD)
    call_command(
        "createsuperuser",
        interactive=False,
        username="root",
        email="root@example.com",
        verbosity=0,
    )
    client = browser()
    assert (
        form_post(client, "/admin/login/", {"username": "root", "password": PASSWORD})["Location"]
        == "/admin/"
    )

    from django.contrib.auth.management.commands import changepassword

    monkeypatch.setattr(
        changepassword.Command, "_get_pass", lambda self, prompt="Password: ": NEW_PASSWORD
    )
    call_command("changepassword", "root", stdout=io.StringIO())
    assert log_in(browser(), "root", NEW_PASSWORD).status_code == 302
    refused = log_in(browser(), "root", PASSWORD)
    assert (
        refused.status_code == 200 and "correct username and password" in refused.content.decode()
    )


# -- django.contrib.auth.urls ------------------------------------------------------------


def test_login_required_redirects_to_the_login_page(db: Any) -> None:
    response = browser().get("/private/", **HTML)
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/private/"


def test_a_session_signed_in_before_adopting_stays_signed_in(staff: Any, settings: Any) -> None:
    """Before adopting, Django's LoginView wrote a database session naming ModelBackend;
    with database sessions kept and ModelBackend listed after the suite's backend, its
    cookie still works."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.sessions.backends.db import SessionStore

    settings.SESSION_ENGINE = DB_SESSIONS
    before = SessionStore()
    before[SESSION_KEY] = str(staff.pk)
    before[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    # The hash Django's own AbstractBaseUser wrote, not the suite's.
    before[HASH_SESSION_KEY] = AbstractBaseUser.get_session_auth_hash(staff)
    before.save()
    client = browser()
    client.cookies[settings.SESSION_COOKIE_NAME] = before.session_key
    assert signed_in(client)


def test_a_user_with_totp_is_not_signed_in_by_djangos_login_view(
    staff: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ModelBackend is listed after the suite's; the suite's answer on a password is
    final, so Django's own LoginView refuses a user with TOTP on."""
    secret = enroll(staff)["secret"]
    confirm(staff, pyotp.TOTP(secret).now())
    client = browser()
    response = log_in(client, "ada", PASSWORD)
    assert response.status_code == 200 and not signed_in(client)


def test_django_login_and_logout_end_every_copy_of_the_cookie(staff: Any, engine: str) -> None:
    client = browser()
    response = log_in(client, "ada", PASSWORD)
    assert response.status_code == 302 and signed_in(client)
    kept = client.cookies[settings.SESSION_COOKIE_NAME].value
    response = form_post(client, "/notes/", {"text": "x"})  # any page with a form
    token = client.cookies[settings.CSRF_COOKIE_NAME].value
    assert (
        client.post("/accounts/logout/", {"csrfmiddlewaretoken": token}, **HTML).status_code == 200
    )
    assert not signed_in(client)
    replay = browser()
    replay.cookies[settings.SESSION_COOKIE_NAME] = kept
    assert not signed_in(replay)


def test_password_change_view(staff: Any, engine: str) -> None:
    client = browser()
    log_in(client, "ada", PASSWORD)
    response = form_post(
        client,
        "/accounts/password_change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302 and response["Location"] == "/accounts/password_change/done/"
    assert signed_in(client)  # update_session_auth_hash kept this session
    assert log_in(browser(), "ada", NEW_PASSWORD).status_code == 302
    assert log_in(browser(), "ada", PASSWORD).status_code == 200


def test_password_reset(staff: Any) -> None:
    client = browser()
    response = form_post(client, "/accounts/password_reset/", {"email": "ada@example.com"})
    assert response["Location"] == "/accounts/password_reset/done/"
    [message] = mail.outbox
    link = re.search(r"https?://testserver(/\S+)", message.body).group(1)  # type: ignore[union-attr]
    response = client.get(link, **HTML)
    assert response.status_code == 302  # to .../set-password/
    response = form_post(
        client, response["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )
    assert response["Location"] == "/accounts/reset/done/"
    fresh = browser()
    assert log_in(fresh, "ada", NEW_PASSWORD).status_code == 302 and signed_in(fresh)
    assert log_in(browser(), "ada", PASSWORD).status_code == 200


# -- the project's own CSRF: a {% csrf_token %} form and an AJAX POST ------------------


def test_the_csrf_token_form(staff: Any, engine: str) -> None:
    client = browser()
    log_in(client, "ada", PASSWORD)
    response = form_post(client, "/notes/", {"text": "with the token"})
    assert response.status_code == 302 and response["Location"] == "/notes/"
    assert "with the token" in client.get("/notes/", **HTML).content.decode()
    refused = client.post("/notes/", {"text": "without"}, **HTML)
    assert refused.status_code == 403


def test_the_ajax_post_with_x_csrftoken(staff: Any, engine: str) -> None:
    client = browser()
    log_in(client, "ada", PASSWORD)
    client.get("/", **HTML)
    assert settings.CSRF_COOKIE_NAME == "csrf_token"  # apply_environment's default
    token = client.cookies[settings.CSRF_COOKIE_NAME].value  # document.cookie in the page
    body = json.dumps({"text": "from JavaScript"})
    response = client.post(
        "/api/notes/", body, content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert response.status_code == 201, response.content
    refused = client.post("/api/notes/", body, content_type="application/json")
    assert refused.status_code == 403
    wrong = client.post(
        "/api/notes/", body, content_type="application/json", HTTP_X_CSRFTOKEN="x" * 32
    )
    assert wrong.status_code == 403


def test_the_database_is_the_one_asked_for(db: Any) -> None:
    import os

    from django.db import connection

    wanted = "postgresql" if os.environ.get("DATABASE_URL") else "sqlite"
    assert connection.vendor == wanted
    print(f"database: {connection.vendor}")


def test_keeping_djangos_csrftoken_cookie_name(staff: Any, settings: Any) -> None:
    """CSRF_COOKIE_NAME = "csrftoken" above apply_environment(): the suite follows it, so
    JavaScript that reads the csrftoken cookie keeps working unchanged."""
    import copy

    from appframework.env import apply_environment

    app = copy.deepcopy(settings.APPFRAMEWORK)
    app.get("CSRF", {}).pop("COOKIE_NAME", None)
    module = apply_environment({"CSRF_COOKIE_NAME": "csrftoken", "APPFRAMEWORK": app}, {})
    settings.CSRF_COOKIE_NAME = module["CSRF_COOKIE_NAME"]
    settings.APPFRAMEWORK = module["APPFRAMEWORK"]
    assert settings.APPFRAMEWORK["CSRF"]["COOKIE_NAME"] == "csrftoken"
    client = browser()
    log_in(client, "ada", PASSWORD)
    client.get("/", **HTML)
    assert "csrf_token" not in client.cookies
    token = client.cookies["csrftoken"].value
    body = json.dumps({"text": "old JavaScript"})
    ok = client.post("/api/notes/", body, content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert ok.status_code == 201, ok.content
    assert client.post("/api/notes/", body, content_type="application/json").status_code == 403
