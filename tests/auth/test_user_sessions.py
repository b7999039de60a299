"""Sessions a user can see and end (appframework.auth.user_sessions and the page at
/accounts/sessions/), on the suite's signed-cookie store, Django's database engine and
Django's cache engine over Redis."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.test.utils import CaptureQueriesContext

from appframework import events
from appframework.auth.models import UserSession
from appframework.auth.user_sessions import SEEN_SESSION_KEY
from appframework.security.tokens import session_cookie_name
from tests.conftest import skip_or_fail_on_ci
from tests.services import redis_url

from .account_pages import URLCONF, post

pytestmark = [pytest.mark.django_db, pytest.mark.urls(URLCONF)]

SESSIONS = "/accounts/sessions/"
LOGIN = "/accounts/login/"
LOGOUT = "/accounts/logout/"
#: A signed-in page that is not about sessions: its requests show what a refresh costs.
EMAIL = "/accounts/email/"
REDIS_URL = redis_url(11)
TABLE = UserSession._meta.db_table


def _redis_cache() -> Iterator[dict[str, Any]]:
    try:
        import redis
    except ImportError:
        skip_or_fail_on_ci("the redis package is not installed")
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        skip_or_fail_on_ci(f"Redis is not reachable at {REDIS_URL}: {exc}")
    prefix = f"user-sessions-test-{uuid.uuid4().hex}"
    try:
        yield {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": prefix,
        }
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture(params=["signed_cookies", "database", "redis"])
def engine(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "signed_cookies":
        assert settings.SESSION_ENGINE == "appframework.auth.session_store"
        yield request.param
    elif request.param == "database":
        with override_settings(SESSION_ENGINE="django.contrib.sessions.backends.db"):
            yield request.param
    else:
        for config in _redis_cache():
            with override_settings(
                SESSION_ENGINE="django.contrib.sessions.backends.cache",
                SESSION_CACHE_ALIAS="user-sessions",
                CACHES={**settings.CACHES, "user-sessions": config},
            ):
                yield request.param


def sign_in(user: Any, password: str, agent: str, address: str) -> Client:
    client = Client(enforce_csrf_checks=True, HTTP_USER_AGENT=agent, REMOTE_ADDR=address)
    response = post(client, LOGIN, {"email": user.email, "password": password})
    assert response.status_code == 302, response.content
    return client


def listed(client: Client) -> list[dict[str, Any]]:
    response = client.get(SESSIONS)
    assert response.status_code == 200
    return list(response.context["sessions"])


def is_signed_in(client: Client) -> bool:
    return bool(client.get(SESSIONS).status_code == 200)


def row_of(client: Client) -> UserSession:
    (current,) = [s for s in listed(client) if s["current"]]
    return UserSession.objects.get(pk=current["pk"])


def test_the_list_shows_both_sessions_with_this_one_marked(
    engine: str, user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "Firefox on the laptop", "203.0.113.7")
    phone = sign_in(user, password, "Safari on the phone " + "x" * 300, "198.51.100.2")
    sessions = listed(laptop)
    assert len(sessions) == 2
    (mine,) = [s for s in sessions if s["current"]]
    (other,) = [s for s in sessions if not s["current"]]
    assert mine["user_agent"] == "Firefox on the laptop"
    assert mine["client_ip"] == "203.0.113.7"
    assert other["client_ip"] == "198.51.100.2"
    assert len(other["user_agent"]) == 200
    assert str(mine["kind"]) == "browser"
    page = laptop.get(SESSIONS).content.decode()
    assert "This session" in page
    assert 'name="csrfmiddlewaretoken"' in page
    assert [s["current"] for s in listed(phone)].count(True) == 1
    if engine != "signed_cookies":
        assert all(r.session_key for r in UserSession.objects.filter(user=user))
    else:
        assert not any(r.session_key for r in UserSession.objects.filter(user=user))


def test_ending_one_makes_the_other_clients_next_request_anonymous(
    engine: str, user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    received: list[dict[str, Any]] = []

    def listener(**kwargs: Any) -> None:
        received.append(kwargs)

    events.session_ended.connect(listener)
    try:
        (other,) = [s for s in listed(laptop) if not s["current"]]
        response = post(laptop, f"/accounts/sessions/{other['pk']}/end/")
    finally:
        events.session_ended.disconnect(listener)
    assert response.status_code == 302
    assert response["Location"] == SESSIONS
    assert "The session has ended." in laptop.get(SESSIONS).content.decode()
    assert not is_signed_in(phone)
    assert is_signed_in(laptop)
    assert [s["current"] for s in listed(laptop)] == [True]
    assert received[0]["user"] == user and received[0]["kind"] == "browser"


def test_a_kept_copy_of_an_ended_cookie_stays_anonymous(
    engine: str, user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    copy = Client(HTTP_USER_AGENT="phone")
    copy.cookies[session_cookie_name()] = phone.cookies[session_cookie_name()].value
    (other,) = [s for s in listed(laptop) if not s["current"]]
    post(laptop, f"/accounts/sessions/{other['pk']}/end/")
    assert not is_signed_in(copy)
    assert UserSession.objects.filter(user=user).count() == 1


def test_ending_the_others_keeps_this_one(engine: str, user: Any, password: str) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    tablet = sign_in(user, password, "tablet", "198.51.100.3")
    response = post(laptop, "/accounts/sessions/end-others/")
    assert response.status_code == 302
    assert not is_signed_in(phone)
    assert not is_signed_in(tablet)
    assert is_signed_in(laptop)
    assert [s["user_agent"] for s in listed(laptop)] == ["laptop"]


def test_this_session_is_not_ended_from_the_list(user: Any, password: str) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    mine = row_of(laptop)
    response = post(laptop, f"/accounts/sessions/{mine.pk}/end/")
    assert response.status_code == 302
    page = laptop.get(SESSIONS)
    assert page.status_code == 200
    assert "log out to end it" in page.content.decode()


def test_another_users_session_is_not_found(
    engine: str, user: Any, other_user: Any, password: str
) -> None:
    mine = sign_in(user, password, "laptop", "203.0.113.7")
    theirs = sign_in(other_user, password, "bob's laptop", "198.51.100.9")
    their_row = row_of(theirs)
    response = post(mine, f"/accounts/sessions/{their_row.pk}/end/")
    assert response.status_code == 404
    assert is_signed_in(theirs)
    assert post(mine, "/accounts/sessions/999999/end/").status_code == 404


def test_ending_needs_a_post_with_the_csrf_token(user: Any, password: str) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    other = row_of(phone)
    assert laptop.get(f"/accounts/sessions/{other.pk}/end/").status_code == 405
    assert laptop.post(f"/accounts/sessions/{other.pk}/end/").status_code == 403
    assert laptop.post("/accounts/sessions/end-others/").status_code == 403
    assert is_signed_in(phone)


def test_the_page_needs_a_signed_in_user() -> None:
    response = Client().get(SESSIONS, headers={"Accept": "text/html"})
    assert response.status_code == 302
    assert response["Location"].startswith(LOGIN)


def _user_session_queries(client: Client, path: str = EMAIL) -> list[str]:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 200
    return [q["sql"] for q in queries.captured_queries if TABLE in q["sql"]]


def _age_stamp(client: Client, seconds: int) -> None:
    session = client.session
    session[SEEN_SESSION_KEY] -= seconds
    session.save()
    client.cookies[session_cookie_name()] = session.session_key


def test_last_seen_is_written_at_most_once_an_interval(
    engine: str, user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    before = UserSession.objects.get(user=user).last_seen_at
    # Seen at sign-in: the next requests (within the interval) do not touch the table.
    assert _user_session_queries(laptop) == []
    assert _user_session_queries(laptop) == []
    assert UserSession.objects.get(user=user).last_seen_at == before
    _age_stamp(laptop, 301)
    assert len(_user_session_queries(laptop)) == 1  # one UPDATE
    assert UserSession.objects.get(user=user).last_seen_at > before
    assert _user_session_queries(laptop) == []


def test_a_request_within_the_interval_queries_nothing_more_than_before(
    user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    laptop.get(EMAIL)
    with CaptureQueriesContext(connection) as first:
        laptop.get(EMAIL)
    UserSession.objects.all().delete()  # a refresh would now have to write a row
    with CaptureQueriesContext(connection) as second:
        laptop.get(EMAIL)
    assert len(second.captured_queries) == len(first.captured_queries)
    assert not any(TABLE in q["sql"] for q in second.captured_queries)


def test_an_anonymous_request_does_not_touch_the_table(engine: str) -> None:
    visitor = Client()
    with CaptureQueriesContext(connection) as queries:
        visitor.get(LOGIN)
        visitor.get("/")
    assert not any(TABLE in q["sql"] for q in queries.captured_queries)


def test_a_session_from_before_rows_were_kept_gets_one_at_its_next_refresh(
    engine: str, user: Any, password: str
) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    UserSession.objects.all().delete()
    _age_stamp(laptop, time.time())
    laptop.get(EMAIL)
    row = UserSession.objects.get(user=user)
    assert (row.kind, row.user_agent, row.client_ip) == ("browser", "laptop", "203.0.113.7")
    assert [s["current"] for s in listed(laptop)] == [True]


def test_logout_removes_the_row(engine: str, user: Any, password: str) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    sign_in(user, password, "phone", "198.51.100.2")
    assert UserSession.objects.filter(user=user).count() == 2
    assert post(laptop, LOGOUT).status_code == 302
    assert [r.user_agent for r in UserSession.objects.filter(user=user)] == ["phone"]


def test_logout_everywhere_removes_every_row(user: Any, password: str) -> None:
    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    sign_in(user, password, "phone", "198.51.100.2")
    assert post(laptop, LOGOUT, {"everywhere": "on"}).status_code == 302
    assert not UserSession.objects.filter(user=user).exists()


def test_a_password_change_drops_the_rows_of_the_sessions_it_ended(
    engine: str, user: Any, password: str
) -> None:
    from .flows import NEW_PASSWORD

    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    response = post(
        laptop,
        "/accounts/password/change/",
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert response.status_code == 302, response.content
    assert not is_signed_in(phone)
    assert [s["user_agent"] for s in listed(laptop)] == ["laptop"]
    # The change gave this session a new engine key, which its row follows: ending it
    # from elsewhere still reaches it.
    other = sign_in(user, NEW_PASSWORD, "tablet", "198.51.100.3")
    post(other, f"/accounts/sessions/{row_of(laptop).pk}/end/")
    assert not is_signed_in(laptop)


def test_expired_rows_are_not_listed_and_are_pruned(user: Any, password: str) -> None:
    from datetime import timedelta

    from django.utils import timezone

    laptop = sign_in(user, password, "laptop", "203.0.113.7")
    phone = sign_in(user, password, "phone", "198.51.100.2")
    UserSession.objects.filter(pk=row_of(phone).pk).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    assert [s["user_agent"] for s in listed(laptop)] == ["laptop"]
    assert UserSession.objects.filter(user=user).count() == 1
