"""The passkey forms' "Name" label follows the active language: it is translated when
the form is shown, not frozen in the language active when the module was imported."""

from __future__ import annotations

from django.utils import translation

from appframework.passkeys.views import AddPasskeyForm


def test_the_name_label_follows_the_active_language() -> None:
    with translation.override("fr"):
        assert str(AddPasskeyForm.base_fields["name"].label) == "Nom"
    with translation.override("en"):
        assert str(AddPasskeyForm.base_fields["name"].label) == "Name"
