import pytest

from testproject.blog.models import Post


@pytest.mark.django_db
def test_public_posts_route_lists_posts_as_json_to_anonymous(client, user):
    post = Post.objects.create(title="Public", body="text", author=user)
    response = client.get("/posts")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "posts": [{"id": post.pk, "title": "Public", "body": "text", "author_id": user.pk, "tenant_id": 1}]
    }
