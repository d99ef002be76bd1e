"""Whether a serving step can run here: its interpreter is asked whether it can import the modules the step
needs (Paddle Serving's, for example). It starts a process, so it lives here, not in planning."""

from __future__ import annotations

from pathlib import Path

from tipc.core.steps import Step

# Standalone script: exits 1 when a named module cannot be found (any Python 3.7+; see tipc/execute/probes/).
_PROBE = Path(__file__).resolve().parents[1] / "probes" / "findmodules.py"


def unmet_requirement(step: Step, repo: Path, *, python: str | None = None) -> str | None:
    """The reason to record `step` SKIPPED, or None when its interpreter can import `requires_modules`.

    Asks the step's own interpreter (`python` or argv[0]); if that cannot start, the current one answers.
    """
    if not step.requires_modules:
        return None
    import sys

    from tipc.execute import proc

    for interpreter in (python or step.argv[0], sys.executable):
        try:
            result = proc.run([interpreter, str(_PROBE), *step.requires_modules], cwd=repo, timeout_s=60)
        except OSError:
            continue
        if result.exit_code == 0:
            return None
        if result.exit_code == 1:
            missing = ", ".join(step.requires_modules)
            return f"{step.requires_reason or 'missing Python modules'} [needs {missing}]"
    return None
