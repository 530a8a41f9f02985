"""The platform's one way to run integration code: the runtime gateway.

``envelopes`` builds each kind of event (fetch, platform event, ui_render, completion),
``integrations.environment`` what the code is told about itself, ``client.call_runtime``
sends the signed envelope to the runtime host (the protocol's names:
``integrations.runtime.protocol``) and logs the call (``call_log``: what the code printed and
its error, one line of the integration's log, stored by ``log_store``), and ``failures`` is
the one taxonomy of what can go wrong (the platform's, the integration's or the client's
fault), with one mapping to HTTP status and one error body.
"""
