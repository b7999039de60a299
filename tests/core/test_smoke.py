import pytest


@pytest.mark.django_db
def test_public_posts_route_answers_json_to_anonymous(client):
    response = client.get("/posts")
    assert response.status_code == 200
    assert response.json() == {"posts": []}
