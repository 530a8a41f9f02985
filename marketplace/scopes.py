"""What each permission scope lets an integration do, in words a member understands."""

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
    "site:visitor:auth": "Sign in the visitors of your sites",
    "site:visitor:claims": "Read the claims of your sites' visitors",
    "site:adaptive:read": "Read the adaptive content of your sites",
    "site:adaptive:write": "Change the adaptive content of your sites",
    "openapi:read": "Read your OpenAPI specifications",
    "openapi:write": "Publish OpenAPI specifications",
    "conversations:ingest": "Send conversations to your organization",
    "page:feedback:read": "Read the feedback visitors leave on your pages",
}


def scope_label(scope: str) -> str:
    return SCOPE_LABELS.get(scope, scope)
