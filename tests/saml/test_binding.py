"""Login CSRF: a response is bound to the browser that started the login.

The ACS POST only validates and answers 303 to ``?resume=<key>``; the browser's GET of
that URL carries its session cookie, and a solicited response is accepted there only
when this session started its AuthnRequest.
"""

from __future__ import annotations

import time

import pytest
from django.conf import settings
from django.test import Client

from appframework.saml import SamlProvider, store
from appframework.saml.flows import SESSION_REQUESTS_KEPT, SESSION_REQUESTS_KEY
from testproject.blog.models import User
from testproject.local_idp.saml_idp import SigningIdp

from .conftest import (
    ALICE,
    EVIL,
    JSON,
    ProviderFactory,
    SettingsInstaller,
    assert_problem,
    assert_redirect,
    post_acs,
    respond,
    resume_path,
    session_request,
    signed_in_user,
    start_login,
)

pytestmark = pytest.mark.django_db


def mallorys_response(idp: SigningIdp) -> str:
    """What the attacker captures: a genuine response to a login of their own browser."""
    attacker = Client()
    request_id = start_login(attacker, next="/posts")
    return respond(idp, request_id, name_id=EVIL, attributes={"mail": [EVIL]})


def assert_nobody_signed_in_and_no_account(browser: Client) -> None:
    assert signed_in_user(browser) is None
    assert not User.objects.filter(email=EVIL).exists()


# -- (a) the attacker's response posted from the victim's browser -------------------------------


def test_the_attackers_response_in_a_victim_browser_without_a_session_is_refused(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    victim = Client()
    response = post_acs(victim, mallorys_response(idp))
    assert_problem(response, 403, "saml_request_not_started_here")
    assert_nobody_signed_in_and_no_account(victim)


def test_the_attackers_response_in_a_victim_browser_with_its_own_login_is_refused(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    victim = Client()
    own_request = start_login(victim, next="/posts")  # a login of the victim's own, pending
    response = post_acs(victim, mallorys_response(idp))
    assert_problem(response, 403, "saml_request_not_started_here")
    assert_nobody_signed_in_and_no_account(victim)
    # The victim's own login is untouched and still completes.
    assert_redirect(post_acs(victim, respond(idp, own_request)), "/posts")
    assert signed_in_user(victim) == User.objects.get(email=ALICE)


def test_the_attackers_response_is_refused_in_a_victim_browser_already_signed_in(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    victim = Client()
    assert_redirect(post_acs(victim, respond(idp, start_login(victim))), "/")
    alice = User.objects.get(email=ALICE)
    assert_problem(post_acs(victim, mallorys_response(idp)), 403, "saml_request_not_started_here")
    assert signed_in_user(victim) == alice
    assert not User.objects.filter(email=EVIL).exists()


def test_the_post_alone_signs_nobody_in_and_sets_no_session_cookie(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts")
    posted = post_acs(browser, respond(idp, request_id), resume=False)
    assert posted.status_code == 303
    assert settings.SESSION_COOKIE_NAME not in posted.cookies
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


# -- (b) (c) (d) the resume key -----------------------------------------------------------------


def test_the_resume_key_is_spent_on_first_use(idp: SigningIdp, provider: SamlProvider) -> None:
    browser = Client()
    posted = post_acs(browser, respond(idp, start_login(browser, next="/posts")), resume=False)
    url = resume_path(posted)
    assert_redirect(browser.get(url, **JSON), "/posts")
    assert_problem(browser.get(url, **JSON), 403, "saml_resume_invalid")


def test_a_stolen_resume_url_is_refused_in_another_browser_and_spent(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    posted = post_acs(browser, respond(idp, start_login(browser, next="/posts")), resume=False)
    url = resume_path(posted)

    thief = Client()
    start_login(thief)  # a session with a request of its own does not help
    assert_problem(thief.get(url, **JSON), 403, "saml_request_not_started_here")
    assert signed_in_user(thief) is None
    assert not User.objects.exists()
    # The key is gone: the refusal cannot be retried, not even by the right browser.
    assert_problem(browser.get(url, **JSON), 403, "saml_resume_invalid")
    assert signed_in_user(browser) is None


def test_an_expired_stash_is_refused(
    idp: SigningIdp, provider: SamlProvider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store, "RESUME_TTL", 1)
    browser = Client()
    posted = post_acs(browser, respond(idp, start_login(browser)), resume=False)
    time.sleep(1.2)
    assert_problem(browser.get(resume_path(posted), **JSON), 403, "saml_resume_invalid")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


@pytest.mark.parametrize("key", ["never-issued", "x" * 43])
def test_an_unknown_resume_key_is_refused(provider: SamlProvider, key: str) -> None:
    response = Client().get(f"/saml/test/acs?resume={key}", **JSON)
    assert_problem(response, 403, "saml_resume_invalid")


def test_an_empty_resume_key_is_400(provider: SamlProvider) -> None:
    assert_problem(Client().get("/saml/test/acs?resume=", **JSON), 400, "saml_resume_missing")


def test_a_resume_key_of_another_provider_is_refused(
    idp: SigningIdp, two_providers: None
) -> None:
    browser = Client()
    posted = post_acs(browser, respond(idp, start_login(browser)), resume=False)
    key = resume_path(posted).split("resume=", 1)[1]
    assert_problem(browser.get(f"/saml/other/acs?resume={key}", **JSON), 403, "saml_resume_invalid")
    assert signed_in_user(browser) is None


# -- the session's list of started requests -----------------------------------------------------


def test_the_request_id_is_removed_from_the_session_when_used(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    first = start_login(browser)
    second = start_login(browser, next="/posts")
    assert session_request(browser).session[SESSION_REQUESTS_KEY] == [
        ["test", first],
        ["test", second],
    ]
    assert_redirect(post_acs(browser, respond(idp, second)), "/posts")
    assert session_request(browser).session[SESSION_REQUESTS_KEY] == [["test", first]]


def test_the_session_keeps_only_the_latest_requests(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    ids = [start_login(browser) for _ in range(SESSION_REQUESTS_KEPT + 2)]
    kept = session_request(browser).session[SESSION_REQUESTS_KEY]
    assert kept == [["test", i] for i in ids[-SESSION_REQUESTS_KEPT:]]
    # The oldest is still outstanding server-side, but this browser no longer vouches for it.
    assert_problem(post_acs(browser, respond(idp, ids[0])), 403, "saml_request_not_started_here")
    assert_redirect(post_acs(browser, respond(idp, ids[-1])), "/")


# -- (e) IdP-initiated: unbindable, allowed or refused by the provider ----------------------------


def test_idp_initiated_login_resumes_in_any_browser_when_allowed(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    posted = post_acs(browser, respond(idp), relay_state="/posts", resume=False)
    assert posted.status_code == 303
    assert_redirect(browser.get(resume_path(posted), **JSON), "/posts")
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


def test_idp_initiated_is_refused_at_the_post_when_not_allowed(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(allow_idp_initiated=False))
    browser = Client()
    posted = post_acs(browser, respond(idp), relay_state="/posts", resume=False)
    assert_problem(posted, 403, "saml_invalid")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


def test_idp_initiated_is_refused_at_the_resume_when_disallowed_in_between(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider())
    browser = Client()
    posted = post_acs(browser, respond(idp), relay_state="/posts", resume=False)
    saml_settings(make_provider(allow_idp_initiated=False))
    assert_problem(browser.get(resume_path(posted), **JSON), 403, "saml_invalid")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()
