"""Small rulesets the model CI tests check with."""

# One rule, so a check costs the chain and the baseline judgement only.
CHAIN_ONLY = """\
schema: tipc.ruleset/1
name: chain-only
title: the chain runs
description: one rule, so the check costs the chain and the baseline judgement only
rules:
  - id: chain.train_passed
    source: test
    severity: error
    description: the train step passed
    check:
      step_passed: {stage: train}
"""
