"""Run the local OpenID Connect provider on 127.0.0.1.

    python -m testproject.local_idp --port 8001 --data-dir .local-idp \\
        --redirect-uri http://127.0.0.1:8000/auth/local/callback

Creates the data directory's keys on first use, migrates its SQLite database, seeds the
demo accounts and the clients (idempotent), then serves until interrupted and prints
``local-idp ready http://127.0.0.1:PORT`` once it listens (``--port 0`` picks a free port,
and that line names it). Every option also reads an environment variable, for scripts.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from testproject.local_idp import DATA_DIR_ENV, PKCE_OPTIONAL_ENV, RSA_KEY_FILE, SECRET_KEY_FILE

HOST = "127.0.0.1"
DEFAULT_CLIENT_ID = "appframework-demo"
DEFAULT_CLIENT_SECRET = "demo-secret"  # published: the demo prints it


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    env = os.environ
    parser = argparse.ArgumentParser(
        prog="python -m testproject.local_idp",
        description="A local OpenID Connect provider for appframework's tests and demo.",
    )
    parser.add_argument(
        "--port",
        type=int,
        default=int(env.get("LOCAL_IDP_PORT", "8001")),
        help="port on 127.0.0.1; 0 picks a free one (env LOCAL_IDP_PORT, default 8001)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(env[DATA_DIR_ENV]) if env.get(DATA_DIR_ENV) else None,
        help=f"where the database and keys live (env {DATA_DIR_ENV})",
    )
    parser.add_argument(
        "--redirect-uri",
        dest="redirect_uris",
        action="append",
        default=None,
        help="a redirect URI of the client; repeat for more "
        "(env LOCAL_IDP_REDIRECT_URIS, space-separated)",
    )
    parser.add_argument(
        "--client-id",
        default=env.get("LOCAL_IDP_CLIENT_ID", DEFAULT_CLIENT_ID),
        help=f"(env LOCAL_IDP_CLIENT_ID, default {DEFAULT_CLIENT_ID})",
    )
    parser.add_argument(
        "--client-secret",
        default=env.get("LOCAL_IDP_CLIENT_SECRET", DEFAULT_CLIENT_SECRET),
        help=f"(env LOCAL_IDP_CLIENT_SECRET, default {DEFAULT_CLIENT_SECRET})",
    )
    parser.add_argument(
        "--post-only-client",
        dest="post_only_clients",
        action="append",
        default=None,
        metavar="CLIENT_ID=SECRET",
        help="another client, with the same redirect URIs, whose token requests must send "
        "the secret as form fields (client_secret_post): a Basic header is refused; "
        "repeat for more (env LOCAL_IDP_POST_ONLY_CLIENTS, space-separated)",
    )
    parser.add_argument(
        "--saml-sp",
        dest="saml_sps",
        action="append",
        default=None,
        help="ENTITY_ID=ACS_URL of a SAML service provider; repeat for more "
        "(env LOCAL_IDP_SAML_SPS, space-separated)",
    )
    parser.add_argument(
        "--pkce-optional",
        action="store_true",
        default=env.get(PKCE_OPTIONAL_ENV) == "1",
        help="accept authorization requests without a PKCE code_challenge (by default "
        f"every one needs it; env {PKCE_OPTIONAL_ENV}=1)",
    )
    args = parser.parse_args(argv)
    if args.saml_sps is None:
        args.saml_sps = env.get("LOCAL_IDP_SAML_SPS", "").split()
    if args.post_only_clients is None:
        args.post_only_clients = env.get("LOCAL_IDP_POST_ONLY_CLIENTS", "").split()
    post_only = [value.partition("=") for value in args.post_only_clients]
    if any(not client_id or not sep or not secret for client_id, sep, secret in post_only):
        parser.error("--post-only-client takes CLIENT_ID=SECRET")
    args.post_only_clients = [(client_id, secret) for client_id, _, secret in post_only]
    if args.data_dir is None:
        parser.error(f"--data-dir (or {DATA_DIR_ENV}) is required")
    if args.redirect_uris is None:
        args.redirect_uris = env.get("LOCAL_IDP_REDIRECT_URIS", "").split()
    if not args.redirect_uris:
        parser.error("at least one --redirect-uri (or LOCAL_IDP_REDIRECT_URIS) is required")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port {args.port} is not a port number")
    return args


def _create_once(path: Path, content: bytes) -> None:
    """Write ``path`` (mode 0600) unless it exists. Atomic: a crash leaves no half file,
    and of two processes starting together the first one's content wins."""
    if path.exists():
        return
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
        with contextlib.suppress(FileExistsError):
            os.link(tmp, path)
    finally:
        os.unlink(tmp)


def prepare_data_dir(data_dir: Path) -> None:
    """The Django secret key and the ID-token signing key, generated once per directory:
    the same key across restarts keeps a relying party's cached JWKS valid."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from django.core.management.utils import get_random_secret_key

    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    _create_once(data_dir / SECRET_KEY_FILE, get_random_secret_key().encode("ascii") + b"\n")
    if not (data_dir / RSA_KEY_FILE).exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(
            encoding=serialization.Encoding.PEM,
            format=serialization.PrivateFormat.PKCS8,
            encryption_algorithm=serialization.NoEncryption(),
        )
        _create_once(data_dir / RSA_KEY_FILE, pem)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # `kill PID` (the demo's trap, the tests' terminate()) then closes the socket the
    # same way Ctrl-C does.
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    data_dir = args.data_dir.resolve()
    prepare_data_dir(data_dir)
    # The SAML signing pair now, so the service provider can read the certificate
    # (saml-idp.crt.pem) as soon as the ready line is printed.
    from testproject.local_idp.keys import make_keypair

    make_keypair(data_dir, "saml-idp", common_name="appframework local IdP")

    # Assigned, not setdefault: importing `testproject` (the demo's package) already set
    # the demo's settings module as a default.
    os.environ["DJANGO_SETTINGS_MODULE"] = "testproject.local_idp.settings"
    os.environ[DATA_DIR_ENV] = str(data_dir)
    os.environ["LOCAL_IDP_SAML_SPS"] = " ".join(args.saml_sps)
    os.environ[PKCE_OPTIONAL_ENV] = "1" if args.pkce_optional else "0"

    import django

    django.setup()

    from django.core.management import call_command
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler
    from django.core.wsgi import get_wsgi_application

    from testproject.local_idp.seed import DEMO_ACCOUNTS, PASSWORD, seed

    call_command("migrate", interactive=False, verbosity=0)
    seed(args.redirect_uris, args.client_id, args.client_secret, args.post_only_clients)

    try:
        server = ThreadedWSGIServer((HOST, args.port), WSGIRequestHandler)
    except OSError as exc:
        print(f"local-idp: cannot listen on {HOST}:{args.port}: {exc}", file=sys.stderr)
        return 1
    server.set_app(get_wsgi_application())
    port = server.server_address[1]
    base_url = f"http://{HOST}:{port}"
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    accounts = ", ".join(account.username for account in DEMO_ACCOUNTS)
    pkce = "optional" if args.pkce_optional else "required"
    post_only = "".join(
        f", client {client_id} (client_secret_post only)" for client_id, _ in args.post_only_clients
    )
    print(
        f"local-idp: issuer {base_url}/o, client {args.client_id}{post_only}, redirect URIs "
        f"{' '.join(args.redirect_uris)}, PKCE {pkce}; accounts {accounts} "
        f"(password {PASSWORD!r})",
        file=sys.stderr,
        flush=True,
    )
    # The line the test helper and scripts/demo wait for: printed only once the socket
    # is bound and listening, so a request sent after it cannot be refused.
    print(f"local-idp ready {base_url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
