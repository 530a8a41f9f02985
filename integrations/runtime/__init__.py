"""The runtime host: the envelope server, sandboxed worker pools and the egress broker.

Pure Python: it imports the SDK (``docplatform_sdk``), the standard library and its server,
never Django or the platform.
"""
