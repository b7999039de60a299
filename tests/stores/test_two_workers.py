"""With no cache configured at all, the suite's records hold across worker processes.

A minimal project (tests/stores/two_workers: no ``CACHES`` setting, so Django's
``default`` is its implicit per-process LocMemCache, and no store setting in
``APPFRAMEWORK``) is served by ``gunicorn -w 2`` on a SQLite file (and, in the PostgreSQL
run, on a scratch PostgreSQL database), and driven over real HTTP with ``requests``. The
kernel hands each connection to either worker, so the steps of one sign-in land on
different processes about half the time; every answer names its worker (``X-Worker``)
and the test requires that some did.

- 12 SP-initiated SAML sign-ins (login, the IdP's POST to the ACS from a cookie-less
  client, the browser's resume GET): all succeed, so the AuthnRequest id one worker
  recorded was found by the other;
- each of those Responses posted again: refused, none accepted;
- 4 IdP-initiated Responses (a provider that accepts them) each posted twice: the second
  is refused as replayed (the record of accepted assertion ids is shared);
- 12 wrong passwords for one account from one address: exactly 5 answered 401 across
  both workers, then 429 (``RATE_LIMIT["LOGIN_ATTEMPTS"]``);
- a logged-out session's kept cookie is anonymous on every worker.

With the records on the per-process ``default`` (the suite's defaults before ``AUTO``),
about a quarter of the sign-ins succeed, some replays are accepted and the throttle lets
up to 10 wrong passwords through.
"""

from __future__ import annotations

import itertools
import os
import re
import secrets
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from testproject.local_idp.keys import make_keypair
from testproject.local_idp.saml_idp import SigningIdp, SpInfo
from testproject.prepare import ROOT, demo_environment
from tests.conftest import skip_or_fail_on_ci
from tests.processes import free_port, read_log, stop_process
from tests.stores.two_workers.site import (
    IDP_ENTITY_ID,
    IDP_SSO_URL,
    PROVIDERS,
    WORKER_HEADER,
    sp_urls,
)

SETTINGS = "tests.stores.two_workers.settings"
WORKERS = 2
SIGN_INS = 12
UNSOLICITED = 4
WRONG_PASSWORDS = 12
LOGIN_ATTEMPTS = 5  # RATE_LIMIT["LOGIN_ATTEMPTS"], the default
TIMEOUT = 10


@dataclass
class Server:
    base_url: str
    process: subprocess.Popen[bytes]
    log: Path
    #: The worker of every answer, in order.
    workers: list[str] = field(default_factory=list)

    def note(self, response: requests.Response) -> requests.Response:
        self.workers.append(response.headers.get(WORKER_HEADER, "?"))
        return response

    def url(self, path: str) -> str:
        return self.base_url + path


# -- the database ---------------------------------------------------------------------------------
@pytest.fixture
def sqlite_database(tmp_path: Path) -> str:
    return str(tmp_path / "two-workers.sqlite3")


@pytest.fixture
def postgresql_database() -> Iterator[str]:
    """A scratch database on the run's PostgreSQL server, named after its database
    (``test_<name>_two_workers``), dropped afterwards."""
    import psycopg

    url = urlsplit(os.environ["DATABASE_URL"])
    name = f"test_{url.path.lstrip('/') or 'postgres'}_two_workers"
    admin = url._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')
    try:
        yield url._replace(scheme="postgres", path=f"/{name}").geturl()
    finally:
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


# -- the IdP and the server -----------------------------------------------------------------------
@pytest.fixture
def base_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


@pytest.fixture
def idp(tmp_path: Path, base_url: str) -> SigningIdp:
    keys = make_keypair(tmp_path / "keys", "idp", common_name="idp.test")
    return SigningIdp(
        entity_id=IDP_ENTITY_ID,
        sso_url=IDP_SSO_URL,
        keypair=keys,
        service_providers=[SpInfo(*sp_urls(base_url, name)) for name in PROVIDERS],
    )


def _gunicorn_options() -> list[str]:
    # gunicorn's control socket (~/.gunicorn/gunicorn.ctl) is shared by every gunicorn of
    # the user; releases before it refuse the option.
    done = subprocess.run(
        [sys.executable, "-m", "gunicorn", "--help"], capture_output=True, text=True, check=False
    )
    return ["--no-control-socket"] if "--no-control-socket" in done.stdout else []


def serve(database: str, base_url: str, idp: SigningIdp, tmp_path: Path) -> Iterator[Server]:
    """``migrate``, then ``gunicorn -w 2`` until both workers have answered."""
    if subprocess.run([sys.executable, "-c", "import gunicorn"], check=False).returncode:
        skip_or_fail_on_ci('gunicorn is not installed (pip install -e ".[test]")')
    env = demo_environment(
        DJANGO_SETTINGS_MODULE=SETTINGS,
        APP_SECRET_KEY=secrets.token_urlsafe(50),
        TWO_WORKERS_BASE_URL=base_url,
        TWO_WORKERS_IDP_CERT=str(idp.keypair.cert_path),
        TWO_WORKERS_DATABASE=database,
    )
    migrate = subprocess.run(
        [sys.executable, "-m", "django", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert migrate.returncode == 0, migrate.stdout + migrate.stderr
    log = tmp_path / "gunicorn.log"
    bind = base_url.removeprefix("http://")
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                *(sys.executable, "-m", "gunicorn", "-w", str(WORKERS), "-b", bind),
                *_gunicorn_options(),
                "tests.stores.two_workers.wsgi:application",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    server = Server(base_url, process, log)
    try:
        seen: set[str] = set()
        deadline = time.monotonic() + 30
        while len(seen) < WORKERS:
            assert process.poll() is None, read_log(log)
            assert time.monotonic() < deadline, f"not {WORKERS} workers:\n{read_log(log)}"
            try:
                seen.add(requests.get(server.url("/whoami"), timeout=2).headers[WORKER_HEADER])
            except (requests.RequestException, KeyError):
                time.sleep(0.1)
        yield server
    finally:
        stop_process(process)


@pytest.fixture
def sqlite_server(
    sqlite_database: str, base_url: str, idp: SigningIdp, tmp_path: Path
) -> Iterator[Server]:
    yield from serve(sqlite_database, base_url, idp, tmp_path)


@pytest.fixture
def postgresql_server(
    postgresql_database: str, base_url: str, idp: SigningIdp, tmp_path: Path
) -> Iterator[Server]:
    yield from serve(postgresql_database, base_url, idp, tmp_path)


# -- a browser ------------------------------------------------------------------------------------
def email(kind: str, number: int) -> str:
    return f"{kind}-{number}@example.test"


def respond(idp: SigningIdp, server: Server, provider: str, to: str | None, name: str) -> str:
    entity_id, acs_url = sp_urls(server.base_url, provider)
    return SigningIdp.encode(
        idp.create_response(
            sp_entity_id=entity_id,
            acs_url=acs_url,
            in_response_to=to,
            name_id=name,
            attributes={"mail": [name], "displayName": [name]},
        )
    )


def post_to_acs(server: Server, provider: str, encoded: str) -> requests.Response:
    """The IdP's form POST: cross-site, so without the browser's (SameSite=Lax) cookies."""
    return server.note(
        requests.post(
            server.url(f"/saml/{provider}/acs"),
            data={"SAMLResponse": encoded},
            allow_redirects=False,
            timeout=TIMEOUT,
        )
    )


def finish(server: Server, browser: requests.Session, acs: requests.Response) -> bool:
    """The browser follows the ACS's 303 to the resume URL: signed in?"""
    if acs.status_code != 303:
        return False
    resume = server.note(
        browser.get(server.url(acs.headers["Location"]), allow_redirects=False, timeout=TIMEOUT)
    )
    return resume.status_code == 302 and resume.headers["Location"] == "/whoami"


def whoami(server: Server, browser: requests.Session) -> Any:
    return server.note(browser.get(server.url("/whoami"), timeout=TIMEOUT)).json()["user"]


def form_token(server: Server, browser: requests.Session) -> str:
    page = server.note(browser.get(server.url("/accounts/login/"), timeout=TIMEOUT))
    match = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert match is not None, page.text
    return match.group(1)


def post_form(
    server: Server, browser: requests.Session, path: str, data: dict[str, str]
) -> requests.Response:
    """A form POST of this site's own page (its token, its Origin)."""
    return server.note(
        browser.post(
            server.url(path),
            data={**data, "_token": form_token(server, browser)},
            headers={"Origin": server.base_url},
            allow_redirects=False,
            timeout=TIMEOUT,
        )
    )


# -- the run --------------------------------------------------------------------------------------
@dataclass
class Outcome:
    signed_in: int = 0
    replays_accepted: int = 0
    unsolicited_signed_in: int = 0
    unsolicited_replays_accepted: int = 0
    throttle: list[int] = field(default_factory=list)
    kept_cookie_users: list[Any] = field(default_factory=list)
    #: Consecutive steps of one sign-in answered by different workers.
    crossings: int = 0


def drive(server: Server, idp: SigningIdp) -> Outcome:
    outcome = Outcome()
    browsers: list[requests.Session] = []
    responses: list[str] = []
    for number in range(SIGN_INS):
        browser = requests.Session()
        start = len(server.workers)
        login = server.note(
            browser.get(
                server.url("/saml/test/login"),
                params={"next": "/whoami"},
                allow_redirects=False,
                timeout=TIMEOUT,
            )
        )
        assert login.status_code == 302, login.text
        request = idp.parse_authn_request_query(parse_qs(urlsplit(login.headers["Location"]).query))
        name = email("sp", number)
        encoded = respond(idp, server, "test", request.id, name)
        if finish(server, browser, post_to_acs(server, "test", encoded)):
            outcome.signed_in += whoami(server, browser) == name
        steps = server.workers[start:]
        outcome.crossings += sum(a != b for a, b in itertools.pairwise(steps))
        browsers.append(browser)
        responses.append(encoded)

    for encoded in responses:
        outcome.replays_accepted += post_to_acs(server, "test", encoded).status_code == 303

    for number in range(UNSOLICITED):
        encoded = respond(idp, server, "unsolicited", None, email("idp", number))
        first, again = requests.Session(), requests.Session()
        outcome.unsolicited_signed_in += finish(
            server, first, post_to_acs(server, "unsolicited", encoded)
        )
        outcome.unsolicited_replays_accepted += finish(
            server, again, post_to_acs(server, "unsolicited", encoded)
        )

    guesser = requests.Session()
    for _ in range(WRONG_PASSWORDS):
        answer = post_form(
            server, guesser, "/accounts/login/", {"username": email("sp", 0), "password": "no"}
        )
        outcome.throttle.append(answer.status_code)

    signed_in = browsers[0]
    if whoami(server, signed_in) is not None:
        kept = dict(signed_in.cookies)
        post_form(server, signed_in, "/accounts/logout/", {})
        for _ in range(6):
            copy = requests.Session()
            copy.cookies.update(kept)
            outcome.kept_cookie_users.append(whoami(server, copy))
    return outcome


def check(server: Server, idp: SigningIdp) -> None:
    outcome = drive(server, idp)
    answered_by = set(server.workers)
    # The numbers, for a run that fails (pytest -s shows them for one that passes).
    print(f"two workers, no CACHES: {outcome} (workers: {sorted(answered_by)})")
    assert len(answered_by) == WORKERS, "one worker answered everything: the run proves nothing"
    assert outcome.crossings > 0, "no sign-in changed worker: the run proves nothing"
    assert outcome.signed_in == SIGN_INS, read_log(server.log)
    assert outcome.replays_accepted == 0
    assert outcome.unsolicited_signed_in == UNSOLICITED
    assert outcome.unsolicited_replays_accepted == 0
    assert outcome.throttle == [401] * LOGIN_ATTEMPTS + [429] * (WRONG_PASSWORDS - LOGIN_ATTEMPTS)
    assert outcome.kept_cookie_users == [None] * 6


def test_two_workers_with_no_cache_settings_share_every_record_on_sqlite(
    sqlite_server: Server, idp: SigningIdp
) -> None:
    check(sqlite_server, idp)


@pytest.mark.postgresql
def test_two_workers_with_no_cache_settings_share_every_record_on_postgresql(
    postgresql_server: Server, idp: SigningIdp
) -> None:
    check(postgresql_server, idp)
