"""The review of public listings: a public integration is its owners' alone (they install and
run it at once) until an operator approves it, in the admin, with ``manage.py integration
review`` or through the review API (staff only); a later version asking for more waits while
the approved one stays listed and installable; a rejection, with its reason, is mailed to
the owners' admins; an unlisted integration's install link is on its page for its owners."""

import pytest
from django.contrib.auth import get_user_model

from docplatform.audit.models import AuditEntry
from integrations.models import Installation, Integration, ListingReview
from integrations.policies import installation_scopes, running_version
from integrations.services.installations import installation_create
from tests.api_helpers import API, api_client, error_attrs
from tests.factories import MembershipFactory, OrganizationFactory
from tests.integrations.conftest import listing_approve
from tests.processes import manage_py

pytestmark = pytest.mark.django_db


@pytest.fixture
def globex(db):
    return OrganizationFactory(subdomain="globex")


@pytest.fixture
def globex_admin(globex):
    return MembershipFactory(organization=globex, role="admin").user


@pytest.fixture
def staff(db):
    return get_user_model().objects.create_user("operator", "op@example.com", is_staff=True)


@pytest.fixture
def tool(publish, org_admin):
    """acme's public integration, its first version waiting for review."""
    return publish(org_admin, name="tool", visibility="public", scopes=["space:content:read"])


def catalogue_names(user) -> list[str]:
    response = api_client(user).get(f"{API}/integrations/")
    assert response.status_code == 200
    return [row["name"] for row in response.json()["results"] if row["name"] == "tool"]


def install(user, organization_subdomain: str):
    return api_client(user).post(
        f"{API}/orgs/{organization_subdomain}/installations/", {"integration": "tool"}
    )


def marketplace(client, user):
    client.force_login(user)
    return client


def test_a_public_integration_is_its_owners_alone_until_approved(
    tool, org_admin, globex_admin, client
):
    review = ListingReview.objects.get(version__integration=tool)
    assert (review.status, review.automatic, review.new_scopes) == (
        "pending",
        False,
        ["space:content:read"],
    )
    # Other organizations: not in the catalogue (API and page), no page, no install.
    assert catalogue_names(globex_admin) == []
    assert api_client(globex_admin).get(f"{API}/integrations/tool/").status_code == 404
    refused = install(globex_admin, "globex")
    assert refused.status_code == 404
    assert not Installation.objects.filter(organization__subdomain="globex").exists()
    pages = marketplace(client, globex_admin)
    assert "integrations/tool/" not in pages.get("/marketplace/orgs/globex/").content.decode()
    assert pages.get("/marketplace/orgs/globex/integrations/tool/").status_code == 404
    assert pages.get("/marketplace/orgs/globex/integrations/tool/install/").status_code == 404

    # The owners: listed, and installed at once.
    assert catalogue_names(org_admin) == ["tool"]
    assert install(org_admin, "acme").status_code == 201
    owners_page = marketplace(client, org_admin).get("/marketplace/orgs/acme/integrations/tool/")
    assert "waits for the platform operators' review" in owners_page.content.decode()

    listing_approve(tool)
    assert catalogue_names(globex_admin) == ["tool"]
    pages = marketplace(client, globex_admin)
    assert "integrations/tool/" in pages.get("/marketplace/orgs/globex/").content.decode()
    assert pages.get("/marketplace/orgs/globex/integrations/tool/").status_code == 200
    assert install(globex_admin, "globex").status_code == 201


def test_a_version_asking_for_more_waits_while_the_approved_one_stays_offered(
    tool, publish, org_admin, globex, globex_admin, client
):
    listing_approve(tool)
    first = tool.released_version
    ours = installation_create(user=org_admin, integration=tool, organization=tool.organization)
    more = ["space:content:read", "space:metadata:read"]
    tool = publish(org_admin, name="tool", visibility="public", scopes=more)
    second = tool.released_version
    assert second.review.status == "pending"
    assert second.review.new_scopes == ["space:metadata:read"]

    # Still listed for others, at the approved version: its scopes on the page and the
    # install screen, granted at install, and what their installation runs.
    assert catalogue_names(globex_admin) == ["tool"]
    pages = marketplace(client, globex_admin)
    page = pages.get("/marketplace/orgs/globex/integrations/tool/").content.decode()
    assert "space:content:read" in page and "space:metadata:read" not in page
    consent = pages.get("/marketplace/orgs/globex/integrations/tool/install/?level=organization")
    assert "space:metadata:read" not in consent.content.decode()
    assert install(globex_admin, "globex").status_code == 201
    theirs = Installation.objects.get(organization=globex)
    assert running_version(tool, theirs) == first
    shown = api_client(globex_admin).get(f"{API}/installations/{theirs.pk}/").json()
    assert shown["version"] == {"number": 1, "development": False}
    assert installation_scopes(theirs) == ["space:content:read"]
    # The owners run the new version (its new scope awaiting their own admin's approval).
    ours.refresh_from_db()
    assert running_version(tool, ours) == second

    listing_approve(tool)
    theirs = Installation.objects.get(pk=theirs.pk)
    assert running_version(theirs.integration, theirs) == second
    page = pages.get("/marketplace/orgs/globex/integrations/tool/").content.decode()
    assert "space:metadata:read" in page


def test_a_version_asking_for_nothing_new_is_approved_at_publish(tool, publish, org_admin):
    listing_approve(tool)
    again = publish(org_admin, name="tool", visibility="public", description="Now better.")
    review = again.released_version.review
    assert (review.status, review.automatic) == ("approved", True)
    assert review.reason == "no scope or host beyond version 1"
    assert again.shared_version == again.released_version


def test_a_new_host_waits_for_review(tool, publish, org_admin):
    listing_approve(tool)
    tool = publish(
        org_admin, name="tool", visibility="public", network={"fetch": ["api.example.com"]}
    )
    review = tool.released_version.review
    assert (review.status, review.new_hosts) == ("pending", ["api.example.com"])
    assert tool.shared_version.number == 1


def test_a_rejection_is_mailed_to_the_owners_admins_and_keeps_it_hidden(
    tool, org_admin, globex_admin, staff, mailoutbox, django_capture_on_commit_callbacks
):
    other_admin = MembershipFactory(organization=tool.organization, role="admin").user
    MembershipFactory(organization=tool.organization, role="member")  # not mailed
    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(staff).post(
            f"{API}/integrations/tool/review/",
            {"decision": "reject", "reason": "The description promises what it cannot do."},
            format="json",
        )
    assert response.status_code == 200, response.content
    assert response.json()["status"] == "rejected"
    assert response.json()["reviewer"] == "operator"
    [mail] = mailoutbox
    assert sorted(mail.to) == sorted([org_admin.email, other_admin.email])
    assert "was not listed" in mail.subject
    assert "The description promises what it cannot do." in mail.body
    assert catalogue_names(globex_admin) == []
    assert install(globex_admin, "globex").status_code == 404
    assert AuditEntry.objects.filter(action="integration.listing_rejected").count() == 1


def test_the_demo_data_approves_its_listings_without_mail(
    tool, mailoutbox, django_capture_on_commit_callbacks
):
    from integrations.operators import OPERATOR
    from integrations.services.reviews import listing_review_decide, pending_review_of

    with django_capture_on_commit_callbacks(execute=True):
        listing_review_decide(
            user=OPERATOR, review=pending_review_of(tool), decision="approve", notify=False
        )
    assert mailoutbox == []
    tool.refresh_from_db()
    assert tool.shared_version == tool.released_version


@pytest.mark.slow
def test_the_review_api_is_for_staff_and_a_rejection_needs_a_reason(
    tool, org_admin, staff, mailoutbox, django_capture_on_commit_callbacks
):
    url = f"{API}/integrations/tool/review/"
    for person in (org_admin, MembershipFactory(role="admin").user):
        refused = api_client(person).post(url, {"decision": "approve"}, format="json")
        assert refused.status_code == 403
    no_reason = api_client(staff).post(url, {"decision": "reject"}, format="json")
    assert no_reason.status_code == 400
    assert error_attrs(no_reason) == ["reason"]
    bad = api_client(staff).post(url, {"decision": "maybe"}, format="json")
    assert (bad.status_code, error_attrs(bad)) == (400, ["decision"])
    assert ListingReview.objects.get(version__integration=tool).status == "pending"
    with django_capture_on_commit_callbacks(execute=True):
        approved = api_client(staff).post(url, {"decision": "approve"}, format="json")
    assert (approved.status_code, approved.json()["status"]) == (200, "approved")
    assert "is listed in the marketplace" in mailoutbox[0].subject
    again = api_client(staff).post(url, {"decision": "approve"}, format="json")
    assert (again.status_code, error_attrs(again)) == (400, ["version"])


def test_the_admin_queue_approves_and_rejects_with_a_reason(
    tool, publish, org_admin, staff, client, mailoutbox
):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    other = publish(
        org_admin,
        name="other",
        visibility="public",
        network={"fetch": ["x.io"]},
        blocks=[{"id": "card", "title": "Card", "description": "A card."}],  # with code
    )
    queue = client.get("/admin/integrations/listingreview/").content.decode()
    assert "tool" in queue and "other" in queue
    review = ListingReview.objects.get(version__integration=other)
    detail = client.get(f"/admin/integrations/listingreview/{review.pk}/change/").content.decode()
    assert "Read the content of your spaces" in detail  # the scope in words
    assert "x.io" in detail
    assert f"{len(bytes(other.released_version.bundle))} bytes" in detail

    changelist = "/admin/integrations/listingreview/"
    tool_review = ListingReview.objects.get(version__integration=tool)
    done = client.post(changelist, {"action": "approve", "_selected_action": [tool_review.pk]})
    assert done.status_code == 302
    tool_review.refresh_from_db()
    assert (tool_review.status, tool_review.reviewer) == ("approved", staff)

    asked = client.post(changelist, {"action": "reject", "_selected_action": [review.pk]})
    assert asked.status_code == 200 and 'name="reason"' in asked.content.decode()
    review.refresh_from_db()
    assert review.status == "pending"
    rejected = client.post(
        changelist,
        {"action": "reject", "_selected_action": [review.pk], "apply": "1", "reason": "Why x.io?"},
    )
    assert rejected.status_code == 302
    review.refresh_from_db()
    assert (review.status, review.reason) == ("rejected", "Why x.io?")
    assert AuditEntry.objects.filter(action="integration.listing_approved").count() == 1


def test_an_unlisted_integrations_install_link_is_on_its_page_for_its_owners(
    publish, org_admin, org_member, globex_admin, client
):
    unlisted = publish(org_admin, name="tool", visibility="unlisted")
    link = f"/marketplace/install/tool/?token={unlisted.install_link_token}"
    page = marketplace(client, org_admin).get("/marketplace/orgs/acme/integrations/tool/")
    assert link in page.content.decode()
    member_page = marketplace(client, org_member).get("/marketplace/orgs/acme/integrations/tool/")
    assert member_page.status_code == 200 and link not in member_page.content.decode()
    theirs = marketplace(client, globex_admin).get(link.replace("?", "?org=globex&"))
    assert theirs.status_code == 200 and "Install link</h2>" not in theirs.content.decode()
    assert not ListingReview.objects.filter(version__integration=unlisted).exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_review_command_approves_and_rejects_as_operators_run_it(publish, org_admin):
    publish(org_admin, name="tool", visibility="public")
    rejected = manage_py("integration", "review", "tool", "--reject", "Not ready")
    assert rejected.returncode == 0, rejected.stderr
    assert rejected.stdout.strip() == "tool version 1: rejected"
    assert ListingReview.objects.get(version__integration__name="tool").reason == "Not ready"

    nothing = manage_py("integration", "review", "tool", "--approve")
    assert nothing.returncode == 1
    assert "no version of tool waits for review" in nothing.stderr

    publish(org_admin, name="tool", visibility="public", description="Fixed.")
    approved = manage_py("integration", "review", "tool", "--approve")
    assert approved.returncode == 0, approved.stderr
    assert approved.stdout.strip() == "tool version 2: approved"
    usage = manage_py("integration", "review", "tool")
    assert usage.returncode == 2
    unknown = manage_py("integration", "review", "nope", "--approve")
    assert unknown.returncode == 1 and "no integration is named 'nope'" in unknown.stderr


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_what_was_listed_listed(migrate_to):
    organization = OrganizationFactory(subdomain="old")  # the platform's tables stay current
    before = [("integrations", "0012_release_channel")]
    old = migrate_to(before)
    made = {}
    for visibility in ("public", "private"):
        integration = old.get_model("integrations", "Integration").objects.create(
            id=visibility, name=visibility, organization_id=organization.pk, title="Old"
        )
        version = old.get_model("integrations", "IntegrationVersion").objects.create(
            id=f"{visibility}-1",
            integration=integration,
            number=1,
            content_hash="0" * 64,
            manifest={"name": visibility},
            listing={"visibility": visibility},
        )
        integration.latest_version = integration.released_version = version
        integration.save()
        made[visibility] = integration
    migrate_to([("integrations", "0014_listing_review")])
    shared = dict(Integration.objects.filter(pk__in=made).values_list("pk", "shared_version_id"))
    assert shared == {"public": "public-1", "private": "private-1"}
    review = ListingReview.objects.get(version_id="public-1")
    assert (review.status, review.reason) == (
        "approved",
        "listed before reviews of public listings existed",
    )
    assert not ListingReview.objects.filter(version_id="private-1").exists()
