"""URLconf and views for tests/auth/test_request_user_matrix.py.

``/m/sync/<writer>/<reader>`` (a sync view) and ``/m/async/<writer>/<reader>`` (an async
view) read the user with the readers (``?prime=none|same|all``), call one writer
(``login``/``alogin`` with the user ``?uid=``, or ``logout``/``alogout``), then read the
user again: first with ``reader``, then with all four. The JSON answer says what each
read saw: ``null`` (None), ``"anonymous"`` (an AnonymousUser) or the user's pk. The auth
tests' routes (``/t/whoami``) follow.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth import get_user_model
from django.http import HttpRequest, JsonResponse
from django.urls import include, path

from appframework.auth import alogin, alogout, current_user, current_user_sync, login, logout

READERS = ("current_user", "current_user_sync", "request.user", "request.auser")
WRITERS = ("login", "alogin", "logout", "alogout")


def seen(user: Any) -> Any:
    """What a reader returned: None, "anonymous" or the user's pk."""
    if user is None:
        return None
    if not user.is_authenticated:
        return "anonymous"
    return user.pk


def _primed_readers(request: HttpRequest, reader: str) -> tuple[str, ...]:
    prime = request.GET.get("prime", "none")
    if prime == "all":
        return READERS
    if prime == "same":
        return (reader,)
    return ()


# -- the sync view (WSGI): async readers and writers through async_to_sync -----------------
def _read_in_sync_code(request: HttpRequest, reader: str) -> Any:
    if reader == "current_user":
        return seen(async_to_sync(current_user)(request))
    if reader == "current_user_sync":
        return seen(current_user_sync(request))
    if reader == "request.user":
        return seen(request.user)
    if reader == "request.auser":
        return seen(async_to_sync(request.auser)())  # type: ignore[attr-defined]
    raise ValueError(reader)


def _write_in_sync_code(request: HttpRequest, writer: str) -> None:
    if writer in ("login", "alogin"):
        target = get_user_model()._default_manager.get(pk=request.GET["uid"])
        if writer == "login":
            login(request, target)
        else:
            async_to_sync(alogin)(request, target)
    elif writer == "logout":
        logout(request)
    elif writer == "alogout":
        async_to_sync(alogout)(request)
    else:
        raise ValueError(writer)


def sync_view(request: HttpRequest, writer: str, reader: str) -> JsonResponse:
    before = {name: _read_in_sync_code(request, name) for name in _primed_readers(request, reader)}
    _write_in_sync_code(request, writer)
    first = _read_in_sync_code(request, reader)
    after = {name: _read_in_sync_code(request, name) for name in READERS}
    return JsonResponse({"before": before, "first": first, "after": after})


# -- the async view (ASGI): sync readers and writers through sync_to_async -----------------
async def _read_in_async_code(request: HttpRequest, reader: str) -> Any:
    if reader == "current_user":
        return seen(await current_user(request))
    if reader == "current_user_sync":
        return await sync_to_async(lambda: seen(current_user_sync(request)))()
    if reader == "request.user":
        return await sync_to_async(lambda: seen(request.user))()
    if reader == "request.auser":
        return seen(await request.auser())  # type: ignore[attr-defined]
    raise ValueError(reader)


async def _write_in_async_code(request: HttpRequest, writer: str) -> None:
    if writer in ("login", "alogin"):
        target = await get_user_model()._default_manager.aget(pk=request.GET["uid"])
        if writer == "login":
            await sync_to_async(login)(request, target)
        else:
            await alogin(request, target)
    elif writer == "logout":
        await sync_to_async(logout)(request)
    elif writer == "alogout":
        await alogout(request)
    else:
        raise ValueError(writer)


async def async_view(request: HttpRequest, writer: str, reader: str) -> JsonResponse:
    before = {
        name: await _read_in_async_code(request, name) for name in _primed_readers(request, reader)
    }
    await _write_in_async_code(request, writer)
    first = await _read_in_async_code(request, reader)
    after = {name: await _read_in_async_code(request, name) for name in READERS}
    return JsonResponse({"before": before, "first": first, "after": after})


urlpatterns = [
    path("m/sync/<str:writer>/<str:reader>", sync_view),
    path("m/async/<str:writer>/<str:reader>", async_view),
    path("", include("tests.auth.urls")),
]
