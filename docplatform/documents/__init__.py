"""The documentation product people use: the reader of a space, the page editor, the
history of revisions and the space settings (DESIGN.md, "The documentation product").

Its writes go through the host's services (``docplatform.services``), the same the REST API
and the admin call, so an event fires the same whichever door a person used.
"""
