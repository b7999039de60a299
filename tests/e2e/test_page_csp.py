"""The account pages, the API-token page and /spa/ under their strict
Content-Security-Policy in Chromium: the header is there, the browser reports no
violation, the demo's stylesheet applies and the token page's script runs."""

from __future__ import annotations

from typing import Any

from .conftest import Browsing, Steps, expect, sign_up

PAGES = ["/login", "/signup", "/account/email", "/account/mfa", "/account/passkeys", "/spa/"]


def test_account_pages_and_spa_run_under_the_strict_csp_without_violations(
    browsing: Browsing, steps: Steps
) -> None:
    page = browsing.new_page(base_url=browsing.demo.localhost)
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    sign_up(page, steps)
    for path in PAGES:
        response: Any = page.goto(path)
        policy = response.headers.get("content-security-policy", "")
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy, path
        # The demo's stylesheet (a file now, not an inline <style>) is applied.
        assert page.evaluate("getComputedStyle(document.body).maxWidth") == "736px", path
        steps(page, f"csp {path}")
    page.goto("/account/token")
    page.get_by_role("button", name="Call /api/me without it").click()
    expect(page.locator("#result")).to_contain_text("401")
    assert violations == []
