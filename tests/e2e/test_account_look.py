"""How the account pages look with appframework/accounts.css: they fit a 360 px phone
without sideways scrolling, follow the system's light or dark scheme, and show a focus
ring to the keyboard.

Each page is saved with the end-to-end screenshots. With ``ACCOUNT_SCREENSHOTS=<folder>``
its card, and a margin of the page around it, is also written there as
``<page>-<look>.png``: scripts/account-screenshots renews the documentation's pictures
(docs/images/accounts/, shown in docs/accounts.md) that way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .account_pages import Setup, Visit, anonymous, protected_account
from .conftest import AccountHolders, Browsing, Steps, expect

# The pages' look does not depend on the database: the PostgreSQL run skips it.
pytestmark = pytest.mark.database_independent

PHONE_WIDTH = 360
#: Each look: the scheme and the window (a laptop's, or a small phone's).
LOOKS: dict[str, tuple[str, dict[str, int]]] = {
    "light": ("light", {"width": 1024, "height": 720}),
    "dark": ("dark", {"width": 1024, "height": 720}),
    "phone": ("light", {"width": PHONE_WIDTH, "height": 740}),
}
#: The pages the documentation shows: (name, path, setup).
SHOWN = [
    pytest.param("login", "/login", anonymous, id="login"),
    pytest.param("two-factor", "/account/mfa", protected_account, id="two-factor"),
    pytest.param("passkeys", "/account/passkeys", protected_account, id="passkeys"),
]
#: Room around the card in a saved picture: enough to show the page behind it.
MARGIN = 24

# The relative luminance (WCAG) of an element's computed background colour.
LUMINANCE = """element => {
  const [r, g, b] = getComputedStyle(element).backgroundColor.match(/[\\d.]+/g).map(Number);
  const linear = c => (c /= 255) <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  return 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
}"""


def save_card(page: Any, path: Path) -> None:
    """The card and MARGIN pixels of the page around it. Above and below, no more than
    the card's own margin: the pictures show the library's card, not the demo's header."""
    card = page.locator(".af-page")
    box = card.bounding_box()
    above, below = card.evaluate(
        "c => { const s = getComputedStyle(c); return [parseFloat(s.marginTop), parseFloat(s.marginBottom)]; }"
    )
    width = page.evaluate("document.documentElement.scrollWidth")
    left, top = max(0, box["x"] - MARGIN), box["y"] - min(MARGIN, above)
    clip = {
        "x": left,
        "y": top,
        "width": min(width, box["x"] + box["width"] + MARGIN) - left,
        "height": box["y"] + box["height"] + min(MARGIN, below) - top,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path), clip=clip, full_page=True)


@pytest.mark.parametrize("look", list(LOOKS))
@pytest.mark.parametrize(("name", "path", "setup"), SHOWN)
def test_account_page_fits_the_window_in_the_systems_scheme(
    name: str,
    path: str,
    setup: Setup,
    look: str,
    browsing: Browsing,
    account_holders: AccountHolders,
    steps: Steps,
) -> None:
    scheme, viewport = LOOKS[look]
    page = setup(Visit(browsing, account_holders, path, scheme, {"viewport": viewport}))
    card = page.locator(".af-page")
    expect(card).to_be_visible()

    # Nothing wider than the window: no sideways scrolling, even on the phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    # The card is light in the light scheme and dark in the dark one.
    luminance = card.evaluate(LUMINANCE)
    assert luminance > 0.8 if scheme == "light" else luminance < 0.05, luminance

    steps(page, f"{name} {look}")
    wanted = os.environ.get("ACCOUNT_SCREENSHOTS")
    if wanted:
        save_card(page, Path(wanted) / f"{name}-{look}.png")


def test_keyboard_focus_on_an_account_page_shows_a_ring(
    browsing: Browsing, account_holders: AccountHolders, steps: Steps
) -> None:
    page = anonymous(Visit(browsing, account_holders, "/login"))
    page.locator("input[name=password]").focus()
    page.keyboard.press("Tab")
    button = page.get_by_role("button", name="Log in", exact=True)
    expect(button).to_be_focused()
    ring = button.evaluate(
        "b => { const s = getComputedStyle(b); return [s.outlineStyle, parseFloat(s.outlineWidth)]; }"
    )
    assert ring[0] == "solid" and ring[1] >= 2, ring
    steps(page, "focus ring on the log in button")
