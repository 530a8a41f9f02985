"""REST API of the host platform (``/api/v1/``) and what every app's API shares.

The host's resources: the caller and their organizations (``organizations``), spaces and their
content (``spaces``; Git sync in ``docplatform.gitsync.api``), sites, events and the public
beacon (``sites``), the event catalogue (``event_types``), personal API tokens (``tokens``);
their routes (``urls``) and the schema and docs' routes (``docs_urls``).

Shared with the plug-in apps' APIs: how a resource is looked up for the caller (``lookup``),
who may call (``permissions``), what is accepted before a serializer sees it (``inputs``), the
one error shape (``errors``), the OpenAPI schema's additions and tags (``schema``), and the
visitor behind a request (``visitors``).
"""
