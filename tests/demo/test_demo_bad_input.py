"""The demo's answers to hostile input, found by probing it as an attacker: never a 500,
nothing half-written. Titles refuse control, bidi-override and surrogate characters;
bodies that are not a JSON object are a 400 however deep they nest; the public webhook
receiver refuses unsigned posts, stores what it can of signed ones and never crashes; a
user who belongs to no tenant cannot write into the public one; turning two-factor off
is rate-limited."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

from appframework_tenancy import all_tenants
from appframework_webhooks.delivery import webhook_headers
from testproject.blog.models import Post, ReceivedWebhook, User
from tests.conftest import enable_totp
from tests.demo.browsing import browser_login, form_token

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("demo_stack")]

DEEP = b"[" * 5000 + b"]" * 5000
ODDITIES = pytest.mark.parametrize(
    "body",
    [b'{"event": "\\ud800"}', b'{"event": "a\\u0000b"}', DEEP, b"\xff\xfe\x00", b"[1]"],
    ids=["lone-surrogate", "nul", "deep", "not-utf8", "list"],
)


@pytest.fixture
def editor(db: Any) -> Client:
    call_command("seed_demo", stdout=io.StringIO())
    return browser_login("editor@example.com", "editor-password")


def post_count() -> int:
    with all_tenants():
        return Post.objects.count()


def api_post(client: Client, body: bytes) -> Any:
    return client.post(
        "/posts", body, content_type="application/json",
        HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value, HTTP_ACCEPT="application/json",
    )


@pytest.mark.parametrize(
    "title",
    ["\ud800", "a\x00b", "evil\u202eosla", "zero\u200bwidth", "tab\there", "line\nbreak"],
    ids=["lone-surrogate", "nul", "bidi-override", "zero-width", "tab", "newline"],
)
def test_a_title_with_an_unprintable_character_is_a_422_and_writes_nothing(
    editor: Client, title: str
) -> None:
    before = post_count()
    response = api_post(editor, json.dumps({"title": title}).encode())
    assert response.status_code == 422
    assert response.json()["code"] == "invalid"
    if title != "\ud800":  # a form cannot carry a lone surrogate (a browser replaces it)
        page = editor.get("/blog").content.decode()
        form = editor.post("/blog", {"title": title, **form_token(page)}, HTTP_ACCEPT="text/html")
        assert form.status_code == 422
    assert post_count() == before


def test_a_body_keeps_line_breaks_but_refuses_other_control_characters(editor: Client) -> None:
    ok = api_post(editor, json.dumps({"title": "Lines", "body": "one\r\ntwo\tthree"}).encode())
    assert ok.status_code == 201
    assert ok.json()["body"] == "one\r\ntwo\tthree"
    refused = api_post(editor, json.dumps({"title": "Nul", "body": "a\x00b"}).encode())
    assert refused.status_code == 422


@pytest.mark.parametrize("body", [DEEP, b'{"title": ' + DEEP + b"}", b"[]", b'"x"', b"{"])
def test_a_body_that_is_not_a_json_object_is_a_400_not_a_500(editor: Client, body: bytes) -> None:
    before = post_count()
    response = api_post(editor, body)
    assert response.status_code == 400
    assert post_count() == before


@ODDITIES
def test_the_public_receiver_refuses_an_unsigned_oddity_with_401_storing_nothing(
    body: bytes,
) -> None:
    response = Client().post("/webhooks/receiver", body, content_type="application/json")
    assert response.status_code == 401
    assert not ReceivedWebhook.objects.exists()


@ODDITIES
def test_the_public_receiver_stores_a_signed_oddity_and_answers_204(body: bytes) -> None:
    """Signed with the demo's secret, the oddity is stored as the database can take it."""
    secret = settings.DEMO_WEBHOOK_SECRET
    headers = webhook_headers("odd.event", body, secret, "o" * 32, int(time.time()))
    headers.pop("Content-Type")
    response = Client().post(
        "/webhooks/receiver", body, content_type="application/json", headers=headers
    )
    assert response.status_code == 204
    row = ReceivedWebhook.objects.get()
    assert row.signature_valid is True and row.webhook_id == "o" * 32
    assert "\x00" not in row.event + row.body


def test_a_user_of_no_tenant_cannot_write_into_the_public_one(db: Any) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    User.objects.create_user("newcomer@example.com", "a-long-password")
    client = browser_login("newcomer@example.com", "a-long-password")
    before = post_count()
    page = client.get("/blog").content.decode()
    form = client.post("/blog", {"title": "Squatting", **form_token(page)}, HTTP_ACCEPT="text/html")
    assert form.status_code == 403
    graphql = client.post(
        "/graphql", json.dumps({"query": 'mutation { createPost(title: "Squat") { id } }'}),
        content_type="application/json", HTTP_X_CSRF_TOKEN=client.cookies["csrf_token"].value,
    ).json()
    assert graphql["errors"][0]["extensions"]["status"] == 403
    assert post_count() == before


def test_turning_two_factor_off_allows_five_wrong_codes_a_minute(db: Any) -> None:
    call_command("seed_demo", stdout=io.StringIO())
    user = User.objects.get(email="reader@example.com")
    enable_totp(user)
    # A stolen session, in effect: signed in, and guessing codes to turn the factor off.
    client = Client(enforce_csrf_checks=True)
    client.force_login(user, backend="appframework.auth.AuthManager")
    page = client.get("/account/mfa/totp/off").content.decode()
    statuses = [
        client.post("/account/mfa/totp/off", {"code": "000000", **form_token(page)}).status_code
        for _ in range(6)
    ]
    assert statuses == [422] * 5 + [429]
    assert User.objects.get(pk=user.pk).mfa_enabled is True
