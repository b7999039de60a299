from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class SamlServiceProvider(AppConfig):
    """SAML 2.0 service provider (pysaml2 + xmlsec1). Parameters live in
    ``APPFRAMEWORK["SAML"]``: ``PROVIDERS``, ``REPLAY_WINDOW``, ``REPLAY_CACHE`` and the
    rest in docs/saml.md. Checks: xmlsec1 present (``appframework_saml.E001``, with its
    version as ``I001`` under ``check --deploy``), settings (``E002``), sessions (``E003``),
    certificates about to expire (``W001``), the ACS CSRF exemption (``W002``), a Strict
    session cookie (``W003``), IdP-initiated login left on (``W004``), and a replay
    cache each process keeps for itself with DEBUG off (``W005``)."""

    name = "appframework.saml"
    label = "appframework_saml"
    verbose_name = "appframework: SAML login"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks as saml_checks

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
            checks.register(check)
        # Deploy only: an Info on every `check` would make "1 issue" the normal output.
        checks.register(saml_checks.report_xmlsec, deploy=True)
