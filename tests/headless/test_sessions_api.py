"""The sessions endpoints of the JSON API (account/sessions...), for both clients."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from django.test import Client

from appframework.auth.models import UserSession
from tests.conftest import csrf_cookie

pytestmark = pytest.mark.django_db

BROWSER = "/api/auth/browser/v1/"
APP = "/api/auth/app/v1/"
JSON = "application/json"


def app_sign_in(user: Any, password: str, agent: str = "ExampleApp/1.0") -> Client:
    """An app signed in: its client sends the token it was handed from then on."""
    app = Client(HTTP_X_SESSION_TOKEN="", HTTP_USER_AGENT=agent, REMOTE_ADDR="198.51.100.4")
    response = app.post(
        APP + "auth/login", {"email": user.email, "password": password}, content_type=JSON
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "authenticated"
    token = response["X-Session-Token"]
    assert token.startswith("afs_")
    return Client(HTTP_X_SESSION_TOKEN=token, HTTP_USER_AGENT=agent, REMOTE_ADDR="198.51.100.4")


def browser_sign_in(user: Any, password: str, agent: str = "Firefox") -> Client:
    client = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=agent, REMOTE_ADDR="203.0.113.7")
    response = client.post(
        BROWSER + "auth/login",
        {"email": user.email, "password": password},
        content_type=JSON,
        headers={"X-CSRF-Token": csrf_cookie(client)},
    )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "authenticated"
    return client


def csrf(client: Client) -> dict[str, str]:
    """The header a single-page app sends: the token of the session's CSRF cookie."""
    return {"X-CSRF-Token": csrf_cookie(client)}


def sessions(client: Client, prefix: str) -> list[dict[str, Any]]:
    response = client.get(prefix + "account/sessions")
    assert response.status_code == 200, response.content
    return list(response.json()["sessions"])


def test_the_list_has_both_kinds_in_the_documented_shape(user: Any, password: str) -> None:
    app = app_sign_in(user, password)
    browser = browser_sign_in(user, password)
    listed = sessions(app, APP)
    assert len(listed) == 2
    for entry in listed:
        assert set(entry) == {
            "id",
            "kind",
            "created_at",
            "last_seen_at",
            "client_ip",
            "user_agent",
            "current",
        }
        assert isinstance(entry["id"], int)
        datetime.fromisoformat(entry["created_at"])
        datetime.fromisoformat(entry["last_seen_at"])
    by_kind = {entry["kind"]: entry for entry in listed}
    assert by_kind["app"]["current"] is True
    assert by_kind["browser"]["current"] is False
    assert by_kind["app"]["user_agent"] == "ExampleApp/1.0"
    assert by_kind["app"]["client_ip"] == "198.51.100.4"
    assert by_kind["browser"]["client_ip"] == "203.0.113.7"
    from_browser = {entry["kind"]: entry["current"] for entry in sessions(browser, BROWSER)}
    assert from_browser == {"app": False, "browser": True}


def test_an_app_session_ended_from_the_browser_makes_its_token_401(
    user: Any, password: str
) -> None:
    app = app_sign_in(user, password)
    browser = browser_sign_in(user, password)
    (app_entry,) = [e for e in sessions(browser, BROWSER) if e["kind"] == "app"]
    response = browser.delete(f"{BROWSER}account/sessions/{app_entry['id']}", headers=csrf(browser))
    assert response.status_code == 200, response.content
    assert [e["kind"] for e in response.json()["sessions"]] == ["browser"]
    assert not UserSession.objects.filter(kind="app").exists()
    assert app.get(APP + "account/sessions").status_code == 401
    assert app.get(APP + "account").status_code == 401
    # GET session is no error: 200, anonymous (docs/headless.md says so).
    status = app.get(APP + "session")
    assert status.status_code == 200
    assert status.json()["status"] == "anonymous" and status.json()["user"] is None


def test_a_browser_session_ended_from_the_app_is_anonymous_next(user: Any, password: str) -> None:
    app = app_sign_in(user, password)
    browser = browser_sign_in(user, password)
    (browser_entry,) = [e for e in sessions(app, APP) if e["kind"] == "browser"]
    response = app.delete(f"{APP}account/sessions/{browser_entry['id']}")
    assert response.status_code == 200
    assert [e["current"] for e in response.json()["sessions"]] == [True]
    assert browser.get(BROWSER + "account/sessions").status_code == 401
    assert browser.get(BROWSER + "session").json()["status"] == "anonymous"


def test_the_browser_client_needs_the_csrf_header(user: Any, password: str) -> None:
    browser = browser_sign_in(user, password)
    app_sign_in(user, password)
    (app_entry,) = [e for e in sessions(browser, BROWSER) if e["kind"] == "app"]
    refused = browser.delete(f"{BROWSER}account/sessions/{app_entry['id']}")
    assert refused.status_code == 403
    assert refused["Content-Type"].startswith("application/problem+json")
    assert browser.post(BROWSER + "account/sessions/end-others").status_code == 403
    assert len(sessions(browser, BROWSER)) == 2


@pytest.mark.parametrize("prefix", [BROWSER, APP])
def test_ending_the_current_session_here_is_a_409(user: Any, password: str, prefix: str) -> None:
    client = browser_sign_in(user, password) if prefix == BROWSER else app_sign_in(user, password)
    (mine,) = sessions(client, prefix)
    headers = csrf(client) if prefix == BROWSER else {}
    response = client.delete(f"{prefix}account/sessions/{mine['id']}", headers=headers)
    assert response.status_code == 409
    assert response["Content-Type"].startswith("application/problem+json")
    assert json.loads(response.content)["code"] == "current_session"
    assert [e["current"] for e in sessions(client, prefix)] == [True]


@pytest.mark.parametrize("prefix", [BROWSER, APP])
def test_another_users_or_an_unknown_session_is_a_404(
    user: Any, other_user: Any, password: str, prefix: str
) -> None:
    client = browser_sign_in(user, password) if prefix == BROWSER else app_sign_in(user, password)
    theirs = app_sign_in(other_user, password)
    (their_entry,) = sessions(theirs, APP)
    headers = csrf(client) if prefix == BROWSER else {}
    for pk in (their_entry["id"], 999_999):
        response = client.delete(f"{prefix}account/sessions/{pk}", headers=headers)
        assert response.status_code == 404
        assert json.loads(response.content)["code"] == "not_found"
    assert theirs.get(APP + "account").status_code == 200


@pytest.mark.parametrize("prefix", [BROWSER, APP])
def test_end_others_answers_with_just_this_session(user: Any, password: str, prefix: str) -> None:
    client = browser_sign_in(user, password) if prefix == BROWSER else app_sign_in(user, password)
    other_app = app_sign_in(user, password, agent="OtherApp")
    other_browser = browser_sign_in(user, password, agent="Chrome")
    headers = csrf(client) if prefix == BROWSER else {}
    response = client.post(prefix + "account/sessions/end-others", headers=headers)
    assert response.status_code == 200, response.content
    (only,) = response.json()["sessions"]
    assert only["current"] is True
    assert other_app.get(APP + "account").status_code == 401
    assert other_browser.get(BROWSER + "account").status_code == 401
    assert client.get(prefix + "account").status_code == 200


@pytest.mark.parametrize("prefix", [BROWSER, APP])
def test_the_endpoints_need_a_signed_in_user(prefix: str) -> None:
    client = Client(HTTP_X_SESSION_TOKEN="") if prefix == APP else Client()
    assert client.get(prefix + "account/sessions").status_code == 401


def test_an_app_logout_removes_its_row(user: Any, password: str) -> None:
    app = app_sign_in(user, password)
    assert UserSession.objects.filter(kind="app", user=user).count() == 1
    assert app.delete(APP + "session").status_code in (200, 401)
    assert not UserSession.objects.filter(user=user).exists()
