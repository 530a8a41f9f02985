"""Tools for integration authors: ``integration new`` (the scaffold), ``integration dev`` (the
local loop) and the bundle the console script uploads."""
