"""Migration 0010 gives every site's spaces an order (their titles' order, as they were shown)
and keeps every existing site published."""

import pytest

BEFORE = [("docplatform", "0009_event_traceparent")]
AFTER = [("docplatform", "0010_teams_and_audit")]


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_existing_sites_stay_published_with_their_spaces_in_title_order(migrate_to):
    old = migrate_to(BEFORE)
    organization = old.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    space_model = old.get_model("docplatform", "Space")
    zeta, alpha = (
        space_model.objects.create(id=pk, organization=organization, title=title)
        for pk, title in (("s1", "Zeta"), ("s2", "Alpha"))
    )
    site = old.get_model("docplatform", "Site").objects.create(
        id="x1", organization=organization, title="Docs"
    )
    site.spaces.add(zeta, alpha)

    new = migrate_to(AFTER)
    migrated = new.get_model("docplatform", "Site").objects.get(pk="x1")
    assert migrated.published
    placements = new.get_model("docplatform", "SiteSpace").objects.filter(site=migrated)
    assert list(placements.values_list("space_id", "position")) == [("s2", 0), ("s1", 1)]
