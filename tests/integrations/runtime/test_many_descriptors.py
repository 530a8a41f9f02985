"""A host holding more than 1,024 descriptors (hundreds of workers, their pipes and their
``/proc`` files) still serves a worker whose pipes are numbered past them: the pipes are
waited on with ``poll``; ``select`` refused them ("filedescriptor out of range"), which
failed calls with 500 once the breadth benchmark's 100 integrations were warm."""

from integrations.runtime.sandbox import make_sandbox
from integrations.runtime.worker_process import Worker
from integrations.runtime.worker_start import WorkerSettings

SCRIPT = "from docplatform_sdk import create_integration\nintegration = create_integration()\n"


def test_a_worker_whose_pipes_are_past_1024_loads_and_is_usable(descriptors_past_1024, tmp_path):
    (tmp_path / "main.py").write_text(SCRIPT)
    sandbox = make_sandbox("off", "", 16 * 1024 * 1024)
    try:
        worker = Worker(
            WorkerSettings(sandbox=sandbox, call_timeout=10), "wide", str(tmp_path), "main.py"
        )
        try:
            assert min(worker.process.stdin.fileno(), worker.process.stdout.fileno()) > 1024
            assert worker.usable()  # nothing written out of turn, read with poll
            assert worker.retire_reason() is None
        finally:
            worker.kill()
    finally:
        sandbox.close()
