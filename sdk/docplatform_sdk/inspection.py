"""Load an integration's code once, as a worker does, and describe what it declares.

``check`` and ``publish`` compare the description with the manifest (``codecheck``). The
same entry point runs on the author's machine (``authoring.localcheck``: a subprocess,
under bubblewrap when installed) and on the platform's runtime host (``POST /inspect``: a
one-shot sandboxed process). It is started as ``python -I -S -c BOOTSTRAP <settings JSON>``
(settings: ``sdk_path``, ``folder``, ``script``, ``sandboxed`` and the worker's resource
limits) and writes one JSON line on its standard output, whatever the code prints:

- ``{"integration": {"events": [...], "components": [...], "fetch": true}}``: it loaded;
- ``{"integration": null, "found": "a dict"}``: it ran but bound no integration (``found``
  is null when the name is not bound at all);
- ``{"error": {"where": "main.py:3", "message": "NameError: ..."}}``: loading raised
  (``where`` is the author's file and line, null when no frame of the bundle is known).

The code runs with the worker's loader (``worker.load``), import guard and limits: what
loads here loads in the runtime. A hostile script can forge its own description; that only
fools the checks of its own code, which exist to help its author.
"""

import json
import os
import sys
import traceback

from . import worker
from .tracebacks import code_position

BOOTSTRAP = """\
import json, sys
settings = json.loads(sys.argv[1])
sys.path[:0] = [settings["sdk_path"]]
from docplatform_sdk.inspection import main
main(settings)
"""
MESSAGE_LIMIT = 500


def where(error: BaseException, folder: str) -> str | None:
    """The author's file, line and column that raised ``error`` (``main.py:3:9``): for a
    syntax error where it does not parse, else the innermost frame in the bundle's folder."""
    if isinstance(error, SyntaxError) and error.filename:
        file = _in_bundle(error.filename, folder)
        if file is not None:
            return code_position(file, error.lineno, error.offset)
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        file = _in_bundle(frame.filename, folder)
        if file is not None:
            column = frame.colno + 1 if getattr(frame, "colno", None) is not None else None
            return code_position(file, frame.lineno, column)
    return None


def _in_bundle(filename: str, folder: str) -> str | None:
    """``filename`` relative to the bundle's folder, or None when it is not one of its files."""
    if os.path.isabs(filename):
        relative = os.path.relpath(filename, folder)
        return None if relative.startswith("..") else relative
    return filename if os.path.isfile(os.path.join(folder, filename)) else None


def message(error: BaseException, folder: str) -> str:
    """``Type: message``; a syntax error without its file (``where`` says it), and the
    bundle's folder, a detail of this machine, cut out of paths."""
    text = error.msg if isinstance(error, SyntaxError) else str(error)
    text = text.replace(folder.rstrip("/") + "/", "")
    if isinstance(error, ModuleNotFoundError) and error.name:
        text += _vendoring_hint(error.name.partition(".")[0])
    return f"{type(error).__name__}: {text}"[:MESSAGE_LIMIT] if text else type(error).__name__


def _vendoring_hint(package: str) -> str:
    """How to bring a package the runtime does not have: its code in the folder."""
    return (
        f". The runtime has only Python's standard library, docplatform_sdk, oauthlib and jwt "
        f"(PyJWT): to "
        f"use {package}, put its .py files in the integration's folder (pip install --no-deps "
        f"--target . {package}); only pure-Python code is bundled"
    )


def found(value) -> str:
    """What a script bound to ``integration`` instead, for the message."""
    if value is None:
        return "None"
    kind = type(value).__name__
    return f"an {kind}" if kind[:1].lower() in "aeiou" else f"a {kind}"


def describe_bundle(folder: str, script: str) -> dict:
    """Load ``script`` from ``folder`` and describe it (see the module's docstring)."""
    try:
        integration = worker.load("inspection", folder, script)
    except worker.ScriptError:
        module = sys.modules.get("__integration__")
        namespace = module.__dict__ if module is not None else {}
        bound = "integration" in namespace
        return {"integration": None, "found": found(namespace["integration"]) if bound else None}
    except BaseException as error:  # whatever the code raised is the answer
        return {"error": {"where": where(error, folder), "message": message(error, folder)}}
    return {
        "integration": {
            "events": sorted(map(str, integration.events)),
            "components": sorted(integration.components),
            "fetch": integration.fetch is not None,
            "handlers": integration.handlers,
        }
    }


def main(settings: dict):
    """Describe the bundle and exit, never waiting for threads the code started."""
    _reader, writer = worker.take_protocol_pipes()
    worker.limit_resources(settings)
    worker.forbid_inspection()
    sys.meta_path.insert(0, worker.PlatformImportBlocker())
    try:
        description = describe_bundle(settings["folder"], settings["script"])
        line = json.dumps(description)
    except BaseException as error:  # a bug of ours, or a description that is not JSON
        traceback.print_exc()
        line = json.dumps({"error": {"where": None, "message": f"cannot describe: {error!r}"}})
    writer.write(line.encode() + b"\n")
    writer.flush()
    sys.stderr.flush()
    os._exit(0)
