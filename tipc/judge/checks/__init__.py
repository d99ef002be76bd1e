"""Pure checks over run records, logs and artefacts. Each returns a `CheckOutcome` value.

`CHECKS` maps a check name to `fn(ctx: CheckContext, **args) -> CheckOutcome`; args come from YAML rules.
Bad args give a FAIL outcome naming the problem; no record gives SKIP "no run record". Importing this package
is light (no numpy/paddle): model-side work runs in `python -m tipc.judge.engines.worker` subprocesses.
"""

from __future__ import annotations

from collections.abc import Callable

from tipc.judge.checks.agreement import check_agreement
from tipc.judge.checks.artefacts import check_artefacts, check_gpu_flag_on_cpu_build
from tipc.judge.checks.base import CheckContext, CheckOutcome, Evidence, Verdict
from tipc.judge.checks.convergence import check_convergence
from tipc.judge.checks.ground_truth import check_ground_truth
from tipc.judge.checks.lineage import check_lineage
from tipc.judge.checks.lite_data import check_lite_data
from tipc.judge.checks.log_fields import check_log_fields, check_throughput
from tipc.judge.checks.predict_infer import check_predict_infer_agreement
from tipc.judge.checks.sandbox import check_sandbox_violations
from tipc.judge.checks.serving import serving
from tipc.judge.checks.settings import Settings, load_settings

CHECKS: dict[str, Callable[..., CheckOutcome]] = {
    "log_fields": check_log_fields,
    "throughput": check_throughput,
    "lite_data": check_lite_data,
    "convergence": check_convergence,
    "artefacts": check_artefacts,
    "gpu_flag_on_cpu_build": check_gpu_flag_on_cpu_build,
    "agreement": check_agreement,
    "predict_infer_agreement": check_predict_infer_agreement,
    "ground_truth": check_ground_truth,
    "serving": serving,
    "lineage": check_lineage,
    "sandbox_violations": check_sandbox_violations,
}

# Checks that start model-side processes and may run beside each other (`tipc check --jobs`): check name ->
# lane. Calls in one lane run in rule order; lanes run side by side. Serving shares the agreement's lane
# because it reuses the Paddle Inference outputs the agreement's worker saved (beside it, it would compute
# them again on the same cores, and its evidence would depend on which finished first).
LANES: dict[str, str] = {
    "agreement": "engines",
    "serving": "engines",
    "predict_infer_agreement": "scripts",
}

__all__ = [
    "CHECKS",
    "LANES",
    "CheckContext",
    "CheckOutcome",
    "Evidence",
    "Settings",
    "Verdict",
    "load_settings",
]
