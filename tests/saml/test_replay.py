"""Replay: an accepted assertion id is remembered in ``SAML["REPLAY_CACHE"]`` and
refused when it comes back, in this process or, with a shared Redis cache, in another.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.cache import caches
from django.test import Client
from django.test.utils import override_settings

from appframework.conf import app_settings
from appframework.saml import SamlProvider, saml_provider, store
from appframework.stores import shared_store
from testproject.blog.models import User
from testproject.local_idp.saml_idp import SigningIdp
from tests.conftest import skip_or_fail_on_ci
from tests.saml import idp_tools
from tests.services import redis_url

from .conftest import (
    ALICE,
    SettingsInstaller,
    appframework_with,
    assert_problem,
    assert_redirect,
    post_acs,
    respond,
    signed_in_user,
    start_login,
)

REDIS_URL = redis_url(12)
REPO = Path(__file__).resolve().parents[2]


# -- in this process ----------------------------------------------------------------------------


@pytest.mark.django_db
def test_an_idp_initiated_response_twice_is_saml_replayed(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(idp)
    first = Client()
    assert_redirect(post_acs(first, xml, relay_state="/posts"), "/posts")
    assert signed_in_user(first) == User.objects.get(email=ALICE)

    replayer = Client()
    assert_problem(post_acs(replayer, xml, relay_state="/posts"), 403, "saml_replayed")
    assert signed_in_user(replayer) is None

    # The assertion is what is remembered, not the user: a new one for Alice is accepted.
    assert_redirect(post_acs(Client(), respond(idp), relay_state="/posts"), "/posts")


@pytest.mark.django_db
def test_an_sp_initiated_response_twice_is_saml_invalid_its_request_id_being_spent(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts")
    xml = respond(idp, request_id)
    assert_redirect(post_acs(browser, xml), "/posts")

    replayer = Client()
    assert_problem(post_acs(replayer, xml), 403, "saml_invalid")
    assert signed_in_user(replayer) is None


@pytest.mark.django_db
def test_replays_are_remembered_per_provider_in_the_replay_cache_alias(
    idp: SigningIdp, saml_settings: SettingsInstaller
) -> None:
    with override_settings(
        CACHES={
            **settings.CACHES,
            "saml-replay": {
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "LOCATION": "saml-replay-test",
            },
        }
    ):
        saml_settings(REPLAY_CACHE="saml-replay")
        xml = respond(idp)
        assert_redirect(post_acs(Client(), xml), "/")
        assert_problem(post_acs(Client(), xml), 403, "saml_replayed")
        # The record is in the configured alias: emptying it forgets the assertion.
        caches["saml-replay"].clear()
        assert_redirect(post_acs(Client(), xml), "/")


# -- how long the record lives ------------------------------------------------------------------


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def time(self) -> float:
        return self.now


@pytest.fixture
def add_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every ``timeout`` the replay store's ``add`` is called with (the add still runs)."""
    cache = shared_store(app_settings.SAML.REPLAY_CACHE)
    real_add = cache.add
    seen: list[Any] = []

    def spy(key: str, value: Any, timeout: Any = None, version: Any = None) -> bool:
        seen.append(timeout)
        return real_add(key, value, timeout=timeout, version=version)

    monkeypatch.setattr(cache, "add", spy)
    return seen


@pytest.fixture
def stopped_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(store, "time", _Clock(1_000_000.0))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("not_on_or_after", "expected"),
    [
        (None, 600),  # no expiry in the assertion: the window
        (1_000_000.0 + 300, 600),  # expires before the window ends: the window
        (1_000_000.0 + 5_000, 5_000 + 60 + 1),  # expires later: until then, plus the skew
        (1_000_000.0 + 540, 601),  # 540 + 60 s of skew is the window: one second more
        (1_000_000.0 - 9_999, 600),  # already expired: the window
    ],
)
def test_the_replay_record_lives_the_window_or_until_expiry_plus_skew_whichever_is_later(
    saml_settings: SettingsInstaller,
    add_timeouts: list[Any],
    stopped_clock: None,
    not_on_or_after: float | None,
    expected: int,
) -> None:
    saml_settings(REPLAY_WINDOW=600, CLOCK_SKEW=60)
    assert store.remember_assertion("test", "_a1", not_on_or_after) is True
    assert add_timeouts == [expected]
    assert store.remember_assertion("test", "_a1", not_on_or_after) is False
    # Another provider's assertion with the same id is another record.
    assert store.remember_assertion("other", "_a1", not_on_or_after) is True


@pytest.mark.django_db
def test_the_acs_remembers_until_the_assertions_own_expiry(
    idp: SigningIdp, saml_settings: SettingsInstaller, add_timeouts: list[Any]
) -> None:
    """End to end: the NotOnOrAfter the ACS hands over is the assertion's."""
    saml_settings(REPLAY_WINDOW=1, CLOCK_SKEW=30)
    assert_redirect(post_acs(Client(), respond(idp, valid_for_seconds=3_600)), "/")
    [timeout] = add_timeouts
    # NotOnOrAfter is an hour from the IdP's (whole-second) now, plus the skew.
    assert 3_600 + 30 - 5 <= timeout <= 3_600 + 30 + 1


@pytest.mark.django_db
def test_the_record_lives_until_the_bearer_confirmations_expiry_when_the_conditions_have_none(
    idp: SigningIdp, saml_settings: SettingsInstaller, add_timeouts: list[Any]
) -> None:
    """The Conditions' NotOnOrAfter is optional; the bearer SubjectConfirmationData's is
    what pysaml2 then checks, so the record must last until it (plus the skew), not for
    REPLAY_WINDOW alone, or the assertion is accepted again once the record is gone."""
    saml_settings(REPLAY_WINDOW=1, CLOCK_SKEW=30)
    undated = idp_tools.bent_idp(idp, idp_tools.drop_conditions_not_on_or_after)
    xml = respond(undated, valid_for_seconds=3_600)
    # The prefix pysaml2 writes depends on ElementTree's global registry: not checked.
    assert re.search(r"<\w+:Conditions NotBefore=", xml) and "Conditions NotOnOrAfter" not in xml
    assert_redirect(post_acs(Client(), xml), "/")
    [timeout] = add_timeouts
    assert 3_600 + 30 - 5 <= timeout <= 3_600 + 30 + 1


@pytest.mark.django_db
def test_an_assertion_with_no_expiry_at_all_is_refused_so_no_record_can_outlive_it(
    idp: SigningIdp, saml_settings: SettingsInstaller
) -> None:
    """Without any NotOnOrAfter an assertion is good forever, and its record lasts
    REPLAY_WINDOW seconds: once that passed (the cache emptied here) it was accepted a
    second time. The Web SSO profile requires NotOnOrAfter on a bearer confirmation."""
    saml_settings(REPLAY_WINDOW=1)

    def no_expiry(response: Any, assertion: Any) -> None:
        idp_tools.drop_conditions_not_on_or_after(response, assertion)
        idp_tools.drop_bearer_not_on_or_after(response, assertion)

    xml = respond(idp_tools.bent_idp(idp, no_expiry))
    assert "NotOnOrAfter" not in xml
    for _attempt in range(2):
        browser = Client()
        assert_problem(post_acs(browser, xml), 403, "saml_invalid")
        assert signed_in_user(browser) is None
        shared_store(app_settings.SAML.REPLAY_CACHE).clear()  # the replay window has passed
    assert not User.objects.exists()


# -- across processes (a shared Redis) ----------------------------------------------------------

_CHILD = """
import json, os, sys
import django
django.setup()
from django.conf import settings
from django.test import RequestFactory
from django.test.utils import override_settings

from appframework.exceptions import ForbiddenException
from appframework.saml import saml_acs, saml_provider

job = json.loads(sys.stdin.read())
caches = {**settings.CACHES, "saml-shared": job["cache"]}
appframework = {**settings.APPFRAMEWORK, "SAML": {
    "PROVIDERS": [saml_provider(**job["provider"])], "REPLAY_CACHE": "saml-shared"}}
results = {}
with override_settings(CACHES=caches, APPFRAMEWORK=appframework):
    for label, encoded in job["responses"].items():
        request = RequestFactory().post("/saml/test/acs", {"SAMLResponse": encoded})
        try:
            user = saml_acs(request, "test")
        except ForbiddenException as exc:
            results[label] = exc.code
        else:
            results[label] = "accepted:" + user.name_id
print(json.dumps(results))
"""


@pytest.fixture
def shared_cache() -> Iterator[dict[str, Any]]:
    """A Redis cache alias on ``REDIS_URL`` (db 12), under a key prefix of this test's
    own; only keys under that prefix are deleted afterwards."""
    try:
        import redis
    except ImportError:
        skip_or_fail_on_ci("the redis package is not installed")
    client = redis.Redis.from_url(REDIS_URL)
    try:
        client.ping()
    except redis.RedisError as exc:
        skip_or_fail_on_ci(f"Redis is not reachable at {REDIS_URL}: {exc}")
    prefix = f"saml-replay-test-{uuid.uuid4().hex}"
    config = {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": prefix,
    }
    try:
        yield config
    finally:
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.mark.django_db
def test_a_response_accepted_here_is_refused_as_replayed_in_another_process(
    idp: SigningIdp,
    provider_kwargs: dict[str, Any],
    shared_cache: dict[str, Any],
) -> None:
    # One override for both: nested overrides must unwind in order, or the cache alias
    # outlives its CACHES entry for the rest of the session.
    with override_settings(
        CACHES={**settings.CACHES, "saml-shared": shared_cache},
        APPFRAMEWORK=appframework_with(
            {"PROVIDERS": [saml_provider(**provider_kwargs)], "REPLAY_CACHE": "saml-shared"}
        ),
    ):
        accepted_here = respond(idp)
        assert_redirect(post_acs(Client(), accepted_here), "/")
        accepted_there = respond(idp, name_id="bob@example.test", attributes={})
        # Started here, answered there: the outstanding request is shared too.
        request_id = start_login(Client(), next="/posts")

        job = {
            "cache": shared_cache,
            "provider": provider_kwargs,
            "responses": {
                "replayed": SigningIdp.encode(accepted_here),
                "fresh": SigningIdp.encode(accepted_there),
                "solicited": SigningIdp.encode(respond(idp, request_id)),
            },
        }
        child = subprocess.run(
            [sys.executable, "-c", _CHILD],
            input=json.dumps(job),
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
            check=False,
        )
        assert child.returncode == 0, child.stderr
        results = json.loads(child.stdout.strip().splitlines()[-1])
        assert results == {
            "replayed": "saml_replayed",
            "fresh": "accepted:bob@example.test",
            "solicited": "accepted:" + ALICE,
        }

        # ...and what the other process accepted is a replay here.
        replayer = Client()
        assert_problem(post_acs(replayer, accepted_there), 403, "saml_replayed")
        assert signed_in_user(replayer) is None
