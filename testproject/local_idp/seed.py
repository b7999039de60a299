"""The provider's accounts and its clients, created or brought up to date on every start."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

PASSWORD = "password"

CLIENT_NAME = "appframework demo"
# DOT keeps no token_endpoint_auth_method per client: a client held to one method says
# so at the end of its name, which seed() writes and the validator reads.
POST_ONLY_CLIENT_NAME = f"{CLIENT_NAME} (client_secret_post only)"
_ONE_METHOD = re.compile(r"\((client_secret_basic|client_secret_post) only\)$")


def registered_auth_method(application: Any) -> str | None:
    """The one client authentication method ``application`` is registered for, or None
    (either)."""
    match = _ONE_METHOD.search(getattr(application, "name", "") or "")
    return match.group(1) if match else None


@dataclass(frozen=True)
class DemoAccount:
    username: str
    email: str  # "" = the account has no email: the email claims are left out
    email_verified: bool
    first_name: str
    last_name: str
    note: str  # shown on the login page: what the account is for


# Each one exercises a different branch of a relying party's account linking.
DEMO_ACCOUNTS: tuple[DemoAccount, ...] = (
    DemoAccount(
        "alice", "alice@example.test", True, "Alice", "Example", "verified email, name, picture"
    ),
    DemoAccount(
        "unverified",
        "victim@example.test",
        False,
        "Not",
        "Verified",
        "claims an email it has not verified: OpenID Connect login refuses it , and SAML links it to no existing account",
    ),
    DemoAccount("noemail", "", False, "No", "Email", "no email claim at all"),
)

ACCOUNTS_BY_USERNAME = {account.username: account for account in DEMO_ACCOUNTS}


def seed(
    redirect_uris: Sequence[str],
    client_id: str,
    client_secret: str,
    post_only_clients: Sequence[tuple[str, str]] = (),
) -> None:
    """Create the accounts and the clients, or update them to the given values.

    The client ``client_id`` may send its secret either way; each of
    ``post_only_clients`` (``(client_id, client_secret)``, same redirect URIs) only as
    form fields (``client_secret_post``), as a provider that enforces the method a client
    registered does.

    Idempotent: a restart with other redirect URIs or another secret replaces the stored
    ones, so the data directory can be reused across runs.
    """
    from django.contrib.auth import get_user_model
    from django.db import transaction

    user_model = get_user_model()
    with transaction.atomic():
        for account in DEMO_ACCOUNTS:
            user, _ = user_model.objects.get_or_create(username=account.username)
            user.email = account.email
            user.first_name = account.first_name
            user.last_name = account.last_name
            user.is_active = True
            # Hashing costs ~0.3 s; skip it when the stored hash already matches.
            if not user.check_password(PASSWORD):
                user.set_password(PASSWORD)
            user.save()

        _save_client(client_id, client_secret, redirect_uris, CLIENT_NAME)
        for post_id, post_secret in post_only_clients:
            _save_client(post_id, post_secret, redirect_uris, POST_ONLY_CLIENT_NAME)


def _save_client(
    client_id: str, client_secret: str, redirect_uris: Sequence[str], name: str
) -> None:
    from oauth2_provider.models import get_application_model

    application_model = get_application_model()
    application = application_model.objects.filter(client_id=client_id).first()
    if application is None:
        application = application_model(client_id=client_id)
    application.name = name
    application.client_type = application_model.CLIENT_CONFIDENTIAL
    application.authorization_grant_type = application_model.GRANT_AUTHORIZATION_CODE
    application.redirect_uris = " ".join(redirect_uris)
    application.skip_authorization = True
    application.algorithm = application_model.RS256_ALGORITHM
    # DOT 3 stores a hash: the field hashes a plaintext value when the row is saved
    # (and keeps a value that already is a hash), so the plaintext goes in here.
    application.hash_client_secret = True
    application.client_secret = client_secret
    application.full_clean()
    application.save()
