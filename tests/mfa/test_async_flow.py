"""The async twins of the login challenge under ASGI: ``alogin_or_challenge`` signs a
user without TOTP in at once and starts the code step for one with TOTP on;
``apending_user_id`` names who is awaited; ``acomplete_challenge`` signs them in with a
recovery code, keeps the step for a wrong one, and passes its rate-limit options on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.test import AsyncClient, override_settings

from tests.conftest import enable_totp

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

URLS = override_settings(ROOT_URLCONF="tests.mfa.async_urls")


async def post(client: AsyncClient, path: str, **data: Any) -> dict[str, Any]:
    response = await client.post(path, json.dumps(data), content_type="application/json")
    body: dict[str, Any] = json.loads(response.content)
    body["status"] = response.status_code
    return body


async def signed_in_user(client: AsyncClient) -> Any:
    return json.loads((await client.get("/me")).content)["user"]


@URLS
async def test_alogin_or_challenge_signs_a_user_without_totp_in(user: Any, password: str) -> None:
    client = AsyncClient()
    answer = await post(client, "/login", email=user.email, password=password)
    assert answer == {"signed_in": True, "pending": None, "status": 200}
    assert await signed_in_user(client) == user.pk


@URLS
async def test_alogin_or_challenge_starts_the_code_step_and_signs_nobody_in(
    user: Any, password: str
) -> None:
    from asgiref.sync import sync_to_async

    await sync_to_async(enable_totp)(user)
    client = AsyncClient()
    answer = await post(client, "/login", email=user.email, password=password)
    assert answer == {"signed_in": False, "pending": user.pk, "status": 200}
    assert await signed_in_user(client) is None


@URLS
async def test_acomplete_challenge_signs_in_with_a_recovery_code_once(
    user: Any, password: str
) -> None:
    from asgiref.sync import sync_to_async

    _, codes = await sync_to_async(enable_totp)(user)
    client = AsyncClient()
    await post(client, "/login", email=user.email, password=password)
    assert (await post(client, "/code", code="not-a-code"))["user"] is None
    assert await signed_in_user(client) is None
    assert (await post(client, "/code", code=codes[0]))["user"] == user.pk
    assert await signed_in_user(client) == user.pk
    # Spent: a second sign-in cannot use the same recovery code.
    again = AsyncClient()
    await post(again, "/login", email=user.email, password=password)
    assert (await post(again, "/code", code=codes[0]))["user"] is None


@URLS
async def test_acomplete_challenge_passes_its_rate_limit_options_on(
    user: Any, password: str
) -> None:
    from asgiref.sync import sync_to_async

    _, codes = await sync_to_async(enable_totp)(user)
    client = AsyncClient()
    await post(client, "/login", email=user.email, password=password)
    assert (await post(client, "/code", code="000000x"))["status"] == 200
    assert (await post(client, "/code", code="000000y"))["status"] == 200
    # rate_limit_attempts=2 in the view: the third try is refused, even the right code.
    assert (await post(client, "/code", code=codes[1]))["status"] == 429
    assert await signed_in_user(client) is None
