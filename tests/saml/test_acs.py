"""The assertion consumer service: a signed Response signs its user in, once.

SP-initiated (the response answers an AuthnRequest this site made) and IdP-initiated
logins, the redirect afterwards (never off this site), the ``SamlUser`` the response is
read into, the refusals of the ACS itself (no response, not base64, too large, GET, no
email, a deactivated account) and the request id, which answers exactly one response of
exactly its own provider.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from appframework.exceptions import ForbiddenException
from appframework.saml import SamlProvider, SamlUser, saml_acs
from appframework.saml.flows import MAX_RESPONSE_BYTES
from testproject.blog.models import User
from testproject.local_idp.saml_idp import NAMEID_FORMAT_EMAILADDRESS, RawAttribute, SigningIdp

from .conftest import (
    ACS_PATH,
    ALICE,
    JSON,
    ProviderFactory,
    SettingsInstaller,
    acs_request,
    assert_problem,
    assert_redirect,
    link_identity,
    post_acs,
    request_id_in,
    respond,
    resume_path,
    signed_in_user,
    start_login,
)

pytestmark = pytest.mark.django_db

NAMEID_UNSPECIFIED = "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified"


# -- SP-initiated -------------------------------------------------------------------------------


def test_sp_initiated_login_creates_the_user_signs_them_in_and_goes_to_next(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts?page=2")
    assert not User.objects.filter(email=ALICE).exists()

    response = post_acs(browser, respond(idp, request_id))

    assert_redirect(response, "/posts?page=2")
    user = User.objects.get(email=ALICE)
    assert user.name == "Alice Example"
    assert not user.has_usable_password()
    assert signed_in_user(browser) == user


def test_sp_initiated_login_selects_the_existing_user_case_insensitively_when_emails_are_trusted(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    # Without trust_email an identity never linked gets no existing account (test_users).
    saml_settings(make_provider(trust_email=True))
    existing = User.objects.create_user("Alice@Example.TEST", None, name="Alice Existing")
    browser = Client()
    request_id = start_login(browser, next="/posts")

    response = post_acs(browser, respond(idp, request_id))

    assert_redirect(response, "/posts")
    assert User.objects.count() == 1
    assert signed_in_user(browser) == existing


def test_sp_initiated_next_wins_over_a_posted_relay_state(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts")
    response = post_acs(browser, respond(idp, request_id), relay_state="/tenant")
    assert_redirect(response, "/posts")


def test_sp_initiated_next_off_this_site_goes_to_login_redirect_url(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="https://evil.example/")
    response = post_acs(browser, respond(idp, request_id))
    assert_redirect(response, settings.LOGIN_REDIRECT_URL)
    assert signed_in_user(browser) is not None


def test_acs_without_any_cookie_completes_sp_initiated_login_and_sets_a_new_session(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    """The outstanding request lives server-side, so the IdP's cross-site POST (which
    carries no SameSite=Lax cookie) is validated; the browser's own GET that follows
    (a top-level navigation, which does carry the cookie) then completes the login,
    in a new session."""
    browser = Client()
    request_id = start_login(browser, next="/posts")
    cookie_name = settings.SESSION_COOKIE_NAME
    before = browser.cookies.get(cookie_name)
    assert before is not None  # the login noted its request id in the session

    no_cookies = Client(enforce_csrf_checks=True)
    assert not no_cookies.cookies
    posted = no_cookies.post(
        ACS_PATH, {"SAMLResponse": SigningIdp.encode(respond(idp, request_id))}, **JSON
    )
    # Nobody is signed in by the POST, and it sets no cookie.
    assert cookie_name not in posted.cookies
    assert signed_in_user(browser) is None

    response = browser.get(resume_path(posted), **JSON)

    assert_redirect(response, "/posts")
    assert cookie_name in response.cookies
    new_value = response.cookies[cookie_name].value
    assert new_value and new_value != before.value
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


# -- IdP-initiated ------------------------------------------------------------------------------


@pytest.mark.parametrize("relay_state", ["/posts", "/posts?page=2#top", "http://testserver/tenant"])
def test_idp_initiated_login_honours_a_relay_state_on_this_site(
    idp: SigningIdp, provider: SamlProvider, relay_state: str
) -> None:
    browser = Client()
    response = post_acs(browser, respond(idp), relay_state=relay_state)
    assert_redirect(response, relay_state)
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


@pytest.mark.parametrize(
    "relay_state",
    [
        "https://evil.example/",
        "http://evil.example/posts",
        "//evil.example/",
        "///evil.example/",
        "/\\evil.example/",
        "\\\\evil.example/",
        "https:evil.example",
        " https://evil.example/",
        "javascript:alert(1)",
        "http://testserver@evil.example/",
        "",
    ],
)
def test_idp_initiated_relay_state_off_this_site_goes_to_login_redirect_url(
    idp: SigningIdp, provider: SamlProvider, relay_state: str
) -> None:
    browser = Client()
    response = post_acs(browser, respond(idp), relay_state=relay_state)
    assert_redirect(response, settings.LOGIN_REDIRECT_URL)
    assert signed_in_user(browser) == User.objects.get(email=ALICE)


def test_idp_initiated_relay_state_off_site_goes_to_the_saml_login_redirect_url(
    idp: SigningIdp, saml_settings: SettingsInstaller
) -> None:
    saml_settings(LOGIN_REDIRECT_URL="/tenant")
    response = post_acs(Client(), respond(idp), relay_state="https://evil.example/")
    assert_redirect(response, "/tenant")


def test_allow_idp_initiated_false_refuses_an_idp_initiated_response(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(make_provider(allow_idp_initiated=False))
    browser = Client()

    assert_problem(post_acs(browser, respond(idp), relay_state="/posts"), 403, "saml_invalid")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()

    # The same provider still takes a response to a request it made.
    request_id = start_login(browser, next="/posts")
    assert_redirect(post_acs(browser, respond(idp, request_id)), "/posts")


def test_a_provider_built_with_the_defaults_refuses_an_idp_initiated_response(
    idp: SigningIdp, saml_settings: SettingsInstaller, provider_kwargs: dict[str, Any]
) -> None:
    """Login CSRF: another site posts a response the attacker got from the IdP, and the
    visitor is signed in to the attacker's account. Only a provider that asks for
    IdP-initiated login accepts such a response."""
    from appframework.saml import saml_provider
    from appframework.saml.checks import check_idp_initiated

    defaults = {k: v for k, v in provider_kwargs.items() if k != "allow_idp_initiated"}
    saml_settings(saml_provider(**defaults))
    browser = Client()
    assert_problem(post_acs(browser, respond(idp)), 403, "saml_invalid")
    assert signed_in_user(browser) is None
    assert check_idp_initiated() == []


# -- what the ACS refuses itself ----------------------------------------------------------------


def test_a_post_without_saml_response_is_400_saml_response_missing(provider: SamlProvider) -> None:
    assert_problem(post_acs(Client(), None), 400, "saml_response_missing")
    assert_problem(post_acs(Client(), None, encoded=""), 400, "saml_response_missing")


@pytest.mark.parametrize(
    "encoded",
    [
        "abc",  # a truncated quantum
        "not base64 at all!",
        '<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" ID="x"/>',
    ],
    ids=["truncated", "prose", "raw-xml"],
)
def test_a_saml_response_that_is_not_base64_is_400_malformed(
    provider: SamlProvider, encoded: str
) -> None:
    assert_problem(post_acs(Client(), None, encoded=encoded), 400, "saml_response_malformed")


def test_a_saml_response_over_512_kb_is_400_malformed(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    genuine = respond(idp)

    def padded_to(size: int) -> str:
        padding = " " * (size - len(genuine.encode()))
        return genuine.replace("<ns1:Issuer", padding + "<ns1:Issuer", 1)

    assert_problem(
        post_acs(Client(), padded_to(MAX_RESPONSE_BYTES + 1000)), 400, "saml_response_malformed"
    )
    # Under the limit it is read, and refused only for what it is (a Response whose
    # signed bytes changed).
    assert_problem(post_acs(Client(), padded_to(MAX_RESPONSE_BYTES - 1000)), 403, "saml_invalid")


def test_base64_wrapped_in_lines_is_accepted(idp: SigningIdp, provider: SamlProvider) -> None:
    """Some IdPs send the form value in 76-column lines (MIME style)."""
    encoded = SigningIdp.encode(respond(idp))
    wrapped = "\r\n".join(encoded[i : i + 76] for i in range(0, len(encoded), 76))
    assert_redirect(post_acs(Client(), None, encoded=wrapped), settings.LOGIN_REDIRECT_URL)


def test_get_on_the_acs_is_405(provider: SamlProvider) -> None:
    response = Client().get(ACS_PATH, **JSON)
    assert response.status_code == 405
    assert response["Allow"] == "POST"


def test_no_email_is_403_saml_email_required(idp: SigningIdp, provider: SamlProvider) -> None:
    xml = respond(
        idp,
        name_id="employee-4711",
        name_id_format=NAMEID_UNSPECIFIED,
        attributes={"displayName": ["Alice Example"]},
    )
    browser = Client()
    assert_problem(post_acs(browser, xml), 403, "saml_email_required")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


def test_a_deactivated_user_is_403_account_disabled(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    link_identity(User.objects.create_user(ALICE, None, is_active=False))
    browser = Client()
    assert_problem(post_acs(browser, respond(idp)), 403, "account_disabled")
    assert signed_in_user(browser) is None
    assert User.objects.count() == 1


# -- the request id -----------------------------------------------------------------------------


def test_a_second_response_to_a_spent_request_id_is_refused(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    browser = Client()
    request_id = start_login(browser, next="/posts")
    assert_redirect(post_acs(browser, respond(idp, request_id)), "/posts")

    # A different, correctly signed Response (its own assertion id) to the same request.
    second = respond(idp, request_id, name_id="bob@example.test", attributes={})
    other = Client()
    assert_problem(post_acs(other, second), 403, "saml_invalid")
    assert signed_in_user(other) is None
    assert not User.objects.filter(email="bob@example.test").exists()


def test_an_outstanding_request_of_another_provider_is_refused(
    idp: SigningIdp, two_providers: None
) -> None:
    browser = Client()
    login = browser.get("/saml/other/login?next=/posts")
    assert login.status_code == 302
    others_request = request_id_in(login["Location"])

    assert_problem(post_acs(browser, respond(idp, others_request)), 403, "saml_invalid")
    assert signed_in_user(browser) is None
    assert not User.objects.exists()


# -- the SamlUser -------------------------------------------------------------------------------


def test_saml_acs_returns_every_field_and_keeps_unknown_attribute_names_exactly(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(
        idp,
        session_index="session-42",
        raw_attributes=[
            RawAttribute("firstName", ["Alice"]),
            RawAttribute("urn:example:Department-Code", ["R&D", "Ops"]),
            RawAttribute("http://example.test/claims/Employee ID", ["4711"]),
            RawAttribute("urn:example:team", ["blue"], friendly_name="Team"),
        ],
    )
    user = saml_acs(acs_request(xml), "test")

    assert isinstance(user, SamlUser)
    assert user.name_id == ALICE
    assert user.email == ALICE
    assert user.name == "Alice Example"
    assert user.session_index == "session-42"
    assert user.attributes == {
        "urn:oid:0.9.2342.19200300.100.1.3": [ALICE],
        "urn:oid:2.16.840.1.113730.3.1.241": ["Alice Example"],
        "urn:oid:1.3.6.1.4.1.5923.1.1.1.1": ["member", "staff"],
        "firstName": ["Alice"],
        "urn:example:Department-Code": ["R&D", "Ops"],
        "http://example.test/claims/Employee ID": ["4711"],
        "urn:example:team": ["blue"],
    }


def test_attribute_finds_by_name_and_by_friendly_name_and_gives_none_when_missing(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    xml = respond(
        idp,
        raw_attributes=[RawAttribute("urn:example:team", ["blue", "red"], friendly_name="Team")],
    )
    user = saml_acs(acs_request(xml), "test")

    assert user.attribute("urn:oid:0.9.2342.19200300.100.1.3") == ALICE  # Name
    assert user.attribute("mail") == ALICE  # FriendlyName
    assert user.attribute("eduPersonAffiliation") == "member"  # the first value
    assert user.attribute("urn:example:team") == "blue"
    assert user.attribute("Team") == "blue"
    assert user.attribute("team") is None  # names are exact
    assert user.attribute("givenName") is None
    assert user.attribute("no-such-attribute") is None


def test_email_and_name_attribute_overrides(
    idp: SigningIdp, saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    saml_settings(
        make_provider(email_attribute="urn:example:work-mail", name_attribute="Full Name")
    )
    xml = respond(
        idp,
        raw_attributes={
            "urn:example:work-mail": ["a.example@work.test"],
            "Full Name": ["Dr. Alice Example"],
        },
    )
    user = saml_acs(acs_request(xml), "test")
    # The configured names win over mail/displayName, which are present too.
    assert user.email == "a.example@work.test"
    assert user.name == "Dr. Alice Example"

    # A configured attribute that is absent: no email from the defaults, the NameID
    # (emailAddress format) is the fallback; no name at all.
    bare = saml_acs(acs_request(respond(idp)), "test")
    assert bare.email == ALICE
    assert bare.name is None


@pytest.mark.parametrize(
    "name",
    [
        "email",
        "mail",
        "emailAddress",
        "urn:oid:0.9.2342.19200300.100.1.3",
        "urn:oid:1.2.840.113549.1.9.1",
        "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
    ],
)
def test_email_is_read_from_each_common_attribute_name(
    idp: SigningIdp, provider: SamlProvider, name: str
) -> None:
    xml = respond(
        idp,
        name_id="employee-4711",
        name_id_format=NAMEID_UNSPECIFIED,
        attributes={},
        raw_attributes={name: ["carol@example.test"]},
    )
    assert saml_acs(acs_request(xml), "test").email == "carol@example.test"


def test_the_first_email_attribute_in_order_wins(idp: SigningIdp, provider: SamlProvider) -> None:
    xml = respond(
        idp,
        attributes={},
        raw_attributes={"mail": ["second@example.test"], "email": ["first@example.test"]},
    )
    assert saml_acs(acs_request(xml), "test").email == "first@example.test"


@pytest.mark.parametrize(
    "name",
    [
        "displayName",
        "name",
        "cn",
        "urn:oid:2.16.840.1.113730.3.1.241",
        "urn:oid:2.5.4.3",
        "http://schemas.microsoft.com/identity/claims/displayname",
        "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
    ],
)
def test_name_is_read_from_each_common_attribute_name(
    idp: SigningIdp, provider: SamlProvider, name: str
) -> None:
    xml = respond(idp, attributes={}, raw_attributes={name: ["Carol Example"]})
    assert saml_acs(acs_request(xml), "test").name == "Carol Example"


def test_email_falls_back_to_an_email_address_name_id_only(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    by_format = respond(idp, name_id="dave@example.test", attributes={})
    assert NAMEID_FORMAT_EMAILADDRESS in by_format
    assert saml_acs(acs_request(by_format), "test").email == "dave@example.test"

    unspecified = respond(
        idp, name_id="dave@example.test", name_id_format=NAMEID_UNSPECIFIED, attributes={}
    )
    user = saml_acs(acs_request(unspecified), "test")
    assert user.name_id == "dave@example.test"
    assert user.email is None


def test_name_falls_back_to_given_name_and_surname(idp: SigningIdp, provider: SamlProvider) -> None:
    xml = respond(idp, attributes={"mail": [ALICE], "givenName": ["Alice"], "sn": ["Example"]})
    assert saml_acs(acs_request(xml), "test").name == "Alice Example"

    only_given = respond(idp, attributes={"mail": [ALICE], "givenName": ["Alice"]})
    assert saml_acs(acs_request(only_given), "test").name == "Alice"

    neither = respond(idp, attributes={"mail": [ALICE]})
    assert saml_acs(acs_request(neither), "test").name is None


def test_saml_acs_raises_forbidden_and_sets_no_next_for_a_refused_response(
    idp: SigningIdp, provider: SamlProvider
) -> None:
    request = acs_request(respond(idp, "_never_issued"))
    with pytest.raises(ForbiddenException) as refused:
        saml_acs(request, "test")
    assert refused.value.code == "saml_invalid"
    assert not hasattr(request, "saml_next")


def test_saml_acs_sets_saml_next_from_the_login(idp: SigningIdp, provider: SamlProvider) -> None:
    request_id = start_login(Client(), next="/posts")
    request = acs_request(respond(idp, request_id))
    saml_acs(request, "test")
    assert request.saml_next == "/posts"

    idp_initiated = acs_request(respond(idp), relay_state="/tenant")
    saml_acs(idp_initiated, "test")
    assert idp_initiated.saml_next is None
