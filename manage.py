#!/usr/bin/env python
"""Django's command-line utility for administrative tasks."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "docplatform.settings")
    from django.core.management import execute_from_command_line

    from docplatform.startup import run_or_exit, settings_or_exit

    settings_or_exit()  # a wrong setting: one line and exit code 2, whatever the command
    run_or_exit(execute_from_command_line, sys.argv)  # and one read later, the same


if __name__ == "__main__":
    main()
