"""The provider's accounts and its one client, created or brought up to date on every start."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

PASSWORD = "password"


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
        "claims an email it has not verified: OpenID Connect login refuses it (SAML trusts the IdP's emails)",
    ),
    DemoAccount("noemail", "", False, "No", "Email", "no email claim at all"),
)

ACCOUNTS_BY_USERNAME = {account.username: account for account in DEMO_ACCOUNTS}


def seed(redirect_uris: Sequence[str], client_id: str, client_secret: str) -> None:
    """Create the accounts and the client, or update them to the given values.

    Idempotent: a restart with other redirect URIs or another secret replaces the stored
    ones, so the data directory can be reused across runs.
    """
    from django.contrib.auth import get_user_model
    from django.db import transaction
    from oauth2_provider.models import get_application_model

    user_model = get_user_model()
    application_model = get_application_model()
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

        application = application_model.objects.filter(client_id=client_id).first()
        if application is None:
            application = application_model(client_id=client_id)
        application.name = "appframework demo"
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
