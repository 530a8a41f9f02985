"""The system calls a worker may not make (DESIGN.md, "Trust boundaries" 1): a seccomp
filter, compiled once when the host starts (``pyseccomp``, over the system's libseccomp) and
handed to bubblewrap (``--seccomp FD``).

Refused with EPERM: what reaches kernel code a worker has no use for and attackers favour
(new user namespaces, ptrace, keyrings, BPF, perf, userfaultfd, io_uring, mounts, module and
kexec loading, raw IP and packet sockets). ``clone3`` answers ENOSYS (its flags are out of the
filter's reach), and the C library falls back to ``clone``, whose flags are checked. System
calls of another architecture (32-bit ones on x86-64) kill the process.
"""

import errno
import logging
import os
import socket

logger = logging.getLogger("integrations.runtime")

CLONE_NEWUSER = 0x10000000
SOCK_TYPE_MASK = 0xF
REFUSED = (
    "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "keyctl", "add_key", "request_key",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "mount", "umount2", "pivot_root", "chroot", "setns",
    "fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree",
    "open_by_handle_at", "name_to_handle_at",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "lookup_dcookie",
)  # fmt: skip


def compile_filter(path: str) -> bool:
    """Write the filter's BPF program to ``path``; False (and why, logged) when it cannot
    be made here."""
    try:
        import pyseccomp as seccomp

        denied = seccomp.ERRNO(errno.EPERM)
        rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
        for name in REFUSED:
            try:
                rules.add_rule(denied, name)
            except (OSError, ValueError):  # not a system call of this architecture
                continue
        rules.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
        new_user = seccomp.Arg(0, seccomp.MASKED_EQ, CLONE_NEWUSER, CLONE_NEWUSER)
        rules.add_rule(denied, "clone", new_user)
        rules.add_rule(denied, "unshare", new_user)
        rules.add_rule(denied, "socket", seccomp.Arg(0, seccomp.EQ, socket.AF_PACKET))
        raw = seccomp.Arg(1, seccomp.MASKED_EQ, SOCK_TYPE_MASK, socket.SOCK_RAW)
        for family in (socket.AF_INET, socket.AF_INET6):  # netlink's raw sockets stay
            rules.add_rule(denied, "socket", seccomp.Arg(0, seccomp.EQ, family), raw)
        with open(path, "wb") as handle:
            rules.export_bpf(handle)
    except Exception as error:  # no libseccomp, an old kernel: said at start
        logger.warning("seccomp: no system call filter for workers (%s)", error)
        return False
    os.chmod(path, 0o600)
    return True
