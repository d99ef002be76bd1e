"""Layer 4: judging a run (checks, rules, engines, lineage, causes, baseline judgement)."""
