"""The runtime protocol's names, written once: what the platform's gateway
(``integrations.gateway.client``) and the runtime host (``integrations.runtime.host``) both
say. The protocol itself is described in ``integrations/runtime/README.md``.

Pure Python, the standard library alone: the host imports it (no Django there), and so does
the platform side (the gateway, the public endpoint's view), which never imports the host's
own modules (``host``, ``pool``, ``sandbox``).
"""

import re

# --- Paths --------------------------------------------------------------------------------

#: The protocol's version in the envelope's path; the only one the host serves.
VERSION = "v1"
SUPPORTED_VERSIONS = [VERSION]
#: ``POST``: a signed envelope for the integration ``name`` (any version matches: the host
#: answers 404 ``unsupported_version`` for one it does not serve).
ENVELOPE_PATH = re.compile(r"^/integrations/(?P<name>[-\w]{1,64})/(?P<version>[^/]+)/?$", re.ASCII)
#: ``POST``: a signed bundle, loaded once in the sandbox and described (publish's checks).
INSPECT_PATH = "/inspect"
#: ``GET``: the host is up, and how it confines integration code.
HEALTH_PATH = "/health"


def envelope_path(name: str) -> str:
    """The path of an envelope for the integration ``name``, in this protocol's version."""
    return f"/integrations/{name}/{VERSION}"


# --- The envelope: multipart/form-data parts ----------------------------------------------

EVENT_PART = "event"  # JSON object: the event
ENVIRONMENT_PART = "environment"  # JSON object: what the code is told about itself
FETCH_BODY_PART = "fetch-body"  # raw bytes: a fetch's request body (optional)
BUNDLE_PART = "bundle"  # the code, codebundle's canonical JSON (optional: on 409)
PARTS = (EVENT_PART, ENVIRONMENT_PART, FETCH_BODY_PART, BUNDLE_PART)
REQUIRED_PARTS = (EVENT_PART, ENVIRONMENT_PART)
#: The key of ``environment.integration`` naming the code: the SHA-256 of its bundle.
BUNDLE_HASH = "bundleHash"
#: The key of ``/inspect``'s answer holding the description.
DESCRIPTION = "description"

# --- Headers of every answer --------------------------------------------------------------

#: ``ok``, or the error code of the host's answer (an outcome below): a ``fetch`` answer's own
#: 500 is told from the runtime's by it.
OUTCOME_HEADER = "X-Runtime-Outcome"
#: What the code printed during the call, and its error with the traceback: base64 of UTF-8.
OUTPUT_HEADER = "X-Runtime-Output"
ERROR_HEADER = "X-Runtime-Error"
#: Headers the host does not forward from the integration's answer, and the platform does
#: not relay: hop-by-hop headers belong to one connection (WSGI servers set them
#: themselves), and the protocol's own headers are the host's to set.
UNFORWARDED_HEADERS = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "trailers",
    "transfer-encoding",
    "upgrade",
    "content-length",
    OUTCOME_HEADER.lower(),
    OUTPUT_HEADER.lower(),
    ERROR_HEADER.lower(),
}

# --- Outcomes (``OUTCOME_HEADER``; a failure's is also its body's ``error``) --------------

OK = "ok"
#: The host does not have the code of the envelope's ``bundleHash``: send it again with the
#: ``bundle`` part (409).
BUNDLE_REQUIRED = "bundle_required"
#: The integration's code failed: it raised, or its script did not load (500).
INTEGRATION_ERROR = "integration_error"
#: Its worker died of the code's own doing (502).
WORKER_CRASHED = "worker_crashed"
#: Its worker was killed from outside (the OOM killer, a shutdown): worth a retry (503).
WORKER_LOST = "worker_lost"
#: Its answer is over the host's limit (502, with the ``limit`` in bytes).
ANSWER_TOO_LARGE = "answer_too_large"
#: No worker free in time, or too many calls waiting (503, ``Retry-After``).
BUSY = "busy"
#: The call ran over its time limit (504).
TIMEOUT = "timeout"
#: The host itself failed (500).
RUNTIME_ERROR = "runtime_error"
