"""OAuth tasks: connect a task tracker account (OAuth 2), then offer its projects as the
options of the ``project`` property (its ``completion_url``)."""

from docplatform_sdk import Response, create_integration, create_oauth_handler

#: The manifest's button property: the OAuth handler stores the credentials under it.
ACCOUNT_PROPERTY = "tasks"


def connect(request, context):
    """``/oauth``: redirect to the task tracker, then exchange the code on the way back."""
    secrets = context.environment.secrets
    handler = create_oauth_handler(
        client_id=secrets.CLIENT_ID,
        client_secret=secrets.CLIENT_SECRET,
        authorize_url=secrets.AUTHORIZE_URL,
        access_token_url=secrets.TOKEN_URL,
        scopes=["projects:read"],
    )
    return handler(request, context)


def projects(request, context):
    """``/projects``: the connected account's projects as ``[{"value", "label"}]``."""
    credentials = context.environment.installation.configuration.get(ACCOUNT_PROPERTY)
    if not credentials:
        return Response.json(
            {"error": "not_connected", "message": "connect your task tracker account first"},
            status=409,
        )
    answer = context.fetch(
        context.environment.secrets.PROJECTS_URL,
        headers={
            "Authorization": f"Bearer {credentials['access_token']}",
            "Accept": "application/json",
        },
    )
    if answer.status != 200:
        return Response.json(
            {"error": "provider_error", "message": f"the task tracker answered {answer.status}"},
            status=502,
        )
    return Response.json(
        [{"value": project["id"], "label": project["name"]} for project in answer.json()]
    )


ROUTES = {"/oauth": connect, "/projects": projects}


def fetch(request, context):
    route = ROUTES.get(request.route)
    if route is None:
        return Response.json({"error": "not_found", "message": "no such page"}, status=404)
    return route(request, context)


integration = create_integration(fetch=fetch)
