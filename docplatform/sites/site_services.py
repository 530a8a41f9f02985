"""Writes of sites themselves, by an organization's admins (who may is the access module's
table, asked by the doors: the REST API and the Sites page): create one, change its title and
the spaces it publishes in their order, publish or unpublish it (an unpublished site answers
404 on ``SITES_URL``), delete it. Each change leaves one row in the organization's audit log,
in the same transaction."""

from django.core.exceptions import ValidationError
from django.db import transaction

from .. import services
from ..audit.services import audit_record
from ..models import Organization, Site, Space
from .models import SiteSpace
from .selectors import site_space_ids
from .visitor_auth import visitor_auth

MAX_SPACES = 200


def _space_ids_problem(organization: Organization, space_ids) -> str | None:
    """Why ``space_ids`` is not an ordered list of the organization's spaces, or None."""
    if not isinstance(space_ids, list | tuple) or not all(isinstance(i, str) for i in space_ids):
        return "must be a list of space ids"
    if len(space_ids) > MAX_SPACES:
        return f"at most {MAX_SPACES} spaces"
    if len(set(space_ids)) != len(space_ids):
        return "lists a space twice"
    known = set(
        Space.objects.filter(organization=organization, pk__in=space_ids).values_list(
            "pk", flat=True
        )
    )
    unknown = [space_id for space_id in space_ids if space_id not in known]
    if unknown:
        return f"no space of this organization has the id {', '.join(unknown)}"
    return None


def _checked(organization: Organization, *, title, space_ids, published) -> dict:
    """The fields given (None: not given), cleaned; ValidationError naming every wrong one."""
    errors = {}
    cleaned = {"title": title, "space_ids": space_ids, "published": published}
    if title is not None:
        try:
            cleaned["title"] = services.clean_title(title, model=Site)
        except ValidationError as error:
            errors.update(error.message_dict)
    if space_ids is not None and (problem := _space_ids_problem(organization, space_ids)):
        errors["spaces"] = [problem]
    if published is not None and not isinstance(published, bool):
        errors["published"] = ["must be true or false"]
    if errors:
        raise ValidationError(errors)
    return cleaned


AUDIENCES = ("public", "authenticated")


def _audience_checked(site: Site, audience, installation_id) -> tuple[str, str] | None:
    """The site's audience and sign-in installation after a change of either (None: neither
    given): ValidationError naming ``audience`` or ``authInstallation``. A public site keeps
    no installation; an authenticated one needs one of its own installations holding
    ``site:visitor:auth`` (``visitor_auth``)."""
    if audience is None and installation_id is None:
        return None
    if audience is not None and audience not in AUDIENCES:
        raise ValidationError({"audience": [f"must be one of {', '.join(AUDIENCES)}"]})
    audience = audience or site.audience
    if audience == "public":
        return audience, ""
    installation_id = site.visitor_auth_installation if installation_id is None else installation_id
    if not isinstance(installation_id, str) or not installation_id:
        problem = "an authenticated site needs the installation that signs its visitors in"
        raise ValidationError({"authInstallation": [problem]})
    problem = visitor_auth().installation_problem(site, installation_id)
    if problem:
        raise ValidationError({"authInstallation": [problem]})
    return audience, installation_id


def _place(site: Site, space_ids: list[str]) -> None:
    SiteSpace.objects.filter(site=site).delete()
    SiteSpace.objects.bulk_create(
        SiteSpace(site=site, space_id=space_id, position=position)
        for position, space_id in enumerate(space_ids)
    )


@transaction.atomic
def site_create(*, organization: Organization, title, space_ids, published=False, actor) -> Site:
    """A site of the organization publishing ``space_ids`` (its spaces, in that order);
    served on ``SITES_URL`` once ``published``. ValidationError naming ``title``, ``spaces``
    or ``published``, with nothing written."""
    fields = _checked(
        organization,
        title=title if title is not None else "",
        space_ids=space_ids if space_ids is not None else [],
        published=False if published is None else published,
    )
    site = Site.objects.create(
        organization=organization, title=fields["title"], published=fields["published"]
    )
    _place(site, fields["space_ids"])
    audit_record(
        action="site.created",
        actor=actor,
        target=site,
        details={
            "title": site.title,
            "spaces": fields["space_ids"],
            "published": site.published,
        },
    )
    return site


@transaction.atomic
def site_update(
    *,
    site: Site,
    actor,
    title=None,
    space_ids=None,
    published=None,
    audience=None,
    auth_installation=None,
) -> Site:
    """Change the site's title, the spaces it publishes and their order, whether it is
    published, and its audience (``public``, or ``authenticated`` through
    ``auth_installation``: ``_audience_checked``); None leaves a field as it is. A
    publication changed is its own audit row (``site.published``, ``site.unpublished``);
    the rest is one ``site.changed`` row naming what changed, from what to what."""
    errors = {}
    try:
        fields = _checked(site.organization, title=title, space_ids=space_ids, published=published)
    except ValidationError as error:
        errors |= error.message_dict
    try:
        access = _audience_checked(site, audience, auth_installation)
    except ValidationError as error:
        errors |= error.message_dict
    if errors:
        raise ValidationError(errors)
    changes = {}
    if access is not None and access != (site.audience, site.visitor_auth_installation):
        changes["audience"] = {
            "from": {"audience": site.audience, "installation": site.visitor_auth_installation},
            "to": {"audience": access[0], "installation": access[1]},
        }
        site.audience, site.visitor_auth_installation = access
    if fields["title"] is not None and fields["title"] != site.title:
        changes["title"] = {"from": site.title, "to": fields["title"]}
        site.title = fields["title"]
    if fields["space_ids"] is not None:
        before = site_space_ids(site)
        if before != fields["space_ids"]:
            changes["spaces"] = {"from": before, "to": fields["space_ids"]}
            _place(site, fields["space_ids"])
    publication = fields["published"] is not None and fields["published"] != site.published
    if publication:
        site.published = fields["published"]
    if changes or publication:
        site.save(update_fields=["title", "published", "audience", "visitor_auth_installation"])
    if changes:
        audit_record(action="site.changed", actor=actor, target=site, details=changes)
    if publication:
        action = "site.published" if site.published else "site.unpublished"
        audit_record(action=action, actor=actor, target=site)
    return site


@transaction.atomic
def site_delete(*, site: Site, actor) -> None:
    """Delete the site, with the integrations installed into it and the feedback given on
    it (the database's cascade); the spaces it published stay."""
    audit_record(
        action="site.deleted",
        actor=actor,
        target=site,
        details={"title": site.title, "spaces": site_space_ids(site)},
    )
    site.delete()
