"""Layer 3: running a plan (processes, the sandbox, the runner, monitoring, the run record)."""
