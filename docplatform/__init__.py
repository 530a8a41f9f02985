"""The Django project and the host platform.

The package is ``docplatform`` rather than ``platform``: a package named ``platform`` shadows
Python's standard-library module, which Django, Celery and pytest-django all import.
"""

from .celery import app as celery_app

__all__ = ["celery_app"]
