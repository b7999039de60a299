"""The JSON API described as an OpenAPI 3.1 document, for both clients.

:func:`openapi_document` builds it from the endpoints the URLconf mounts
(``appframework.headless.urls.ENDPOINTS``) and :data:`OPERATIONS`, a table written by
hand and keyed by each endpoint's URL name: the views take loose JSON into Django forms
and answer plain dicts, so nothing in them says what a client may send or will get. An
endpoint is documented only when the URLconf mounts it, so the table may describe
endpoints a project (or a newer version) has not installed yet.

:class:`OpenAPIView` serves the document (``headless:openapi``, ``openapi.json`` next to
the two clients' prefixes), its server URL built from the request. tests/headless
fuzz a live demo with it (schemathesis): every answer must be one the document gives.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache

from ..auth.forms import username_field
from ..conf import app_settings
from ..http import PROBLEM_JSON
from ..security.cookie import csrf_cookie_name
from ..security.csrf import REASONS as CSRF_REASONS
from .app_sessions import SESSION_TOKEN_HEADER
from .base import APP, BROWSER, CLIENTS

__all__ = [
    "API_VERSION",
    "CONVERTERS",
    "OPENAPI_VERSION",
    "OPERATIONS",
    "PASSKEY_MALFORMED",
    "PASSKEY_REFUSED",
    "SCHEMAS",
    "THROTTLED",
    "OpenAPIView",
    "Operation",
    "openapi_document",
    "openapi_path",
]

OPENAPI_VERSION = "3.1.0"
API_VERSION = "1"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def _object(
    properties: Mapping[str, Any], required: Iterable[str] | None = None, **extra: Any
) -> dict[str, Any]:
    """An object schema; every property required unless ``required`` says otherwise."""
    return {
        "type": "object",
        "properties": dict(properties),
        "required": list(properties if required is None else required),
        **extra,
    }


_STRING = {"type": "string"}
_BOOLEAN = {"type": "boolean"}
_INTEGER = {"type": "integer"}
_DATE_TIME = {"type": "string", "format": "date-time"}
#: A passkey's answer to ``navigator.credentials`` (WebAuthn's PublicKeyCredential JSON).
_CREDENTIAL = {"type": "object", "description": "A WebAuthn PublicKeyCredential, as JSON."}

#: Reusable schemas (``components.schemas``).
SCHEMAS: dict[str, dict[str, Any]] = {
    "Problem": _object(
        {
            "type": _STRING,
            "title": _STRING,
            "status": {"type": "integer", "minimum": 400, "maximum": 599},
            "detail": _STRING,
            "code": {"type": "string", "description": "Stable, machine-readable."},
            "errors": {
                "type": "object",
                "description": "Invalid input: field (or non_field_errors) → its errors.",
                "additionalProperties": {"type": "array", "items": _ref("FieldError")},
            },
        },
        required=["type", "title", "status", "detail"],
        description="An RFC 9457 problem document.",
    ),
    "FieldError": _object({"code": _STRING, "message": _STRING}),
    "Factors": _object(
        {
            "totp": _BOOLEAN,
            "recovery_codes_left": {"type": "integer", "minimum": 0},
            "passkeys": _BOOLEAN,
        }
    ),
    "User": _object(
        {
            "id": _STRING,
            "username": _STRING,
            "email": _nullable(_STRING),
            "email_verified": _BOOLEAN,
            "has_usable_password": _BOOLEAN,
            "factors": _ref("Factors"),
        }
    ),
    "SecondFactor": _object(
        {
            "factors": {
                "type": "array",
                "items": {"enum": ["totp", "recovery_code", "passkey"]},
            },
            "expires_at": _DATE_TIME,
        }
    ),
    "SessionStatus": _object(
        {
            "status": {
                "enum": [
                    "anonymous",
                    "authenticated",
                    "second_factor_required",
                    "verification_required",
                ]
            },
            "user": _nullable(_ref("User")),
            "second_factor": _nullable(_ref("SecondFactor")),
            "recently_authenticated": _BOOLEAN,
            "session_token": {
                **_nullable(_STRING),
                "description": "App client only: the session's token (null: none yet).",
            },
        },
        required=["status", "user", "second_factor", "recently_authenticated"],
        description="The answer of every flow: who is signed in, and what is pending.",
    ),
    "Config": _object(
        {
            "signup": _BOOLEAN,
            "email_verification": {"enum": ["none", "optional", "mandatory"]},
            "email_verification_by_code": _BOOLEAN,
            "login_by_code": _BOOLEAN,
            "login_field": _STRING,
            "totp": _BOOLEAN,
            "passkeys": _BOOLEAN,
            "trust_browser": _BOOLEAN,
            "reauthentication_timeout": _INTEGER,
        }
    ),
    "Sent": _object({"sent": {"const": True}}),
    "Removed": _object({"removed": {"const": True}}),
    "RecoveryCodes": _object({"recovery_codes": {"type": "array", "items": _STRING}}),
    "Passkey": _object(
        {
            "id": _INTEGER,
            "name": _STRING,
            "created_at": _nullable(_DATE_TIME),
            "last_used_at": _nullable(_DATE_TIME),
        }
    ),
    "LinkedAccount": _object(
        {
            "kind": {"enum": ["oauth", "saml"]},
            "id": _INTEGER,
            "provider": _STRING,
            "email": _nullable(_STRING),
            "created_at": _nullable(_DATE_TIME),
            "last_login_at": _nullable(_DATE_TIME),
        }
    ),
    "TrustedBrowser": _object(
        {
            "id": _INTEGER,
            "user_agent": _STRING,
            "created_at": _nullable(_DATE_TIME),
            "last_used_at": _nullable(_DATE_TIME),
            "expires_at": _nullable(_DATE_TIME),
        }
    ),
    "UserSession": _object(
        {
            "id": _INTEGER,
            "kind": {"enum": ["browser", "app"]},
            "created_at": _DATE_TIME,
            "last_seen_at": _DATE_TIME,
            "client_ip": _nullable(_STRING),
            "user_agent": _STRING,
            "current": _BOOLEAN,
        }
    ),
    "Sessions": _object({"sessions": {"type": "array", "items": _ref("UserSession")}}),
    "ApiToken": _object(
        {
            "id": _INTEGER,
            "name": _STRING,
            "prefix": _STRING,
            "scopes": {"type": "array", "items": _STRING},
            "created_at": _DATE_TIME,
            "expires_at": _nullable(_DATE_TIME),
            "last_used_at": _nullable(_DATE_TIME),
        }
    ),
    "ApiTokens": _object({"tokens": {"type": "array", "items": _ref("ApiToken")}}),
}

#: The codes of the errors every operation may meet, added by :func:`openapi_document`.
_NOT_SIGNED_IN = ("not_authenticated",)
_STALE = ("reauthentication_required",)
THROTTLED = (
    "throttled",
    "login_throttled",
    "mfa_rate_limited",
    "mail_rate_limited",
    "passkey_rate_limited",
)
_PASSKEY_ERRORS = (
    "passkey_not_found",
    "passkey_exists",
    "passkey_last_factor",
    "passkey_name_invalid",
    "invalid_action",
)

#: What the passkey ceremony answers a ``credential`` with, wherever one is taken: 400
#: for an answer that is no credential at all, 403 for one the ceremony refuses.
PASSKEY_MALFORMED = ("passkey_malformed",)
PASSKEY_REFUSED = (
    "passkey_invalid",
    "passkey_challenge",
    "passkey_replayed",
    "passkey_unknown",
    "passkey_origin",
    "passkey_rp_id",
    "passkey_user_verification",
    "passkey_sign_count",
    "account_disabled",
)


@dataclass(frozen=True)
class Operation:
    """One method of an endpoint: what it does, takes and answers.

    ``errors``: status → the problem ``code`` values it answers with. ``signed_in``:
    401 without a signed-in user; ``changes``: also 401 ``reauthentication_required``
    on a stale session; ``throttled``: 429 with ``Retry-After``."""

    summary: str
    response: dict[str, Any]
    description: str = ""
    body: dict[str, Any] | None = None
    status: int = 200
    errors: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    signed_in: bool = False
    changes: bool = False
    throttled: bool = False


_STATUS = _ref("SessionStatus")
_CODE = {"type": "string", "minLength": 1, "maxLength": 64}
_PASSWORD = {"type": "string", "minLength": 1}
_EMAIL = {"type": "string", "format": "email", "maxLength": 254}
_NEW_PASSWORD = _object({"new_password1": _PASSWORD, "new_password2": _PASSWORD})


def _login_body() -> dict[str, Any]:
    # Named as the user model's USERNAME_FIELD (config.login_field), known at run time.
    name, _label, kind = username_field()
    login = _EMAIL if kind == "email" else {"type": "string", "minLength": 1, "maxLength": 254}
    return _object({name: login, "password": _PASSWORD})


def _signup_body() -> dict[str, Any]:
    from django.contrib.auth import get_user_model

    name, _label, kind = username_field()
    properties: dict[str, Any] = {"email": _EMAIL, "password": _PASSWORD}
    if kind != "email" and name != get_user_model().get_email_field_name():
        properties = {name: {"type": "string", "minLength": 1, "maxLength": 254}, **properties}
    return _object(properties)


#: Bodies named after the user model's fields, built with the document.
_BODIES = {"login": _login_body, "signup": _signup_body}

#: URL name → method → :class:`Operation`. Endpoints the URLconf does not mount are
#: left out of the document.
OPERATIONS: dict[str, dict[str, Operation]] = {
    "config": {
        "get": Operation("Which flows and factors this site has", _ref("Config")),
    },
    "session": {
        "get": Operation("The session's status", _STATUS),
        "delete": Operation(
            "Log out",
            _STATUS,
            "With `everywhere`: every session, API token and trusted browser of the account.",
            body=_object({"everywhere": _BOOLEAN}, required=[]),
        ),
    },
    "login": {
        "post": Operation(
            "Sign in with the login field and the password",
            _STATUS,
            "Signed in, or the second factor is pending, or the address must be confirmed.",
            errors={401: ("invalid_credentials", "account_disabled")},
            throttled=True,
        ),
    },
    "second-factor": {
        "post": Operation(
            "Answer the pending second factor",
            _STATUS,
            "`code` (TOTP or a recovery code) or `credential` (a passkey); `trust` "
            "(browser, MFA TRUST_BROWSER): skip the step next time.",
            body=_object(
                {"code": _CODE, "credential": _CREDENTIAL, "trust": _BOOLEAN}, required=[]
            ),
            errors={
                401: ("mfa_invalid_code", *_PASSKEY_ERRORS),
                403: ("mfa_not_pending",),
                422: ("required", *_PASSKEY_ERRORS),
            },
            throttled=True,
        ),
    },
    "passkey-options": {
        "post": Operation(
            "Options for navigator.credentials",
            _object({"publicKey": {"type": "object"}}),
            "The challenge is kept in this session.",
            body=_object(
                {"kind": {"enum": ["login", "challenge", "register", "reauthenticate", "confirm"]}}
            ),
            errors={
                401: _NOT_SIGNED_IN,
                403: ("mfa_not_pending",),
                404: ("passkeys_disabled",),
                422: ("invalid_action",),
            },
        ),
    },
    "passkey-login": {
        "post": Operation(
            "Sign in with a passkey (passwordless)",
            _STATUS,
            body=_object({"credential": _CREDENTIAL}),
            errors={
                401: _PASSKEY_ERRORS,
                403: _PASSKEY_ERRORS,
                404: ("passkeys_disabled",),
                422: _PASSKEY_ERRORS,
            },
            throttled=True,
        ),
    },
    "reauthenticate": {
        "post": Operation(
            "Prove a factor again",
            _STATUS,
            "`password`, `code` or `credential`: `recently_authenticated` for "
            "AUTH REAUTHENTICATION_TIMEOUT seconds.",
            body=_object(
                {"password": _PASSWORD, "code": _CODE, "credential": _CREDENTIAL}, required=[]
            ),
            errors={
                422: (
                    "factor_required",
                    "invalid",
                    "reauthentication_failed",
                    "mfa_invalid_code",
                    *_PASSKEY_ERRORS,
                ),
            },
            signed_in=True,
            throttled=True,
        ),
    },
    "signup": {
        "post": Operation(
            "Create an account",
            _STATUS,
            "Signed in, or `verification_required`; a taken address answers like a new one "
            "under mandatory verification.",
            errors={403: ("signup_closed",), 422: ("invalid", "email_taken")},
            throttled=True,
        ),
    },
    "verify-email": {
        "post": Operation(
            "Confirm the address",
            _STATUS,
            "`key` (from the mailed link) or `code` (typed in the session that asked).",
            body=_object({"key": {"type": "string"}, "code": _CODE}, required=[]),
            errors={
                422: (
                    "required",
                    "invalid",
                    "confirmation_invalid",
                    "confirmation_code_invalid",
                    "email_taken",
                ),
            },
            throttled=True,
        ),
    },
    "resend-email": {
        "post": Operation(
            "Mail a new confirmation for the unconfirmed address",
            _STATUS,
            signed_in=True,
            throttled=True,
        ),
    },
    "password-reset": {
        "post": Operation(
            "Mail a password reset link",
            _ref("Sent"),
            "The same answer for an address without an account.",
            body=_object({"email": _EMAIL}),
            errors={422: ("invalid",)},
            throttled=True,
        ),
    },
    "password-reset-confirm": {
        "post": Operation(
            "Set a new password with the reset link's uid and token",
            _STATUS,
            "Every session of the account ends.",
            body=_object(
                {
                    "uid": _STRING,
                    "token": _STRING,
                    "new_password1": _PASSWORD,
                    "new_password2": _PASSWORD,
                }
            ),
            errors={422: ("reset_link_invalid", "invalid")},
        ),
    },
    "login-code-request": {
        "post": Operation(
            "Mail a sign-in code",
            _ref("Sent"),
            "AUTH LOGIN_BY_CODE. The same answer for an address without an account.",
            body=_object({"email": _EMAIL}),
            errors={404: ("login_by_code_disabled",), 422: ("invalid",)},
            throttled=True,
        ),
    },
    "login-code-confirm": {
        "post": Operation(
            "Sign in with the mailed code",
            _STATUS,
            "Signed in, or on to the second factor; three tries.",
            body=_object({"code": _CODE}),
            errors={
                401: ("login_code_invalid",),
                404: ("login_by_code_disabled",),
                422: ("invalid",),
            },
            throttled=True,
        ),
    },
    "provider-token": {
        "post": Operation(
            "Exchange a single sign-on code for a session",
            _STATUS,
            "The one-use code from the provider's redirect and the PKCE `code_verifier`; "
            "any try spends the code.",
            body=_object({"code": _STRING, "code_verifier": _STRING}),
            errors={400: ("invalid_grant",), 401: ("account_disabled",)},
        ),
    },
    "account": {
        "get": Operation("The signed-in user", _object({"user": _ref("User")}), signed_in=True),
    },
    "email": {
        "post": Operation(
            "Change the address",
            _ref("Sent"),
            "A confirmation goes to the new address; the same answer for a taken one.",
            body=_object({"email": _EMAIL}),
            errors={422: ("invalid", "email_unchanged", "email_taken")},
            changes=True,
            throttled=True,
        ),
    },
    "password": {
        "post": Operation(
            "Change the password",
            _STATUS,
            "Every other session and token ends.",
            body=_NEW_PASSWORD,
            errors={422: ("invalid",)},
            changes=True,
        ),
    },
    "totp": {
        "get": Operation("Whether TOTP is on", _object({"enabled": _BOOLEAN}), signed_in=True),
        "post": Operation(
            "Turn TOTP on",
            {
                "oneOf": [
                    _object({"secret": _STRING, "otpauth_uri": _STRING}),
                    _ref("RecoveryCodes"),
                ]
            },
            "Without `code`: the pending secret and its otpauth URI; with `code`: TOTP on, "
            "and the recovery codes, shown this once.",
            body=_object({"code": _CODE}, required=[]),
            errors={
                401: ("mfa_invalid_code",),
                422: ("invalid", "mfa_already_enabled", "mfa_not_pending", "mfa_invalid_code"),
            },
            changes=True,
            throttled=True,
        ),
        "delete": Operation(
            "Turn TOTP off",
            _object({"enabled": {"const": False}}),
            "`code`: a current code or a recovery code.",
            body=_object({"code": _CODE}),
            errors={
                401: ("mfa_invalid_code",),
                422: ("invalid", "mfa_not_enabled", "mfa_invalid_code"),
            },
            changes=True,
            throttled=True,
        ),
    },
    "recovery-codes": {
        "get": Operation(
            "How many recovery codes are left",
            _object({"left": {"type": "integer", "minimum": 0}}),
            signed_in=True,
        ),
        "post": Operation(
            "Ten new recovery codes",
            _ref("RecoveryCodes"),
            "Shown this once; the old ones stop working. `code`: a current one.",
            body=_object({"code": _CODE}),
            errors={
                401: ("mfa_invalid_code",),
                422: ("invalid", "mfa_not_enabled", "mfa_invalid_code"),
            },
            changes=True,
            throttled=True,
        ),
    },
    "passkeys": {
        "get": Operation(
            "The passkeys",
            _object({"passkeys": {"type": "array", "items": _ref("Passkey")}}),
            errors={404: ("passkeys_disabled",)},
            signed_in=True,
        ),
        "post": Operation(
            "Add a passkey",
            _object({"passkey": _ref("Passkey")}),
            "`credential`: the answer to `register` options.",
            body=_object({"credential": _CREDENTIAL, "name": _STRING}, required=["credential"]),
            errors={404: ("passkeys_disabled",), 422: _PASSKEY_ERRORS},
            changes=True,
            throttled=True,
        ),
    },
    "passkey": {
        "patch": Operation(
            "Rename a passkey",
            _object({"passkey": _ref("Passkey")}),
            body=_object({"name": _STRING}),
            errors={404: ("passkeys_disabled", "passkey_not_found"), 422: _PASSKEY_ERRORS},
            signed_in=True,
        ),
        "delete": Operation(
            "Remove a passkey",
            _ref("Removed"),
            "`credential` (an answer to `confirm` options) when it is the last second factor.",
            body=_object({"credential": _CREDENTIAL}, required=[]),
            errors={
                404: ("passkeys_disabled", "passkey_not_found"),
                422: _PASSKEY_ERRORS,
                403: _PASSKEY_ERRORS,
            },
            changes=True,
            throttled=True,
        ),
    },
    "linked-accounts": {
        "get": Operation(
            "The linked OAuth and SAML identities",
            _object({"linked_accounts": {"type": "array", "items": _ref("LinkedAccount")}}),
            signed_in=True,
        ),
    },
    "linked-account": {
        "delete": Operation(
            "Unlink an identity",
            _ref("Removed"),
            "Refused for the account's last way in.",
            errors={404: ("identity_not_found", "not_found"), 422: ("identity_last_way_in",)},
            changes=True,
        ),
    },
    "trusted-browsers": {
        "get": Operation(
            "The browsers that skip the second factor",
            _object({"trusted_browsers": {"type": "array", "items": _ref("TrustedBrowser")}}),
            signed_in=True,
        ),
    },
    "trusted-browser": {
        "delete": Operation(
            "Forget a trusted browser",
            _ref("Removed"),
            "It asks for the second factor again.",
            errors={404: ("not_found",)},
            signed_in=True,
        ),
    },
    "sessions": {
        "get": Operation(
            "The account's sessions (browsers and apps)", _ref("Sessions"), signed_in=True
        ),
    },
    "user-session": {
        "delete": Operation(
            "End one of the account's sessions",
            _ref("Sessions"),
            "Not the current one: that is `DELETE session`.",
            errors={404: ("not_found",), 409: ("current_session",)},
            signed_in=True,
        ),
    },
    "end-other-sessions": {
        "post": Operation(
            "End every session of the account but this one", _ref("Sessions"), signed_in=True
        ),
    },
    "tokens": {
        "get": Operation("The account's API tokens", _ref("ApiTokens"), signed_in=True),
        "post": Operation(
            "Issue an API token",
            _object({"token": _ref("ApiToken"), "secret": _STRING}),
            "The secret is shown this once.",
            body=_object(
                {
                    "name": {"type": "string", "minLength": 1, "maxLength": 100},
                    "expires_in_days": _nullable({"type": "integer", "minimum": 1, "maximum": 365}),
                    "scopes": {"type": "array", "items": _STRING},
                },
                required=["name"],
            ),
            status=201,
            errors={422: ("invalid",)},
            changes=True,
        ),
    },
    "token": {
        "delete": Operation(
            "Revoke an API token",
            _ref("ApiTokens"),
            errors={404: ("not_found",)},
            changes=True,
        ),
    },
}

#: Path converters → parameter schemas (Django's built-in ones).
CONVERTERS: dict[str, dict[str, Any]] = {
    "int": {"type": "integer", "minimum": 0},
    "str": {"type": "string", "pattern": "^[^/]+$", "minLength": 1},
    "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$", "minLength": 1},
    "uuid": {"type": "string", "format": "uuid"},
    "path": {"type": "string", "minLength": 1},
}
_PARAM = re.compile(r"<(?:(?P<converter>[^>:]+):)?(?P<name>[^>]+)>")


def openapi_path(route: str) -> tuple[str, list[dict[str, Any]]]:
    """A Django route as an OpenAPI path (``<int:pk>`` → ``{pk}``) and its parameters."""
    parameters = [
        {
            "name": match["name"],
            "in": "path",
            "required": True,
            "schema": dict(CONVERTERS.get(match["converter"] or "str", CONVERTERS["str"])),
        }
        for match in _PARAM.finditer(route)
    ]
    return _PARAM.sub(lambda m: "{" + m["name"] + "}", route), parameters


def _problem(description: str, codes: Iterable[str]) -> dict[str, Any]:
    codes = sorted(set(codes))
    text = description + (": " + ", ".join(f"`{c}`" for c in codes) if codes else "")
    return {
        "description": text,
        "content": {PROBLEM_JSON: {"schema": _ref("Problem")}},
        "x-codes": codes,
    }


_DESCRIPTIONS = {
    400: "Bad request",
    401: "Not signed in, or the proof is wrong",
    403: "Forbidden",
    404: "Not found, or not enabled here",
    409: "Conflict",
    413: "The body is too large",
    422: "Invalid input (field errors under `errors`)",
    429: "Too many tries: wait `Retry-After` seconds",
}


def _operation(
    client: str, name: str, method: str, operation: Operation, parameters: list[dict[str, Any]]
) -> dict[str, Any]:
    unsafe = method != "get"
    errors: dict[int, set[str]] = {status: set(codes) for status, codes in operation.errors.items()}

    def add(status: int, *codes: str) -> None:
        errors.setdefault(status, set()).update(codes)

    if unsafe:
        add(400, "invalid_json", "bad_request")
        add(413, "payload_too_large")
    if client == BROWSER:
        add(400, "wrong_client")  # an app's X-Session-Token sent to the browser API
        if unsafe:
            add(403, *CSRF_REASONS)
    if operation.signed_in or operation.changes:
        add(401, *_NOT_SIGNED_IN)
    if operation.changes:
        add(401, *_STALE)
    if operation.throttled:
        add(429, *THROTTLED)

    body = _BODIES[name]() if name in _BODIES else operation.body
    if body and "credential" in body.get("properties", {}):
        add(400, *PASSKEY_MALFORMED)
        add(403, *PASSKEY_REFUSED)

    responses: dict[str, Any] = {
        str(operation.status): {
            "description": operation.summary,
            "content": {"application/json": {"schema": operation.response}},
        }
    }
    for status in sorted(errors):
        response = _problem(_DESCRIPTIONS.get(status, "Error"), errors[status])
        if status == 429:
            response["headers"] = {
                "Retry-After": {"schema": {"type": "string"}, "description": "Seconds to wait."}
            }
        responses[str(status)] = response

    document: dict[str, Any] = {
        "operationId": f"{client}_{name}_{method}".replace("-", "_"),
        "summary": operation.summary,
        "tags": [client],
        "responses": responses,
        "security": _security(client, unsafe, operation.signed_in or operation.changes),
    }
    if operation.description:
        document["description"] = operation.description
    if parameters:
        document["parameters"] = parameters
    if body is not None:
        document["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": body}},
        }
    return document


def _security(client: str, unsafe: bool, signed_in: bool) -> list[dict[str, list[str]]]:
    if client == APP:
        # The first request of an app has no token yet: the header may be empty.
        return [{"sessionToken": []}] if signed_in else [{}, {"sessionToken": []}]
    csrf: dict[str, list[str]] = {"csrfHeader": [], "csrfCookie": []} if unsafe else {}
    if signed_in:
        return [{"sessionCookie": [], **csrf}]
    # Login CSRF: a browser's unsafe request is checked even before it has a session.
    return [csrf, {"sessionCookie": [], **csrf}]


def _security_schemes() -> dict[str, Any]:
    return {
        "sessionCookie": {
            "type": "apiKey",
            "in": "cookie",
            "name": settings.SESSION_COOKIE_NAME,
            "description": "Browser client: the session cookie.",
        },
        "csrfCookie": {
            "type": "apiKey",
            "in": "cookie",
            "name": csrf_cookie_name(),
            "description": "Browser client: the CSRF cookie, readable by the page's script.",
        },
        "csrfHeader": {
            "type": "apiKey",
            "in": "header",
            "name": str(app_settings.CSRF.HEADER_NAME),
            "description": "Browser client: the CSRF cookie's value, on every POST, PATCH "
            "and DELETE (login included).",
        },
        "sessionToken": {
            "type": "apiKey",
            "in": "header",
            "name": SESSION_TOKEN_HEADER,
            "description": "App client: the session token (empty on the first request); "
            "a new one comes back in this response header and in `session_token`.",
        },
    }


def openapi_document(
    endpoints: Iterable[tuple[str, Any, str]], server_url: str = "/"
) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints`` ((route, view class, URL name), as the
    URLconf's ``ENDPOINTS``) for both clients, served at ``server_url`` (the include's
    root: paths are ``/browser/v1/...`` and ``/app/v1/...`` under it)."""
    paths: dict[str, Any] = {}
    for client in CLIENTS:
        for route, view, name in endpoints:
            documented = OPERATIONS.get(name, {})
            path, parameters = openapi_path(route)
            item: dict[str, Any] = {}
            for method in view.http_method_names:
                if method in documented:
                    item[method] = _operation(client, name, method, documented[method], parameters)
            if item:
                paths[f"/{client}/v{API_VERSION}/{path}"] = item
    # A copy: the schemas above are shared between operations, and a caller may edit it.
    return copy.deepcopy(
        {
            "openapi": OPENAPI_VERSION,
            "info": {
                "title": "appframework headless API",
                "version": API_VERSION,
                "description": "The account flows as JSON, for single-page apps (`browser`: the "
                "session cookie and CSRF) and mobile or desktop apps (`app`: the "
                f"`{SESSION_TOKEN_HEADER}` header). Errors are RFC 9457 problem documents "
                "with a stable `code`.",
            },
            "servers": [{"url": server_url}],
            "tags": [
                {"name": BROWSER, "description": "A single-page app on this site."},
                {
                    "name": APP,
                    "description": "A mobile or desktop app, or another origin's server.",
                },
            ],
            "paths": paths,
            "components": {"schemas": SCHEMAS, "securitySchemes": _security_schemes()},
        }
    )


@method_decorator(never_cache, name="dispatch")
class OpenAPIView(View):
    """GET: the document, its server the include's root on this request's host.
    ``endpoints`` is given by the URLconf (``as_view(endpoints=ENDPOINTS)``)."""

    endpoints: Iterable[tuple[str, Any, str]] = ()
    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> JsonResponse:
        # This view sits at the include's root, wherever a project mounts it.
        root = request.path.removesuffix("openapi.json").rstrip("/")
        document = openapi_document(self.endpoints, request.build_absolute_uri(root or "/"))
        return JsonResponse(document, content_type="application/vnd.oai.openapi+json")
