"""The development channel and releases, through the services and the REST API: which
version each installation runs (``version``, ``development``), the integration's
``releasedVersion`` beside its ``latestVersion``, marking an installation as development,
releasing an older version again (``rollback``), code identical to an older version, and
pruning development versions; and the migration that released each integration's latest
version."""

import pytest
from django.core.exceptions import ValidationError

from integrations.models import Installation, Integration, IntegrationVersion
from integrations.services import integration_publish_folder, integration_release
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import MembershipFactory, OrganizationFactory, SpaceFactory
from tests.integrations.conftest import listing_approve, minimal_manifest

pytestmark = pytest.mark.django_db

NEEDS_A_KEY = {
    "account": {
        "properties": {"api_key": {"type": "string", "title": "Key", "description": "d"}},
        "required": ["api_key"],
    }
}


@pytest.fixture
def publish_as(write_integration, org_admin):
    """Publish the manifest ``fields`` on ``channel`` as the acme admin; the result
    (``approved``: then an operator approves its public listing)."""

    def publish(channel="release", approved=False, **fields):
        root = write_integration(minimal_manifest(**fields), folder=fields.get("name", "hello"))
        result = integration_publish_folder(path=root, publisher=org_admin, env={}, channel=channel)
        if approved:
            listing_approve(result.version.integration)
        return result

    return publish


@pytest.fixture
def globex_admin(db):
    return MembershipFactory(
        organization=OrganizationFactory(subdomain="globex"), role="admin"
    ).user


def installed(user, integration, organization) -> Installation:
    return installation_create(user=user, integration=integration, organization=organization)


def numbers(integration) -> list[int]:
    return sorted(integration.versions.values_list("number", flat=True))


def test_the_api_shows_which_version_each_installation_runs(
    publish_as, org_admin, organization, globex_admin
):
    integration = publish_as(description="One.", approved=True).version.integration
    ours = installed(org_admin, integration, organization)
    theirs = installed(globex_admin, integration, globex_admin.memberships.get().organization)
    marked = api_client(org_admin).post(
        f"{API}/installations/{ours.pk}/development/", {"development": True}
    )
    assert marked.status_code == 200, marked.json()
    assert (marked.json()["development"], marked.json()["version"]) == (
        True,
        {"number": 1, "development": False},
    )  # nothing in development yet: the released version

    published = publish_as(channel="development", description="Two.")
    assert (published.version.number, published.version.channel, published.outcome) == (
        2,
        "development",
        "created",
    )
    shown = api_client(org_admin).get(f"{API}/installations/{ours.pk}/").json()
    assert (shown["development"], shown["version"]) == (True, {"number": 2, "development": True})
    shown = api_client(globex_admin).get(f"{API}/installations/{theirs.pk}/").json()
    assert (shown["development"], shown["version"]) == (
        False,
        {"number": 1, "development": False},
    )
    detail = api_client(globex_admin).get(f"{API}/integrations/hello/").json()
    assert (detail["latestVersion"]["number"], detail["latestVersion"]["channel"]) == (
        2,
        "development",
    )
    assert (detail["releasedVersion"]["number"], detail["releasedVersion"]["channel"]) == (
        1,
        "release",
    )
    assert detail["description"] == "One."  # the listing is the released version's


def test_a_space_installation_follows_its_organization_installations_mark(
    publish_as, org_admin, organization
):
    integration = publish_as().version.integration
    space = SpaceFactory(organization=organization)
    in_space = installation_create(
        user=org_admin, integration=integration, organization=organization, space=space
    )
    publish_as(channel="development", description="Two.")
    client = api_client(org_admin)
    assert client.get(f"{API}/installations/{in_space.pk}/").json()["version"]["number"] == 1
    client.post(f"{API}/installations/{in_space.parent_id}/development/", {"development": True})
    shown = client.get(f"{API}/installations/{in_space.pk}/").json()
    assert (shown["development"], shown["version"]["number"]) == (True, 2)


@pytest.mark.slow
def test_only_the_integrations_admins_mark_installations_and_bad_input_names_the_field(
    publish_as, org_admin, org_member, organization, globex_admin
):
    integration = publish_as(approved=True).version.integration
    ours = installed(org_admin, integration, organization)
    theirs = installed(globex_admin, integration, globex_admin.memberships.get().organization)
    url = f"{API}/installations/{ours.pk}/development/"
    assert api_client(org_member).post(url, {"development": True}).status_code == 403
    # Another organization's installation is not seen; nor may its admins mark it there.
    assert api_client(globex_admin).post(url, {"development": True}).status_code == 404
    refused = api_client(globex_admin).post(
        f"{API}/installations/{theirs.pk}/development/", {"development": True}
    )
    assert refused.status_code == 403
    bad = api_client(org_admin).post(url, {"development": "perhaps"})
    assert (bad.status_code, error_attrs(bad)) == (400, ["development"])
    assert not Installation.objects.filter(development=True).exists()


@pytest.mark.slow
def test_rollback_releases_an_older_version_and_revalidates(publish_as, org_admin, organization):
    integration = publish_as(description="One.").version.integration
    installation = installed(org_admin, integration, organization)
    publish_as(description="Two, with a key.", configurations=NEEDS_A_KEY)
    installation.refresh_from_db()
    assert (installation.status, installation.status_reasons) == (
        "pending",
        [{"path": "configuration.api_key", "message": "is required"}],
    )
    client = api_client(org_admin)
    answer = client.post(f"{API}/integrations/hello/versions/1/release/")
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    assert (body["version"]["number"], body["previous"]["number"], body["released"]) == (1, 2, True)
    assert body["changedInstallations"] == 1
    installation.refresh_from_db()
    assert installation.status == "active"
    integration.refresh_from_db()
    assert (integration.released_version.number, integration.description) == (1, "One.")

    again = client.post(f"{API}/integrations/hello/versions/1/release/").json()
    assert (again["released"], again["changedInstallations"]) == (False, 0)
    missing = client.post(f"{API}/integrations/hello/versions/9/release/")
    assert (missing.status_code, error_attrs(missing)) == (400, ["version"])


def test_only_the_owning_admins_roll_back(publish_as, org_member, globex_admin, outsider):
    publish_as(description="One.", approved=True)
    publish_as(description="Two.")
    url = f"{API}/integrations/hello/versions/1/release/"
    assert api_client(org_member).post(url).status_code == 403
    assert api_client(globex_admin).post(url).status_code == 403  # public: seen, not managed
    assert api_client().post(url).status_code in (401, 403)
    publish_as(description="Three, private.", visibility="private")
    assert api_client(globex_admin).post(url).status_code == 404
    assert IntegrationVersion.objects.get(number=3).integration.released_version.number == 3


def test_a_development_version_is_released_by_publishing_its_code(publish_as, org_admin):
    publish_as(description="One.")
    development = publish_as(channel="development", description="Two.").version
    with pytest.raises(ValidationError) as refused:
        integration_release(user=org_admin, integration=development.integration, number=2)
    assert refused.value.message_dict == {
        "version": ["version 2 is a development version: publish its code to release it"]
    }
    released = publish_as(description="Two.")
    assert (released.version.number, released.version.channel, released.outcome) == (
        3,
        "release",
        "created",
    )
    assert released.version.integration.development_version is None


def test_code_identical_to_an_older_version_is_refused_never_switched_to(publish_as):
    publish_as(description="One.")
    publish_as(description="Two.")
    publish_as(description="Three.")
    with pytest.raises(ValidationError) as refused:
        publish_as(description="Two.")
    assert refused.value.message_dict == {
        "version": [
            "this code is version 2's: run `docplatform-integration rollback 2` to make it "
            "current again"
        ]
    }
    unchanged = publish_as(description="Three.")
    assert (unchanged.version.number, unchanged.outcome) == (3, "unchanged")
    assert unchanged.version.integration.released_version.number == 3


def test_dev_with_the_released_or_an_older_development_versions_code(publish_as):
    publish_as(description="One.")
    assert publish_as(channel="development", description="One.").outcome == "unchanged"
    publish_as(channel="development", description="Two.")
    publish_as(channel="development", description="Three.")
    again = publish_as(channel="development", description="Two.")
    assert (again.version.number, again.outcome) == (2, "reused")
    assert again.version.integration.development_version.number == 2
    back = publish_as(channel="development", description="One.")
    assert (back.version.number, back.outcome) == (1, "reused")
    assert back.version.integration.development_version is None


def test_development_versions_are_pruned_never_a_released_one_or_the_one_running(
    publish_as, settings
):
    settings.INTEGRATION_DEVELOPMENT_VERSIONS_KEPT = 2
    integration = publish_as(description="One.").version.integration
    for text in ("Two.", "Three.", "Four.", "Five."):
        publish_as(channel="development", description=text)
    assert numbers(integration) == [1, 4, 5]
    publish_as(description="Six.")  # released: dev installations run it, 4 and 5 stay
    publish_as(channel="development", description="Seven.")
    assert numbers(integration) == [1, 5, 6, 7]
    integration.refresh_from_db()
    assert (integration.released_version.number, integration.development_version.number) == (6, 7)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_releases_each_integrations_latest_version(migrate_to):
    # The platform's tables as they were then too (a column added since has no value here).
    before = [("integrations", "0011_integration_log"), ("docplatform", "0009_event_traceparent")]
    old = migrate_to(before)
    organization = old.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    integration = old.get_model("integrations", "Integration").objects.create(
        id="i1", name="old", organization=organization, title="Old", description="Now."
    )
    versions = [
        old.get_model("integrations", "IntegrationVersion").objects.create(
            id=f"v{number}",
            integration=integration,
            number=number,
            content_hash=f"{number:064x}",
            manifest={"name": "old", "title": "Old", "description": text},
        )
        for number, text in ((1, "Then."), (2, "Now."))
    ]
    integration.latest_version = versions[-1]
    integration.save()
    migrate_to([("integrations", "0012_release_channel")])
    # The columns of then (shared_version came with 0014_listing_review).
    migrated = Integration.objects.only("released_version", "development_version").get(pk="i1")
    assert (migrated.released_version_id, migrated.development_version_id) == ("v2", None)
    listings = dict(migrated.versions.values_list("number", "listing"))
    assert (listings[1]["description"], listings[2]["description"]) == ("Then.", "Now.")
    assert set(migrated.versions.values_list("channel", flat=True)) == {"release"}
