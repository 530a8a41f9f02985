"""Who may call an endpoint: people (session or personal token), and installation tokens
only where the installation's scopes grant it (DESIGN.md, "API tokens")."""

from rest_framework.permissions import BasePermission

from integrations.policies import installation_has_scope, scopes_awaiting_approval

from .authentication import is_installation


class IsPerson(BasePermission):
    """A signed-in user or a personal token. The default: installation tokens get 403."""

    message = "An installation token cannot call this endpoint."

    def has_permission(self, request, view):
        return bool(request.user and request.user.is_authenticated) and not is_installation(
            request.user
        )


class IsPersonOrScopedInstallation(BasePermission):
    """People, or an installation token whose installation acts with the scope the view names
    for the request's method in ``installation_scopes`` (e.g. ``{"GET": "space:content:read"}``):
    a scope its organization granted (``integrations.policies``)."""

    def has_permission(self, request, view):
        if not is_installation(request.user):
            return IsPerson().has_permission(request, view)
        method = "GET" if request.method == "HEAD" else request.method
        scope = view.installation_scopes.get(method)
        if scope is None:
            self.message = "An installation token cannot call this endpoint."
            return False
        if not installation_has_scope(request.user.installation, scope):
            self.message = f"The installation does not have the scope {scope}."
            if scope in scopes_awaiting_approval(request.user.installation):
                self.message += " It awaits an admin's approval."
            return False
        return True


class IsInstallation(BasePermission):
    """An installation token only (the installation's own endpoint)."""

    message = "Only an installation token can call this endpoint."

    def has_permission(self, request, view):
        return is_installation(request.user)
