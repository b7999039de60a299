"""The suite on several processes: three gunicorn app servers and two Celery workers of the
demo sharing one PostgreSQL database and one Redis (``testproject.cluster``, what
``scripts/cluster`` starts), driven over real HTTP with every flow spread round-robin
over the servers. What spans requests must hold across processes: the login throttle
counts on every server, a logout on one ends the cookie and its tokens on the others,
tenants stay apart under concurrent load (and PostgreSQL's row-level security holds raw
SQL to the tenant), webhooks survive a worker and an app server
killed mid-run, OAuth and SAML sign-ins started on one server complete on another and
cannot be replayed on a third, and Redis going away is a 503 that heals without a
restart.

Marked ``cluster`` and ``postgresql``: ``./scripts/test`` runs them once, in the
PostgreSQL stage (about a minute and a half)."""

from __future__ import annotations

import html
import itertools
import json
import re
import secrets
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urljoin, urlsplit, urlunsplit

import pytest
import requests

from tests.conftest import skip_or_fail_on_ci
from tests.peer_server import PeerServer

pytestmark = [pytest.mark.cluster, pytest.mark.postgresql]

CSRF_COOKIE = "csrf_token"
EDITOR = ("editor@example.com", "editor-password")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    import shutil

    from testproject.cluster import Cluster

    if shutil.which("redis-server") is None:
        skip_or_fail_on_ci("redis-server is not installed (apt-get install redis-server)")
    # A killed worker's job comes back after 20 s, not the deployment's hour.
    with Cluster(servers=3, workers=2, visibility_timeout=20) as running:
        yield running


class Browser:
    """A requests session that goes to whichever server it is given, as a browser
    behind a load balancer would, from one client address."""

    def __init__(self, address: str) -> None:
        self.session = requests.Session()
        self.session.trust_env = False
        self.address = address

    def _headers(self, base: str, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"X-Forwarded-For": self.address, "Origin": base, **(extra or {})}

    def get(self, base: str, path: str, **kwargs: Any) -> requests.Response:
        headers = self._headers(base, kwargs.pop("headers", None))
        return self.session.get(base + path, headers=headers, timeout=20, **kwargs)

    def post(self, base: str, path: str, data: dict[str, str], **kwargs: Any) -> requests.Response:
        page = self.get(base, "/login")  # a fresh CSRF cookie and form token
        token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', page.text)
        assert token, page.text[:300]
        headers = self._headers(base, kwargs.pop("headers", None))
        headers["Referer"] = base + path
        return self.session.post(
            base + path,
            data={"_token": token.group(1), **data},
            headers=headers,
            timeout=20,
            allow_redirects=False,
            **kwargs,
        )

    def login(self, base: str, email: str, password: str) -> requests.Response:
        return self.post(base, "/login", {"email": email, "password": password})


def _round_robin(cluster: Any) -> Iterator[str]:
    return itertools.cycle(cluster.urls)


def test_every_server_answers_and_shares_the_seeded_database(cluster: Any) -> None:
    for base in cluster.urls:
        response = requests.get(base + "/posts", timeout=10)
        assert response.status_code == 200
        assert response.json()["posts"], base


def test_the_login_throttle_counts_attempts_made_on_every_server(cluster: Any) -> None:
    """Five wrong passwords per (account, address) in five minutes, spread over three
    servers: the sixth attempt is 429 wherever it lands, the right password included."""
    browser = Browser("198.51.100.7")
    servers = _round_robin(cluster)
    statuses = [
        browser.login(next(servers), "reader@example.com", "wrong-password").status_code
        for _ in range(5)
    ]
    assert 429 not in statuses, statuses
    for _ in range(3):
        assert browser.login(next(servers), "reader@example.com", "wrong").status_code == 429
    assert browser.login(next(servers), "reader@example.com", "reader-password").status_code == 429
    # Another client address is counted apart: its right password works.
    assert (
        Browser("198.51.100.8")
        .login(next(servers), *("reader@example.com", "reader-password"))
        .status_code
        == 302
    )


def test_logout_on_one_server_ends_the_cookie_and_its_tokens_on_the_others(cluster: Any) -> None:
    a, b, c = cluster.urls
    browser = Browser("198.51.100.20")
    assert browser.login(a, *EDITOR).status_code == 302
    token = browser.post(a, "/token", {}).json()["token"]
    bearer = {"Authorization": f"Bearer {token}"}
    assert browser.get(b, "/account/mfa").status_code == 200  # the session, on B
    assert requests.get(c + "/api/me", headers=bearer, timeout=10).status_code == 200
    kept = dict(browser.session.cookies)

    assert browser.post(a, "/logout", {}).status_code in (302, 303)

    replay = requests.Session()
    replay.cookies.update(kept)  # a copy of the cookie kept from before the logout
    answer = replay.get(b + "/account/mfa", headers={"Accept": "application/json"}, timeout=10)
    assert answer.status_code == 401, answer.text[:200]
    assert requests.get(c + "/api/me", headers=bearer, timeout=10).status_code == 401


def test_tenants_stay_apart_under_concurrent_requests_on_every_server(cluster: Any) -> None:
    """10,000 GET /posts from four threads, alternating X-Tenant 1 and 2 for a member of
    both, round-robin over the servers: every row answered belongs to the tenant asked."""
    browser = Browser("198.51.100.30")
    assert browser.login(cluster.urls[0], *EDITOR).status_code == 302
    token = browser.post(cluster.urls[0], "/token", {}).json()["token"]
    total, threads = 10_000, 4
    foreign = Counter[str]()
    answered = Counter[int]()
    lock = threading.Lock()

    def run(worker: int) -> None:
        session = requests.Session()
        session.trust_env = False
        bases = itertools.cycle(cluster.urls[worker % 3 :] + cluster.urls[: worker % 3])
        for n in range(total // threads):
            tenant = 1 + (n + worker) % 2
            response = session.get(
                next(bases) + "/posts",
                headers={"Authorization": f"Bearer {token}", "X-Tenant": str(tenant)},
                timeout=20,
            )
            rows = response.json()["posts"] if response.status_code == 200 else []
            with lock:
                answered[response.status_code] += 1
                foreign["rows"] += len(rows)
                foreign["foreign"] += sum(1 for row in rows if row["tenant_id"] != tenant)

    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(run, range(threads)))
    assert answered == {200: total}, answered
    assert foreign["rows"] > total  # every answer listed rows
    assert foreign["foreign"] == 0


def test_row_level_security_holds_raw_sql_to_the_tenant_on_every_server(cluster: Any) -> None:
    """The processes connect as an ordinary role that owns the tables; blog_post has the
    demo's forced policy. Connected as that role with no tenant set, raw SQL sees no
    post; each server's /tenant page, whose raw SQL bypasses the scoped manager, counts
    only the public tenant's posts; and the database checks find nothing to warn about."""
    role = "SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user"
    assert cluster.sql(role) == [(False,)]
    by_tenant = dict(
        cluster.sql("SELECT tenant_id, count(*) FROM blog_post GROUP BY tenant_id", as_admin=True)
    )
    assert set(by_tenant) >= {1, 2}, by_tenant
    assert cluster.sql("SELECT count(*) FROM blog_post") == [(0,)]
    assert cluster.sql(
        "SELECT set_config('app.tenant_id', '2', false)", "SELECT count(*) FROM blog_post"
    ) == [(by_tenant[2],)]
    for base in cluster.urls:
        page = Browser("198.51.100.31").get(base, "/tenant")
        assert page.status_code == 200, page.text[:300]
        assert f'<strong id="raw-count">{by_tenant[1]}</strong>' in page.text, base
        assert "Row-level security is on" in page.text
    # The database checks only (W003, W004), any warning a failure: manage() raises.
    checked = cluster.manage(
        "check", "--database", "default", "--tag", "database", "--fail-level", "WARNING"
    )
    assert "System check identified no issues" in checked, checked


class _Receiver:
    """Records the webhook deliveries it gets, complete requests only: (endpoint path,
    X-Webhook-Id, body). A request cut off mid-body (a SIGKILLed worker resets its
    connection) was never delivered; its worker's batch comes back and sends it again."""

    def __init__(self, first_answer: tuple[float, int] | None = None) -> None:
        self.hits: list[tuple[str, str, bytes]] = []
        self.lock = threading.Lock()
        #: (seconds, status) of the answer to each delivery's first attempt; None: 200.
        self.first_answer = first_answer
        #: X-Webhook-Id of every delivery answered 200.
        self.accepted: set[str] = set()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)  # short when the sender was killed
                delivery_id = self.headers["X-Webhook-Id"]
                if len(body) != length or not delivery_id:
                    self.close_connection = True
                    return
                with receiver.lock:
                    first = all(hit[1] != delivery_id for hit in receiver.hits)
                    receiver.hits.append((self.path, delivery_id, body))
                if first and receiver.first_answer is not None:
                    delay, status = receiver.first_answer
                    time.sleep(delay)
                    self.send_response(status)
                else:
                    with receiver.lock:
                        receiver.accepted.add(delivery_id)
                    self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = PeerServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def delivered(self) -> set[tuple[str, int]]:
        """(endpoint, user id) of every delivery received."""
        with self.lock:
            return {(path, int(json.loads(body)["data"]["user_id"])) for path, _, body in self.hits}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _only_endpoints(cluster: Any, base_url: str, count: int) -> None:
    """user.registered goes to ``count`` endpoints ``base_url/0``, ``/1``... and nowhere
    else (the demo's own endpoint is switched off)."""
    cluster.manage(
        "shell",
        "-c",
        "from appframework_webhooks.models import WebhookEndpoint as E;"
        "E.objects.filter(event='user.registered').update(active=False);"
        f"E.objects.bulk_create(E(url='{base_url}/%d' % i, event='user.registered',"
        f" secret='s') for i in range({count}))",
    )


def test_webhooks_survive_a_killed_worker_and_a_killed_app_server(cluster: Any) -> None:
    """2,000 deliveries (20 sign-ups x 100 endpoints, first attempts in batches) while
    one Celery worker is SIGKILLed and restarted and one app server is SIGKILLed: every
    delivery arrives (a batch the killed worker was sending comes back once the broker's
    visibility timeout has passed), repeats are counted and bounded by the batches in
    flight."""
    receiver = _Receiver()
    try:
        _only_endpoints(cluster, f"{receiver.url}/e", 100)
        signups = 20
        bases = _round_robin(cluster)
        created: list[str] = []
        for n in range(signups):
            if n == 6:
                cluster.kill_worker(0)
            if n == 10:
                cluster.kill_server(2)
            if n == 12:
                cluster.start_worker(0)
            email = f"cluster-{n}@example.com"
            for _ in range(3):  # a killed server: the balancer sends the retry elsewhere
                base = next(bases)
                try:
                    response = Browser(f"203.0.113.{n}").post(
                        base, "/signup", {"email": email, "password": "a-cluster-passphrase"}
                    )
                except requests.ConnectionError:
                    continue
                assert response.status_code == 302, response.text[:300]
                created.append(email)
                break
        assert len(created) == signups
        expected = signups * 100
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            distinct = receiver.delivered()
            if len(distinct) >= expected:
                break
            time.sleep(0.5)
        with receiver.lock:
            hits = list(receiver.hits)
        distinct_ids = {delivery_id for _, delivery_id, _ in hits}
        assert len(distinct) == expected, f"lost {expected - len(distinct)} of {expected}"
        assert len(distinct_ids) == expected
        repeats = len(hits) - len(distinct_ids)
        # At most the batches in flight when the worker died (2 processes x 100) again.
        assert repeats <= 200, repeats
        print(f"cluster webhooks: {expected} delivered, {repeats} repeats")
    finally:
        receiver.close()
        if not cluster.app_servers[2].alive:
            cluster.restart_server(2)


def test_redis_away_is_a_503_and_the_cluster_heals_without_a_restart(cluster: Any) -> None:
    browser = Browser("198.51.100.40")
    base = cluster.urls[0]
    assert browser.login(base, *EDITOR).status_code == 302
    json_accept = {"Accept": "application/json"}
    assert browser.get(base, "/account/mfa").status_code == 200

    stranger = Browser("198.51.100.41")  # its CSRF token from before the outage
    token = re.search(r'name="(?:_token|csrfmiddlewaretoken)" value="([^"]+)"', stranger.get(base, "/login").text)
    assert token

    cluster.stop_redis()
    try:
        for server in cluster.urls:
            response = browser.get(server, "/account/mfa", headers=json_accept)
            assert response.status_code == 503, response.text[:300]
            assert response.headers["Content-Type"].startswith("application/problem+json")
            assert response.json()["code"] == "service_unavailable"
            assert response.headers["Retry-After"] == "5"
        # A sign-in while the throttle cannot count is refused, not let through.
        refused = stranger.session.post(
            base + "/login",
            data={"_token": token.group(1), "email": EDITOR[0], "password": EDITOR[1]},
            headers={
                "X-Forwarded-For": stranger.address,
                "Origin": base,
                "Accept": "application/json",
            },
            allow_redirects=False,
            timeout=20,
        )
        assert refused.status_code == 503, refused.text[:300]
        assert not refused.cookies.get("sessionid")
    finally:
        cluster.start_redis()

    # Back without restarting anything: the same session works on every server.
    for server in cluster.urls:
        response = browser.get(server, "/account/mfa")
        assert response.status_code == 200, response.text[:300]


def test_retries_queued_while_redis_is_away_are_delivered_once_it_is_back(
    cluster: Any,
) -> None:
    """Two sign-ups to 12 endpoints (a batch each). Every first attempt is answered 503
    after 3 s, and Redis, the broker, is stopped in those 3 s for 6 s: the batches queue
    their retries while it is away. The jobs wait for it and, failing that, put their own
    message back; once Redis is back, all 24 deliveries arrive."""
    receiver = _Receiver(first_answer=(3.0, 503))
    try:
        _only_endpoints(cluster, f"{receiver.url}/away", 12)
        for n in range(2):
            response = Browser(f"203.0.113.{100 + n}").post(
                cluster.urls[n],
                "/signup",
                {"email": f"away-{n}@example.com", "password": "a-cluster-passphrase"},
            )
            assert response.status_code == 302, response.text[:300]
        deadline = time.monotonic() + 60
        while len(receiver.hits) < 24 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(receiver.hits) == 24  # the first attempts, each answered 3 s later
        first_attempts = {delivery_id for _, delivery_id, _ in receiver.hits}
        cluster.stop_redis()
        try:
            time.sleep(6)
        finally:
            cluster.start_redis()
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and len(receiver.accepted) < 24:
            time.sleep(0.5)
        workers = "\n".join(
            f"{w.name} alive={w.alive}:\n{w.tail(40)}" for w in cluster.celery_workers
        )
        assert receiver.accepted == first_attempts, workers
    finally:
        receiver.close()


def _on(url: str, base: str) -> str:
    """``url`` (naming the first server, as a load balancer's address) sent to ``base``."""
    parts = urlsplit(url)
    return urlunsplit(urlsplit(base)[:2] + parts[2:])


def test_an_oauth_sign_in_started_on_one_server_completes_on_another_and_its_state_is_spent_everywhere(
    cluster: Any,
) -> None:
    from tests.oauth.peer import ProviderBrowser

    a, b, c = cluster.urls
    browser = Browser("198.51.100.50")
    start = browser.get(a, "/auth/local/redirect", allow_redirects=False)
    assert start.status_code == 302, start.text[:300]
    provider = ProviderBrowser()
    try:
        callback = provider.login_and_authorize(
            start.headers["Location"], "alice", "password", f"{a}/auth/local/callback"
        )
    finally:
        provider.close()

    done = browser.get(b, _on(callback, b)[len(b) :], allow_redirects=False)
    assert done.status_code == 302, done.text[:300]
    assert browser.get(c, "/account/mfa").status_code == 200  # signed in, on C too

    replayed = browser.get(c, _on(callback, c)[len(c) :], allow_redirects=False)
    assert replayed.status_code == 403, replayed.text[:300]


def test_a_saml_sign_in_started_on_one_server_completes_on_another_and_is_refused_when_replayed(
    cluster: Any,
) -> None:
    from tests.oauth.peer import ProviderBrowser

    a, b, c = cluster.urls
    browser = Browser("198.51.100.60")
    start = browser.get(a, "/saml/local/login", allow_redirects=False)
    assert start.status_code == 302, start.text[:300]
    idp = ProviderBrowser()
    try:
        page = idp.session.get(start.headers["Location"], timeout=30)
        login = re.search(r'<form[^>]*action="([^"]*)"', page.text)
        fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page.text))
        if "SAMLResponse" not in fields:  # the IdP's login form first
            assert login, page.text[:300]
            # Not alice: the OAuth test linked her address, which this IdP is not trusted
            # to assert (trust_email off), so her SAML sign-in is refused by design.
            fields.update(username="noemail", password="password")
            page = idp.session.post(urljoin(page.url, login.group(1)), data=fields, timeout=30)
            fields = dict(re.findall(r'name="([^"]+)" value="([^"]*)"', page.text))
    finally:
        idp.close()
    assert "SAMLResponse" in fields, page.text[:500]
    posted = {k: html.unescape(v) for k, v in fields.items() if k in ("SAMLResponse", "RelayState")}

    headers = {"X-Forwarded-For": browser.address, "Origin": cluster.idp_url}
    done = browser.session.post(
        f"{b}/saml/local/acs", data=posted, headers=headers, allow_redirects=False, timeout=30
    )
    if done.status_code == 303 and "resume=" in done.headers.get("Location", ""):
        # The ACS reads the browser's cookies on a same-site GET after the IdP's POST.
        done = browser.get(b, done.headers["Location"], allow_redirects=False)
    assert done.status_code in (302, 303), done.text[:300]
    assert browser.get(c, "/account/mfa").status_code == 200

    replayed = browser.session.post(
        f"{c}/saml/local/acs", data=posted, headers=headers, allow_redirects=False, timeout=30
    )
    assert replayed.status_code == 403, replayed.text[:300]


def test_the_totp_challenge_limit_counts_codes_tried_on_every_server(cluster: Any) -> None:
    """A user with TOTP on signs in with the password on one server; wrong codes tried on
    the three servers in turn hit the challenge's limit (five a minute) together: the
    sixth answer is 429 wherever it lands, the right code included."""
    import pyotp

    a, b, c = cluster.urls
    # A fresh address each run: the demo's file mailbox outlives the cluster's database.
    email = f"cluster-totp-{secrets.token_hex(4)}@example.com"
    owner = Browser("198.51.100.70")
    assert (
        owner.post(a, "/signup", {"email": email, "password": "a-cluster-passphrase"}).status_code
        == 302
    )
    # The demo asks for the address first: its confirmation link is on /mailbox.
    mails = owner.get(b, "/mailbox").text.split("<article")
    mail = html.unescape(next(m for m in mails if email in m))
    key = re.search(r"/email/confirm/([^\s\"<]+)", mail)
    assert key, mail[:500]
    confirmed = owner.post(c, f"/email/confirm/{key.group(1)}", {})
    assert confirmed.status_code == 302, confirmed.text[:300]

    page = owner.get(a, "/account/mfa/totp/on")  # the page shows the pending secret
    secret = re.search(r"<code>([A-Z2-7]{16,})</code>", page.text)
    assert secret, page.text[-800:]
    totp = pyotp.TOTP(secret.group(1))
    turned_on = owner.post(b, "/account/mfa/totp/on", {"code": totp.now()})
    assert turned_on.status_code in (200, 302), turned_on.text[:300]

    signer = Browser("198.51.100.71")
    challenged = signer.post(a, "/login", {"email": email, "password": "a-cluster-passphrase"})
    assert challenged.status_code == 302
    assert "/login/mfa" in challenged.headers["Location"]
    wrong = f"{(int(totp.now()) + 1) % 1_000_000:06d}"
    servers = itertools.cycle([a, b, c])
    statuses = [
        signer.post(next(servers), "/login/mfa", {"code": wrong}).status_code for _ in range(5)
    ]
    assert 429 not in statuses, statuses
    assert signer.post(next(servers), "/login/mfa", {"code": wrong}).status_code == 429
    assert signer.post(next(servers), "/login/mfa", {"code": totp.now()}).status_code == 429
