"""Which script the repo has: a known dialect's (`script_identity`, by its exact or normalised fingerprint),
tipc's own `tipc init` wrapper (`tipc_wrapper`), and whether a plan needs the script observed at all
(`wants_observation`). Reads the script; runs nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tipc.config.detect import FINGERPRINTS, MARKER, SCRIPT, known_script_dialect
from tipc.core.steps import MODES, Mode, Plan

# ---------------------------------------------------------------------------------------------------------
# what run/check execute


def script_identity(repo: Path, script: Path | None = None) -> tuple[str, str] | None:
    """(dialect, reason) when the repo's script is known (exact or normalised fingerprint); else None."""
    path = Path(script) if script is not None else Path(repo) / SCRIPT
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest = hashlib.sha256(data).hexdigest()
    if digest in FINGERPRINTS:
        return FINGERPRINTS[digest], f"script fingerprint {digest[:10]}"
    known = known_script_dialect(data.decode("utf-8", errors="replace"))
    if known is not None:
        return known[0], f"normalised script fingerprint ({known[1]})"
    return None


def tipc_wrapper(repo: Path) -> str | None:
    """The dialect a `tipc init` wrapper script declares (it runs `tipc run --dialect X`); else None."""
    from tipc.config.dialects import names

    try:
        text = (Path(repo) / SCRIPT).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    for match in MARKER.finditer(text):
        if match.group(1) in names():
            return match.group(1)
    return None


def wants_observation(profile: Plan, mode: Mode, repo: Path) -> bool:
    """Whether `plan_from` needs the repo's script observed for this plan."""
    if profile.chain != "train_infer_python" or mode not in MODES or not (Path(repo) / SCRIPT).is_file():
        return False
    return tipc_wrapper(Path(repo)) is None  # the wrapper runs this very plan through `tipc run`
