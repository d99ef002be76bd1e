"""Output spread across inputs, read from a worker's .npz without numpy on the CLI side."""

from pathlib import Path
from typing import Any

import numpy as np

from tests.judge.checks.test_agreement import fig, response
from tipc.judge.checks.agreement import summarise_response, with_spread
from tipc.judge.checks.base import Verdict
from tipc.judge.checks.spread import output_spreads, spread_from_values


def save(work: Path, engine: str, *arrays: np.ndarray) -> None:
    work.mkdir(parents=True, exist_ok=True)
    named: dict[str, Any] = {
        f"out{i}": a for i, a in enumerate(arrays)
    }  # Any: savez also takes allow_pickle=
    np.savez(work / f"outputs_{engine}.npz", **named)


def test_spread_matches_numpy(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.ones(10), size=6).astype(np.float32)
    logits64 = rng.standard_normal((6, 3, 4))
    save(tmp_path, "paddle_inference", probs, logits64)
    a, b = output_spreads(tmp_path / "outputs_paddle_inference.npz", ["softmax_0.tmp_0", "logits"])
    assert (a.name, a.inputs, b.inputs) == ("softmax_0.tmp_0", 6, 6)
    assert abs(a.max_range - float((probs.max(0) - probs.min(0)).max())) < 1e-7
    assert abs(a.mean_std - float(probs.std(0).mean())) < 1e-6
    assert abs(b.max_range - float((logits64.max(0) - logits64.min(0)).max())) < 1e-12
    assert not a.constant and not a.near_constant


def agreeing(tmp_path: Path, outputs: np.ndarray) -> tuple[Verdict, str, list[str]]:
    work = tmp_path / "tipc_agreement"
    save(work, "paddle_inference", outputs)
    save(work, "onnxruntime", outputs)
    resp = response([("paddle_inference", "onnxruntime", fig(1.6e-25), True)])
    resp["engines"]["paddle_inference"]["outputs"] = [
        {"name": "softmax_1.tmp_0", "shape": list(outputs.shape)}
    ]
    out = with_spread(summarise_response(resp, ["paddle_inference", "onnxruntime"], 0.99999), resp, work)
    return out.verdict, out.summary, [e.text for e in out.evidence]


def test_a_constant_model_is_named_beside_the_agreement(tmp_path: Path) -> None:
    # The official tutorial's lite-trained MobileNetV3: the same one-hot answer for every input in one run,
    # a spread of 0.0107 or 0.115 in the next: the verdict stays the engines' agreement, the summary says it
    constant = np.zeros((4, 1000), dtype=np.float32)
    constant[:, 7] = 1.0
    verdict, summary, texts = agreeing(tmp_path, constant)
    assert verdict is Verdict.PASS
    assert "note: the outputs are constant across 4 inputs" in summary and "max-min 0" in summary
    assert any("spread across 4 inputs: max-min 0" in t for t in texts)


def test_a_varying_model_passes_with_its_spread(tmp_path: Path) -> None:
    varying = np.random.default_rng(0).dirichlet(np.ones(10), size=4).astype(np.float32)
    verdict, summary, _ = agreeing(tmp_path, varying)
    assert verdict is Verdict.PASS and "output spread across 4 inputs" in summary
    nearly = np.full((4, 10), 0.1, dtype=np.float32) + np.linspace(0, 1e-5, 4, dtype=np.float32)[:, None]
    verdict, summary, _ = agreeing(tmp_path, nearly)
    assert verdict is Verdict.PASS and "nearly constant" in summary


def test_spread_of_result_rows() -> None:
    same = spread_from_values("class_id/prob", [[3.0, 0.1012], [3.0, 0.1012], [3.0, 0.1012]])
    assert same.constant and same.inputs == 3
    assert not spread_from_values("class_id/prob", [[3.0, 0.9], [5.0, 0.8]]).constant
    assert "not measurable" in spread_from_values("x", [[1.0, 0.5]]).text()
