"""REST API of the host platform (``/api/v1/``) and what every app's API shares.

The core's resources: the caller and their organizations (``organizations``), the event
catalogue (``event_types``), personal API tokens (``tokens``). Each feature holds its own API
(spaces and their content: ``documents.api``; sites, events and the beacon: ``sites.api``;
Git sync: ``gitsync.api``; ...); ``docplatform.api_urls`` routes them all,
``docplatform.api_docs_urls`` the schema and docs.

Shared with the plug-in apps' APIs: how a resource is looked up for the caller (``lookup``),
who may call (``permissions``), what is accepted before a serializer sees it (``inputs``), the
one error shape (``errors``), the OpenAPI schema's additions and tags (``schema``); the visitor
behind a request is ``docplatform.visitors``.
"""
