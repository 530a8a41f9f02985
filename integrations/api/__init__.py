"""REST API of the integrations app (``/api/v1/``): the catalogue and publishing
(``catalogue``), installations and deliveries (``installations``)."""
