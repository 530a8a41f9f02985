"""Tools for integration authors, on their machine: the scaffold of ``new``, the bundle
``publish`` uploads, the folder watcher of ``dev``, ``--set`` values and the local code
check."""
