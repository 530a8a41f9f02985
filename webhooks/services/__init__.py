"""Writes of the webhook integration (views, APIs, tasks, the admin and the ``webhooks``
command call these): ``checks`` (what people's controls check first: a webhook installation,
receiving, its endpoint enabled, who may act), ``publication`` (the integration and its
settings checks), ``signing_secrets`` (and an admin reading or rotating them), ``delivery``
(the drain's loop: claims, and a retry's task), ``drain`` (a drain's window: attempts in the
sender threads through ``webhooks.transport``, slots passed from one POST to the next;
its decisions ``webhooks.scheduling``'s, a pure core),
``outcomes`` (an attempt's outcome after the outbox's retry policy, settling),
``ping`` (the test ping), ``endpoints`` (disabling failing endpoints, re-enabling),
``redelivery`` ("Resend all failed since ...") and ``sample_events`` (test events with sample
payloads). Names and pure rules both these and the selectors use are in
``webhooks.rules``."""
