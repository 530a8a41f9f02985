"""``POST /inspect``: load a bundle once, in a one-shot sandboxed process, and describe it.

The platform's publish checks the code against the manifest (``docplatform_sdk.codecheck``)
without ever loading it itself: this host runs ``docplatform_sdk.inspection`` in the same
sandbox and with the same limits as a worker, and answers the description it printed
(``{"integration": ...}`` or ``{"error": {"where", "message"}}``). The process writes its
output into files of the host's (bounded by the worker's file-size limit), never a pipe
the host would have to drain; its output beyond the description is not kept.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from docplatform_sdk.codebundle import CodeBundle
from docplatform_sdk.inspection import BOOTSTRAP

from .worker_start import WorkerSettings

DESCRIPTION_LIMIT = 256 * 1024
#: Starting the sandboxed process, on top of the call time limit the code's loading has.
STARTUP_SECONDS = 2


def inspect_bundle(settings: WorkerSettings, bundle: CodeBundle) -> dict:
    """The description of ``bundle``'s code; loading that does not finish in the call time
    limit, or ends without a description, is described as an error of the code."""
    sandbox = settings.sandbox
    folder = tempfile.mkdtemp(prefix="inspect-", dir=Path(sandbox.stage, "bundles"))
    os.chmod(folder, 0o755)  # noqa: S103 - the worker user reads the bundle, as a pool's
    try:
        bundle.write(Path(folder))
        worker_settings = {
            **sandbox.worker_settings(settings.limits(), folder),
            "script": bundle.script,
        }
        python = [sandbox.interpreter(), "-I", "-S", "-c", BOOTSTRAP, json.dumps(worker_settings)]
        with tempfile.TemporaryFile(dir=sandbox.stage) as output, sandbox.filter_fd() as seccomp:
            process = subprocess.Popen(  # noqa: S603 - the sandbox's own command line
                sandbox.confined(python, folder, seccomp),
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.DEVNULL,
                cwd=sandbox.stage,
                env=sandbox.environment(folder),
                start_new_session=True,
                pass_fds=() if seccomp is None else (seccomp,),
            )
            timeout = settings.call_timeout + STARTUP_SECONDS
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                return _failed(f"did not finish loading within {settings.call_timeout:g} s")
            finally:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            output.seek(0)
            lines = output.read(DESCRIPTION_LIMIT).splitlines()
        try:
            description = json.loads(lines[-1]) if lines else None
        except ValueError:
            description = None
        if not isinstance(description, dict):
            return _failed(_ended(process.returncode))
        return description
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _failed(message: str) -> dict:
    return {"error": {"where": None, "message": message}}


def _ended(returncode: int) -> str:
    if returncode < 0:
        return f"the code was killed ({signal.Signals(-returncode).name}) while loading"
    return f"the code exited with status {returncode} while loading"
