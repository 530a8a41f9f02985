"""Writes of the webhook integration (views, APIs, tasks, the admin and the ``webhooks``
command call these): ``publication`` (the integration, its events and its settings checks),
``signing_secrets`` and ``delivery`` (the attempts, their outcome, the retry schedule, the
test ping), ``endpoints`` (disabling failing endpoints, re-enabling), ``redelivery`` ("Resend
all failed since ...") and ``sample_events`` (test events with sample payloads). The checks
people's controls need first are in ``webhooks.services_admin``."""
