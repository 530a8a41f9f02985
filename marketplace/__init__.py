"""The marketplace: the pages where organization members browse, install, configure and
follow integrations (views call the apps' services and read through their selectors and
``marketplace.selectors``), and the demo data (``seed_demo``). The top layer: no app
imports it."""
