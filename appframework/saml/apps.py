from __future__ import annotations

from django.apps import AppConfig
from django.core import checks


class SamlServiceProvider(AppConfig):
    """SAML 2.0 service provider (pysaml2 + xmlsec1). Parameters live in
    ``APPFRAMEWORK["SAML"]``: ``PROVIDERS``, ``REPLAY_WINDOW``, ``REPLAY_CACHE`` and the
    rest in docs/saml.md. Checks: xmlsec1 present (``appframework_saml.E001``, with its
    version as ``I001`` under ``check --deploy``), settings (``E002``), sessions (``E003``), certificates about to
    expire (``W001``), the ACS CSRF exemption (``W002``)."""

    name = "appframework.saml"
    label = "appframework_saml"
    verbose_name = "appframework: SAML login"

    def ready(self) -> None:
        from . import checks as saml_checks

        for check in (
            saml_checks.check_xmlsec,
            saml_checks.check_settings,
            saml_checks.check_sessions,
            saml_checks.check_certificates,
            saml_checks.check_csrf_exemption,
            saml_checks.check_session_samesite,
        ):
            checks.register(check)
        # Deploy only: an Info on every `check` would make "1 issue" the normal output.
        checks.register(saml_checks.report_xmlsec, deploy=True)
