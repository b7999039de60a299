"""Self-signed RSA key pairs for the local SAML identity provider and its tests.

pysaml2 hands keys to ``xmlsec1`` by path, so every pair lives in two PEM files as well
as in memory. File names depend only on ``name``: a second call with the same directory
and name reuses the files instead of minting a new key, so a demo IdP keeps the
certificate that its service providers already trust across restarts.
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

__all__ = ["KeyPair", "make_keypair", "pem_body"]


@dataclass(frozen=True)
class KeyPair:
    key_path: Path
    cert_path: Path
    key_pem: str
    cert_pem: str
    # The certificate's base64 DER without the PEM armour: what a KeyDescriptor's
    # <ds:X509Certificate> carries in SAML metadata.
    cert_b64: str


def pem_body(pem: str) -> str:
    """The base64 text between the BEGIN/END lines of a single-object PEM, on one line."""
    lines = [line.strip() for line in pem.strip().splitlines()]
    return "".join(line for line in lines if line and not line.startswith("-----"))


def make_keypair(
    directory: Path,
    name: str,
    *,
    common_name: str,
    days_valid: int = 365,
    not_before_offset_days: int = 0,
) -> KeyPair:
    """Return the key pair ``name`` in ``directory``, creating it if either file is missing.

    The certificate is valid from now + ``not_before_offset_days`` for ``days_valid`` days,
    so tests can make one that has expired (negative offset, short validity) or is not
    valid yet (positive offset). Existing files are reused as they are: their validity
    window and common name are whatever they were created with.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    key_path = directory / f"{name}.key.pem"
    cert_path = directory / f"{name}.crt.pem"

    if key_path.is_file() and cert_path.is_file():
        key_pem = key_path.read_text(encoding="ascii")
        cert_pem = cert_path.read_text(encoding="ascii")
    else:
        key_pem, cert_pem = _generate(common_name, days_valid, not_before_offset_days)
        _write_private(key_path, key_pem)
        cert_path.write_text(cert_pem, encoding="ascii")

    return KeyPair(
        key_path=key_path,
        cert_path=cert_path,
        key_pem=key_pem,
        cert_pem=cert_pem,
        cert_b64=pem_body(cert_pem),
    )


def _generate(common_name: str, days_valid: int, not_before_offset_days: int) -> tuple[str, str]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    not_before = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
        days=not_before_offset_days
    )
    # A minute of back-dating keeps a fresh certificate valid for a verifier whose clock
    # runs slightly behind this one.
    not_before -= datetime.timedelta(minutes=1)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(not_before)
        .not_valid_after(not_before + datetime.timedelta(days=days_valid))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        encoding=serialization.Encoding.PEM,
        format=serialization.PrivateFormat.PKCS8,
        encryption_algorithm=serialization.NoEncryption(),
    ).decode("ascii")
    cert_pem = cert.public_bytes(serialization.Encoding.PEM).decode("ascii")
    return key_pem, cert_pem


def _write_private(path: Path, text: str) -> None:
    # Created 0600 from the start rather than chmod-ed after: no window in which the
    # private key is readable by others.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
