"""Layer 0: what every layer shares (errors, results, steps, findings, files, schemas, output)."""
