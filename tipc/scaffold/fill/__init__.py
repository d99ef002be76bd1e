"""Fill the config slots from what `detect` and `script_flags` found; list what could not be inferred.

Defaults are CPU-friendly (gpu_list -1, inference on CPU, 1 thread, fp32). Whatever cannot be inferred
becomes a `Todo`; those go to the terminal, the generated README and docs, never into the positional config.

Its modules, each importing only `context` and those listed before it: `context` (what the fillers share),
`docs` (what the docs and scripts say), one per section (`train`, `weights`, `data`, `eval_export`,
`inference`), and `whole` (`fill` runs them in order; `choose_dialect`, `apply_sets`).
"""
