"""/mailbox: the mails the demo "sent" (Django's file-based mail backend writes them to
``EMAIL_FILE_PATH``; under the tests, the in-memory outbox), newest first, so a visitor
can open a confirmation link or read a sign-in code without a mail server.

Only while ``settings.DEMO_MAILBOX_PAGE`` is on (by default as long as ``DEBUG`` is): it
shows anyone every reset link and code, so otherwise it is a 404 (and ``check --deploy``
refuses it on, blog.E003)."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

#: The file-based backend ends each message with a line of 79 dashes.
SEPARATOR = "-" * 79
SHOWN = 20


def _messages(folder: Path) -> list[dict[str, Any]]:
    files = sorted(folder.glob("*.log"), key=lambda p: p.stat().st_mtime, reverse=True)
    found: list[dict[str, Any]] = []
    for path in files:
        chunks = path.read_text(encoding="utf-8", errors="replace").split(SEPARATOR)
        for chunk in reversed([c.strip() for c in chunks if c.strip()]):
            message = email.message_from_string(chunk, policy=email.policy.default)
            body = message.get_body(preferencelist=("plain",))
            found.append(
                {
                    "to": message.get("To", ""),
                    "subject": message.get("Subject", ""),
                    "date": message.get("Date", ""),
                    "body": body.get_content() if body is not None else "",
                }
            )
            if len(found) >= SHOWN:
                return found
    return found


def _outbox() -> list[dict[str, Any]]:
    """Django's in-memory backend (the tests'): its outbox, newest first."""
    from django.core import mail

    return [
        {"to": ", ".join(m.to), "subject": m.subject, "date": "", "body": m.body}
        for m in reversed(getattr(mail, "outbox", [])[-SHOWN:])
    ]


@require_GET
def mailbox(request: HttpRequest) -> HttpResponse:
    if not getattr(settings, "DEMO_MAILBOX_PAGE", False):
        raise Http404("The demo's mailbox is off (DEMO_MAILBOX_PAGE).")
    backend = settings.EMAIL_BACKEND
    if backend == "django.core.mail.backends.filebased.EmailBackend":
        folder = Path(settings.EMAIL_FILE_PATH)
        mails = _messages(folder) if folder.is_dir() else []
    elif backend == "django.core.mail.backends.locmem.EmailBackend":
        mails = _outbox()
    else:
        raise Http404("The demo's mailbox shows the file-based or in-memory mail backend.")
    return render(request, "blog/mailbox.html", {"mails": mails})
