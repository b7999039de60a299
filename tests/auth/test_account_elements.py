"""The element templates of the account pages (appframework/elements/) as assistive
technology reads them: what the browser checks (tests/e2e/test_accessibility.py) cannot
reach on the shipped pages, a field with more than one error among them."""

from __future__ import annotations

import re

from django import forms
from django.core.exceptions import ValidationError
from django.template.loader import render_to_string


class TwoRulesForm(forms.Form):
    password = forms.CharField(label="Password", help_text="At least 12 characters.")

    def clean_password(self) -> str:
        raise ValidationError(["Too short.", "Too common."])


def render_field(form: forms.Form, name: str) -> str:
    return render_to_string("appframework/elements/field.html", {"field": form[name]})


def test_a_field_with_two_errors_has_one_error_element_its_input_points_to() -> None:
    form = TwoRulesForm(data={"password": "x"})
    assert not form.is_valid()
    html = render_field(form, "password")

    # One element under the id Django's aria-describedby names: a repeated id would
    # leave the input described by the first error only (and is invalid HTML).
    assert html.count('id="id_password_error"') == 1
    assert re.search(r'role="alert">Too short\.<br>Too common\.</small>', html), html
    described = re.search(r'<input[^>]*aria-describedby="([^"]+)"', html)
    assert described and described.group(1).split() == ["id_password_helptext", "id_password_error"]
    assert 'aria-invalid="true"' in html
    assert "af-field-invalid" in html


def test_a_valid_field_has_no_error_element() -> None:
    form = TwoRulesForm()
    html = render_field(form, "password")
    assert "af-field-error" not in html
    assert "af-field-invalid" not in html
    assert 'for="id_password"' in html
