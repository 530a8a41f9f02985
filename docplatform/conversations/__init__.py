"""Support conversations that integrations post (``conversations:ingest``), matched against
the organization's documentation for its admins."""
