"""The embedded broker: kombu's file-system transport, with each message written atomically.

kombu writes a message file in place (create, then write); a consumer that lists the folder
in between takes the still empty file, fails to decode it, and the Celery worker stops
("Unrecoverable error: JSONDecodeError", celery/kombu#1551). Here a message is written under
a name no consumer reads and renamed into place, so a consumer only ever sees whole messages.
Selected by ``CELERY_BROKER_TRANSPORT`` when ``CELERY_BROKER_URL`` is ``filesystem://``.
"""

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        # The name kombu gives it: consumers take "<anything>.<queue>.msg" in name order.
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        path = os.path.join(self.data_folder_out, name)
        partial = f"{path}.partial"
        try:
            with open(partial, "wb") as message:
                message.write(dumps(payload).encode())
            os.replace(partial, path)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {path!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel

    @property
    def default_connection_params(self) -> dict:
        """None: a folder has no host (kombu's default, ``localhost``, made it warn "No
        hostname was supplied" at each start of ``make run``'s worker and beat)."""
        return {}
