import os

from django.core.wsgi import get_wsgi_application

from .startup import EXIT_APP_LOAD, settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
settings_or_exit(EXIT_APP_LOAD)  # a wrong setting: one line, and the server stops
application = get_wsgi_application()
