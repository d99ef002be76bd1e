"""Names vulture cannot see used (`vulture`, configured in pyproject.toml, reads this file beside tipc/).

Each entry says who uses the name. A name that nothing uses is removed, not added here.
"""

# ruff: noqa: F821, B018
# mypy: ignore-errors

# Called by Python, argparse, pytest or uvicorn, not by tipc.
__getattr__  # PEP 562 lazy attributes of tipc and tipc.convergence
_.formatter_class  # argparse reads it when formatting help
pytest_addoption  # pytest plugin hooks (tipc.pytest_plugin, tipc.convergence.pytest_plugin)
pytest_collection_modifyitems
_.runtest  # pytest.Item methods
_.reportinfo
_.send_400_response  # overrides uvicorn's H11Protocol method (tipc.serve.server)
_.__wrapped__  # functools' convention for a wrapped function (the lineage recorder's patches)
_.log_severity_level  # onnxruntime.SessionOptions reads it

# Loaded by name from a registry (tipc.judge.engines.BUILTIN_ENGINES "module:Class" strings).
OnnxRuntimeEngine
PaddleInferenceEngine
PaddleJitEngine
register_engine  # the engines' registry API (plugins add theirs; tests use it)
engine_names

# The API of AutoLog that repos' infer.py scripts call (tipc's stand-in, tipc.execute.compat.shim.auto_log).
TIPC_SHIM
_.cpu_math_library_num_threads
_.paddle_infer_config
_.get_paddle_info
_.set_keys

# Fields of values read by JSON, YAML or templates, not by attribute in tipc.
_.ppid  # a lineage record's process (JSON)
_.log_output  # the convergence config (YAML field)
_.train_infer_img_dir  # a config slot (read by name through TipcConfig.slot)
_.report_json  # a review row's report, in the summary JSON
_.matrix_caption  # a rule's view, read by tipc/report/templates/report.html.j2
source_docs  # a ruleset's `sources` (its provenance, from the YAML)

# Public helpers used by the tests (and bench/), kept as the API they test.
split_command  # tests/config/test_bash.py
_.is_null  # tests/config/test_model.py
parse_results_log  # tests/core/test_results.py, tests/execute/test_runner.py
line_at  # tests/core/test_yamlschema.py
own_group  # tests/execute/sandbox/test_limits.py
_.blocking  # tests/judge/rules/test_evaluate.py
SCHEMA_VERSION  # tests/modelci/history/test_db.py
_.count_runs
iter_cases  # tests/planning/test_corpus.py, bench/lint_corpus.py
_.script_output  # tests/planning/test_observe.py
unmet_requirement  # tests/serve/test_plan.py
DIALECTS  # tests/scaffold/test_generated_files.py
LocalBackend  # tests/serve/test_app.py
_.visit_TryStar  # ast.NodeVisitor dispatches on the node class name (try/except* blocks)
stored_map  # bench/causes.py (the sandbox path map of a kept run)

# Keys of TypedDicts (the engines' comparison figures, documented serving's rows): written by the worker or
# the check and read back by key from the JSON report and its renderers, never as attributes.
_.shape_ref
_.shape_other
_.dtype_ref
_.dtype_other
_.shape_match
_.allclose
_.mean_abs
_.worst_index
_.worst_ref
_.worst_other
_.name_a
_.name_b
_.class_id
