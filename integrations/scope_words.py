"""What an integration may do, in words a member understands: what each permission scope
lets it do, and which hosts its code may call. One home for the words: the marketplace's
install screen and pages (``marketplace.scopes``) and the admin's review queue of public
listings, here below both."""

from docplatform_sdk.manifest.network import ANY_PUBLIC_HOST

SCOPE_LABELS: dict[str, str] = {
    "space:content:read": "Read the content of your spaces",
    "space:content:write": "Change the content of your spaces",
    "space:metadata:read": "Read the settings and metadata of your spaces",
    "space:metadata:write": "Change the settings and metadata of your spaces",
    "space:git:sync": "Follow the Git syncs of your spaces",
    "site:metadata:read": "Read the settings of your sites",
    "site:views:read": "See the page views of your sites",
    "site:script:inject": "Add scripts to your sites (internal platform use)",
    "site:script:cookies": "Set cookies on your sites (internal platform use)",
    "site:visitor:auth": (
        "Sign in the visitors of the sites you let it guard, and hold those sites' visitor "
        "signing keys"
    ),
    "site:visitor:claims": (
        "See who your sites' signed-in visitors are (their claims) in their page views and feedback"
    ),
    "site:adaptive:read": "Read the visitor claims and conditions of your sites' adaptive content",
    "site:adaptive:write": (
        "Add to the claims of your sites' signed-in visitors, which decide the adaptive "
        "content they see"
    ),
    "openapi:read": "Read your OpenAPI specifications",
    "openapi:write": "Publish OpenAPI specifications",
    "conversations:ingest": "Send support conversations to your organization's admins",
    "page:feedback:read": "Read the feedback visitors leave on your pages",
}


def scope_label(scope: str) -> str:
    return SCOPE_LABELS.get(scope, scope)


def network_access(network_fetch) -> dict:
    """What a version's code may call (its manifest's ``network.fetch``; the rule itself is
    ``docplatform_sdk.manifest.network.host_allowed``): a ``summary`` sentence, and the
    ``hosts`` it names besides this platform's API."""
    hosts = list(network_fetch or ())
    if ANY_PUBLIC_HOST in hosts:
        return {"summary": "Its code may call any public address on the internet.", "hosts": []}
    if hosts:
        return {"summary": "Its code may call this platform's API and these hosts:", "hosts": hosts}
    return {"summary": "Its code may call only this platform's API.", "hosts": []}
