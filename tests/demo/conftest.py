"""The demo's single sign-on fixtures: the local OpenID and SAML provider process, and
the variables scripts/demo exports pointing the demo at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.test import override_settings

from tests.oauth.peer import LocalIdp, start_local_idp

BASE = "http://testserver"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalIdp]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCAL_IDP_SAML_SPS", f"{BASE}/saml/local/metadata={BASE}/saml/local/acs")
        provider = start_local_idp(
            tmp_path_factory.mktemp("demo-idp"), [f"{BASE}/auth/local/callback"]
        )
    yield provider
    provider.stop()


@pytest.fixture
def demo_env(idp: LocalIdp, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The variables scripts/demo exports, pointing at the local provider."""
    data_dir = Path(idp.process.args[idp.process.args.index("--data-dir") + 1])  # type: ignore[union-attr]
    monkeypatch.setenv("OAUTH_LOCAL_ISSUER", idp.issuer)
    monkeypatch.setenv("SAML_IDP_ENTITY_ID", f"{idp.base_url}/saml/metadata")
    monkeypatch.setenv("SAML_IDP_SSO_URL", f"{idp.base_url}/saml/sso")
    monkeypatch.setenv("SAML_IDP_CERT", str(data_dir / "saml-idp.crt.pem"))
    # A settings change drops the providers built from the previous environment.
    with override_settings(DEMO_BASE_URL=BASE):
        yield
