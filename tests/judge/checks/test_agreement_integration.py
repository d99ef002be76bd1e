"""Real Paddle + paddle2onnx + ONNX Runtime through the real worker subprocess."""

import os
import sys
from pathlib import Path

import pytest

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record
from tipc.core.steps import Stage, Status
from tipc.execute import proc
from tipc.execute.record import RunRecord
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import Verdict

pytestmark = pytest.mark.integration

MODEL_DIR = f"{OUTPUT_DIR}/norm_train_gpus_0_autocast_null"

# Exports a small net twice: as trained, and a copy whose weights are perturbed by 1e-2 noise.
BUILD = """\
import sys
import numpy as np
import paddle

paddle.seed(0)
net = paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 10))
net.eval()
spec = [paddle.static.InputSpec([None, 16], "float32", "x")]
paddle.jit.save(net, sys.argv[1] + "/inference", input_spec=spec)
rng = np.random.default_rng(1)
for p in net.parameters():
    p.set_value(p.numpy() + rng.normal(0, 1e-2, p.shape).astype("float32"))
paddle.jit.save(net, sys.argv[2] + "/inference", input_spec=spec)
np.save(sys.argv[3], rng.standard_normal((4, 16)).astype("float32"))
"""

# A test-only engine: Paddle Inference on the perturbed copy next to the real model.
PLUGIN = """\
from pathlib import Path
from tipc.judge.engines import register_engine
from tipc.judge.engines.base import find_model
from tipc.judge.engines.paddle_inference import PaddleInferenceEngine


class PerturbedCopy(PaddleInferenceEngine):
    name = "perturbed_copy"

    def load(self, model, work_dir):
        return super().load(find_model(Path(str(model.model_dir) + "_perturbed")), work_dir)


register_engine("perturbed_copy", "perturbed_plugin:PerturbedCopy")
"""


def build_repo(tmp_path: Path, pir: bool) -> Path:
    repo = tmp_path / "repo"
    model = repo / MODEL_DIR
    perturbed = Path(str(model) + "_perturbed")
    model.mkdir(parents=True)
    perturbed.mkdir(parents=True)
    (repo / "lite_data").mkdir()
    script = tmp_path / "build.py"
    script.write_text(BUILD)
    env = proc.build_env(None, {"FLAGS_enable_pir_api": "1" if pir else "0"})
    res = proc.run(
        [sys.executable, str(script), str(model), str(perturbed), str(repo / "lite_data/x.npy")],
        cwd=tmp_path,
        env=env,
        log_path=tmp_path / "build.log",
        timeout_s=120,
    )
    assert res.exit_code == 0, (tmp_path / "build.log").read_text()[-2000:]
    return repo


def record(repo: Path) -> RunRecord:
    return make_record(
        repo,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", f"--save_inference_dir={MODEL_DIR}"],
                None,
                Status.PASSED,
            ),
            (
                "infer",
                Stage.INFER,
                ["python", "infer.py", f"--model_dir={MODEL_DIR}", "--use_gpu=False"],
                None,
                Status.PASSED,
            ),
        ],
    )


@pytest.mark.parametrize("pir", [True, False], ids=["pir-json", "pdmodel"])
def test_exported_model_agrees_across_engines(tmp_path: Path, pir: bool) -> None:
    repo = build_repo(tmp_path, pir)
    assert (repo / MODEL_DIR / ("inference.json" if pir else "inference.pdmodel")).is_file()
    out = CHECKS["agreement"](ctx_for(repo, record(repo)))
    assert out.verdict is Verdict.PASS, (out.summary, [e.text for e in out.evidence])
    cell = out.data["matrix"]["paddle_inference"]["onnxruntime"]
    assert cell["within"] and cell["max_abs"] <= 1e-5 and cell["cosine"] >= 0.99999
    assert out.data["inputs"]["source"] == "random"
    assert out.data["model"]["format"] == ("pir-json" if pir else "pdmodel")
    details = out.data["engine_details"]["onnxruntime"]["details"]
    assert "full_check=True" in details["checker"]
    onnx_file = Path(details["onnx_file"])
    assert onnx_file.is_file() and str(onnx_file).startswith(str((repo / OUTPUT_DIR).resolve()))
    print(
        f"\n{'pir' if pir else 'pdmodel'}: paddle_inference~onnxruntime max_abs={cell['max_abs']:.3g} "
        f"max_rel={cell['max_rel']:.3g} cosine={cell['cosine']:.10f}"
    )


def test_perturbed_weights_fail_and_real_inputs_are_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = build_repo(tmp_path, pir=True)
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "perturbed_plugin.py").write_text(PLUGIN)
    monkeypatch.setenv("PYTHONPATH", str(plugins) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    settings = {
        "agreement": {
            "inputs": "lite_data/x.npy",
            "engines": ["paddle_inference", "onnxruntime", "paddle_jit", "perturbed_copy"],
        }
    }
    out = CHECKS["agreement"](ctx_for(repo, record(repo), settings), plugins=["perturbed_plugin"])
    assert out.verdict is Verdict.FAIL, out.summary
    m = out.data["matrix"]
    assert m["paddle_inference"]["onnxruntime"]["within"]
    assert m["paddle_inference"]["paddle_jit"]["within"]
    assert not m["paddle_inference"]["perturbed_copy"]["within"]
    assert not m["onnxruntime"]["perturbed_copy"]["within"]
    assert "perturbed_copy" in out.summary and "onnxruntime~paddle_jit" not in out.summary
    assert out.data["inputs"]["source"] == "file"
    assert out.data["inputs"]["feeds"]["x"]["shape"] == [4, 16]
    bad = m["paddle_inference"]["perturbed_copy"]
    print(f"\nperturbed: max_abs={bad['max_abs']:.3g} cosine={bad['cosine']:.6f}")
