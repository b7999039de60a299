"""Making a personal access token mails its owner, and "log out everywhere" ends every
personal access token: a token made by whoever took over a session neither goes unseen
nor outlives the sessions the owner ends. A plain logout keeps them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.test import Client, RequestFactory

from appframework.auth import alogout
from appframework.auth.access_tokens import create_access_token
from appframework.auth.sessions import login
from tests.auth.account_pages import URLCONF, browser, post
from tests.auth.flows import configure  # noqa: F401 (a fixture)

pytestmark = pytest.mark.django_db


def works(secret: str) -> bool:
    answer = Client().get("/api/drf/posts/", HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert answer.status_code in (200, 401), answer.content
    return bool(answer.status_code == 200)


def signed_in_browser(user: Any, password: str) -> Client:
    client = browser()
    answer = post(client, "/accounts/login/", {"email": user.email, "password": password})
    assert answer.status_code == 302, answer.content
    return client


def test_making_a_token_mails_the_owner_its_name_and_prefix_never_the_secret(
    user: Any,
    configure: Callable[..., None],  # noqa: F811
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    configure(SECURITY_NOTIFICATIONS=True)
    with django_capture_on_commit_callbacks(execute=True):
        token, secret = create_access_token(user, "deploy script", scopes=["read"])
    [mail] = mailoutbox
    assert mail.to == [user.email]
    assert mail.subject == "A personal access token was made"
    assert "“deploy script”" in mail.body and token.prefix in mail.body
    assert secret not in mail.body and secret[len(token.prefix) :] not in mail.body


def test_without_security_notifications_nothing_is_mailed(
    user: Any,
    configure: Callable[..., None],  # noqa: F811
    mailoutbox: list[Any],
    django_capture_on_commit_callbacks: Any,
) -> None:
    configure(SECURITY_NOTIFICATIONS=False)
    with django_capture_on_commit_callbacks(execute=True):
        create_access_token(user, "deploy")
    assert mailoutbox == []


@pytest.mark.urls(URLCONF)
def test_log_out_everywhere_on_the_page_revokes_personal_access_tokens(
    user: Any, password: str
) -> None:
    _token, secret = create_access_token(user, "made by a thief")
    client = signed_in_browser(user, password)
    assert post(client, "/accounts/logout/", {"everywhere": "on"}).status_code == 302
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("django.conf.settings.ROOT_URLCONF", "testproject.urls")
        assert not works(secret)


@pytest.mark.urls(URLCONF)
def test_a_plain_logout_keeps_personal_access_tokens(user: Any, password: str) -> None:
    _token, secret = create_access_token(user, "deploy")
    client = signed_in_browser(user, password)
    assert post(client, "/accounts/logout/", {}).status_code == 302
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("django.conf.settings.ROOT_URLCONF", "testproject.urls")
        assert works(secret)


@pytest.mark.django_db(transaction=True)
async def test_alogout_everywhere_revokes_them_too(user: Any) -> None:
    _token, secret = await sync_to_async(create_access_token)(user, "made by a thief")
    request = RequestFactory().post("/")
    from django.contrib.sessions.backends.db import SessionStore

    request.session = SessionStore()
    await sync_to_async(login)(request, user)
    await alogout(request, everywhere=True)
    assert not await sync_to_async(works)(secret)
