"""The provider's own pages: the login form and the accounts' avatars."""

from __future__ import annotations

import zlib
from typing import Any

from django.contrib.auth.views import LoginView
from django.http import Http404, HttpRequest, HttpResponse
from django.template import engines
from django.utils.html import escape
from django.views.decorators.cache import cache_control
from django.views.decorators.http import require_GET

from testproject.local_idp.seed import ACCOUNTS_BY_USERNAME, DEMO_ACCOUNTS, PASSWORD

# One page, so it lives here rather than in a template directory of its own.
LOGIN_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Local OpenID provider: sign in</title>
<style>
  body { font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem; }
  label { display: block; margin-top: .75rem; }
  input[type=text], input[type=password] { width: 100%; padding: .4rem; box-sizing: border-box; }
  button { margin-top: 1rem; padding: .5rem 1.5rem; }
  .error { color: #b00020; }
  table { border-collapse: collapse; margin-top: 2rem; width: 100%; }
  td, th { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #ddd; }
  code { background: #f3f3f3; padding: 0 .2rem; }
</style>
</head>
<body>
<h1>Local OpenID provider</h1>
<p>A test identity provider running on this machine. Sign in to continue to the application.</p>
{% if form.errors %}<p class="error" role="alert">Wrong username or password.</p>{% endif %}
<form method="post" action="">
  {% csrf_token %}
  <input type="hidden" name="next" value="{{ next }}">
  <label for="id_username">Username</label>
  <input type="text" name="username" id="id_username" autocomplete="username" autofocus required
         value="{{ form.username.value|default_if_none:'' }}">
  <label for="id_password">Password</label>
  <input type="password" name="password" id="id_password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>
<table>
  <caption>Demo accounts (password <code>{{ password }}</code> for all)</caption>
  <tr><th>Username</th><th>Email</th><th>What it shows</th></tr>
  {% for account in accounts %}
  <tr>
    <td><code>{{ account.username }}</code></td>
    <td>{{ account.email|default:"(none)" }}{% if account.email %}{% if account.email_verified %} (verified){% else %} (unverified){% endif %}{% endif %}</td>
    <td>{{ account.note }}</td>
  </tr>
  {% endfor %}
</table>
</body>
</html>
"""


class LocalIdpLoginView(LoginView):
    """Django's LoginView (fields ``username``, ``password``, a CSRF token and ``next``)."""

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        context["accounts"] = DEMO_ACCOUNTS
        context["password"] = PASSWORD
        return context

    def render_to_response(self, context: dict[str, Any], **response_kwargs: Any) -> HttpResponse:
        template = engines["django"].from_string(LOGIN_TEMPLATE)
        return HttpResponse(template.render(context, self.request), **response_kwargs)


AVATAR_SVG = """<svg xmlns="http://www.w3.org/2000/svg" width="96" height="96" viewBox="0 0 96 96">
<circle cx="48" cy="48" r="48" fill="{color}"/>
<text x="48" y="62" font-family="sans-serif" font-size="44" fill="#fff" text-anchor="middle">{initial}</text>
</svg>
"""


@require_GET
@cache_control(max_age=3600, public=True)
def avatar(request: HttpRequest, username: str) -> HttpResponse:
    """The ``picture`` claim's target: a real image, so a relying party can show it."""
    if username not in ACCOUNTS_BY_USERNAME:
        raise Http404("no such account")
    # Darkened so the white initial stays readable; crc32, unlike hash(), is stable
    # across restarts.
    color = f"#{zlib.crc32(username.encode()) & 0x7F7F7F:06x}"
    body = AVATAR_SVG.format(color=color, initial=escape(username[:1].upper()))
    return HttpResponse(body, content_type="image/svg+xml")
