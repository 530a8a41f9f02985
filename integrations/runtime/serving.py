"""How the runtime host's process serves: the development server (``python -m
integrations.runtime.host``, threaded, one log line per call written by the host itself),
the host's own logging, and the process hardening done before any key is read."""

import contextlib
import ctypes
import logging
import resource
import socketserver
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

logger = logging.getLogger("integrations.runtime")


def forbid_inspection():
    """No other process of this user may read this host's memory or /proc files (its key)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE


def open_files_raised():
    """The open files' soft limit raised to the hard one (the operator's bound, ``ulimit
    -Hn``): each thread of each platform process keeps a connection to this host, its
    workers three pipes each; a soft limit of 1,024 would refuse connections long before the
    machine runs short. The workers keep limits of their own (``RUNTIME_*``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def log_to_stderr():
    """The host's log lines on stderr (``runtime ...``), unless logging is configured. Its
    format names no thread, process or source line, so no record gathers them (the logging
    module's documented switches): a line per call, on the event loop."""
    if not logging.getLogger().handlers and not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("runtime %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
        logging.logThreads = logging.logProcesses = logging.logMultiprocessing = False
        logging.logAsyncioTasks = False
        logging._srcfile = None  # no stack walk for the caller's file and line


class ThreadingWSGIServer(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True
    request_queue_size = 128  # the default backlog of 5 resets connections under load


class QuietRequestHandler(WSGIRequestHandler):
    """The host logs one line per call itself."""

    def log_message(self, format, *args):
        pass
