"""The demo's /mailbox shows every mail the site sent (reset links, sign-in codes): it
answers only while ``DEMO_MAILBOX_PAGE`` is on, and ``check --deploy`` refuses it on
(blog.E003, docs/checks.md)."""

from __future__ import annotations

import io

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client, override_settings

from testproject.blog.checks import check_mailbox_page_off

LOCMEM = "django.core.mail.backends.locmem.EmailBackend"
RESET_LINK = "https://example.com/password/reset/MQ/secret-reset-token"


def _send_reset_mail() -> None:
    mail.send_mail("Reset your password", f"Open {RESET_LINK}", None, ["victim@example.com"])


@override_settings(DEBUG=False, DEMO_MAILBOX_PAGE=False, EMAIL_BACKEND=LOCMEM)
def test_mailbox_is_404_without_debug_and_without_the_flag(client: Client) -> None:
    _send_reset_mail()
    response = client.get("/mailbox")
    assert response.status_code == 404
    assert RESET_LINK not in response.content.decode()


@override_settings(DEBUG=False, DEMO_MAILBOX_PAGE=True, EMAIL_BACKEND=LOCMEM)
def test_mailbox_shows_the_mails_with_the_flag_on(client: Client) -> None:
    _send_reset_mail()
    response = client.get("/mailbox")
    assert response.status_code == 200
    assert RESET_LINK in response.content.decode()


def test_the_flag_defaults_to_debug() -> None:
    # The demo's settings module derives it from DEBUG=1, which scripts/demo exports.
    import importlib
    import os
    from unittest import mock

    import testproject.settings as demo_settings

    try:
        for debug, expected in (("1", True), ("0", False)):
            env = {k: v for k, v in os.environ.items() if k != "DEMO_MAILBOX_PAGE"}
            with mock.patch.dict(os.environ, {**env, "DEBUG": debug}, clear=True):
                assert importlib.reload(demo_settings).DEMO_MAILBOX_PAGE is expected
    finally:
        importlib.reload(demo_settings)


@override_settings(DEMO_MAILBOX_PAGE=True)
def test_check_deploy_refuses_the_mailbox_on() -> None:
    messages = check_mailbox_page_off()
    assert [m.id for m in messages] == ["blog.E003"]
    assert "docs/checks.md#blog-E003" in (messages[0].hint or "")


@pytest.mark.django_db
def test_manage_py_check_deploy_fails_with_blog_e003_while_the_mailbox_is_on() -> None:
    with override_settings(DEMO_MAILBOX_PAGE=True), pytest.raises(SystemCheckError) as raised:
        call_command("check", deploy=True, stdout=io.StringIO(), stderr=io.StringIO())
    assert "blog.E003" in str(raised.value)


@override_settings(DEMO_MAILBOX_PAGE=False)
def test_check_deploy_quiet_with_the_mailbox_off() -> None:
    assert check_mailbox_page_off() == []
