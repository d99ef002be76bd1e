"""Pure checks over run records, logs and artefacts. Each returns a `CheckOutcome` value."""
