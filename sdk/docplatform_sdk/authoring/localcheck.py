"""Load an integration's code on the author's machine, as the runtime would, and describe it.

``check`` and ``publish`` run ``docplatform_sdk.inspection`` in a process of its own over a
copy of exactly what is published (the bundle's ``.py`` files) with what the runtime's
sandbox offers: the standard library, ``docplatform_sdk``, ``oauthlib`` and ``jwt``, nothing
else installed. Under bubblewrap (``bwrap``) when it is on PATH: no network, the system, the
Python installation, the SDK and the bundle read-only, a private ``/tmp``. Else a plain
subprocess, said in one line: it is the author's own code on the author's machine.
"""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from ..codecheck import Description, description_from
from ..inspection import BOOTSTRAP
from ..manifest import Manifest
from ..staging import copy_runtime_sdk

LOAD_TIMEOUT_SECONDS = 10  # the runtime's call time limit (RUNTIME_CALL_TIMEOUT)
MEBIBYTE = 1024 * 1024
LIMITS = {
    "memory_bytes": 512 * MEBIBYTE,
    "cpu_seconds": 30,
    "processes": None,  # the user's own count: never limited on the author's machine
    "open_files": 256,
    "file_bytes": 64 * MEBIBYTE,
}
SDK_MOUNT, BUNDLE_MOUNT = "/sdk", "/bundle"
PATH = "/usr/local/bin:/usr/bin:/bin"
UNCONFINED_NOTE = (
    "note: bubblewrap (bwrap) is not installed: the code is loaded without a sandbox, "
    "as you, to check it"
)


def load_timeout(say: Callable[[str], object]) -> float:
    """``DOCPLATFORM_CHECK_TIMEOUT`` (seconds), else the runtime's call time limit."""
    raw = os.environ.get("DOCPLATFORM_CHECK_TIMEOUT", "")
    try:
        value = float(raw) if raw else LOAD_TIMEOUT_SECONDS
    except ValueError:
        value = 0
    if not 0 < value < float("inf"):
        say(f"note: DOCPLATFORM_CHECK_TIMEOUT {raw!r} is not a number of seconds; using 10")
        return LOAD_TIMEOUT_SECONDS
    return value


def inspect_locally(
    manifest: Manifest,
    *,
    timeout: float | None = None,
    say: Callable[[str], object] = print,
) -> Description:
    """The description of ``manifest``'s code (which it must have), loaded in a sandbox
    within ``timeout`` seconds (default: ``load_timeout``)."""
    timeout = load_timeout(say) if timeout is None else timeout
    stage = Path(tempfile.mkdtemp(prefix="docplatform-check-"))
    try:
        copy_runtime_sdk(stage / "sdk")
        bundle = stage / "bundle"
        bundle.mkdir()
        manifest.code.write(bundle)
        (stage / "tmp").mkdir()
        if shutil.which("bwrap"):
            settings = _settings(SDK_MOUNT, BUNDLE_MOUNT, manifest, sandboxed=True)
            command = _bwrap(stage) + _python(settings)
            description, refused = _run(command, stage, timeout, manifest.code.script)
            if not refused:
                return description
            say(f"note: bwrap cannot make a sandbox here ({refused}); loading the code unconfined")
        else:
            say(UNCONFINED_NOTE)
        settings = _settings(str(stage / "sdk"), str(bundle), manifest, sandboxed=False)
        return _run(_python(settings), stage, timeout, manifest.code.script)[0]
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _settings(sdk_path: str, folder: str, manifest: Manifest, *, sandboxed: bool) -> dict:
    return {
        **LIMITS,
        "sdk_path": sdk_path,
        "folder": folder,
        "script": manifest.code.script,
        "sandboxed": sandboxed,
    }


def _python(settings: dict) -> list[str]:
    interpreter = os.path.realpath(sys.executable)
    return [interpreter, "-I", "-S", "-c", BOOTSTRAP, json.dumps(settings)]


def _bwrap(stage: Path) -> list[str]:
    """No network, nothing writable but a private /tmp, nothing of the user's files."""
    command = [
        "bwrap", "--unshare-all", "--die-with-parent", "--new-session",
        "--ro-bind", "/usr", "/usr",
    ]  # fmt: skip
    for link in ("bin", "lib", "lib64", "sbin"):
        if os.path.islink(f"/{link}"):
            command += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
        elif os.path.isdir(f"/{link}"):
            command += ["--ro-bind", f"/{link}", f"/{link}"]
    prefix = sys.base_prefix
    if not prefix.startswith("/usr/"):
        command += ["--ro-bind", prefix, prefix]
    command += [
        "--ro-bind", str(stage / "sdk"), SDK_MOUNT,
        "--ro-bind", str(stage / "bundle"), BUNDLE_MOUNT,
        "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
        "--remount-ro", "/", "--chdir", "/tmp", "--clearenv",
        "--setenv", "PATH", PATH, "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
    ]  # fmt: skip
    return command


def _run(command: list[str], stage: Path, timeout: float, script: str):
    """(the description, None), or (None, why) when bwrap itself refused to start."""
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=stage / "tmp",
        env={"PATH": os.environ.get("PATH", PATH), "LANG": "C.UTF-8", "HOME": str(stage / "tmp")},
        start_new_session=True,
    )
    try:
        output, errors = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.communicate(timeout=2)  # what escaped the group may hold the pipes
        return Description.failed(f"did not finish loading within {timeout:g} s", script), None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    lines = output.decode(errors="replace").strip().splitlines()
    if not lines:
        said = errors.decode(errors="replace").strip()
        if command[0] == "bwrap" and said.startswith("bwrap:"):
            return None, said.splitlines()[0]
        return Description.failed(_ended(process.returncode, said), script), None
    try:
        data = json.loads(lines[-1])
    except ValueError:
        data = None
    return description_from(data), None


def _ended(returncode: int, said: str) -> str:
    """Why the loading process ended without a description."""
    if returncode < 0:
        reason = f"was killed ({signal.Signals(-returncode).name}) while loading"
    else:
        reason = f"exited with status {returncode} while loading"
    last = said.splitlines()[-1] if said else ""
    return f"the code {reason}" + (f": {last}" if last else "")
