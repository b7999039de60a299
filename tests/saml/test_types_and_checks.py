"""``SamlProvider`` validation and the checks ``appframework_saml.E001`` to ``E003``,
``W001`` to ``W005`` and ``I001``."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core import checks as django_checks
from django.core.cache.backends.locmem import LocMemCache
from django.test import RequestFactory
from django.test.utils import override_settings

from appframework.saml import SamlProvider, is_saml_acs_request, saml_provider
from appframework.saml import checks as saml_checks
from testproject.local_idp.keys import KeyPair, make_keypair
from tests.system_checks import run_checks

from .conftest import ProviderFactory, SettingsInstaller, appframework_with

Messages = list[django_checks.CheckMessage]


def ids(messages: Messages) -> list[str]:
    return [str(m.id) for m in messages]


# -- SamlProvider -------------------------------------------------------------------------------


def test_a_valid_provider_keeps_its_fields(
    provider_kwargs: dict[str, Any], idp_keys: KeyPair
) -> None:
    defaults = {k: v for k, v in provider_kwargs.items() if k != "allow_idp_initiated"}
    provider = SamlProvider(**defaults)
    assert provider.name == "test"
    assert provider.idp_x509_cert == idp_keys.cert_b64  # the body, armour and lines gone
    assert provider.sp_x509_cert is None and provider.sp_private_key is None
    assert provider.signs_requests is False
    # IdP-initiated login is off unless asked for: nothing binds it to a browser.
    assert provider.allow_idp_initiated is False and provider.want_assertions_signed is True
    assert provider.trust_email is False and provider.allow_sha1 is False
    assert provider.email_attribute is None and provider.name_attribute is None
    assert "BEGIN" not in repr(provider) and idp_keys.cert_b64[:40] not in repr(provider)


def test_saml_provider_equals_samlprovider(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair
) -> None:
    kwargs = {
        **provider_kwargs,
        "sp_x509_cert": sp_keys.cert_pem,
        "sp_private_key": sp_keys.key_pem,
        "email_attribute": "mail",
        "allow_idp_initiated": False,
    }
    assert saml_provider(**kwargs) == SamlProvider(**kwargs)
    assert saml_provider(**provider_kwargs) != SamlProvider(**kwargs)


@pytest.mark.parametrize("name", ["", "a b", "a/b", "a.b", "../x", "x?y", "x#y", "a%2Fb"])
def test_a_name_that_is_not_a_url_segment_is_refused(
    provider_kwargs: dict[str, Any], name: str
) -> None:
    with pytest.raises(ValueError, match="name must be letters, digits"):
        SamlProvider(**{**provider_kwargs, "name": name})


@pytest.mark.parametrize("name", ["test", "Corp-2", "a_b", "x", "café", "x²", "٣"])
def test_every_accepted_name_gets_a_csrf_exempt_acs(
    provider_kwargs: dict[str, Any], name: str
) -> None:
    """A name the provider accepts must be one whose ACS ``is_saml_acs_request`` knows,
    or the IdP's POST to it fails CSRF whenever it carries a session cookie."""
    try:
        SamlProvider(**{**provider_kwargs, "name": name})
    except ValueError:
        return
    assert is_saml_acs_request(RequestFactory().post(f"/saml/{name}/acs"))


@pytest.mark.parametrize("field", ["idp_entity_id", "sp_entity_id"])
def test_a_missing_entity_id_is_refused(provider_kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(ValueError, match=f"has no {field}"):
        SamlProvider(**{**provider_kwargs, field: ""})


@pytest.mark.parametrize("field", ["idp_sso_url", "acs_url"])
@pytest.mark.parametrize(
    "value", ["", "/saml/test/acs", "idp.test/sso", "ftp://idp.test/sso", "http://", "javascript:x"]
)
def test_a_sso_or_acs_url_that_is_not_an_absolute_http_url_is_refused(
    provider_kwargs: dict[str, Any], field: str, value: str
) -> None:
    with pytest.raises(ValueError, match=f"{field} must be an absolute http"):
        SamlProvider(**{**provider_kwargs, field: value})


@pytest.mark.parametrize(
    "value",
    [
        "",
        "not a certificate",
        "aGVsbG8gd29ybGQ=",  # base64 of "hello world"
        "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n",
    ],
)
def test_an_idp_cert_that_is_not_a_certificate_is_refused(
    provider_kwargs: dict[str, Any], value: str
) -> None:
    with pytest.raises(ValueError, match="idp_x509_cert is not"):
        SamlProvider(**{**provider_kwargs, "idp_x509_cert": value})


def test_an_sp_cert_that_is_not_a_certificate_is_refused(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair
) -> None:
    bad = "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----\n"
    with pytest.raises(ValueError, match="sp_x509_cert is not"):
        SamlProvider(**{**provider_kwargs, "sp_x509_cert": bad, "sp_private_key": sp_keys.key_pem})


def test_the_idp_cert_as_pem_or_as_base64_is_the_same_provider(
    provider_kwargs: dict[str, Any], idp_keys: KeyPair
) -> None:
    pem = SamlProvider(**{**provider_kwargs, "idp_x509_cert": idp_keys.cert_pem})
    bare = SamlProvider(**{**provider_kwargs, "idp_x509_cert": idp_keys.cert_b64})
    # Metadata often wraps the base64 in lines and indents it.
    wrapped_body = "\n    ".join(
        idp_keys.cert_b64[i : i + 64] for i in range(0, len(idp_keys.cert_b64), 64)
    )
    wrapped = SamlProvider(**{**provider_kwargs, "idp_x509_cert": f"\n    {wrapped_body}\n"})
    assert pem == bare == wrapped
    assert pem.idp_x509_cert == idp_keys.cert_b64


@pytest.mark.parametrize("given", ["sp_x509_cert", "sp_private_key"])
def test_one_of_sp_cert_and_key_alone_is_refused(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair, given: str
) -> None:
    value = sp_keys.cert_pem if given == "sp_x509_cert" else sp_keys.key_pem
    with pytest.raises(ValueError, match="set both sp_x509_cert and sp_private_key"):
        SamlProvider(**{**provider_kwargs, given: value})


def test_the_sp_key_and_cert_may_be_file_paths(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair
) -> None:
    provider = SamlProvider(
        **provider_kwargs,
        sp_x509_cert=str(sp_keys.cert_path),
        sp_private_key=str(sp_keys.key_path),
    )
    assert provider.sp_private_key == sp_keys.key_pem
    assert provider.sp_x509_cert == sp_keys.cert_pem
    assert provider.signs_requests is True
    assert provider == SamlProvider(
        **provider_kwargs, sp_x509_cert=sp_keys.cert_pem, sp_private_key=sp_keys.key_pem
    )


def test_an_sp_key_path_that_is_not_a_file_is_refused(
    provider_kwargs: dict[str, Any], sp_keys: KeyPair, tmp_path: Path
) -> None:
    with pytest.raises(ValueError, match="sp_private_key is neither PEM text nor a readable file"):
        SamlProvider(
            **provider_kwargs,
            sp_x509_cert=sp_keys.cert_pem,
            sp_private_key=str(tmp_path / "missing.key"),
        )


# -- E001 / I001: xmlsec1 -----------------------------------------------------------------------


@pytest.fixture
def fresh_xmlsec_version() -> Iterator[None]:
    """``xmlsec_version`` is cached for the process: computed anew in this test, and
    forgotten after it (the real function, even if the test replaced it)."""
    real = saml_checks.xmlsec_version
    real.cache_clear()
    yield
    real.cache_clear()


def test_e001_when_xmlsec1_is_not_found(
    monkeypatch: pytest.MonkeyPatch, fresh_xmlsec_version: None
) -> None:
    assert saml_checks.check_xmlsec() == []
    monkeypatch.setattr(saml_checks, "xmlsec_version", lambda: None)
    messages = saml_checks.check_xmlsec()
    assert ids(messages) == ["appframework_saml.E001"]
    assert messages[0].level == django_checks.ERROR
    assert "xmlsec1" in messages[0].msg
    assert saml_checks.report_xmlsec() == []


def test_xmlsec_version_is_none_when_the_binary_cannot_be_found(
    monkeypatch: pytest.MonkeyPatch, fresh_xmlsec_version: None
) -> None:
    import saml2.sigver

    def missing() -> str:
        raise saml2.sigver.SigverError("xmlsec1 not found")

    monkeypatch.setattr(saml2.sigver, "get_xmlsec_binary", missing)
    assert saml_checks.xmlsec_version() is None
    assert ids(saml_checks.check_xmlsec()) == ["appframework_saml.E001"]


def test_i001_names_the_binary_and_its_version(fresh_xmlsec_version: None) -> None:
    from saml2.sigver import get_xmlsec_binary

    path = get_xmlsec_binary()
    version = subprocess.run(
        [path, "--version"], capture_output=True, text=True, check=True
    ).stdout.splitlines()[0]
    messages = saml_checks.report_xmlsec()
    assert ids(messages) == ["appframework_saml.I001"]
    assert messages[0].level == django_checks.INFO
    assert path in messages[0].msg and version in messages[0].msg


# -- E002: settings -----------------------------------------------------------------------------


def test_no_e002_for_good_settings(saml_settings: SettingsInstaller) -> None:
    saml_settings(REPLAY_WINDOW=10, REQUEST_TTL=10, CLOCK_SKEW=0, CERT_EXPIRY_WARNING_DAYS=1)
    assert saml_checks.check_settings() == []
    saml_settings(CLOCK_SKEW=600)
    assert saml_checks.check_settings() == []


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"PROVIDERS": 5}, "PROVIDERS must be a list"),
        ({"PROVIDERS": [{"name": "test"}]}, "PROVIDERS must hold SamlProvider objects"),
        ({"PROVIDERS": "twice"}, "two PROVIDERS share a name"),
        ({"REPLAY_WINDOW": 0}, "REPLAY_WINDOW must be a positive number"),
        ({"REPLAY_WINDOW": "3600"}, "REPLAY_WINDOW must be a positive number"),
        ({"REQUEST_TTL": -1}, "REQUEST_TTL must be a positive number"),
        ({"REQUEST_TTL": True}, "REQUEST_TTL must be a positive number"),
        ({"CERT_EXPIRY_WARNING_DAYS": 1.5}, "CERT_EXPIRY_WARNING_DAYS must be a positive"),
        ({"CLOCK_SKEW": -1}, "CLOCK_SKEW must be 0 to 600 seconds"),
        ({"CLOCK_SKEW": 601}, "CLOCK_SKEW must be 0 to 600 seconds"),
        ({"CLOCK_SKEW": False}, "CLOCK_SKEW must be 0 to 600 seconds"),
        ({"REPLAY_CACHE": "nope"}, "REPLAY_CACHE 'nope' is not AUTO or an alias in CACHES"),
        ({"USER_HANDLER": "tests.saml.no_such_module.handler"}, "Could not import"),
        ({"USER_HANDLER": "appframework.saml.flows.MAX_RESPONSE_BYTES"}, "USER_HANDLER is not"),
    ],
)
def test_e002_names_each_bad_value(
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    overrides: dict[str, Any],
    named: str,
) -> None:
    if overrides.get("PROVIDERS") == "twice":
        overrides = {"PROVIDERS": [make_provider(), make_provider(acs_url="http://t.test/acs")]}
    providers = overrides.pop("PROVIDERS", [make_provider()])
    with override_settings(APPFRAMEWORK=appframework_with({"PROVIDERS": providers, **overrides})):
        messages = saml_checks.check_settings()
    assert ids(messages) == ["appframework_saml.E002"]
    assert named in messages[0].msg


# -- E003: sessions -----------------------------------------------------------------------------


def test_e003_without_session_middleware() -> None:
    assert saml_checks.check_sessions() == []
    middleware = [m for m in settings.MIDDLEWARE if not m.endswith(".SessionMiddleware")]
    with override_settings(MIDDLEWARE=middleware):
        assert ids(saml_checks.check_sessions()) == ["appframework_saml.E003"]


def test_e003_without_appframework_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    from django.apps import apps

    real = apps.is_installed
    monkeypatch.setattr(
        apps, "is_installed", lambda name: name != "appframework.auth" and real(name)
    )
    assert ids(saml_checks.check_sessions()) == ["appframework_saml.E003"]


# -- W001: certificates -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def short_keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, KeyPair]:
    folder = tmp_path_factory.mktemp("saml-cert-ages")
    return {
        "ten_days": make_keypair(folder, "ten-days", common_name="idp.test", days_valid=10),
        "expired": make_keypair(
            folder, "expired", common_name="idp.test", days_valid=2, not_before_offset_days=-10
        ),
        "a_year": make_keypair(folder, "a-year", common_name="idp.test", days_valid=365),
    }


@pytest.mark.parametrize(
    ("age", "state"), [("ten_days", "expires"), ("expired", "expired"), ("a_year", None)]
)
def test_w001_for_an_idp_cert_expiring_soon_or_expired(
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    short_keys: dict[str, KeyPair],
    age: str,
    state: str | None,
) -> None:
    saml_settings(make_provider(idp_x509_cert=short_keys[age].cert_pem))
    messages = saml_checks.check_certificates()
    if state is None:
        assert messages == []
        return
    assert ids(messages) == ["appframework_saml.W001"]
    assert f"'test': idp_x509_cert {state} on" in messages[0].msg


def test_w001_for_the_sp_cert_too(
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    short_keys: dict[str, KeyPair],
) -> None:
    pair = short_keys["ten_days"]
    saml_settings(make_provider(sp_x509_cert=pair.cert_pem, sp_private_key=pair.key_pem))
    messages = saml_checks.check_certificates()
    assert ids(messages) == ["appframework_saml.W001"]
    assert "sp_x509_cert expires on" in messages[0].msg


def test_w001_follows_cert_expiry_warning_days(
    saml_settings: SettingsInstaller,
    make_provider: ProviderFactory,
    short_keys: dict[str, KeyPair],
) -> None:
    provider = make_provider(idp_x509_cert=short_keys["ten_days"].cert_pem)
    saml_settings(provider, CERT_EXPIRY_WARNING_DAYS=5)
    assert saml_checks.check_certificates() == []
    saml_settings(provider, CERT_EXPIRY_WARNING_DAYS=400)
    assert ids(saml_checks.check_certificates()) == ["appframework_saml.W001"]


# -- W002: the ACS CSRF exemption ---------------------------------------------------------------


def test_w002_when_csrf_exempt_is_none(provider: Any) -> None:
    assert saml_checks.check_csrf_exemption() == []
    auth = {**settings.APPFRAMEWORK["AUTH"], "CSRF_EXEMPT": None}
    with override_settings(APPFRAMEWORK={**settings.APPFRAMEWORK, "AUTH": auth}):
        messages = saml_checks.check_csrf_exemption()
    assert ids(messages) == ["appframework_saml.W002"]
    assert "appframework.saml.is_saml_acs_request" in messages[0].hint


# -- W003: a Strict session cookie ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("samesite", "warned"),
    [("Strict", True), ("strict", True), ("Lax", False), ("None", False), (False, False)],
)
def test_w003_only_for_a_strict_session_cookie(samesite: Any, warned: bool) -> None:
    with override_settings(SESSION_COOKIE_SAMESITE=samesite):
        messages = saml_checks.check_session_samesite()
    assert ids(messages) == (["appframework_saml.W003"] if warned else [])
    if warned:
        assert "docs/checks.md#appframework_saml-W003" in messages[0].hint


# -- W004: IdP-initiated login on ---------------------------------------------------------------


def test_w004_for_each_listed_provider_that_accepts_idp_initiated_login(
    saml_settings: SettingsInstaller, make_provider: ProviderFactory
) -> None:
    closed = make_provider(
        name="closed", acs_url="http://testserver/saml/closed/acs", allow_idp_initiated=False
    )
    saml_settings(make_provider(), closed)
    messages = saml_checks.check_idp_initiated()
    assert ids(messages) == ["appframework_saml.W004"]
    assert messages[0].level == django_checks.WARNING
    assert "'test'" in messages[0].msg and "closed" not in messages[0].msg
    assert "allow_idp_initiated=False" in messages[0].hint
    assert "docs/checks.md#appframework_saml-W004" in messages[0].hint
    saml_settings(closed)
    assert saml_checks.check_idp_initiated() == []


def test_w004_does_not_call_a_provider_factory() -> None:
    providers = "tests.saml.test_types_and_checks.no_factory_call"
    with override_settings(APPFRAMEWORK=appframework_with({"PROVIDERS": providers})):
        assert saml_checks.check_idp_initiated() == []


def no_factory_call() -> list[SamlProvider]:
    raise AssertionError("checks must not call a provider factory")


# -- W005: a process-local replay cache ----------------------------------------------------------


class ProjectLocMem(LocMemCache):
    """A project's own subclass is still per process."""


LOCMEM = "django.core.cache.backends.locmem.LocMemCache"


def replay_cache_check(backend: str, providers: Any, *, debug: bool = False) -> Messages:
    """W005 with ``REPLAY_CACHE`` on an alias of ``backend`` (one override: nested ones
    must unwind in order, or the alias outlives its CACHES entry)."""
    caches = {**settings.CACHES, "replay": {"BACKEND": backend, "LOCATION": "w005-test"}}
    saml = {"PROVIDERS": providers, "REPLAY_CACHE": "replay"}
    with override_settings(CACHES=caches, DEBUG=debug, APPFRAMEWORK=appframework_with(saml)):
        return saml_checks.check_replay_cache()


@pytest.mark.parametrize(
    ("backend", "warned"),
    [
        (LOCMEM, True),
        ("tests.saml.test_types_and_checks.ProjectLocMem", True),
        ("django.core.cache.backends.dummy.DummyCache", True),
        ("django.core.cache.backends.redis.RedisCache", False),
        ("django.core.cache.backends.db.DatabaseCache", False),
        ("django.core.cache.backends.memcached.PyMemcacheCache", False),
    ],
)
def test_w005_when_the_replay_cache_is_per_process(
    make_provider: ProviderFactory, backend: str, warned: bool
) -> None:
    messages = replay_cache_check(backend, [make_provider()])
    assert ids(messages) == (["appframework_saml.W005"] if warned else [])
    if warned:
        assert messages[0].level == django_checks.WARNING
        assert "'replay'" in messages[0].msg
        assert "docs/checks.md#appframework_saml-W005" in messages[0].hint


def test_w005_is_quiet_with_debug_on_or_without_providers(make_provider: ProviderFactory) -> None:
    # A development server is one process; without providers nothing uses the cache.
    assert replay_cache_check(LOCMEM, [make_provider()], debug=True) == []
    assert replay_cache_check(LOCMEM, []) == []
    # A factory is not called, but it may return providers.
    factory = "tests.saml.test_types_and_checks.no_factory_call"
    assert ids(replay_cache_check(LOCMEM, factory)) == ["appframework_saml.W005"]


def test_plain_check_warns_about_the_replay_cache_not_only_deploy() -> None:
    """The test settings are production-like (DEBUG off); with ``REPLAY_CACHE`` named
    as the locmem ``default``, no SP-initiated login would work with two workers."""
    assert settings.DEBUG is False
    saml = {**settings.APPFRAMEWORK["SAML"], "REPLAY_CACHE": "default"}
    with override_settings(APPFRAMEWORK=appframework_with(saml)):
        plain = ids(run_checks())
        assert "appframework_saml.W005" in plain
        with override_settings(DEBUG=True):
            assert "appframework_saml.W005" not in ids(run_checks())


def test_plain_check_is_quiet_with_the_replay_cache_left_at_auto() -> None:
    """The same locmem ``default`` with ``REPLAY_CACHE`` unset (``AUTO``): the records
    are in the suite's database store, which every worker shares."""
    assert "REPLAY_CACHE" not in settings.APPFRAMEWORK["SAML"]
    assert "appframework_saml.W005" not in ids(run_checks())


# -- registered ---------------------------------------------------------------------------------


def test_the_checks_are_registered_and_i001_only_for_deploy() -> None:
    registry = django_checks.registry.registry
    everyday = registry.get_checks()
    for check in (
        saml_checks.check_xmlsec,
        saml_checks.check_settings,
        saml_checks.check_sessions,
        saml_checks.check_certificates,
        saml_checks.check_csrf_exemption,
        saml_checks.check_session_samesite,
        saml_checks.check_idp_initiated,
        saml_checks.check_replay_cache,
    ):
        assert check in everyday
    assert saml_checks.report_xmlsec not in everyday
    assert saml_checks.report_xmlsec in registry.get_checks(include_deployment_checks=True)
