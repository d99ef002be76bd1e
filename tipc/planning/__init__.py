"""Layer 2: every plan is made here (profiles, observed scripts, serving, device flags); pure."""

# The time the documented commands (tipc.planning.documented) get by default: a full-recipe training the docs
# give is stopped at the step limit and counted as run (check --docs-step-timeout, --docs-timeout). Here, not
# in that module, so the CLI and the review engine read them without importing the planner.
DOCS_STEP_TIMEOUT_S = 300.0
DOCS_TIMEOUT_S = 1200.0
