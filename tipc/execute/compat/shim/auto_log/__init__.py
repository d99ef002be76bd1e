"""An `auto_log` stand-in provided by tipc (AutoLog, github.com/LDOUBLEV/AutoLog, is not on PyPI).

Written from AutoLog's documented interface: `AutoLogger(...)` with `.times.start()/.stamp()/.end()` and
`.report()`, printing the report sections TIPC log parsers read. Standard library only (psutil when present);
it never imports paddle, and reads paddle's version only when the script already imported it. tipc puts this
folder at the end of PYTHONPATH, so a really installed AutoLog is found first.
"""

from .autolog import AutoLogger, RunConfig
from .env import get_env_info
from .utils import Times

__all__ = ["AutoLogger", "RunConfig", "Times", "get_env_info"]
TIPC_SHIM = True  # lets a log reader (and a test) tell this stand-in from the real AutoLog
