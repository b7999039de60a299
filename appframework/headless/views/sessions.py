"""The signed-in user's sessions as JSON: list them, end one, end all but this one.
Ending needs no recent proof (it only takes access away); the request's own session
ends by logging out (``DELETE session``), so ending it here is 409 ``current_session``."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from ...auth.user_sessions import (
    current_session_key,
    end_other_sessions,
    end_user_session,
    live_sessions,
    session_payload,
)
from ..base import HeadlessView

__all__ = ["EndOtherSessionsView", "UserSessionView", "UserSessionsView"]


def sessions_answer(request: HttpRequest, user: Any) -> dict[str, Any]:
    current = current_session_key(request)
    return {"sessions": [session_payload(row, current) for row in live_sessions(user)]}


class UserSessionsView(HeadlessView):
    """GET: ``{"sessions": [...]}``, browsers and apps, ``current`` marking this one."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> dict[str, Any]:
        return sessions_answer(request, self.signed_in_user())


class UserSessionView(HeadlessView):
    """DELETE: end that session (404 if it is not the user's); the rest are returned."""

    http_method_names = ["delete"]

    def delete(self, request: HttpRequest, pk: int) -> dict[str, Any]:
        user = self.signed_in_user()
        end_user_session(request, user, pk)
        return sessions_answer(request, user)


class EndOtherSessionsView(HeadlessView):
    """POST: end every session of the user but this one; this one is returned."""

    http_method_names = ["post"]

    def post(self, request: HttpRequest) -> dict[str, Any]:
        user = self.signed_in_user()
        end_other_sessions(request, user)
        return sessions_answer(request, user)
