"""OpenAPI specifications of an organization: named documents, each upload a new immutable
version, read and published through the API and rendered by the built-in OpenAPI operation
block (README, "OpenAPI specifications")."""
