"""Who may call an endpoint: people (session or personal token), and machine principals
(a plug-in's token, such as an installation's) only where their scopes grant it (DESIGN.md,
"API tokens")."""

from rest_framework.permissions import BasePermission

from ..principals import is_machine


class IsPerson(BasePermission):
    """A signed-in user or a personal token. The default: machine tokens get 403."""

    message = "An installation token cannot call this endpoint."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) and not is_machine(request.user)


class IsPersonOrScopedInstallation(BasePermission):
    """People, or a machine principal (an installation token) that acts with the scope the
    view names for the request's method in ``installation_scopes`` (e.g. ``{"GET":
    "space:content:read"}``)."""

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
        return True
