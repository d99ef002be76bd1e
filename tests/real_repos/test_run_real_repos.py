"""Issue "Real repos, part 1" on the published repos: `tipc run` with only tipc's own switches runs every
stage the repo's own script runs (and no other), leaves the repo byte-identical with no process behind, and
names the cause of every failed stage as shared/real-repos/README.md lists it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.real_repos.conftest import CPU_EXPORT, Outcome, SharedChain

pytestmark = [pytest.mark.integration, pytest.mark.real_repos]

Chain = Callable[..., SharedChain]
CPU = ("--device", "cpu")


def _cause(out: Outcome, step_prefix: str) -> str:
    """The id of the first (most specific) plain cause tipc gave for a failed step."""
    causes = out.result(step_prefix).get("causes") or []
    return str(causes[0]["id"]) if causes else "(no cause)"


def test_official_tutorial_runs_every_stage_with_the_cpu_and_export_switches(shared_chain: Chain) -> None:
    out = shared_chain("PaddlePaddle__models__Step6", *CPU_EXPORT).run()
    statuses = out.statuses()
    # prepare.sh extracts the lite data (its pip install and wget fail offline, which the run says)
    assert statuses["prepare"] == "failed" and "prepare.sh fetches or installs" in out.stderr
    for stage in ("train/", "eval/", "export/", "infer/"):
        assert out.result(stage)["status"] == "passed", (stage, statuses, out.stderr[-3000:])
    # the 2-GPU launch (`paddle.distributed.launch --gpus=0,1`; its id names the GPUs in the profile's plan,
    # a number in the plan observed from the script)
    launches = {s["id"] for s in out.record["plan"]["steps"] if "paddle.distributed.launch" in s["argv"]}
    launch = [r for r in out.record["results"] if r["step_id"] in launches]
    assert launch and all(r["status"] == "skipped" and "not applicable" in r["reason"] for r in launch)
    assert "device=cpu" in " ".join(out.result("train/")["argv"])
    assert out.returncode == 0, out.stderr[-3000:]
    out.untouched()


def test_cutpaste_paddle_passes_its_four_stages_on_the_cpu(shared_chain: Chain) -> None:
    out = shared_chain("liuxtakeoff__cutpaste_paddle", *CPU_EXPORT).run()
    for stage in ("train/", "eval/", "export/", "infer/"):
        assert out.result(stage)["status"] == "passed", (stage, out.statuses(), out.stderr[-3000:])
    # the edited script logs to ./log/<model>/<mode>: observed from the script, not taken from a profile
    assert out.record["plan"]["output_dir"] == "log/resnet18/lite_train_lite_infer"
    changed = {c["path"] for c in out.record["sandbox"]["changes"]}
    assert any(p.startswith("logs/") for p in changed), "train's writes at the repo root are listed"
    out.untouched()


def test_dncnn_names_the_dataloader_worker_crash(shared_chain: Chain) -> None:
    out = shared_chain("sldyns__DnCNN_paddle", *CPU, "--no-prepare").run()
    train = out.result("train/")
    assert train["status"] == "failed"
    assert _cause(out, "train/") == "dataloader-worker-crash", out.stdout[-3000:]
    assert all(out.result(s)["status"] == "blocked" for s in ("eval/", "export/", "infer/"))
    assert out.returncode == 1
    out.untouched()


def test_can_fails_on_its_first_stage_and_ignores_its_committed_results_log(shared_chain: Chain) -> None:
    out = shared_chain("Lllllolita__CAN_Paddle", *CPU).run()
    assert out.result("train/")["status"] == "failed"
    assert "No module named 'paddlevision" in out.log("train/")
    # the repo's own package is what is missing (its last commit deleted it): no pip install fixes it
    assert _cause(out, "train/") == "module-missing-from-repo"
    single = [r for r in out.record["results"] if r["step_id"].endswith("/1") and r["step_id"] != "prepare"]
    assert [r["status"] for r in single[1:]] == ["blocked"] * (len(single) - 1)
    shipped = "ships test_tipc/output/results_python.log (10 line(s), 10 saying 'Run successfully')"
    assert shipped in out.stderr
    # the readiness report said so before the chain ran
    assert "imports `paddlevision.models`, a package of the repo that is not in it" in out.stderr
    assert out.returncode == 1
    out.untouched()


def test_lieberk_cutpaste_trains_offline_and_names_each_later_failure(shared_chain: Chain) -> None:
    out = shared_chain(
        "Lieberk__Paddle-Cutpaste", *CPU, "--paddle-compat", "export", "--args", "train=--no-pretrained"
    ).run()
    assert out.result("train/")["status"] == "passed", out.stderr[-3000:]
    assert out.result("eval/")["status"] == "failed"
    assert "perplexity must be less than n_samples" in out.log("eval/")
    assert _cause(out, "eval/") == "tsne-tiny-data"
    assert out.result("export/")["status"] == "failed"
    assert "Download from" in out.log("export/")
    assert _cause(out, "export/") == "weights-download-failed"
    out.untouched()  # the committed logdirs/model-bottle/train.log among them
