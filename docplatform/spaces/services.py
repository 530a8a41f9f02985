"""Writes of spaces themselves: an organization's members create them, its admins rename
them, set their visibility and delete them (who may is the access module's table, asked by
the doors: the REST API and the pages). Each leaves one row in the organization's audit log,
in the same transaction."""

from django.core.exceptions import ValidationError
from django.db import transaction

from .. import services
from ..audit.services import audit_record
from ..models import Organization, Space
from ..search_index import language_problem, space_rows_delete, space_search_language_set

#: The most approvals a space's merge rules may ask for.
MAX_APPROVALS = 20


def _visibility_problem(visibility) -> str | None:
    if visibility not in Space.Visibility.values:
        return f"must be one of {', '.join(Space.Visibility.values)}"
    return None


@transaction.atomic
def space_create(
    *, organization: Organization, title: str, visibility: str = Space.Visibility.PRIVATE, actor
) -> Space:
    """A new, empty space of the organization (private unless said). ValidationError naming
    ``title`` or ``visibility``, with nothing written."""
    errors = {}
    try:
        title = services.clean_title(title, model=Space)
    except ValidationError as error:
        errors.update(error.message_dict)
    if problem := _visibility_problem(visibility):
        errors["visibility"] = [problem]
    if errors:
        raise ValidationError(errors)
    space = Space.objects.create(organization=organization, title=title, visibility=visibility)
    audit_record(
        action="space.created",
        actor=actor,
        target=space,
        details={"title": title, "visibility": visibility},
    )
    return space


@transaction.atomic
def space_update(
    *,
    space: Space,
    actor,
    title=None,
    visibility=None,
    readers_may_comment: bool | None = None,
    required_approvals: int | None = None,
    require_up_to_date: bool | None = None,
    change_requests_only: bool | None = None,
    search_language: str | None = None,
) -> Space:
    """Rename the space, set its visibility, whether its organization's readers may comment
    on its pages, its change requests' merge rules, whether members edit through change
    requests only and its search language (``search_index.space_search_language_set``, which
    indexes its pages again) (None leaves any as it is);
    ``space_visibility_updated`` fires when the visibility changed. One audit row naming what
    changed, from what to what (none when nothing did). ``actor``: a person, or the machine
    principal of an installation's token with ``space:metadata:write``."""
    errors = {}
    if title is not None:
        try:
            title = services.clean_title(title, model=Space)
        except ValidationError as error:
            errors.update(error.message_dict)
    if visibility is not None and (problem := _visibility_problem(visibility)):
        errors["visibility"] = [problem]
    if required_approvals is not None and not 0 <= required_approvals <= MAX_APPROVALS:
        errors["required_approvals"] = [f"from 0 to {MAX_APPROVALS}"]
    if search_language is not None and (problem := language_problem(search_language)):
        errors["search_language"] = [problem]
    if errors:
        raise ValidationError(errors)
    changes = {}
    if title is not None and title != space.title:
        changes["title"] = {"from": space.title, "to": title}
        space.title = title
        space.save(update_fields=["title"])
    if visibility is not None and visibility != space.visibility:
        changes["visibility"] = {"from": space.visibility, "to": visibility}
        services.space_visibility_set(space=space, visibility=visibility)
    if readers_may_comment is not None and readers_may_comment != space.readers_may_comment:
        changes["readersMayComment"] = {
            "from": space.readers_may_comment,
            "to": readers_may_comment,
        }
        space.readers_may_comment = readers_may_comment
        space.save(update_fields=["readers_may_comment"])
    rules = {
        "required_approvals": required_approvals,
        "require_up_to_date": require_up_to_date,
        "change_requests_only": change_requests_only,
    }
    changed_rules = [
        name for name, value in rules.items() if value is not None and value != getattr(space, name)
    ]
    for name in changed_rules:
        changes[name] = {"from": getattr(space, name), "to": rules[name]}
        setattr(space, name, rules[name])
    if changed_rules:
        space.save(update_fields=changed_rules)
    if search_language is not None and search_language != space.search_language:
        changes["searchLanguage"] = {"from": space.search_language, "to": search_language}
        space_search_language_set(space=space, language=search_language)
    if changes:
        audit_record(action="space.changed", actor=actor, target=space, details=changes)
    return space


@transaction.atomic
def space_delete(*, space: Space, actor) -> None:
    """Delete the space with everything that is only its own: its pages and revisions, its
    Git connection and syncs, its places on sites, the visitors' feedback, and the
    integrations installed into it (the database's cascade). Its events stay in the
    organization's log, no longer pointing at it."""
    audit_record(
        action="space.deleted",
        actor=actor,
        target=space,
        details={"title": space.title, "visibility": space.visibility},
    )
    space_rows_delete(space)
    space.delete()
