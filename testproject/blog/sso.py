"""The demo's sign-in providers, from environment variables.

Each provider appears when its client id is set: ``GOOGLE_CLIENT_ID``/``_SECRET``,
``GITHUB_CLIENT_ID``/``_SECRET``, ``MICROSOFT_CLIENT_ID``/``_SECRET`` (and
``MICROSOFT_TENANT``), and ``OAUTH_LOCAL_ISSUER`` for the local OpenID Connect provider
that ``scripts/demo`` starts (``python -m testproject.local_idp``; client
``OAUTH_LOCAL_CLIENT_ID``/``_SECRET``, default ``appframework-demo``/``demo-secret``;
``OAUTH_LOCAL_TOKEN_AUTH_METHOD`` may set ``token_auth_method``). Any other OpenID
provider can stand in for it (docs/oauth.md, "The demo against your own provider").
Callback URLs are ``DEMO_BASE_URL/auth/<name>/callback``.

A SAML identity provider appears when ``SAML_IDP_SSO_URL`` is set, with
``SAML_IDP_ENTITY_ID`` and ``SAML_IDP_CERT`` (PEM text or a file); ``scripts/demo`` points
them at the local IdP. This site's entity id is ``DEMO_BASE_URL/saml/local/metadata`` and
its ACS ``DEMO_BASE_URL/saml/local/acs``. Sign-in must start here (no IdP-initiated
login), and a SAML identity signs in only to the account it created or was linked to,
never to another account with the same email.
"""

from __future__ import annotations

import os

from django.conf import settings

from appframework.oauth import OAuthProvider, generic_oidc, github, google, microsoft
from appframework.saml import SamlProvider, saml_provider

# (name shown on the button, provider name) for each configured provider, without
# building any provider (the login page must not wait for a discovery document).
LABELS = {
    "local": "Local OpenID provider",
    "google": "Google",
    "github": "GitHub",
    "microsoft": "Microsoft",
}


def _callback(name: str) -> str:
    return f"{settings.DEMO_BASE_URL.rstrip('/')}/auth/{name}/callback"


def configured() -> list[tuple[str, str]]:
    env = os.environ
    names = []
    if env.get("OAUTH_LOCAL_ISSUER"):
        names.append("local")
    names += [n for n in ("google", "github", "microsoft") if env.get(f"{n.upper()}_CLIENT_ID")]
    return [(name, LABELS[name]) for name in names]


def oauth_providers() -> list[OAuthProvider]:
    env = os.environ
    providers: list[OAuthProvider] = []
    for name, _label in configured():
        if name == "local":
            providers.append(
                generic_oidc(
                    "local",
                    env.get("OAUTH_LOCAL_CLIENT_ID", "appframework-demo"),
                    env.get("OAUTH_LOCAL_CLIENT_SECRET", "demo-secret"),
                    redirect_uri=_callback("local"),
                    issuer=env["OAUTH_LOCAL_ISSUER"],
                    # Unset: as the provider's discovery document says.
                    token_auth_method=env.get("OAUTH_LOCAL_TOKEN_AUTH_METHOD") or None,
                )
            )
            continue
        client_id = env[f"{name.upper()}_CLIENT_ID"]
        secret = env.get(f"{name.upper()}_CLIENT_SECRET", "")
        if name == "microsoft":
            providers.append(
                microsoft(
                    client_id, secret, _callback(name), tenant=env.get("MICROSOFT_TENANT", "common")
                )
            )
        else:
            providers.append(
                {"google": google, "github": github}[name](client_id, secret, _callback(name))
            )
    return providers


def saml_configured() -> bool:
    return bool(os.environ.get("SAML_IDP_SSO_URL"))


def saml_providers() -> list[SamlProvider]:
    if not saml_configured():
        return []
    env = os.environ
    base = settings.DEMO_BASE_URL.rstrip("/")
    return [
        saml_provider(
            name="local",
            idp_entity_id=env.get("SAML_IDP_ENTITY_ID", env["SAML_IDP_SSO_URL"]),
            idp_sso_url=env["SAML_IDP_SSO_URL"],
            idp_x509_cert=_pem(env.get("SAML_IDP_CERT", "")),
            sp_entity_id=f"{base}/saml/local/metadata",
            acs_url=f"{base}/saml/local/acs",
            # Sign-in starts at the demo's button: an IdP-initiated response is bound to
            # no browser, so another site could post one and sign visitors in to an
            # account of its own (login CSRF).
            allow_idp_initiated=False,
            # Not trusted for email addresses, although scripts/demo runs the IdP: these
            # variables may name any IdP, and the local one has an account asserting an
            # address nobody verified (the "unverified" user). Trusting it would hand that
            # account whichever demo account signed up with the address.
            trust_email=False,
        )
    ]


def _pem(value: str) -> str:
    return value if "-----BEGIN" in value or not os.path.isfile(value) else open(value).read()
