"""Who may call an endpoint: people (session or personal token), and machine principals
(a plug-in's token, such as an installation's) only where their scopes grant it (DESIGN.md,
"API tokens")."""

from django.http import Http404
from rest_framework.permissions import BasePermission

from .. import access
from ..principals import is_machine


class IsPerson(BasePermission):
    """A signed-in user or a personal token. The default: machine tokens get 403."""

    message = "An installation token cannot call this endpoint."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) and not is_machine(request.user)


class IsStaffPerson(BasePermission):
    """A person who is staff: the operators' door of the REST API (as the Django admin is)."""

    message = "Only operators (staff) may call this endpoint."

    def has_permission(self, request, view):
        return IsPerson().has_permission(request, view) and bool(request.user.is_staff)


class IsPersonOrScopedInstallation(BasePermission):
    """People, or a machine principal (an installation or integration token) that acts with
    the scope the view names for the request's method in ``installation_scopes`` (e.g.
    ``{"GET": "space:content:read"}``); the principal is then narrowed to that scope
    (``MachinePrincipal.within``), so what it looks up is what it reaches with it."""

    def has_permission(self, request, view):
        if not is_machine(request.user):
            return IsPerson().has_permission(request, view)
        method = "GET" if request.method == "HEAD" else request.method
        scope = view.installation_scopes.get(method)
        if scope is None:
            self.message = "An installation token cannot call this endpoint."
            return False
        if not request.user.has_scope(scope):
            self.message = request.user.scope_refusal(scope)
            return False
        request.user = request.user.within(scope)
        return True


class ActsByRole(BasePermission):
    """People by their role in the organization of the object a view acts on
    (``access.may``): the view names the action for each method in ``access_actions``
    (``{"GET": Action.READ, "PATCH": Action.MANAGE_SPACE}``) and calls
    ``check_object_permissions`` with the object it looked up (generic views do in
    ``get_object``). Someone outside the organization gets 404, a member whose role does not
    allow the action 403 naming who may. Machine principals pass as
    ``IsPersonOrScopedInstallation`` lets them, when the view names ``installation_scopes``
    (their scopes and reach decide); else they get 403."""

    def has_permission(self, request, view):
        if is_machine(request.user) and getattr(view, "installation_scopes", None) is not None:
            allowed = IsPersonOrScopedInstallation()
            if not allowed.has_permission(request, view):
                self.message = allowed.message
                return False
            return True
        person = IsPerson()
        if not person.has_permission(request, view):
            self.message = person.message
            return False
        return True

    def has_object_permission(self, request, view, obj):
        if is_machine(request.user):
            return True
        action = view.access_actions["GET" if request.method == "HEAD" else request.method]
        if access.may(request.user, action, obj):
            return True
        if access.role_of(request.user, obj) is None:
            raise Http404
        self.message = access.refusal(action)
        return False
