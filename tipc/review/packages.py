"""What the checks' interpreter has installed, as one digest for the review's resume key: a package added
(or upgraded) after an interrupted review makes every submission worth checking again, where the stored
rows of the earlier interpreter state would otherwise be reused without `--force`.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Sequence
from pathlib import Path

# Run under the checks' interpreter (any Python 3.7+): name==version of every installed distribution.
_LIST = (
    "import sys\n"
    "try:\n"
    "    from importlib import metadata as m\n"
    "    items = {((d.metadata['Name'] or '').lower(), d.version or '') for d in m.distributions()}\n"
    "except Exception:\n"
    "    import pkg_resources\n"
    "    items = {(d.project_name.lower(), d.version) for d in pkg_resources.working_set}\n"
    "print(sys.version.split()[0])\n"
    "print('\\n'.join(f'{n}=={v}' for n, v in sorted(items)))\n"
)


def checks_python(check_args: Sequence[str]) -> str:
    """The interpreter the checks run the chains with: the `--python` passed to them, else this one (which
    `tipc check` picks when it has paddle)."""
    args = list(check_args)
    for i, arg in enumerate(args):
        if arg == "--python" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--python="):
            return arg.split("=", 1)[1]
    return sys.executable


def package_list(python: str) -> str | None:
    """`python`'s version and installed distributions, one `name==version` a line; None when it cannot run."""
    from tipc.execute import proc

    code, out = proc.capture([python, "-c", _LIST], cwd=Path.cwd(), timeout_s=120)
    return out if code == 0 else None


def packages_digest(python: str) -> str:
    """A short digest of `python`'s package list (`unavailable:<python>` when it cannot be asked)."""
    listed = package_list(python)
    if listed is None:
        return f"unavailable:{python}"
    return hashlib.sha256(listed.encode("utf-8")).hexdigest()[:16]
