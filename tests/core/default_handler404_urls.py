"""URLconf for tests/core/test_error_format_custom_handlers.py: no ``handler404`` (Django's
default, ``django.views.defaults.page_not_found``)."""

from __future__ import annotations

from django.urls import path

from .own_handler404_urls import ok

urlpatterns = [path("h/ok", ok)]
