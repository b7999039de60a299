"""DRF and django-ninja views as an existing project writes them (DRF's own
SessionAuthentication + IsAuthenticated, ninja's own SessionAuth) and with the suite's
classes, for the CSRF attack tests."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import path
from ninja import NinjaAPI, Status
from ninja.security import SessionAuth as NinjaStockSessionAuth
from rest_framework import authentication, permissions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from appframework.contrib import drf as suite_drf
from appframework.contrib import ninja as suite_ninja


def _write(user: Any) -> dict[str, Any]:
    return {"written_by": user.email}


class StockDrfView(APIView):
    """As `startproject` + DRF's tutorial leave it."""

    authentication_classes = [authentication.SessionAuthentication]
    permission_classes = [permissions.IsAuthenticated]

    def get(self, request: Request) -> Response:
        return Response({"ok": True})

    def post(self, request: Request) -> Response:
        return Response(_write(request.user), status=201)


class SuiteDrfView(StockDrfView):
    authentication_classes = [
        suite_drf.BearerTokenAuthentication,
        suite_drf.SessionAuthentication,
    ]


stock_ninja = NinjaAPI(urls_namespace="hardening-ninja-stock", auth=NinjaStockSessionAuth())
suite_ninja_api = suite_ninja.install_exception_handlers(
    NinjaAPI(
        urls_namespace="hardening-ninja-suite",
        auth=[suite_ninja.BearerAuth(), suite_ninja.SessionAuth()],
    )
)

for _api in (stock_ninja, suite_ninja_api):

    @_api.get("/write")
    def read(request: HttpRequest) -> dict[str, Any]:
        return {"ok": True}

    @_api.post("/write", response={201: dict})
    def write(request: HttpRequest) -> Status[dict[str, Any]]:
        return Status(201, _write(request.auth))

    @_api.post("/awrite", response={201: dict})
    async def awrite(request: HttpRequest) -> Status[dict[str, Any]]:
        return Status(201, _write(request.auth))


urlpatterns = [
    path("drf/stock", StockDrfView.as_view()),
    path("drf/suite", SuiteDrfView.as_view()),
    path("ninja/stock/", stock_ninja.urls),
    path("ninja/suite/", suite_ninja_api.urls),
]
