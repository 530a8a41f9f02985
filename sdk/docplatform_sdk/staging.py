"""What of the SDK integration code runs with, copied where a sandbox mounts it: the runtime
part of ``docplatform_sdk`` (not the manifest checker, the authoring tools, the command line
or the code checks), ``oauthlib`` and ``jwt`` (PyJWT, for visitor tokens). The runtime
host's sandbox and ``check``'s local one stage the same files."""

import shutil
from pathlib import Path

import jwt
import oauthlib

import docplatform_sdk

#: Parts of the SDK for authors and the platform, never imported by integration code.
NOT_FOR_THE_RUNTIME = ("__pycache__", "manifest", "authoring", "cli", "cli.py", "codecheck.py")


def copy_runtime_sdk(target: Path) -> None:
    """Copy ``docplatform_sdk`` (its runtime part), ``oauthlib`` and ``jwt`` into
    ``target``."""
    for package in (docplatform_sdk, oauthlib, jwt):
        shutil.copytree(
            Path(package.__file__).parent,
            Path(target) / package.__name__,
            ignore=shutil.ignore_patterns(*NOT_FOR_THE_RUNTIME),
        )
