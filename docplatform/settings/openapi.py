"""OpenAPI specifications (README, "OpenAPI specifications"): how large a document may be, and
what fetching one from a URL may reach and for how long."""

from .environment import env_networks, env_positive

# Bytes of a document's text, whether sent in the request or fetched from a URL. The request's
# own limit (DATA_UPLOAD_MAX_MEMORY_SIZE, 2.5 MB) bounds text sent in a request body.
OPENAPI_MAX_BYTES = env_positive(int, "OPENAPI_MAX_BYTES", 2 * 1024 * 1024)
# A URL is fetched as webhook URLs are called: every address it resolves to must be public,
# unless in these networks (comma-separated CIDRs; empty by default: development and tests).
OPENAPI_ALLOWED_NETWORKS = env_networks("OPENAPI_ALLOWED_NETWORKS")
OPENAPI_FETCH_CONNECT_TIMEOUT = env_positive(float, "OPENAPI_FETCH_CONNECT_TIMEOUT", 3.0)
# The whole fetch (connect, headers and body) ends by this deadline.
OPENAPI_FETCH_TIMEOUT = env_positive(float, "OPENAPI_FETCH_TIMEOUT", 10.0)
