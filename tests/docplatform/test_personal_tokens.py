"""Personal tokens people make themselves: ``/api/v1/me/tokens/``, the marketplace's developer
settings and ``manage.py tokens``. A token is shown once, works, and is stored as its hash."""

import re
import subprocess
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.utils import timezone

from docplatform.models import ApiToken, hash_token
from docplatform.services import api_token_create
from integrations.services.installations import installation_create
from tests.api_helpers import API, NOT_FOUND, api_client, error_attrs
from tests.factories import IntegrationFactory, UserFactory
from tests.processes import manage_py

TOKENS = f"{API}/me/tokens/"
DEVELOPER_SETTINGS = "/marketplace/settings/developer/"


def me(raw: str):
    return api_client(token=raw).get(f"{API}/me/")


def stored_columns() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM docplatform_apitoken")
        return repr(cursor.fetchall())


# --- The API ------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.django_db
def test_the_api_makes_a_token_shown_once_that_works_until_revoked(org_admin):
    client = api_client(org_admin)
    made = client.post(TOKENS, {"name": "ci"})
    assert made.status_code == 201
    assert made["Cache-Control"] == "no-store"
    body = made.json()
    raw = body.pop("token")
    assert raw.startswith("dpt_")
    assert body["name"] == "ci" and body["status"] == "active" and body["expiresAt"] is None
    assert raw.endswith(body["hint"])
    assert raw not in stored_columns()
    assert ApiToken.objects.get(pk=body["id"]).token_hash == hash_token(raw)

    assert me(raw).json()["username"] == org_admin.username
    listed = client.get(TOKENS).json()["results"]
    assert [row["id"] for row in listed] == [body["id"]]
    assert "token" not in listed[0] and raw not in repr(listed)
    one = client.get(f"{TOKENS}{body['id']}/").json()
    assert "token" not in one and one["lastUsedAt"] is not None

    assert client.delete(f"{TOKENS}{body['id']}/").status_code == 204
    assert me(raw).status_code == 401
    assert client.get(f"{TOKENS}{body['id']}/").json()["status"] == "revoked"
    assert client.delete(f"{TOKENS}{body['id']}/").status_code == 204  # already revoked


@pytest.mark.slow
@pytest.mark.django_db
def test_a_token_expires(org_admin):
    client = api_client(org_admin)
    expires = timezone.now() + timedelta(days=7)
    body = client.post(TOKENS, {"name": "week", "expiresAt": expires.isoformat()}).json()
    assert body["expiresAt"] is not None
    raw = body["token"]
    assert me(raw).status_code == 200
    ApiToken.objects.filter(pk=body["id"]).update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = me(raw)
    assert refused.status_code == 401
    assert refused.json()["errors"][0]["detail"] == (
        "Authorization: unknown, revoked or expired token."
    )
    assert client.get(f"{TOKENS}{body['id']}/").json()["status"] == "expired"


@pytest.mark.django_db
def test_a_token_made_with_a_token_never_outlives_it(org_admin):
    parent, raw = api_token_create(
        user=org_admin, name="short", expires_at=timezone.now() + timedelta(days=1)
    )
    client = api_client(token=raw)
    child = client.post(TOKENS, {"name": "child"}).json()
    assert (
        child["expiresAt"] == api_client(org_admin).get(f"{TOKENS}{parent.pk}/").json()["expiresAt"]
    )
    later = (timezone.now() + timedelta(days=30)).isoformat()
    refused = client.post(TOKENS, {"name": "longer", "expiresAt": later})
    assert refused.status_code == 400
    assert error_attrs(refused) == ["expiresAt"]
    assert ApiToken.objects.filter(user=org_admin).count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "attrs"),
    [
        ({}, ["name"]),
        ({"name": ""}, ["name"]),
        ({"name": "   "}, ["name"]),
        ({"name": "x" * 101}, ["name"]),
        ({"name": "ok", "expiresAt": "tomorrow"}, ["expiresAt"]),
        ({"name": "ok", "expiresAt": "2001-01-01T00:00:00Z"}, ["expiresAt"]),
    ],
)
def test_bad_input_is_refused_with_the_field_named(org_admin, body, attrs):
    response = api_client(org_admin).post(TOKENS, body)
    assert response.status_code == 400
    assert error_attrs(response) == attrs
    assert not ApiToken.objects.exists()


@pytest.mark.django_db
def test_nobody_sees_or_revokes_another_persons_tokens(org_admin, outsider):
    token, raw = api_token_create(user=org_admin, name="mine")
    other = api_client(outsider)
    assert other.get(TOKENS).json()["results"] == []
    assert other.get(f"{TOKENS}{token.pk}/").json() == NOT_FOUND
    assert other.delete(f"{TOKENS}{token.pk}/").json() == NOT_FOUND
    assert other.delete(f"{TOKENS}999999999999999999/").status_code == 404
    assert me(raw).status_code == 200
    assert api_client().get(TOKENS).status_code == 401


@pytest.mark.django_db
def test_an_installation_token_cannot_make_personal_tokens(org_admin, organization):
    integration = IntegrationFactory(organization=organization)
    installation = installation_create(
        user=org_admin, integration=integration, organization=organization
    )
    client = api_client(token=installation.api_token)
    assert client.post(TOKENS, {"name": "escalate"}).status_code == 403
    assert client.get(TOKENS).status_code == 403
    assert not ApiToken.objects.exists()


# --- manage.py tokens ---------------------------------------------------------------------------


def tokens(*args: str) -> subprocess.CompletedProcess:
    return manage_py("tokens", *args)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_tokens_create_in_a_process_of_its_own_prints_a_working_token_once():
    alice = UserFactory(username="alice")
    made = tokens("create", "--user", "alice", "--name", "deploy", "--expires-in", "30")
    assert made.returncode == 0, made.stderr
    raw = made.stdout.strip()
    assert re.fullmatch(r"dpt_[A-Za-z0-9_-]{43}", raw), made.stdout
    assert "'deploy' for alice (expires: " in made.stderr
    assert "shown this once" in made.stderr

    assert me(raw).json()["username"] == "alice"
    token = ApiToken.objects.get(user=alice)
    assert token.expires_at - timezone.now() > timedelta(days=29)
    assert raw not in stored_columns()

    listed = tokens("list", "--user", "alice")
    assert listed.returncode == 0, listed.stderr
    assert raw not in listed.stdout + listed.stderr
    header, row = listed.stdout.splitlines()
    assert header.split("\t") == [
        "id", "status", "hint", "created", "expires", "last used", "name",
    ]  # fmt: skip
    assert row.split("\t")[:3] == [str(token.pk), "active", f"…{token.hint}"]
    assert row.split("\t")[-1] == "deploy"

    revoked = tokens("revoke", str(token.pk), "--user", "alice")
    assert revoked.returncode == 0, revoked.stderr
    assert revoked.stdout.strip() == f"token {token.pk} 'deploy' is revoked"
    assert me(raw).status_code == 401

    unknown = tokens("create", "--user", "nobody", "--name", "x")
    assert unknown.returncode == 2
    assert "no user is named 'nobody'" in unknown.stderr


@pytest.mark.django_db
def test_tokens_command_refusals_and_usage_errors(outsider):
    def run(*args):
        out = io_buffer()
        call_command("tokens", *args, stdout=out, stderr=io_buffer())
        return out.getvalue()

    with pytest.raises(CommandError, match="create was refused") as refused:
        run("create", "--user", outsider.username, "--name", "  ")
    assert refused.value.returncode == 1
    with pytest.raises(CommandError, match="from above 0"):
        run("create", "--user", outsider.username, "--name", "x", "--expires-in", "0")
    with pytest.raises(CommandError, match="has no token 12") as usage:
        run("revoke", "12", "--user", outsider.username)
    assert usage.value.returncode == 2
    other, _ = api_token_create(user=UserFactory(), name="not yours")
    with pytest.raises(CommandError, match="has no token"):
        run("revoke", str(other.pk), "--user", outsider.username)
    assert ApiToken.objects.get(pk=other.pk).revoked_at is None
    with pytest.raises(CommandError, match="a token id is a number"):
        run("revoke", "1" * 30, "--user", outsider.username)
    assert run("list", "--user", outsider.username).splitlines()[1:] == []


def io_buffer():
    import io

    return io.StringIO()


# --- The developer settings page ----------------------------------------------------------------


def form_id(page: str) -> str:
    return re.search(r'name="form_id" value="([^"]+)"', page).group(1)


def shown_token(page: str) -> str | None:
    match = re.search(r'<code class="token-value"[^>]*>(dpt_[^<]+)</code>', page)
    return match.group(1) if match else None


@pytest.mark.django_db
def test_the_developer_settings_page_shows_a_new_token_once(client, org_member):
    client.force_login(org_member)
    page = client.get(DEVELOPER_SETTINGS)
    assert page.status_code == 200
    assert "You have no tokens yet." in page.content.decode()
    form = {"name": "laptop", "expiration": "30", "form_id": form_id(page.content.decode())}

    made = client.post(DEVELOPER_SETTINGS, form)
    assert made.status_code == 200
    assert made["Cache-Control"] == "no-store"
    raw = shown_token(made.content.decode())
    assert raw is not None and "Copy it now: it is not shown again." in made.content.decode()
    assert me(raw).json()["username"] == org_member.username
    token = ApiToken.objects.get(user=org_member)
    assert token.name == "laptop" and token.expires_at > timezone.now() + timedelta(days=29)

    again = client.get(DEVELOPER_SETTINGS).content.decode()
    assert shown_token(again) is None and raw not in again
    assert f"…{token.hint}" in again and "laptop" in again
    resent = client.post(DEVELOPER_SETTINGS, form, follow=True)  # a reload sends it again
    assert raw not in resent.content.decode() and shown_token(resent.content.decode()) is None
    assert "is not shown again" in resent.content.decode()
    assert ApiToken.objects.filter(user=org_member).count() == 1
    assert raw not in stored_columns()


@pytest.mark.slow
@pytest.mark.django_db
def test_the_developer_settings_page_refuses_bad_input_and_revokes(client, org_member, outsider):
    client.force_login(org_member)
    page = client.get(DEVELOPER_SETTINGS).content.decode()
    refused = client.post(
        DEVELOPER_SETTINGS, {"name": "", "expiration": "forever", "form_id": form_id(page)}
    )
    assert refused.status_code == 400
    assert "This field is required." in refused.content.decode()
    assert "Select a valid choice." in refused.content.decode()
    assert not ApiToken.objects.exists()
    retry = {"name": "ci", "expiration": "never", "form_id": form_id(refused.content.decode())}
    raw = shown_token(client.post(DEVELOPER_SETTINGS, retry).content.decode())
    token = ApiToken.objects.get(user=org_member)
    assert token.expires_at is None

    theirs, their_raw = api_token_create(user=outsider, name="theirs")
    assert client.post(f"{DEVELOPER_SETTINGS}tokens/{theirs.pk}/revoke/").status_code == 404
    assert me(their_raw).status_code == 200

    revoked = client.post(f"{DEVELOPER_SETTINGS}tokens/{token.pk}/revoke/", follow=True)
    assert "is revoked" in revoked.content.decode()
    assert me(raw).status_code == 401
    assert client.get(DEVELOPER_SETTINGS).content.decode().count("Revoke</button>") == 0


@pytest.mark.django_db
def test_the_developer_settings_page_needs_a_sign_in(client):
    response = client.get(DEVELOPER_SETTINGS)
    assert response.status_code == 302
    assert response["Location"].startswith("/marketplace/login/")
