"""/account/passkeys: the list with when each was last used, rename, remove; removing
the last second factor asks for a current one."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from appframework.passkeys.models import Passkey
from tests.conftest import age_proof, enable_totp, login_client

from .authenticator import SoftAuthenticator
from .conftest import JSON, add_passkey, code_of, options, passwordless

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(user: Any) -> Client:
    return login_client(Client(), user)


def test_the_list_shows_when_each_passkey_was_last_used(
    alice: Client, authenticator: SoftAuthenticator
) -> None:
    add_passkey(alice, authenticator, "Laptop")
    add_passkey(alice, SoftAuthenticator(), "Phone")
    assert passwordless(Client(), authenticator).status_code == 302
    page = alice.get("/account/passkeys", HTTP_ACCEPT="text/html").content.decode()
    laptop, phone = page.index("Laptop"), page.index("Phone")
    assert laptop < phone
    assert page[phone:].count("never") >= 1 and "never" not in page[laptop:phone]


def test_rename_own_passkeys_only(
    alice: Client, authenticator: SoftAuthenticator, other_user: Any
) -> None:
    passkey = add_passkey(alice, authenticator)
    response = alice.post(
        f"/account/passkeys/{passkey.pk}/rename", {"name": "Work"}
    )
    assert response.status_code == 302
    assert "Passkey renamed." in alice.get(response["Location"]).content.decode()
    passkey.refresh_from_db()
    assert passkey.name == "Work"
    bob = login_client(Client(), other_user)
    theirs = bob.post(
        f"/account/passkeys/{passkey.pk}/rename", {"name": "Mine"}, **JSON
    )
    assert (theirs.status_code, code_of(theirs)) == (404, "passkey_not_found")
    blank = alice.post(
        f"/account/passkeys/{passkey.pk}/rename", {"name": " "}, **JSON
    )
    assert (blank.status_code, code_of(blank)) == (422, "passkey_name_invalid")
    passkey.refresh_from_db()
    assert passkey.name == "Work"


def test_removing_one_of_two_needs_nothing_more(
    alice: Client, authenticator: SoftAuthenticator
) -> None:
    first = add_passkey(alice, authenticator)
    add_passkey(alice, SoftAuthenticator(), "Phone")
    response = alice.post(f"/account/passkeys/{first.pk}/remove", {})
    assert response.status_code == 302
    assert "Passkey removed." in alice.get(response["Location"]).content.decode()
    assert list(Passkey.objects.values_list("name", flat=True)) == ["Phone"]
    # The removed one signs nobody in any more.
    assert code_of(passwordless(Client(), authenticator)) == "passkey_unknown"


def test_removing_the_last_factor_asks_for_a_current_one(
    alice: Client, authenticator: SoftAuthenticator
) -> None:
    passkey = add_passkey(alice, authenticator)
    page = alice.get("/account/passkeys", HTTP_ACCEPT="text/html").content.decode()
    assert 'data-passkey="confirm"' in page
    refused = alice.post(f"/account/passkeys/{passkey.pk}/remove", {}, **JSON)
    assert (refused.status_code, code_of(refused)) == (422, "passkey_last_factor")
    # Another authenticator's answer is no proof.
    stranger = SoftAuthenticator()
    stranger.rp_id, stranger.user_handle = "testserver", authenticator.user_handle
    wrong = stranger.get(options(alice, "confirm"))
    response = alice.post(
        f"/account/passkeys/{passkey.pk}/remove", {"credential": wrong}, **JSON
    )
    assert code_of(response) == "passkey_unknown"
    proof = authenticator.get(options(alice, "confirm"))
    response = alice.post(
        f"/account/passkeys/{passkey.pk}/remove", {"credential": proof}
    )
    assert response.status_code == 302
    assert not Passkey.objects.exists()


def test_with_totp_on_the_last_passkey_is_not_the_last_factor(
    user: Any, alice: Client, authenticator: SoftAuthenticator
) -> None:
    passkey = add_passkey(alice, authenticator)
    enable_totp(user)
    response = alice.post(f"/account/passkeys/{passkey.pk}/remove", {})
    assert response.status_code == 302 and not Passkey.objects.exists()


def test_the_list_takes_no_posts(alice: Client) -> None:
    response = alice.post("/account/passkeys", {"action": "steal"}, **JSON)
    assert (response.status_code, code_of(response)) == (405, "method_not_allowed")


def test_a_passkey_that_is_not_one_of_yours_or_none_is_404(
    alice: Client, other_user: Any, authenticator: SoftAuthenticator
) -> None:
    theirs = add_passkey(login_client(Client(), other_user), authenticator)
    for pk in (theirs.pk, 999999):
        response = alice.post(f"/account/passkeys/{pk}/remove", {}, **JSON)
        assert (response.status_code, code_of(response)) == (404, "passkey_not_found")
    assert Passkey.objects.filter(pk=theirs.pk).exists()


def test_adding_and_removing_ask_an_old_session_to_confirm_first(
    user: Any, alice: Client, authenticator: SoftAuthenticator
) -> None:
    """A copied session cookie, signed in an hour ago: no passkey of the thief's own is
    added and none of the owner's removed until the session proves a factor again."""
    passkey = add_passkey(alice, authenticator)
    age_proof(alice)
    credential = SoftAuthenticator().create(options(alice, "register"))
    added = alice.post("/account/passkeys/add", {"credential": credential}, **JSON)
    removed = alice.post(f"/account/passkeys/{passkey.pk}/remove", {}, **JSON)
    for response in (added, removed):
        assert (response.status_code, code_of(response)) == (401, "reauthentication_required")
    browser = alice.post(f"/account/passkeys/{passkey.pk}/remove", {}, HTTP_ACCEPT="text/html")
    assert browser["Location"].startswith("/account/confirm?next=")
    assert list(Passkey.objects.all()) == [passkey]


def test_has_passkeys_asks_once_per_user_object_and_again_after_a_removal(
    user: Any, authenticator: SoftAuthenticator, django_assert_num_queries: Any
) -> None:
    from django.test import RequestFactory

    from appframework.auth.factors import forget_passkeys, has_passkeys
    from appframework.passkeys.flows import remove_passkey

    alice = login_client(Client(), user)
    first = add_passkey(alice, authenticator)
    add_passkey(alice, SoftAuthenticator(), "Phone")
    with django_assert_num_queries(1):
        assert has_passkeys(user) and has_passkeys(user)
    remove_passkey(RequestFactory().post("/"), user, first.pk, None)
    with django_assert_num_queries(1):
        assert has_passkeys(user)  # asked again: the removal forgot the kept answer
    Passkey.objects.filter(user=user).delete()
    forget_passkeys(user)
    assert has_passkeys(user) is False
