"""Git sync of a space, both ways (DESIGN.md, "The documentation product"): a space's pages
written to a Git branch as Markdown, and a branch's Markdown imported as a revision."""
