"""Adapters that put the suite's sessions, CSRF rules, API tokens, Gate and error format
inside the API frameworks a Django project already uses: Django REST framework
(:mod:`appframework.contrib.drf`, extra ``[drf]``) and django-ninja
(:mod:`appframework.contrib.ninja`, extra ``[ninja]``)."""
