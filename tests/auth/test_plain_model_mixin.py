"""A user model that is a plain ``models.Model`` with the suite's mixins (no
``AbstractBaseUser``) gets the two names the flows, mails and signals call on a user:
``get_username()`` (a wrong second-factor code's ``login_failed`` signal, every security
mail) and ``get_email_field_name()`` (where the notifications find the address)."""

from __future__ import annotations

from appframework.auth import Authenticatable


class PlainUser(Authenticatable):
    USERNAME_FIELD = "handle"

    def __init__(self, handle: str, email: str) -> None:
        self.handle = handle
        self.email = email


class PlainUserWithEmailField(PlainUser):
    EMAIL_FIELD = "contact"


def test_a_plain_model_has_get_username_from_its_username_field() -> None:
    assert PlainUser("ada", "ada@example.com").get_username() == "ada"


def test_a_plain_model_names_its_email_field_as_django_does() -> None:
    assert PlainUser.get_email_field_name() == "email"
    assert PlainUserWithEmailField.get_email_field_name() == "contact"
