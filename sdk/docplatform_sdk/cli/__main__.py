"""``python -m docplatform_sdk.cli``: the ``docplatform-integration`` command."""

import sys

from . import main

sys.exit(main())
