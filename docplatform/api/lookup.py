"""How every resource of the REST API looks things up for the caller: their organizations,
and the spaces and sites they reach (a member's organizations', or a machine principal's such
as an installation's). Anything else answers 404, as if it did not exist.
"""

from django.db.models import Q
from django.http import Http404
from django.shortcuts import get_object_or_404

from ..access import organization_of_member, sites_visible_to, spaces_visible_to
from ..models import Organization, Space
from ..principals import is_machine


def organization_for(request, ref: str) -> Organization:
    """One of the caller's organizations, by id or subdomain (a machine principal's: the
    ones it reaches); 404 for any other."""
    if is_machine(request.user):
        organization = request.user.organizations().filter(Q(id=ref) | Q(subdomain=ref)).first()
    else:
        organization = organization_of_member(request.user, ref)
    if organization is None:
        raise Http404
    return organization


def spaces_for(request):
    """The spaces the caller reaches: a member's organizations' or a machine principal's (an
    installation's)."""
    if is_machine(request.user):
        return request.user.spaces()
    return spaces_visible_to(request.user)


def sites_for(request):
    if is_machine(request.user):
        return request.user.sites()
    return sites_visible_to(request.user)


def space_for(request, space_id: str) -> Space:
    return get_object_or_404(spaces_for(request).select_related("organization"), pk=space_id)


def organization_of_installation(request, ref: str) -> tuple[Organization, str]:
    """The organization ``ref`` names (id or subdomain) and the installation through which
    the caller, a machine principal, acts in it; 404 where it has none (another
    organization's installation reaches nothing here)."""
    organization = Organization.objects.filter(Q(id=ref) | Q(subdomain=ref)).first()
    # A machine principal without ``installation_in`` acts for no one installation: nothing here.
    installation_in = getattr(request.user, "installation_in", None)
    installation_id = organization and installation_in and installation_in(organization.pk)
    if not installation_id:
        raise Http404
    return organization, installation_id
