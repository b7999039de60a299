"""A software authenticator: an EC P-256 key and the bytes a real one sends.

``create(options)`` answers registration options with a "none" attestation;
``get(options)`` answers authentication options with a signed assertion. Every field a
refusal test needs to get wrong (origin, RP id, user verification, counter, challenge,
user handle) can be overridden per call.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from typing import Any

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

ORIGIN = "http://testserver"
UP, UV, BE, BS, AT = 0x01, 0x04, 0x08, 0x10, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SoftAuthenticator:
    def __init__(self, *, origin: str = ORIGIN, aaguid: bytes = b"\x00" * 16) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(32)
        self.origin = origin
        self.aaguid = aaguid
        self.sign_count = 0
        self.rp_id: str | None = None
        self.user_handle: bytes | None = None

    @property
    def id(self) -> str:
        return b64url(self.credential_id)

    def cose_key(self) -> bytes:
        numbers = self.key.public_key().public_numbers()
        return cbor2.dumps(
            {
                1: 2,
                3: -7,
                -1: 1,
                -2: numbers.x.to_bytes(32, "big"),
                -3: numbers.y.to_bytes(32, "big"),
            }
        )

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps(
            {
                "type": kind,
                "challenge": challenge,
                "origin": origin or self.origin,
                "crossOrigin": False,
            }
        ).encode()

    def create(
        self,
        options: dict[str, Any],
        *,
        origin: str | None = None,
        rp_id: str | None = None,
        uv: bool = True,
        challenge: str | None = None,
    ) -> str:
        options = options.get("publicKey", options)
        self.rp_id = rp_id or options["rp"]["id"]
        self.user_handle = unb64url(options["user"]["id"])
        client_data = self._client_data(
            "webauthn.create", challenge or options["challenge"], origin
        )
        flags = UP | AT | (UV if uv else 0)
        auth_data = (
            hashlib.sha256(self.rp_id.encode()).digest()
            + bytes([flags])
            + self.sign_count.to_bytes(4, "big")
            + self.aaguid
            + len(self.credential_id).to_bytes(2, "big")
            + self.credential_id
            + self.cose_key()
        )
        attestation = cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data})
        return json.dumps(
            {
                "id": self.id,
                "rawId": self.id,
                "type": "public-key",
                "response": {
                    "clientDataJSON": b64url(client_data),
                    "attestationObject": b64url(attestation),
                    "transports": ["internal", "hybrid"],
                },
                "clientExtensionResults": {},
            }
        )

    def get(
        self,
        options: dict[str, Any],
        *,
        origin: str | None = None,
        rp_id: str | None = None,
        uv: bool = True,
        sign_count: int | None = None,
        challenge: str | None = None,
        user_handle: bytes | bool | None = True,
        kind: str = "webauthn.get",
    ) -> str:
        options = options.get("publicKey", options)
        if sign_count is None:
            self.sign_count += 1
            sign_count = self.sign_count
        client_data = self._client_data(kind, challenge or options["challenge"], origin)
        rp = rp_id or options.get("rpId") or self.rp_id
        auth_data = (
            hashlib.sha256(rp.encode()).digest()
            + bytes([UP | (UV if uv else 0)])
            + sign_count.to_bytes(4, "big")
        )
        signature = self.key.sign(
            auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256())
        )
        response: dict[str, Any] = {
            "clientDataJSON": b64url(client_data),
            "authenticatorData": b64url(auth_data),
            "signature": b64url(signature),
        }
        handle = self.user_handle if user_handle is True else user_handle
        if handle:
            response["userHandle"] = b64url(handle)
        return json.dumps(
            {
                "id": self.id,
                "rawId": self.id,
                "type": "public-key",
                "response": response,
                "clientExtensionResults": {},
            }
        )
