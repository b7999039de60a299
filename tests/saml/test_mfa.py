"""Signing in through SAML with TOTP on: the ACS starts the code challenge instead of
signing in (``SAML["MFA"]``, on by default); and the async twins of the flows."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import pyotp
import pytest
from django.contrib.sessions.middleware import SessionMiddleware
from django.http import HttpResponse
from django.test import AsyncClient, Client, RequestFactory

from appframework.exceptions import ForbiddenException
from appframework.mfa import pending_user_id
from appframework.saml import SamlProvider, SamlUser, asaml_acs, asaml_login
from appframework.saml.flows import asaml_acs_redirect, asaml_acs_resume
from testproject.blog.models import User
from testproject.local_idp.saml_idp import SigningIdp
from tests.conftest import enable_totp

from .conftest import (
    ALICE,
    EVIL,
    SettingsInstaller,
    acs_request,
    assert_redirect,
    current_idp,
    link_identity,
    post_acs,
    respond,
    session_request,
    signed_in_user,
    start_login,
)

pytestmark = pytest.mark.django_db

STEP = 30


def totp_user() -> tuple[User, str]:
    """Alice, her SAML identity linked, with TOTP on; and her secret."""
    user = User.objects.create_user(ALICE, None, name="Alice")
    link_identity(user)
    return user, enable_totp(user)[0]


def next_code(secret: str) -> str:
    """A live code the confirmation did not spend (the next step's: inside the window)."""
    return pyotp.TOTP(secret).at(time.time() + STEP)


def wrong_code(secret: str) -> str:
    """Six digits that no step near now gives."""
    near = {pyotp.TOTP(secret).at(time.time() + STEP * k) for k in range(-2, 3)}
    return next(c for c in ("000000", "111111", "222222", "333333") if c not in near)


def test_a_totp_user_arriving_through_the_acs_is_challenged_not_signed_in(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    user, secret = totp_user()
    browser = Client()
    request_id = start_login(browser, next="/posts")

    response = post_acs(browser, respond(idp, request_id))

    assert_redirect(response, "/login/mfa")
    assert signed_in_user(browser) is None
    assert pending_user_id(session_request(browser)) == user.pk

    # The code form with a wrong code keeps them out...
    wrong = browser.post("/login/mfa", {"code": wrong_code(secret)})
    assert wrong.status_code == 401
    assert signed_in_user(browser) is None
    # ...and a valid one completes the sign-in, on to the page the sign-in started for.
    done = browser.post("/login/mfa", {"code": next_code(secret)})
    assert_redirect(done, "/posts")
    assert signed_in_user(browser) == user
    assert pending_user_id(session_request(browser)) is None


def test_with_saml_mfa_off_a_totp_user_is_signed_in_directly(
    idp: SigningIdp, saml_settings: SettingsInstaller
) -> None:
    saml_settings(MFA=False)
    user, _secret = totp_user()
    browser = Client()
    request_id = start_login(browser, next="/posts")

    assert_redirect(post_acs(browser, respond(idp, request_id)), "/posts")
    assert signed_in_user(browser) == user
    assert pending_user_id(session_request(browser)) is None


def test_a_user_without_totp_is_signed_in_directly_with_mfa_on(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    user = User.objects.create_user(ALICE, None)
    link_identity(user)
    browser = Client()
    assert_redirect(post_acs(browser, respond(idp), relay_state="/posts"), "/posts")
    assert signed_in_user(browser) == user
    assert pending_user_id(session_request(browser)) is None


# The async flows write from asgiref's worker thread, on a connection of its own: without a
# transaction held open by the test's own connection, SQLite never finds the table locked.
@pytest.mark.django_db(transaction=True)
async def test_asaml_login_and_asaml_acs_work_from_an_async_context(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    login = RequestFactory().get("/saml/test/login")
    SessionMiddleware(lambda r: HttpResponse()).process_request(login)
    redirect = await asaml_login(login, "test", next="/posts")
    assert redirect.status_code == 302
    parsed = current_idp().parse_authn_request_query(parse_qs(urlsplit(redirect["Location"]).query))

    request = acs_request(respond(idp, parsed.id, session_index="s-9"))
    user = await asaml_acs(request, provider)

    assert isinstance(user, SamlUser)
    assert (user.name_id, user.email, user.session_index) == (ALICE, ALICE, "s-9")
    assert request.saml_next == "/posts"
    assert request.saml_in_response_to == parsed.id


@pytest.mark.django_db(transaction=True)
async def test_asaml_acs_redirect_and_asaml_acs_resume_bind_to_the_session(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    login = RequestFactory().get("/saml/test/login")
    SessionMiddleware(lambda r: HttpResponse()).process_request(login)
    redirect = await asaml_login(login, "test", next="/posts")
    parsed = current_idp().parse_authn_request_query(parse_qs(urlsplit(redirect["Location"]).query))
    xml = respond(idp, parsed.id)

    answer = await asaml_acs_redirect(acs_request(xml), provider)
    assert answer.status_code == 303

    # Another session than the login's: refused, and the key is spent.
    stranger = RequestFactory().get(answer["Location"])
    SessionMiddleware(lambda r: HttpResponse()).process_request(stranger)
    with pytest.raises(ForbiddenException) as refused:
        await asaml_acs_resume(stranger, provider)
    assert refused.value.code == "saml_request_not_started_here"

    # The login's own session, with a fresh response to a fresh request.
    redirect = await asaml_login(login, "test", next="/posts")
    parsed = current_idp().parse_authn_request_query(parse_qs(urlsplit(redirect["Location"]).query))
    answer = await asaml_acs_redirect(acs_request(respond(idp, parsed.id)), provider)
    resume = RequestFactory().get(answer["Location"])
    resume.session = login.session
    user = await asaml_acs_resume(resume, provider)
    assert user.email == ALICE
    assert resume.saml_next == "/posts"


@pytest.mark.django_db(transaction=True)
async def test_the_whole_flow_with_its_resume_step_under_asgi(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    """Login, the cookieless cross-site POST, and the resume GET through the ASGI
    handler; and the attacker's response posted from another browser is refused."""
    browser = AsyncClient()
    started = await browser.get("/saml/test/login?next=/posts")
    parsed = current_idp().parse_authn_request_query(parse_qs(urlsplit(started["Location"]).query))
    posted = await AsyncClient().post(
        "/saml/test/acs", {"SAMLResponse": SigningIdp.encode(respond(idp, parsed.id))}
    )
    assert posted.status_code == 303
    done = await browser.get(posted["Location"])
    assert_redirect(done, "/posts")

    attacker = AsyncClient()
    started = await attacker.get("/saml/test/login")
    parsed = current_idp().parse_authn_request_query(parse_qs(urlsplit(started["Location"]).query))
    evil = respond(idp, parsed.id, name_id=EVIL, attributes={"mail": [EVIL]})
    victim = AsyncClient()
    posted = await victim.post("/saml/test/acs", {"SAMLResponse": SigningIdp.encode(evil)})
    assert posted.status_code == 303
    refused = await victim.get(posted["Location"], headers={"Accept": "application/json"})
    assert refused.status_code == 403
    assert refused.json()["code"] == "saml_request_not_started_here"
    assert not await User.objects.filter(email=EVIL).aexists()
