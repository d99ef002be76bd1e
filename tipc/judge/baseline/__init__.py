"""Model CI baselines: metrics taken from run records, recorded N times into reviewable YAML files (one per
model, config, mode and machine class), tolerances derived from the recorded noise, and the judge that
compares a run with its baseline (PASS / FAIL / IMPROVED per metric).

Modules: `metrics` (run record -> named values), `stats` (summaries and margins), `store` (the YAML file),
`judge` (verdicts), `diff` (old -> new per metric). None of them imports paddle or numpy.
"""
