from __future__ import annotations

from tests.convergence.seed_data import SEED_MANIFEST, seed_config_text
from tipc.convergence.config import load_text
from tipc.convergence.watch import Recorder, observe


def _line(step: int, mlm: str, nsp: str) -> str:
    return f"Iteration: {step:6d} Epoch: {step:6.2f} Loss (MLM NSP): {mlm} {nsp} Accuracy (MLM NSP): 0.1 0.2"


def test_recorder_reproduces_the_seed_manifest_from_its_log() -> None:
    cfg = load_text(seed_config_text(), "c.yml")["demo"]
    saved: list[tuple[str, int]] = []

    def on_save(path: str, step: int) -> str:
        saved.append((path, step))
        return f"ckpts/{path}"

    rec = Recorder(cfg, on_save)
    values = {
        step: entry["loss"]
        for seg in SEED_MANIFEST["ckpt_logs"].values()
        for step, entry in seg["results"].items()
    }
    rec.feed("Saving model to: model_0.onnx")
    for step in range(0, 9):
        if step == 5:
            rec.feed("Saving model to: model_4:5.onnx")
        loss = values.get(str(step), {"MLM": "6.000", "NSP": "0.600"})
        rec.feed(_line(step, loss["MLM"], loss["NSP"]))
    assert saved == [("model_0.onnx", 0), ("model_4:5.onnx", 4)]
    assert [r.start_step for r in rec.recordings] == [0, 4]
    for r, key in zip(rec.recordings, ("0", "4"), strict=True):
        recorded = {str(s): {"loss": m["loss"]} for s, m in r.results.items()}
        assert recorded == SEED_MANIFEST["ckpt_logs"][key]["results"]


def test_sparse_logging_counts_steps_not_lines() -> None:
    # seed 003: log every 5 steps with 20 steps to record -> 4 values
    text = seed_config_text(**{"steps_to_record_after_save: 3": "steps_to_record_after_save: 20"})
    cfg = load_text(text, "c.yml")["demo"]
    rec = Recorder(cfg, lambda path, step: path)
    rec.feed("Saving model to: m0")
    for step in range(5, 60, 5):
        rec.feed(_line(step, "1.0", "0.5"))
    assert sorted(rec.recordings[0].results) == [5, 10, 15, 20]


def test_observe_keeps_first_report_of_a_step() -> None:
    cfg = load_text(seed_config_text(), "c.yml")["demo"]
    seen = observe(cfg, [_line(3, "1.0", "0.5"), "noise", _line(3, "9.0", "9.0"), _line(4, "2.0", "0.4")])
    assert seen[3]["loss"] == {"MLM": "1.0", "NSP": "0.5"}
    assert seen[4]["accuracy"] == {"MLM": "0.1", "NSP": "0.2"}
