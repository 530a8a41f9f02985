"""Integrations: their versions, installations and the setup flow, and the gateway to the
runtime that runs their code.

Layers, top to bottom (``make lint`` checks them): ``urls``; ``views`` (the public
endpoints, HTTP only), ``api/``, ``tasks``, ``admin``, ``management/``; ``services/`` (every
write: publishing, releases, installations, consent, test events, the public endpoints'
decisions, the runtime consumer); the reads, ``selectors``, ``endpoint_selectors`` and
``routing_selectors`` (where an event goes), and ``gateway/`` (calls to the runtime host,
its log store); ``policies`` (one home for each rule); ``models``. ``runtime/`` is the
runtime host, another process: pure Python, sharing only ``runtime/protocol.py`` with the
gateway.
"""
