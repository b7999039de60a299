"""Test helpers around the local OpenID Connect provider (``testproject.local_idp``).

``start_local_idp`` runs the provider as a subprocess on a free port of 127.0.0.1;
``ProviderBrowser`` plays the user's browser at the provider (follow the authorization
request to the login form, sign in, stop at the redirect back to the relying party).
No fixtures here: the conftest that needs a provider wraps ``start_local_idp``.
"""

from __future__ import annotations

import atexit
import base64
import hashlib
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode, urljoin

import requests

from tests.processes import read_log, stop_process

REPO_ROOT = Path(__file__).resolve().parents[2]

DEFAULT_CLIENT_ID = "appframework-demo"
DEFAULT_CLIENT_SECRET = "demo-secret"
# A client whose token requests must carry the secret as form fields (client_secret_post):
# the provider refuses its Basic header (``post_only_clients`` of start_local_idp).
POST_ONLY_CLIENT_ID = "appframework-post-only"
POST_ONLY_CLIENT_SECRET = "post-only-secret"
# The seeded accounts (testproject/local_idp/seed.py), all with PASSWORD.
PASSWORD = "password"
VERIFIED_USER = "alice"  # alice@example.test, email_verified true
UNVERIFIED_USER = "unverified"  # victim@example.test, email_verified false
NO_EMAIL_USER = "noemail"  # no email claims at all

START_TIMEOUT = 60.0
_READY = re.compile(r"^local-idp ready (http://127\.0\.0\.1:\d+)$", re.MULTILINE)


def pkce_challenge(code_verifier: str) -> dict[str, str]:
    """The authorization request's PKCE parameters for ``code_verifier`` (S256), computed
    here rather than by the client under test."""
    digest = hashlib.sha256(code_verifier.encode("ascii")).digest()
    challenge = base64.urlsafe_b64encode(digest).decode("ascii").rstrip("=")
    return {"code_challenge": challenge, "code_challenge_method": "S256"}


@dataclass
class LocalIdp:
    base_url: str  # http://127.0.0.1:PORT
    issuer: str  # base_url + "/o"
    discovery_url: str  # issuer + "/.well-known/openid-configuration"
    client_id: str
    client_secret: str
    process: subprocess.Popen[bytes] = field(repr=False)
    log_path: Path | None = field(default=None, repr=False)

    def authorize_url(
        self,
        redirect_uri: str,
        state: str,
        *,
        scope: str = "openid email profile",
        nonce: str | None = None,
        code_verifier: str | None = None,
        **extra: str,
    ) -> str:
        """An authorization request for this provider's client, as a relying party sends it
        (with the S256 challenge of ``code_verifier`` when given)."""
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": redirect_uri,
            "scope": scope,
            "state": state,
            **({"nonce": nonce} if nonce is not None else {}),
            **(pkce_challenge(code_verifier) if code_verifier is not None else {}),
            **extra,
        }
        return f"{self.issuer}/authorize/?{urlencode(params)}"

    def output(self) -> str:
        """What the provider printed so far (its request log, tracebacks)."""
        return read_log(self.log_path)

    def stop(self) -> None:
        """Terminate the provider and wait for it; safe to call twice."""
        stop_process(self.process)


def start_local_idp(
    data_dir: Path,
    redirect_uris: Sequence[str],
    client_id: str = DEFAULT_CLIENT_ID,
    client_secret: str = DEFAULT_CLIENT_SECRET,
    *,
    pkce_optional: bool = False,
    post_only_clients: Sequence[tuple[str, str]] = (),
    port: int = 0,
) -> LocalIdp:
    """Start ``python -m testproject.local_idp --port 0`` and wait for its ready line.

    The provider requires PKCE (S256) of every authorization request, as a provider
    following current advice does; ``pkce_optional`` starts one that accepts requests
    without it, to show what a client that sends none is exposed to.

    ``post_only_clients`` (``(client_id, client_secret)``) are more clients, with the
    same redirect URIs, that must send their secret as form fields; ``port`` is a port
    of 127.0.0.1 to listen on (0: a free one).

    Its output goes to ``data_dir/local-idp.log``, a file rather than a pipe: nobody reads
    a pipe once the provider is up, and a full pipe would block its request log and so
    its requests. Raises RuntimeError, with that output, when it does not come up within
    60 seconds.
    """
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    log_path = data_dir / "local-idp.log"
    command = [sys.executable, "-m", "testproject.local_idp", "--port", str(port)]
    command += ["--data-dir", str(data_dir), "--client-id", client_id]
    command += ["--client-secret", client_secret]
    for uri in redirect_uris:
        command += ["--redirect-uri", uri]
    if pkce_optional:
        command.append("--pkce-optional")
    for post_id, post_secret in post_only_clients:
        command += ["--post-only-client", f"{post_id}={post_secret}"]
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # pytest-django set the tests' settings here; the provider picks its own, and the
    # demo's variables must not leak into it either.
    for name in (
        "DJANGO_SETTINGS_MODULE",
        "LOCAL_IDP_DATA_DIR",
        "LOCAL_IDP_REDIRECT_URIS",
        "LOCAL_IDP_PKCE_OPTIONAL",
        "LOCAL_IDP_POST_ONLY_CLIENTS",
    ):
        env.pop(name, None)
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, cwd=REPO_ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
        )

    def output() -> str:
        return log_path.read_text(encoding="utf-8", errors="replace")

    deadline = time.monotonic() + START_TIMEOUT
    while True:
        match = _READY.search(output())
        if match:
            break
        if process.poll() is not None:
            raise RuntimeError(
                f"the local OpenID provider exited with status {process.returncode} before "
                f"it was ready; its output:\n{output()}"
            )
        if time.monotonic() > deadline:
            process.kill()
            process.wait(timeout=10)
            raise RuntimeError(
                f"the local OpenID provider was not ready within {START_TIMEOUT:.0f} s; "
                f"its output:\n{output()}"
            )
        time.sleep(0.05)
    base_url = match.group(1)
    issuer = f"{base_url}/o"
    idp = LocalIdp(
        base_url=base_url,
        issuer=issuer,
        discovery_url=f"{issuer}/.well-known/openid-configuration",
        client_id=client_id,
        client_secret=client_secret,
        process=process,
        log_path=log_path,
    )
    # A test run that ends without the fixture's teardown (an interrupted session) must
    # not leave the provider listening.
    atexit.register(idp.stop)
    return idp


class _LoginForm(HTMLParser):
    """The first form on a page that has a password field: its action and inputs."""

    def __init__(self) -> None:
        super().__init__()
        self._in_form = False
        self._action: str | None = None
        self._fields: dict[str, str] = {}
        self._has_password = False
        self.found: tuple[str, dict[str, str]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = {name: value or "" for name, value in attrs}
        if tag == "form" and self.found is None:
            self._in_form = True
            self._action = attributes.get("action", "")
            self._fields = {}
            self._has_password = False
        elif tag == "input" and self._in_form and attributes.get("name"):
            self._fields[attributes["name"]] = attributes.get("value", "")
            self._has_password |= attributes.get("type") == "password"

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._in_form:
            self._in_form = False
            if self._has_password and self.found is None:
                self.found = (self._action or "", self._fields)


def _snippet(response: requests.Response, limit: int = 600) -> str:
    body = response.text
    return body if len(body) <= limit else body[:limit] + "..."


class ProviderBrowser:
    """The user's browser at the provider: a ``requests.Session`` (so it keeps the
    provider's session cookie) that follows every redirect itself, to stop at the one
    that leaves for the relying party."""

    MAX_STEPS = 10

    def __init__(self) -> None:
        self.session = requests.Session()

    def close(self) -> None:
        self.session.close()

    def login_and_authorize(
        self, authorize_url: str, username: str, password: str, redirect_uri_prefix: str
    ) -> str:
        """Open ``authorize_url``, sign in on the login form when it shows, and return the
        first redirect whose Location starts with ``redirect_uri_prefix`` (the relying
        party's callback URL with ``code`` and ``state``), without requesting it.

        Raises AssertionError, with the last response's status and body, when the flow
        ends anywhere else: an error page, a rejected login, a redirect loop.
        """
        url = authorize_url
        response = self.session.get(url, allow_redirects=False, timeout=30)
        signed_in = False
        for _ in range(self.MAX_STEPS):
            location = response.headers.get("Location")
            if response.is_redirect and location:
                target = urljoin(url, location)
                if target.startswith(redirect_uri_prefix):
                    return target
                url = target
                response = self.session.get(url, allow_redirects=False, timeout=30)
                continue
            form = _LoginForm()
            form.feed(response.text)
            if response.status_code != 200 or form.found is None:
                break
            if signed_in:
                raise AssertionError(
                    f"the provider refused the login of {username!r} (it showed the login "
                    f"form again, status {response.status_code}): {_snippet(response)}"
                )
            action, fields = form.found
            fields.update(username=username, password=password)
            url = urljoin(url, action) if action else url
            response = self.session.post(url, data=fields, allow_redirects=False, timeout=30)
            signed_in = True
        raise AssertionError(
            f"the authorization flow at the provider stopped at {url} (status "
            f"{response.status_code}, Location {response.headers.get('Location')!r}) "
            f"instead of redirecting to {redirect_uri_prefix}: {_snippet(response)}"
        )
