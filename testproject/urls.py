import os

from django.contrib import admin
from django.urls import include, path
from django.views.generic import TemplateView
from rest_framework.routers import DefaultRouter

from appframework.auth import views as account
from appframework.mfa import views as mfa
from appframework.passkeys import views as passkeys
from appframework.security import page_csp
from appframework_graphql.graphiql import asset_urlpatterns
from appframework_webhooks.drf import WebhookEndpointViewSet
from testproject.blog import mailbox, views
from testproject.blog.api_drf import PostViewSet
from testproject.blog.api_ninja import api as ninja_api

drf_router = DefaultRouter()
drf_router.register("posts", PostViewSet, basename="drf-post")
# The current tenant's own webhook endpoints (docs/webhooks.md, "The endpoint API").
drf_router.register("webhook-endpoints", WebhookEndpointViewSet, basename="webhook-endpoint")

# Errors raised outside any view (a 500) in the suite's one format too.
handler400 = "appframework.views.bad_request"
handler403 = "appframework.views.permission_denied"
handler404 = "appframework.views.page_not_found"
handler500 = "appframework.views.server_error"

# The library's account pages (docs/accounts.md) at the demo's own paths, under their
# URL names (appframework:login ...): the pages the tour and its links always had. A
# project happy with the library's paths writes path("accounts/", include(...)) instead.
account_urls = (
    [
        path(
            "login",
            account.LoginView.as_view(extra_context=views.login_sso_context),
            name="login",
        ),
        path("login/mfa", account.ChallengeView.as_view(), name="mfa-challenge"),
        path("logout", account.LogoutView.as_view(), name="logout"),
        path("account/confirm", account.ReauthenticateView.as_view(), name="reauthenticate"),
        # Two-factor authentication (docs/mfa.md): the overview and one page per change.
        path("account/mfa", mfa.TwoFactorView.as_view(), name="mfa-setup"),
        path("account/mfa/totp/on", mfa.ActivateTOTPView.as_view(), name="totp-activate"),
        path("account/mfa/totp/off", mfa.DeactivateTOTPView.as_view(), name="totp-deactivate"),
        path("account/mfa/recovery-codes", mfa.RecoveryCodesView.as_view(), name="recovery-codes"),
        # Passkeys (docs/passkeys.md): the list, its changes, passwordless sign-in, and
        # the options every ceremony's script asks for.
        path("account/passkeys", passkeys.PasskeysView.as_view(), name="passkeys"),
        path("account/passkeys/add", passkeys.AddPasskeyView.as_view(), name="passkey-add"),
        path(
            "account/passkeys/<int:pk>/rename",
            passkeys.RenamePasskeyView.as_view(),
            name="passkey-rename",
        ),
        path(
            "account/passkeys/<int:pk>/remove",
            passkeys.RemovePasskeyView.as_view(),
            name="passkey-remove",
        ),
        path("login/passkey", passkeys.PasskeyLoginView.as_view(), name="passkey-login"),
        path("passkeys/options", passkeys.passkey_options_view, name="passkey-options"),
        # Sign-up and addresses (docs/accounts.md).
        path("signup", account.SignupView.as_view(), name="signup"),
        path("signup/sent", account.VerificationSentView.as_view(), name="verification-sent"),
        path("account/email", account.EmailView.as_view(), name="email"),
        path("account/email/change", account.EmailChangeView.as_view(), name="email-change"),
        path("account/email/resend", account.ResendConfirmationView.as_view(), name="email-resend"),
        path("email/confirm/<str:key>", account.ConfirmEmailView.as_view(), name="confirm-email"),
        # Passwords, sign-in by a mailed code, trusted browsers.
        path("account/password", account.PasswordChangeView.as_view(), name="password-change"),
        path("password/reset", account.PasswordResetView.as_view(), name="password-reset"),
        path(
            "password/reset/sent",
            account.PasswordResetSentView.as_view(),
            name="password-reset-sent",
        ),
        path(
            "password/reset/<str:uidb64>/<str:token>",
            account.PasswordResetKeyView.as_view(),
            name="password-reset-key",
        ),
        path("login/email", account.LoginCodeView.as_view(), name="login-code"),
        path("login/email/code", account.LoginCodeConfirmView.as_view(), name="login-code-confirm"),
        path("account/linked", account.LinkedAccountsView.as_view(), name="linked-accounts"),
        path(
            "account/linked/<str:kind>/<int:pk>/unlink",
            account.UnlinkAccountView.as_view(),
            name="linked-account-unlink",
        ),
        # The sessions a user can see and end (docs/accounts.md#sessions).
        path("account/sessions", account.SessionsView.as_view(), name="sessions"),
        path(
            "account/sessions/<int:pk>/end",
            account.EndSessionView.as_view(),
            name="session-end",
        ),
        path(
            "account/sessions/end-others",
            account.EndOtherSessionsView.as_view(),
            name="sessions-end-others",
        ),
        # Personal access tokens: named, scoped, expiring, shown once (docs/tokens.md).
        path("account/tokens", account.AccessTokensView.as_view(), name="tokens"),
        path(
            "account/tokens/<int:pk>/revoke",
            account.RevokeAccessTokenView.as_view(),
            name="token-revoke",
        ),
        path(
            "account/trusted/<int:pk>/forget",
            account.ForgetTrustedBrowserView.as_view(),
            name="trusted-browser-forget",
        ),
    ],
    "appframework",
)

urlpatterns = [
    path("", views.index, name="index"),
    path("", include(account_urls)),
    path("token", views.issue_token, name="token"),
    path("account/token", views.token_page, name="account-token"),
    path("api/me", views.api_me, name="api-me"),
    path("posts", views.posts, name="posts"),
    path("posts/<int:id>", views.post_detail, name="post-detail"),
    path("posts/<int:id>/publish", views.publish_post, name="post-publish"),
    path("posts/<int:id>/delete", views.delete_post_form, name="post-delete"),
    path("blog", views.blog, name="blog"),
    path("tenant", views.tenant_view, name="tenant"),
    path("webhooks", views.webhooks_page, name="webhooks"),
    path("mailbox", mailbox.mailbox, name="mailbox"),
    # A plain-JavaScript single-page app on the account API's browser client.
    path("spa/", page_csp(TemplateView.as_view(template_name="blog/spa.html")), name="spa"),
    path("webhooks/receiver", views.webhook_receiver, name="webhook-receiver"),
    # The event catalogue as JSON, at /webhooks/events.
    path("", include("appframework_webhooks.urls")),
    path("admin/", admin.site.urls),
    # The language selector's form posts to Django's set_language view.
    path("i18n/", include("django.conf.urls.i18n")),
    # The account flows as JSON for single-page and mobile apps (docs/headless.md).
    path("api/auth/", include("appframework.headless.urls")),
    path("api/drf/", include(drf_router.urls)),
    # The browsable API's "Log in": Django's LoginView (a user with TOTP on is refused
    # there and signs in through /login, which runs the challenge).
    path("api/drf/auth/", include("rest_framework.urls")),
    path("api/ninja/", ninja_api.urls),
    path("", include("appframework.oauth.urls")),
    path("", include("appframework.saml.urls")),
    path("", include("appframework_graphql.urls")),
]
# Only when GRAPHIQL_ASSETS_DIR points at a local copy of GraphiQL's files.
urlpatterns += asset_urlpatterns(os.environ.get("GRAPHIQL_ASSETS_DIR"))
