"""URLconf for tests that mount the views directly (custom path, async view)."""

from django.urls import path

from appframework_graphql.views import async_graphql_view, graphql_view

urlpatterns = [
    path("graphql", graphql_view),
    path("agraphql", async_graphql_view),
    path("custom/api/gql", graphql_view),
]
