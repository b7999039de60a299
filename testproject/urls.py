from django.contrib import admin
from django.urls import include, path

from testproject.blog import views

urlpatterns = [
    path("", views.index, name="index"),
    path("login", views.login_view, name="login"),
    path("logout", views.logout_view, name="logout"),
    path("token", views.issue_token, name="token"),
    path("api/me", views.api_me, name="api-me"),
    path("posts", views.posts, name="posts"),
    path("posts/<int:id>", views.post_detail, name="post-detail"),
    path("posts/<int:id>/publish", views.publish_post, name="post-publish"),
    path("admin/", admin.site.urls),
    path("", include("appframework_graphql.urls")),
]
