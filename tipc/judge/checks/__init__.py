"""Pure checks over run records, logs and artefacts. Each returns a `CheckOutcome` value.

`CHECKS` maps a check name to its `RegisteredCheck` (tipc.judge.checks.registry): `CHECKS[name](ctx, **args)`
validates the arguments against the check's schema, then runs it. A ruleset naming a check is validated
against the same schema when it loads, so a bad argument or an unknown name is an exit 2 before anything
runs; a bad call from code is a FAIL outcome naming the argument. No record gives SKIP "no run record".
Importing this package is light (no numpy/paddle): model-side work runs in `python -m
tipc.judge.engines.worker` subprocesses.
"""

from __future__ import annotations

from collections.abc import Callable

from tipc.judge.checks.accuracy import check_documented_accuracy
from tipc.judge.checks.agreement import check_agreement
from tipc.judge.checks.artefacts import check_artefacts, check_gpu_flag_on_cpu_build
from tipc.judge.checks.backbones import check_backbones
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.convergence import check_convergence
from tipc.judge.checks.crash import check_exit_after_crash
from tipc.judge.checks.documented import check_documented_commands
from tipc.judge.checks.documented_serving import check_documented_serving
from tipc.judge.checks.eval_output import check_eval_output
from tipc.judge.checks.ground_truth import check_ground_truth
from tipc.judge.checks.lineage import check_lineage
from tipc.judge.checks.lite_data import check_lite_data
from tipc.judge.checks.log_fields import check_log_fields, check_throughput
from tipc.judge.checks.predict_infer import check_predict_infer_agreement
from tipc.judge.checks.pretrained import check_pretrained_predict_infer
from tipc.judge.checks.registry import REGISTRY, RegisteredCheck
from tipc.judge.checks.sandbox import check_sandbox_violations
from tipc.judge.checks.serving import serving
from tipc.judge.checks.settings import Settings, load_settings
from tipc.judge.checks.status_log import check_shipped_status_log

_ALL = (
    check_log_fields,
    check_throughput,
    check_lite_data,
    check_convergence,
    check_artefacts,
    check_gpu_flag_on_cpu_build,
    check_agreement,
    check_predict_infer_agreement,
    check_ground_truth,
    serving,
    check_lineage,
    check_eval_output,
    check_shipped_status_log,
    check_exit_after_crash,
    check_documented_commands,
    check_documented_accuracy,
    check_pretrained_predict_infer,
    check_documented_serving,
    check_backbones,
    check_sandbox_violations,
)
assert set(REGISTRY) == {c.name for c in _ALL}  # every registered check is imported above
CHECKS: dict[str, Callable[..., CheckOutcome]] = {c.name: c for c in _ALL}

# Checks that start model-side processes and may run beside each other (`tipc check --jobs`): check name ->
# lane. Calls in one lane run in rule order; lanes run side by side. Serving shares the agreement's lane
# because it reuses the Paddle Inference outputs the agreement's worker saved (beside it, it would compute
# them again on the same cores, and its evidence would depend on which finished first).
LANES: dict[str, str] = {
    "agreement": "engines",
    "serving": "engines",
    "predict_infer_agreement": "scripts",
    "pretrained_predict_infer": "scripts",
}

__all__ = [
    "CHECKS",
    "LANES",
    "REGISTRY",
    "CheckContext",
    "CheckOutcome",
    "Evidence",
    "RegisteredCheck",
    "Settings",
    "Verdict",
    "load_settings",
]
