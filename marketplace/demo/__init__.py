"""Demo data for the embedded default, loaded by ``manage.py seed_demo`` (marketplace)."""
