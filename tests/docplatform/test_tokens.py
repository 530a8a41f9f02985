from datetime import timedelta

import pytest
from django.db import connection

from docplatform.models import ApiToken
from docplatform.services import api_token_create, api_token_revoke
from tests.factories import MembershipFactory

pytestmark = pytest.mark.django_db


def test_a_personal_token_is_stored_only_as_its_hash(org_admin):
    token, raw = api_token_create(user=org_admin, name="laptop")
    assert raw.startswith("dpt_")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT token_hash, hint FROM docplatform_apitoken WHERE id = %s", [token.pk]
        )
        token_hash, hint = cursor.fetchone()
    assert raw not in token_hash
    assert raw.endswith(hint) and len(hint) == 6


def test_bearer_token_authenticates_as_its_user(client, org_admin, organization):
    _, raw = api_token_create(user=org_admin, name="ci")
    response = client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == org_admin.username
    assert body["organizations"] == [
        {"id": organization.id, "subdomain": "acme", "title": organization.title, "role": "admin"}
    ]
    assert ApiToken.objects.get(user=org_admin).last_used_at is not None


def test_last_used_is_kept_to_the_minute(client, org_admin):
    """A token used again within a minute writes nothing; a minute later it is recorded."""
    token, raw = api_token_create(user=org_admin, name="ci")
    client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    earlier = first - timedelta(minutes=2)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=earlier)
    client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first


def test_a_revoked_token_is_refused_with_the_error_shape(client, org_admin):
    token, raw = api_token_create(user=org_admin, name="old")
    api_token_revoke(token=token)
    response = client.get("/api/v1/me/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 401
    assert response.json() == {
        "type": "client_error",
        "errors": [
            {
                "code": "authentication_failed",
                "detail": "Authorization: unknown, revoked or expired token.",
                "attr": None,
            }
        ],
    }


@pytest.mark.parametrize(
    "header", ["Bearer", "Bearer a b", "Bearer dpt_not-a-token", "Bearer \xff\xfe"]
)
def test_malformed_or_unknown_bearer_tokens_get_401(client, header, org_admin):
    response = client.get("/api/v1/me/", HTTP_AUTHORIZATION=header)
    assert response.status_code == 401
    assert response.json()["errors"][0]["code"] == "authentication_failed"


def test_anonymous_callers_are_asked_to_authenticate(client):
    response = client.get("/api/v1/me/")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Bearer"


def test_a_member_sees_each_organization_with_its_role(client):
    membership = MembershipFactory(role="member")
    MembershipFactory(user=membership.user, role="admin")
    client.force_login(membership.user)
    roles = sorted(org["role"] for org in client.get("/api/v1/me/").json()["organizations"])
    assert roles == ["admin", "member"]


@pytest.mark.slow
def test_the_openapi_schema_and_docs_are_served(client, org_admin):
    client.force_login(org_admin)
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/v1/me/" in schema.content
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    assert b"swagger-ui" in docs.content
