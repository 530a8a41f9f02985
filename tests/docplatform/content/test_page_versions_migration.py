"""Migrations 0021 to 0023 fold the pages every revision copied whole into page versions: each
revision still holds the pages it held, in its order, a page no revision changed is one row,
and a rating of a copy points at the row it repeated. Backwards, every revision gets its copies
again."""

import pytest

BEFORE = [("docplatform", "0020_event_test_flag")]
AFTER = [("docplatform", "0023_page_versions_finish")]

#: Three revisions as the old tables held them: (path, title, body) in position order.
REVISIONS = [
    [("a", "A", "one"), ("b", "B", "two"), ("c", "C", "three")],
    [("a", "A", "one, edited"), ("b", "B", "two"), ("c", "C", "three")],
    [("b", "B", "two"), ("a", "A", "one, edited")],  # c removed, b moved first
]


def _old_rows(apps):
    organization = apps.get_model("docplatform", "Organization").objects.create(
        id="o1", subdomain="old", title="Old"
    )
    space = apps.get_model("docplatform", "Space").objects.create(
        id="s1", organization=organization, title="Handbook"
    )
    revision_model = apps.get_model("docplatform", "Revision")
    page_model = apps.get_model("docplatform", "Page")
    revisions = []
    for number, pages in enumerate(REVISIONS, start=1):
        revision = revision_model.objects.create(id=f"r{number}", space=space, message="m")
        for position, (path, title, body) in enumerate(pages):
            page_model.objects.create(
                id=f"p{number}{path}",
                revision=revision,
                path=path,
                title=title,
                body=body,
                position=position,
            )
        revisions.append(revision)
    space.current_revision = revisions[-1]
    space.save()
    site = apps.get_model("docplatform", "Site").objects.create(
        id="x1", organization=organization, title="Docs"
    )
    apps.get_model("docplatform", "PageFeedback").objects.create(
        site=site, space=space, page_path="b", page_id="p2b", visitor="v", rating="good"
    )


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_every_revision_keeps_its_pages_and_an_unchanged_page_is_one_row(migrate_to):
    _old_rows(migrate_to(BEFORE))

    new = migrate_to(AFTER)
    page_model = new.get_model("docplatform", "Page")
    revisions = new.get_model("docplatform", "Revision").objects.order_by("number")
    assert [(r.pk, r.number, r.page_count) for r in revisions] == [
        ("r1", 1, 3),
        ("r2", 2, 3),
        ("r3", 3, 2),
    ]
    for revision, pages in zip(revisions, REVISIONS, strict=True):
        held = sorted(
            page_model.objects.filter(
                space_id="s1", valid_from__lte=revision.number, valid_to__gt=revision.number
            ),
            key=lambda page: (page.position, page.path),
        )
        assert [(p.path, p.title, p.body) for p in held] == pages
    # b (unchanged until it moved in r3), c (removed in r3), a (twice): 5 rows, not 8
    assert page_model.objects.count() == 5
    assert set(page_model.objects.values_list("pk", flat=True)) == {
        "p1a",
        "p1b",
        "p1c",
        "p2a",
        "p3b",
    }
    feedback = new.get_model("docplatform", "PageFeedback").objects.get()
    assert feedback.page_id == "p1b"  # the copy it rated repeated r1's row

    old = migrate_to(BEFORE)
    copies = old.get_model("docplatform", "Page").objects.order_by("revision_id", "position")
    assert [(p.revision_id, p.path, p.body) for p in copies] == [
        (f"r{number}", path, body)
        for number, pages in enumerate(REVISIONS, start=1)
        for path, _, body in pages
    ]
