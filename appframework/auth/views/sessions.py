"""The user's sessions: the list, ending one, ending all but this one. Ending a session
needs no recent proof (it only takes access away, as on GitHub)."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.cache import never_cache
from django.views.generic import TemplateView, View

from ...errors import response_for_error
from ...exceptions import AppFrameworkError
from ...http import asks_for_json
from ..adapter import get_adapter
from ..user_sessions import (
    current_session_key,
    end_other_sessions,
    end_user_session,
    live_sessions,
)
from .base import ELEMENT_DEFAULTS, SignedInMixin

__all__ = ["EndOtherSessionsView", "EndSessionView", "SessionsView"]


def sessions_url() -> str:
    return reverse("appframework:sessions")


@method_decorator(never_cache, name="dispatch")
class SessionsView(SignedInMixin, TemplateView):
    """The user's live sessions, browsers and apps, this one marked."""

    template_name = "appframework/sessions.html"
    http_method_names = ["get", "head"]

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        current = current_session_key(self.request)
        sessions = [
            {
                "pk": row.pk,
                "kind": row.get_kind_display(),
                "created_at": row.created_at,
                "last_seen_at": row.last_seen_at,
                "client_ip": row.client_ip,
                "user_agent": row.user_agent,
                "current": row.key == current,
            }
            for row in live_sessions(self.user)
        ]
        return {
            **ELEMENT_DEFAULTS,
            **super().get_context_data(**kwargs),
            "sessions": sessions,
            "others": any(not s["current"] for s in sessions),
        }


class EndSessionView(SignedInMixin, View):
    """POST: end one of the user's other sessions (this one ends by logging out)."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        adapter = get_adapter(request)
        try:
            end_user_session(request, self.user, kwargs["pk"])
        except AppFrameworkError as exc:
            if asks_for_json(request) or exc.status_code == 404:
                return response_for_error(request, exc)
            adapter.add_message(request, messages.ERROR, exc.detail)
        else:
            adapter.add_message(request, messages.SUCCESS, _("The session has ended."))
        return HttpResponseRedirect(sessions_url())


class EndOtherSessionsView(SignedInMixin, View):
    """POST: end every session of the user but this one."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        end_other_sessions(request, self.user)
        get_adapter(request).add_message(
            request, messages.SUCCESS, _("Every other session has ended.")
        )
        return HttpResponseRedirect(sessions_url())
