"""The pretrained-weights check's "provided": in the repo as published, not made by the check's runs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.judge.checks.checks_fixtures import make_record
from tipc.core.steps import Mode, Stage, Status
from tipc.execute.record import RunRecord
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckContext, Verdict
from tipc.judge.checks.pretrained import provided_weights

EXPORT = ["python", "export_model.py", "--pretrained=logs/bottle/final.pdparams", "--save-inference-dir=d"]
INFER = ["python", "infer.py", "--model-dir=d", "--img-path=images/demo0.png"]


def _pretrained(repo: Path) -> RunRecord:
    return make_record(
        repo,
        [
            ("export/whole_infer/0", Stage.EXPORT, EXPORT, "logs/export.log", Status.PASSED),
            ("infer/whole_infer/0", Stage.INFER, INFER, "logs/infer.log", Status.PASSED),
        ],
        mode=Mode.WHOLE_INFER,
    )


def test_weights_the_basic_chain_trained_are_not_the_provided_ones(tmp_path: Path) -> None:
    """cutpaste_paddle's whole_infer slot names logs/bottle/final.pdparams, which its own training writes:
    seen through the sandbox after the basic chain, the file was there, and predict/infer was judged on it."""
    (tmp_path / "logs" / "bottle").mkdir(parents=True)
    (tmp_path / "logs" / "bottle" / "final.pdparams").write_bytes(b"weights")
    pretrained = _pretrained(tmp_path)
    basic = make_record(tmp_path, [])
    assert provided_weights(pretrained, tmp_path, (basic,)) == ("logs/bottle/final.pdparams", True)
    made: dict[str, object] = {
        "changes": [{"path": "logs/bottle/final.pdparams", "kind": "created", "size": 7}]
    }
    trained = replace(basic, sandbox=made)
    assert provided_weights(pretrained, tmp_path, (trained,)) == ("logs/bottle/final.pdparams", False)
    ctx = CheckContext(repo=tmp_path, record=trained, records={"pretrained": pretrained})
    got = CHECKS["pretrained_predict_infer"](ctx)
    assert got.verdict is Verdict.NA, got.summary
    assert "are not in the repo" in got.summary and "this check's own training wrote" in got.summary
