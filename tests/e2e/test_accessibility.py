"""The account pages under axe-core in Chromium: no serious or critical violation.

Every page the library ships is opened in the demo as a user meets it (anonymous, in the
middle of a sign-in, signed in, after a wrong password), in the light and the dark
scheme, and checked by axe-core (npm, pinned in package.json, injected from
node_modules: no CDN). axe's serious and critical findings fail the test and are printed
rule by rule with the elements they name; moderate and minor ones are printed only.

A page more is one line in PAGES: its path and the setup that opens it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from .account_pages import (
    Setup,
    Visit,
    after_a_wrong_password,
    after_the_password_of_a_protected_account,
    anonymous,
    plain_account,
    protected_account,
)
from .conftest import AccountHolders, Browsing, Steps

# The pages' markup and contrast do not depend on the database: the PostgreSQL run skips it.
pytestmark = pytest.mark.database_independent

FAILING_IMPACTS = ("serious", "critical")


PAGES = [
    pytest.param("/login", anonymous, id="login"),
    pytest.param("/login", after_a_wrong_password, id="login-with-errors"),
    pytest.param("/logout", anonymous, id="logout"),
    pytest.param("/login/mfa", after_the_password_of_a_protected_account, id="second-step"),
    pytest.param("/account/mfa", plain_account, id="two-factor-off"),
    pytest.param("/account/mfa", protected_account, id="two-factor-on"),
    pytest.param("/account/mfa/totp/on", plain_account, id="totp-on"),
    pytest.param("/account/mfa/totp/off", protected_account, id="totp-off"),
    pytest.param("/account/mfa/recovery-codes", protected_account, id="recovery-codes"),
    pytest.param("/account/passkeys", plain_account, id="passkeys-none"),
    pytest.param("/account/passkeys", protected_account, id="passkeys-one"),
    pytest.param("/account/confirm", plain_account, id="confirm-password"),
    pytest.param("/account/confirm", protected_account, id="confirm-every-factor"),
    pytest.param("/signup", anonymous, id="signup"),
    pytest.param("/signup/sent", anonymous, id="check-your-inbox"),
    pytest.param("/email/confirm/not-a-key", anonymous, id="confirmation-link-invalid"),
    pytest.param("/password/reset", anonymous, id="password-reset"),
    pytest.param("/password/reset/sent", anonymous, id="password-reset-sent"),
    pytest.param("/password/reset/MQ/set-password", anonymous, id="password-reset-link-invalid"),
    pytest.param("/login/email", anonymous, id="sign-in-by-code"),
    pytest.param("/account/email", plain_account, id="email"),
    pytest.param("/account/email/change", plain_account, id="email-change"),
    pytest.param("/account/password", plain_account, id="password-change"),
    pytest.param("/account/linked", plain_account, id="linked-accounts"),
    pytest.param("/account/sessions", plain_account, id="sessions"),
    pytest.param("/account/tokens", plain_account, id="personal-access-tokens"),
    pytest.param("/spa/", anonymous, id="single-page-app"),
]


def run_axe(page: Any, axe_script: Path) -> list[dict[str, Any]]:
    """axe's violations on the page as it is now (every rule axe runs by default)."""
    page.add_script_tag(path=str(axe_script))
    result = page.evaluate("() => axe.run(document, { resultTypes: ['violations'] })")
    violations: list[dict[str, Any]] = result["violations"]
    return violations


def describe(violations: list[dict[str, Any]]) -> str:
    """One paragraph a rule: its impact, id and help, then each element it names."""
    lines = []
    for violation in violations:
        lines.append(
            f"[{violation['impact']}] {violation['id']}: {violation['help']} "
            f"({violation['helpUrl']})"
        )
        for node in violation["nodes"]:
            lines.append(f"    {json.dumps(node['target'])}: {node['html'][:200]}")
            summary = (node.get("failureSummary") or "").replace("\n", "\n      ")
            if summary:
                lines.append(f"      {summary}")
    return "\n".join(lines)


@pytest.mark.parametrize("color_scheme", ["light", "dark"])
@pytest.mark.parametrize(("path", "setup"), PAGES)
def test_account_page_has_no_serious_or_critical_axe_violation(
    path: str,
    setup: Setup,
    color_scheme: str,
    browsing: Browsing,
    account_holders: AccountHolders,
    axe_script: Path,
    steps: Steps,
) -> None:
    # axe is the test's own tool, injected as an inline script: the pages' strict CSP
    # (tests/e2e/test_page_csp.py checks it holds) would refuse it, so this context
    # bypasses it.
    page = setup(Visit(browsing, account_holders, path, color_scheme, {"bypass_csp": True}))
    # The setup's own check that it reached the page meant, not a redirect elsewhere.
    assert urlsplit(page.url).path == path, f"{setup.__name__} ended on {page.url}"
    steps(page, f"{path} {color_scheme}")

    violations = run_axe(page, axe_script)
    if violations:
        print(f"axe on {path} ({setup.__name__}, {color_scheme}):\n{describe(violations)}")
    failing = [v for v in violations if v["impact"] in FAILING_IMPACTS]
    assert not failing, (
        f"axe finds {len(failing)} serious or critical violation(s) on {path} "
        f"({setup.__name__}, {color_scheme}):\n{describe(failing)}"
    )
    assert browsing.external == []
