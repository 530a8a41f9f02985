"""Published sites (DESIGN.md, "The documentation product"): a site's spaces served on their own
origin (``SITES_URL``), with their visits and the visitors' feedback."""
