"""Demo views: every feature reachable from a browser or curl.

Errors are raised, not written here (``Http404``, ``require_http_methods``, the suite's
exceptions): ErrorMiddleware answers all of them in one format, problem+json for API
clients and a small HTML page for browsers.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.db import connection
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from appframework import bounded_json
from appframework.auth import (
    TokenManager,
    api_auth_required,
    auth_required,
    current_api_user,
    current_user_sync,
)
from appframework.auth.reauth import reauthentication_required
from appframework.authorization import Gate, authorized
from appframework.conf import app_settings
from appframework.container import container
from appframework.exceptions import BadRequestException

from . import sso
from .models import Post
from .posting import create_post


def index(request: HttpRequest) -> HttpResponse:
    """The tour: every part of the demo, what to look for, and the seeded accounts."""
    from .management.commands.seed_demo import DEMO_USERS

    return render(
        request,
        "blog/index.html",
        {
            "me": current_user_sync(request),
            "demo_users": DEMO_USERS,
            "sso_providers": sso.configured(),
            "saml_configured": sso.saml_configured(),
        },
    )


def login_sso_context(request: HttpRequest) -> dict[str, Any]:
    """The SSO buttons under the library's login form (the demo's
    ``appframework/login.html`` fills its ``sso`` block with them)."""
    return {"sso_providers": sso.configured(), "saml_configured": sso.saml_configured()}


@require_POST
@auth_required
@reauthentication_required
def issue_token(request: HttpRequest) -> JsonResponse:
    # Tied to this session: signing out ends it (AUTH["REVOKE_TOKENS_ON_LOGOUT"]).
    token = container.resolve(TokenManager).issue(request.user, request=request)
    return JsonResponse({"token": token, "type": "Bearer"})


@require_GET
@auth_required
@reauthentication_required
def token_page(request: HttpRequest) -> HttpResponse:
    """/account/token: issue a bearer token (POST /token) and call /api/me with it, from
    the page's own script: no cookie is sent with that call, only the token."""
    return render(request, "blog/token.html", {"me": request.user})


@require_GET
@api_auth_required
async def api_me(request: HttpRequest) -> JsonResponse:
    user = await current_api_user(request)
    return JsonResponse({"id": user.pk, "email": user.email})


@require_http_methods(["GET", "HEAD", "POST"])
def posts(request: HttpRequest) -> JsonResponse:
    """GET /posts: public. POST /posts: create (session or bearer; CSRF applies to cookies)."""
    if request.method == "POST":
        from appframework.auth import require_api_auth_sync

        # No session: the bearer token, else a 401 with WWW-Authenticate: Bearer.
        user = current_user_sync(request) or require_api_auth_sync(request)
        data = _json_object(request.body)
        post = create_post(user, data.get("title"), data.get("body", ""))
        return JsonResponse(post.as_dict(), status=201)
    return JsonResponse({"posts": [p.as_dict() for p in Post.objects.all()[:100]]})


@require_http_methods(["GET", "HEAD", "POST"])
def blog(request: HttpRequest) -> HttpResponse:
    """/blog: the current tenant's posts, each with a Delete button the Gate decides on,
    and for a signed-in user a form that writes a post (a CSRF-protected form post)."""
    from appframework_tenancy import current_tenant_id

    from .models import Tenant

    user = current_user_sync(request)
    if request.method == "POST":
        post = create_post(user, request.POST.get("title"), request.POST.get("body", ""))
        messages.success(request, f"Created “{post.title}”.")
        return redirect("blog")
    gate: Gate = container.resolve(Gate)
    listed = list(Post.objects.select_related("author")[:50])
    return render(
        request,
        "blog/blog.html",
        {
            "me": user,
            "tenant": Tenant.objects.filter(pk=current_tenant_id()).first(),
            # What the Gate would answer, so the page can say it before the click; the
            # click is checked again on the server (the 403 is the point of the demo).
            "posts": [
                (post, user is not None and gate.allows_sync(user, "delete-post", post))
                for post in listed
            ],
        },
    )


@require_POST
@authorized("delete-post", Post)
def delete_post_form(request: HttpRequest, post: Post) -> HttpResponse:
    """POST /posts/<id>/delete from /blog's buttons: anonymous → 401, a post of another
    tenant or none → 404, the Gate says no → 403 (all as the one error page)."""
    post.delete()
    messages.success(request, f"Deleted “{post.title}”: the Gate allowed it.")
    return redirect("blog")


@require_http_methods(["GET", "HEAD", "DELETE"])
async def post_detail(request: HttpRequest, id: int) -> HttpResponse:
    """GET /posts/<id> public; DELETE guarded by authorize(request, "delete-post", post)."""
    from appframework.authorization import authorize

    post = await Post.objects.filter(pk=id).afirst()
    if post is None:
        raise Http404
    if request.method == "DELETE":
        await authorize(request, "delete-post", post)
        await post.adelete()
        return HttpResponse(status=204)
    return JsonResponse(post.as_dict())


@require_POST
@authorized("publish-post", Post)
def publish_post(request: HttpRequest, post: Post) -> JsonResponse:
    """POST /posts/<id>/publish: the role-based ability, through the view decorator."""
    return JsonResponse({"published": post.pk})


@require_http_methods(["GET", "HEAD", "POST"])
def tenant_view(request: HttpRequest) -> HttpResponse:
    """/tenant: which tenant this request runs under, and a switch between the signed-in
    user's tenants (the resolver refuses a tenant they are not a member of)."""
    from appframework_tenancy import current_tenant_id
    from appframework_tenancy.postgres import role_skips_policies
    from appframework_tenancy.resolvers import select_tenant

    from .models import Tenant
    from .tenancy import member_tenant_ids

    user = current_user_sync(request)
    if request.method == "POST":
        if user is None:
            from appframework.exceptions import UnauthorizedException

            raise UnauthorizedException()
        try:
            wanted = int(request.POST.get("tenant", ""))
        except ValueError:
            raise BadRequestException("tenant: a tenant id.") from None
        select_tenant(request, wanted)
        return redirect("tenant")
    mine = set(member_tenant_ids(user)) if user is not None else set()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(Post._meta.db_table)}")
        (raw_count,) = cursor.fetchone()
    policy = connection.alias in app_settings.TENANCY.ROW_LEVEL_SECURITY
    # A superuser (the default role of a local PostgreSQL) skips every policy.
    bypassed = policy and role_skips_policies(connection)
    return render(
        request,
        "blog/tenant.html",
        {
            "me": user,
            "current": Tenant.objects.filter(pk=current_tenant_id()).first(),
            "tenants": Tenant.objects.filter(pk__in=mine).order_by("pk"),
            "posts": Post.objects.all()[:20],
            "raw_count": raw_count,
            "row_level_security": policy and not bypassed,
            "bypassed": bypassed,
        },
    )


def _json_object(body: bytes) -> dict[str, Any]:
    """The JSON object a request body holds; 400 for anything else (``json_too_deep``
    for nesting deeper than the suite reads)."""
    try:
        data = bounded_json.loads(body or b"{}")
    except bounded_json.JsonNestingError:
        raise
    except ValueError:
        raise BadRequestException("Body is not valid JSON.") from None
    if not isinstance(data, dict):
        raise BadRequestException("Body must be a JSON object.")
    return data


def _storable(text: str) -> str:
    """``text`` as the database takes it: lone surrogates (from JSON escapes) cannot be
    encoded as UTF-8, and PostgreSQL refuses NUL characters."""
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "\ufffd")


def _demo_webhook_secret() -> str:
    from django.conf import settings

    return str(getattr(settings, "DEMO_WEBHOOK_SECRET", ""))


def _receiver_secrets() -> list[str]:
    """The secrets this receiver knows, as a customer's receiver knows its own: the demo
    endpoint's, and those of the endpoints a customer pointed here through the endpoint
    API (/api/drf/webhook-endpoints/), the previous one too while a rotation overlaps."""
    from appframework_webhooks import WebhookEndpoint

    known = [_demo_webhook_secret()]
    for current, previous in WebhookEndpoint.objects.filter(
        url__endswith="/webhooks/receiver"
    ).values_list("secret", "previous_secret"):
        known += [current or "", previous or ""]
    return [secret for secret in dict.fromkeys(known) if secret]


KEEP_RECEIVED = 100
#: verify_webhook's tolerance: a captured delivery replays within it, so the ids of that
#: long are always kept (pruning never makes an id new again while it could replay).
REPLAY_TOLERANCE = 300


def _verified_webhook_id(request: HttpRequest, secret: str | list[str]) -> str:
    """The ``X-Webhook-Id`` of a request signed with ``secret`` (or one of several) both
    ways (the body, and id + timestamp + body within the tolerance: the Standard Webhooks
    ``webhook-signature``, else ``X-Webhook-Signature-V2``); 401 for anything else,
    unsigned posts included. No secret configured: nothing can be verified, so nothing is
    accepted (an HMAC under an empty key is anyone's to compute)."""
    from appframework.exceptions import UnauthorizedException
    from appframework_webhooks import verify_signature, verify_webhook

    body = request.body
    if not (
        secret
        and verify_signature(secret, body, request.headers.get("X-Webhook-Signature"))
        and verify_webhook(secret, request.headers, body, tolerance=REPLAY_TOLERANCE)
    ):
        raise UnauthorizedException(
            "The webhook signature is missing, wrong or stale.", code="invalid_webhook_signature"
        )
    webhook_id = str(request.headers.get("X-Webhook-Id", ""))
    if len(webhook_id) > 64:
        # Stored cut, two ids could collide and one delivery be dropped as the other.
        raise BadRequestException("X-Webhook-Id is longer than 64 characters.")
    return webhook_id


@csrf_exempt
@require_POST
def webhook_receiver(request: HttpRequest) -> HttpResponse:
    """A receiver as a client application would write it: check the signature of the
    exact body (``verify_signature``) and the replay-proof one (``verify_webhook``,
    5 minutes' tolerance), then record the event once per ``X-Webhook-Id``. 401 and
    nothing stored for an unsigned, badly signed or stale post; a repeated id is
    acknowledged (204) without a second row: delivery is at-least-once, and a receiver
    that refused repeats would only make the sender retry them."""
    from datetime import timedelta

    from django.db import IntegrityError, transaction
    from django.utils import timezone

    from .models import ReceivedWebhook

    webhook_id = _verified_webhook_id(request, _receiver_secrets())
    body = request.body
    try:
        event = str(_json_object(body).get("event", ""))
    except BadRequestException:
        event = ""
    try:
        # The unique index on webhook_id (migration 0006) is the check: a lookup first
        # would let two copies arriving at once both through.
        with transaction.atomic():
            ReceivedWebhook.objects.create(
                event=_storable(event or request.headers.get("X-Webhook-Event", ""))[:255],
                webhook_id=_storable(webhook_id),
                signature_valid=True,
                replay_proof_valid=True,
                body=_storable(body.decode("utf-8", "replace"))[:10_000],
            )
    except IntegrityError:
        return HttpResponse(status=204)
    # Keep the latest rows only, but every id that could still be replayed.
    recent = timezone.now() - timedelta(seconds=REPLAY_TOLERANCE)
    stale = ReceivedWebhook.objects.values_list("pk", flat=True)[KEEP_RECEIVED:]
    ReceivedWebhook.objects.filter(pk__in=list(stale), received_at__lt=recent).delete()
    return HttpResponse(status=204)


@require_GET
def webhooks_page(request: HttpRequest) -> HttpResponse:
    """/webhooks, for staff: the endpoints, the delivery log, and what the demo receiver
    got. The log shows each failure's code, not its message: the message can name
    addresses of the internal network (the guard's refusal, a connection that failed)."""
    from appframework.exceptions import ForbiddenException, UnauthorizedException
    from appframework_webhooks import WebhookDelivery, WebhookEndpoint

    from .models import ReceivedWebhook

    user = current_user_sync(request)
    if user is None:
        raise UnauthorizedException()
    if not user.is_staff:
        raise ForbiddenException("The webhooks page is for staff.", code="staff_only")
    return render(
        request,
        "blog/webhooks.html",
        {
            "endpoints": WebhookEndpoint.objects.order_by("event", "pk"),
            "deliveries": WebhookDelivery.objects.select_related("endpoint")[:20],
            "received": ReceivedWebhook.objects.all()[:20],
        },
    )
