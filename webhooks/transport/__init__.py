"""How a webhook goes over the wire, below the services (no database, but for the limits'
tables; nothing of ``webhooks.services``): ``outbound`` (the URL checks, the keep-alive pools
and the POST, on the one outbound guard ``docplatform_sdk.outbound``), ``signatures``
(the signature schemes and their headers), ``receivers`` (the bound on POSTs in flight to one
receiver in a worker process), ``limits`` (an endpoint's limits across every worker, in Redis
or in two tables of their own) and ``sending`` (the sender threads and one attempt of one
delivery, recorded in an unsaved attempt row). What an attempt's outcome makes of its
delivery, and every write of it, is ``webhooks.services``' (``drain``, ``outcomes``)."""
