"""The ready-made webhook integration: it forwards events as signed JSON with retries.

Layers, top to bottom (``make lint`` checks them): ``api_urls``; ``api``, ``tasks``,
``admin``, ``management/``; ``services/`` (every write: the drain and its attempts, pings,
test events, signing secrets, endpoints, redelivery); ``selectors`` (reads) and
``transport/`` (the HTTP side: URL checks, connection pools, signatures, sender threads,
the bound per receiver); ``rules`` (names and pure rules both use); ``models``.
"""
