"""tipc's version, in the one place the build reads it (pyproject: `[tool.hatch.version]`).

Modules that print or record it import it from here, not from `tipc` itself: the package's `__init__`
re-exports the Python API (tipc.api, the top layer), so no lower layer may import it.
"""

__version__ = "0.3.0"
