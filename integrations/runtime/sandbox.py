"""The sandbox a worker runs in (DESIGN.md, "Trust boundaries" 1).

Each worker gets new user, PID, mount, network, IPC and UTS namespaces: no network but a
down loopback; a file system of its own holding only ``/usr/lib``, ``/usr/lib64`` (the
system's libraries) and ``/usr/bin``, the Python installation without its site-packages, the
SDK folder (``docplatform_sdk``, ``oauthlib`` and ``jwt``) and the integration's bundle, all
read-only, a private ``/tmp`` of bounded size and its own ``/proc`` and ``/dev``; nothing of
the platform's files, settings (``/etc``, ``/usr/local/etc``), database, processes or keys.
When its PID namespace's first process dies, the kernel kills every process in it, so killing
a worker kills everything it started, ``setsid`` or not. With bubblewrap, a seccomp filter
(``seccomp_filter.py``) refuses the system calls a worker has no use for.

The host's scratch folder (the stage: the SDK copy, bundles, the sandbox's mount points):
``stage.py``.

Two ways to make it, the same namespaces either way: bubblewrap (``bwrap``, Debian's
``bubblewrap``) where installed, else the kernel's ``unshare`` (util-linux) with a small
mount script. Where the host runs as root, workers run as ``RUNTIME_WORKER_USER``
(``nobody``): the kernel does not apply the process limit to root. ``RUNTIME_SANDBOX``
picks: ``auto`` (the default: bwrap, else unshare, else refuse to start), ``bwrap``,
``unshare``, or ``off`` (no confinement at all: a loud warning at start and on /health).
"""

import contextlib
import glob
import json
import logging
import os
import pwd
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass

from .seccomp_filter import compile_filter
from .stage import make_stage

logger = logging.getLogger("integrations.runtime")

MODES = ("auto", "bwrap", "unshare", "off")
SDK_MOUNT = "/sdk"
BUNDLE_MOUNT = "/bundle"
PATH = "/usr/local/bin:/usr/bin:/bin"
#: What of ``/usr`` a worker sees: the shared libraries, and the commands (a worker's code
#: may start ``/bin/sh``); never ``/usr/local/etc``, ``/usr/share`` and the like.
USR_MOUNTS = ("/usr/lib", "/usr/lib64", "/usr/bin")
BOOTSTRAP = """\
import json, sys
settings = json.loads(sys.argv[1])
sys.path[:0] = [settings["sdk_path"]]
from docplatform_sdk.worker import main
main(settings)
"""
_TRAMPOLINE = (
    'mount --bind "$0" "$1" && uid="$2" && shift 2 && '
    'exec setpriv --reuid="$uid" --regid="$uid" --clear-groups --no-new-privs -- "$@"'
)
_UNSHARE_SCRIPT = r"""
set -eu
root="$1"; shift
hostname sandbox
mount -t tmpfs -o size=1m,mode=755 sandbox "$root"
for name in usr proc dev tmp sdk bundle python; do mkdir -p "$root/$name"; done
mount -t tmpfs -o size=4k,mode=755 usr "$root/usr"
for name in lib lib64 bin; do
  [ -d "/usr/$name" ] || continue
  mkdir "$root/usr/$name"; mount --rbind "/usr/$name" "$root/usr/$name"
  mount -o remount,bind,ro "$root/usr/$name"
done
mount -o remount,ro "$root/usr"
for link in bin lib lib64; do [ -e "/$link" ] && ln -s "usr/$link" "$root/$link"; done
mount -t proc proc "$root/proc"
for device in null zero random urandom; do
  touch "$root/dev/$device"; mount --bind "/dev/$device" "$root/dev/$device"
done
mount -t tmpfs -o "size=$SANDBOX_TMP_BYTES,mode=1777" tmp "$root/tmp"
mkdir -p "$root$SANDBOX_PYTHON"
mount --bind "$SANDBOX_PYTHON" "$root$SANDBOX_PYTHON"
mount -o remount,bind,ro "$root$SANDBOX_PYTHON"
site="$root$SANDBOX_PYTHON_SITE"; [ -d "$site" ] && mount -t tmpfs -o size=4k,mode=755 empty "$site"
mount --bind "$SANDBOX_SDK" "$root/sdk"; mount -o remount,bind,ro "$root/sdk"
mount --bind "$SANDBOX_BUNDLE" "$root/bundle"; mount -o remount,bind,ro "$root/bundle"
mkdir "$root/.old"
cd "$root"; pivot_root . .old; cd /
umount -l /.old; rmdir /.old
mount -o remount,ro /
exec "$@"
"""


class SandboxUnavailable(RuntimeError):
    """No sandbox can be made here; the message says what to install or set."""


@dataclass(frozen=True)
class Sandbox:
    """How this host confines its workers; ``command`` builds one worker's command line."""

    mode: str  # bwrap | unshare | off
    stage: str  # a world-readable folder of the host's: the SDK copy, bundles
    worker_uid: int | None  # the user workers run as (when the host is root), else None
    tmp_bytes: int
    seccomp: str | None = None  # the system call filter's BPF program (bwrap only)

    @property
    def sdk_path(self) -> str:
        return os.path.join(self.stage, "sdk")

    def interpreter(self) -> str:
        return os.path.realpath(sys.executable)

    def worker_settings(self, limits: dict, bundle: str) -> dict:
        confined = self.mode != "off"
        return {
            **limits,
            "processes": limits["processes"] if confined else None,
            "sdk_path": SDK_MOUNT if confined else self.sdk_path,
            "sandboxed": confined,
            "folder": BUNDLE_MOUNT if confined else bundle,
        }

    def command(self, settings: dict, bundle: str, filter_fd: int | None = None) -> list[str]:
        """The command that starts one worker for the bundle unpacked in ``bundle``."""
        python = [self.interpreter(), "-I", "-S", "-c", BOOTSTRAP, json.dumps(settings)]
        return self.confined(python, bundle, filter_fd)

    @contextlib.contextmanager
    def filter_fd(self):
        """An open file descriptor of the seccomp filter (None without one), to pass to the
        process started with ``command(..., filter_fd)``: bubblewrap reads it to its end."""
        if self.seccomp is None or self.mode != "bwrap":
            yield None
            return
        fd = os.open(self.seccomp, os.O_RDONLY | os.O_CLOEXEC)
        try:
            yield fd
        finally:
            os.close(fd)

    def confined(self, python: list[str], bundle: str, filter_fd: int | None = None) -> list[str]:
        """``python`` (an interpreter's command line) run in this sandbox, with ``bundle``."""
        if self.mode == "bwrap":
            seccomp = [] if filter_fd is None else ["--seccomp", str(filter_fd)]
            return self._as_worker_user(self._bwrap(bundle) + seccomp + python)
        if self.mode == "unshare":
            return self._unshare(bundle, python)
        return python

    # --- bubblewrap -------------------------------------------------------------------------

    def _bwrap(self, bundle: str) -> list[str]:
        prefix = sys.base_prefix
        # As root the worker user may not reach the Python installation (one under /root):
        # ``_as_worker_user`` binds it into the stage folder first.
        python = prefix if self.worker_uid is None else os.path.join(self.stage, "python")
        command = [
            "bwrap",
            "--unshare-all",  # pid, mount, net, ipc, uts, cgroup
            "--unshare-user",
            "--disable-userns",  # no nested user namespace: less kernel to attack
            "--die-with-parent",
            "--new-session",
            "--uid", "65534", "--gid", "65534",
            "--hostname", "sandbox",
        ]  # fmt: skip
        for path in USR_MOUNTS:
            command += ["--ro-bind-try", path, path]
        for link in ("bin", "lib", "lib64"):
            if os.path.islink(f"/{link}"):
                command += ["--symlink", os.readlink(f"/{link}"), f"/{link}"]
        if prefix in ("/usr", "/usr/local"):  # never the whole of /usr/local: its etc
            for path in _python_files(prefix):
                command += ["--ro-bind", path, path]
        else:
            command += ["--ro-bind", python, prefix]
        site = _site_packages_of(prefix)
        if site:
            command += ["--tmpfs", site]
        command += [
            "--ro-bind", self.sdk_path, SDK_MOUNT,
            "--ro-bind", bundle, BUNDLE_MOUNT,
            "--proc", "/proc",
            "--dev", "/dev",
            "--size", str(self.tmp_bytes), "--tmpfs", "/tmp",
            "--remount-ro", "/",
            "--chdir", "/tmp",
            "--clearenv",
            "--setenv", "PATH", PATH,
            "--setenv", "HOME", "/tmp",
            "--setenv", "LANG", "C.UTF-8",
        ]  # fmt: skip
        return command

    def _as_worker_user(self, command: list[str]) -> list[str]:
        """As root: bind the Python installation where the worker user can reach it, in a
        private mount namespace, then become that user and run ``command``."""
        if self.worker_uid is None:
            return command
        return [
            "unshare", "--mount", "--propagation", "private", "--",
            "/bin/sh", "-c", _TRAMPOLINE,
            sys.base_prefix, os.path.join(self.stage, "python"), str(self.worker_uid),
            *command,
        ]  # fmt: skip

    # --- unshare ----------------------------------------------------------------------------

    def _unshare(self, bundle: str, python: list[str]) -> list[str]:
        root = os.path.join(self.stage, "root")  # each namespace mounts its own tmpfs here
        as_root = os.geteuid() == 0
        namespaces = ["--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts"]
        outer = ["unshare", *([] if as_root else ["--user", "--map-root-user"]), *namespaces]
        outer += ["--propagation", "private"]
        if as_root:
            drop = ["setpriv", f"--reuid={self.worker_uid}", f"--regid={self.worker_uid}"]
            drop += ["--clear-groups", "--no-new-privs", "--"]
        else:
            drop = []
        inner = ["unshare", "--user", "--map-user=65534", "--map-group=65534", "--"]
        return [
            *outer,
            "--",
            "/bin/sh", "-c", _UNSHARE_SCRIPT, "sandbox", root,
            *drop, *inner, "env", "-i",
            f"PATH={PATH}", "HOME=/tmp", "LANG=C.UTF-8",
            "sh", "-c", 'cd /tmp && exec "$@"', "worker", *python,
        ]  # fmt: skip

    def unshare_environment(self, bundle: str) -> dict:
        prefix = sys.base_prefix
        return {
            "PATH": "/usr/sbin:/sbin:" + PATH,
            "SANDBOX_TMP_BYTES": str(self.tmp_bytes),
            "SANDBOX_PYTHON": prefix,
            "SANDBOX_PYTHON_SITE": _site_packages_of(prefix) or "/nonexistent",
            "SANDBOX_SDK": self.sdk_path,
            "SANDBOX_BUNDLE": bundle,
        }

    def environment(self, bundle: str) -> dict:
        """The environment the worker's command starts with: nothing of the host's."""
        if self.mode == "unshare":
            return self.unshare_environment(bundle)
        if self.mode == "bwrap":
            return {"PATH": PATH}
        return {key: os.environ[key] for key in ("PATH", "LANG", "TZ") if key in os.environ}

    def close(self):
        shutil.rmtree(self.stage, ignore_errors=True)


def _python_files(prefix: str) -> list[str]:
    """The parts of a Python installed in ``/usr`` or ``/usr/local`` a worker needs: its
    standard library, its shared library and the interpreter."""
    paths = {sysconfig.get_path(name, vars={"installed_base": prefix, "base": prefix})
             for name in ("stdlib", "platstdlib")}  # fmt: skip
    library = sysconfig.get_config_var("LDLIBRARY") or ""
    paths.update(glob.glob(os.path.join(sysconfig.get_config_var("LIBDIR") or "", library + "*")))
    paths.add(os.path.realpath(sys.executable))
    return sorted(path for path in paths if path and os.path.exists(path))


def _site_packages_of(prefix: str) -> str | None:
    """The installation's own site-packages (hidden: only the SDK folder is importable)."""
    path = sysconfig.get_path("purelib", vars={"base": prefix, "platbase": prefix})
    return path if path and os.path.isdir(path) and path.startswith(prefix) else None


def worker_uid(user: str) -> int | None:
    """The uid workers run as: ``user``'s when this host is root, else None (the host's)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(user).pw_uid if not user.isdigit() else int(user)
    except KeyError:
        raise SandboxUnavailable(f"RUNTIME_WORKER_USER {user!r} is not a user here") from None


def _works(sandbox: Sandbox) -> str | None:
    """Start a trivial confined process; None when it ran, else what went wrong."""
    bundle = tempfile.mkdtemp(prefix="probe-", dir=os.path.join(sandbox.stage, "bundles"))
    os.chmod(bundle, 0o755)
    python = [sandbox.interpreter(), "-I", "-S", "-c", "import os; print(os.getuid())"]
    try:
        with sandbox.filter_fd() as filter_fd:
            result = subprocess.run(
                sandbox.confined(python, bundle, filter_fd),
                env=sandbox.environment(bundle),
                capture_output=True,
                text=True,
                timeout=20,
                pass_fds=() if filter_fd is None else (filter_fd,),
            )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    finally:
        shutil.rmtree(bundle, ignore_errors=True)
    if result.returncode != 0 or result.stdout.strip() != "65534":
        return (result.stderr or result.stdout).strip()[-500:] or f"exit {result.returncode}"
    return None


def make_sandbox(mode: str, user: str, tmp_bytes: int) -> Sandbox:
    """The sandbox for ``RUNTIME_SANDBOX=mode``; SandboxUnavailable when none can be made."""
    if mode not in MODES:
        raise SandboxUnavailable(f"RUNTIME_SANDBOX must be one of {', '.join(MODES)}, not {mode!r}")
    if mode == "off":
        return Sandbox("off", make_stage(None), None, tmp_bytes)
    uid = worker_uid(user)
    candidates = ["bwrap", "unshare"] if mode == "auto" else [mode]
    failures = []
    for candidate in candidates:
        if shutil.which(candidate) is None:
            failures.append(f"{candidate}: not installed")
            continue
        stage = make_stage(uid)
        seccomp = os.path.join(stage, "seccomp.bpf")
        if candidate != "bwrap" or not compile_filter(seccomp):
            seccomp = None
        sandbox = Sandbox(candidate, stage, uid, tmp_bytes, seccomp)
        problem = _works(sandbox)
        if problem is None:
            if failures:
                logger.warning("sandbox: %s; using %s", "; ".join(failures), candidate)
            return sandbox
        sandbox.close()
        failures.append(f"{candidate}: {problem}")
    raise SandboxUnavailable(
        "no sandbox for integration code can be made here ("
        + "; ".join(failures)
        + "). Install bubblewrap (apt-get install bubblewrap) or allow user namespaces, "
        "or set RUNTIME_SANDBOX=off to run integration code unconfined (development only)."
    )


def main():
    """``python -m integrations.runtime.sandbox``: print the sandbox this machine can make
    (``bwrap`` or ``unshare``), or ``off`` with the reason on stderr (``make run`` uses it)."""
    try:
        sandbox = make_sandbox("auto", os.environ.get("RUNTIME_WORKER_USER", "nobody"), 1 << 20)
    except SandboxUnavailable as error:
        print(f"WARNING: {error}", file=sys.stderr)
        print("off")
        return
    sandbox.close()
    print(sandbox.mode)


if __name__ == "__main__":
    main()
