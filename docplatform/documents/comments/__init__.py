"""Comments on a space's pages: threads anchored to a heading, a line range or the whole page,
replies, resolving and reopening, and ``@username`` mentions that notify by e-mail."""
