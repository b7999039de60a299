"""How the account-page checks (test_accessibility, test_account_look) open a page:
``setup(Visit(...))`` returns a Playwright page showing it, as a user meets it, on
``demo.localhost`` (where passkeys work) in the scheme asked for."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .conftest import AccountHolder, AccountHolders, Browsing, expect


@dataclass
class Visit:
    """What a setup gets: the browser, the accounts, the page wanted and its scheme."""

    browsing: Browsing
    holders: AccountHolders
    path: str
    color_scheme: str = "light"
    #: Playwright's ``new_context`` arguments besides these (a ``viewport``).
    options: dict[str, Any] = field(default_factory=dict)

    def new_page(self, holder: AccountHolder | None = None) -> Any:
        options: dict[str, Any] = {
            "base_url": self.browsing.demo.localhost,
            "color_scheme": self.color_scheme,
            **self.options,
        }
        if holder is not None:
            options["storage_state"] = holder.signed_in
        return self.browsing.new_page(**options)

    def open_as(self, holder: AccountHolder) -> Any:
        """``path`` as ``holder``. A page that changes the account asks for a recent
        sign-in: when the one in the stored session is too old by now, the password
        gives a fresh one and the page follows (the setups never depend on timing)."""
        page = self.new_page(holder)
        page.goto(self.path)
        asked_to_confirm = urlsplit(page.url).path == "/account/confirm"
        if asked_to_confirm and self.path != "/account/confirm":
            page.fill("input[name=password]", holder.password)
            with page.expect_navigation():
                page.get_by_role("button", name="Confirm with my password").click()
        return page


Setup = Callable[[Visit], Any]


def anonymous(visit: Visit) -> Any:
    page = visit.new_page()
    page.goto(visit.path)
    return page


def after_a_wrong_password(visit: Visit) -> Any:
    page = anonymous(visit)
    page.fill("input[name=email]", visit.holders.plain.email)
    page.fill("input[name=password]", "not-the-password")
    with page.expect_navigation():
        page.get_by_role("button", name="Log in", exact=True).click()
    expect(page.get_by_role("alert").filter(has_text="Wrong email or password")).to_be_visible()
    return page


def after_the_password_of_a_protected_account(visit: Visit) -> Any:
    """The password of an account with TOTP and a passkey: the second step's page."""
    page = visit.new_page()
    page.goto("/login")
    page.fill("input[name=email]", visit.holders.protected.email)
    page.fill("input[name=password]", visit.holders.protected.password)
    with page.expect_navigation():
        page.get_by_role("button", name="Log in", exact=True).click()
    return page


def plain_account(visit: Visit) -> Any:
    """Signed in with a password only: TOTP off, no passkey."""
    return visit.open_as(visit.holders.plain)


def protected_account(visit: Visit) -> Any:
    """Signed in with TOTP on and one passkey."""
    return visit.open_as(visit.holders.protected)
