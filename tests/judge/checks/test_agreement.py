"""Agreement: the pure summary of worker responses, plus check-level errors that need no Paddle."""

from pathlib import Path
from typing import Any

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks import CHECKS
from tipc.judge.checks.agreement import summarise_response
from tipc.judge.checks.base import Verdict

MODEL_DIR = f"{OUTPUT_DIR}/norm_train_gpus_0_autocast_null"


def fig(
    max_abs: float, cosine: float = 1.0, allclose: bool = True, argmax: float | None = 1.0
) -> dict[str, Any]:
    return {
        "index": 0,
        "shape_match": True,
        "finite": True,
        "size": 10,
        "max_abs": max_abs,
        "max_rel": max_abs * 10,
        "cosine": cosine,
        "argmax_agree": argmax,
        "mismatched": 0 if allclose else 3,
        "allclose": allclose,
    }


def response(pairs: list[tuple[str, str, dict[str, Any], bool]], source: str = "random") -> dict[str, Any]:
    engines = sorted({p[0] for p in pairs} | {p[1] for p in pairs})
    return {
        "protocol": "tipc.engines/1",
        "ok": True,
        "error": None,
        "engines": {e: {"ok": True, "error": None, "outputs": []} for e in engines},
        "inputs": {
            "source": source,
            "seed": 0,
            "note": "seeded",
            "feeds": {"x": {"shape": [1, 8], "dtype": "float32"}},
        },
        "pairs": [{"a": a, "b": b, "outputs": [f], "within": w} for a, b, f, w in pairs],
    }


def test_all_pairs_within_pass_and_matrix_is_symmetric() -> None:
    engines = ["paddle_inference", "onnxruntime", "paddle_jit"]
    resp = response(
        [
            ("paddle_inference", "onnxruntime", fig(1e-8), True),
            ("paddle_inference", "paddle_jit", fig(0.0), True),
            ("onnxruntime", "paddle_jit", fig(1e-8), True),
        ]
    )
    out = summarise_response(resp, engines, 0.99999)
    assert out.verdict is Verdict.PASS
    m = out.data["matrix"]
    assert m["onnxruntime"]["paddle_inference"]["max_abs"] == 1e-8
    assert m["paddle_inference"]["paddle_inference"] is None
    assert any("seeded" in e.text for e in out.evidence)  # random inputs are said so


def test_one_bad_pair_fails_naming_it() -> None:
    resp = response(
        [("paddle_inference", "onnxruntime", fig(0.2, cosine=0.95, allclose=False, argmax=0.5), False)]
    )
    out = summarise_response(resp, ["paddle_inference", "onnxruntime"], 0.99999)
    assert out.verdict is Verdict.FAIL and "paddle_inference~onnxruntime" in out.summary
    assert "max_abs=0.2" in out.evidence[0].text


def test_engine_failure_and_worker_error_fail() -> None:
    resp = response([])
    resp["engines"] = {"onnxruntime": {"ok": False, "error": "load failed: unsupported op"}}
    out = summarise_response(resp, ["paddle_inference", "onnxruntime"], 0.99999)
    assert out.verdict is Verdict.FAIL and "onnxruntime" in out.summary
    out = summarise_response({"ok": False, "error": "boom", "engines": {}, "pairs": []}, ["a", "b"], 0.9)
    assert out.verdict is Verdict.FAIL and "boom" in out.summary


def test_missing_model_and_inputs_fail_without_a_worker(tmp_path: Path) -> None:
    write_tree(tmp_path, {"export.log": "ok\n"})
    rec = make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", f"--save_inference_dir={MODEL_DIR}"],
                "export.log",
                Status.PASSED,
            )
        ],
    )
    out = CHECKS["agreement"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL and out.summary == "exported inference model not found"
    assert MODEL_DIR in out.evidence[0].text
    write_tree(tmp_path, {f"{MODEL_DIR}/inference.json": "{}", f"{MODEL_DIR}/inference.pdiparams": b"\0"})
    out = CHECKS["agreement"](ctx_for(tmp_path, rec, {"agreement": {"inputs": "lite_data/nope.npy"}}))
    assert out.verdict is Verdict.FAIL and "inputs file not found" in out.summary


def test_gating_and_bad_args(tmp_path: Path) -> None:
    fn = CHECKS["agreement"]
    assert fn(ctx_for(tmp_path, None)).verdict is Verdict.SKIP
    assert fn(ctx_for(tmp_path, None), engines=["onnxruntime"]).verdict is Verdict.FAIL
    assert fn(ctx_for(tmp_path, None), atol="tiny").verdict is Verdict.FAIL
    assert fn(ctx_for(tmp_path, None), cosine_min=2.0).verdict is Verdict.FAIL
    rec = make_record(tmp_path, [("train", Stage.TRAIN, ["python", "t.py"], None, Status.PASSED)])
    assert fn(ctx_for(tmp_path, rec)).verdict is Verdict.NA
    rec = make_record(tmp_path, [("export", Stage.EXPORT, ["python", "e.py"], None, Status.FAILED)])
    assert fn(ctx_for(tmp_path, rec)).verdict is Verdict.SKIP


def test_missing_engine_packages_are_not_model_failures() -> None:
    resp = response([("paddle_inference", "paddle_jit", fig(0.0), True)])
    resp["engines"]["onnxruntime"] = {
        "ok": False,
        "unavailable": True,
        "error": "not installed: No module 'onnx'",
    }
    out = summarise_response(resp, ["paddle_inference", "onnxruntime", "paddle_jit"], 0.99999)
    assert out.verdict is Verdict.WARN and "not measured: onnxruntime" in out.summary
    assert out.data["unavailable"] == ["onnxruntime"]
    only_one = response([])
    only_one["engines"] = {
        "paddle_inference": {"ok": True, "error": None},
        "onnxruntime": {"ok": False, "unavailable": True, "error": "not installed"},
    }
    out = summarise_response(only_one, ["paddle_inference", "onnxruntime"], 0.99999)
    assert out.verdict is Verdict.SKIP and "not installed" in out.summary


# Test-only engines (no Paddle): one echoes its input, one aborts the process the way paddle2onnx does on
# an op it cannot convert.
CRASH_PLUGIN = """\
import os
from tipc.judge.engines import register_engine
from tipc.judge.engines.base import InputSpec


class Echo:
    name = "echo"

    def load(self, model, work_dir):
        return {}

    def input_specs(self):
        return [InputSpec("x", (2, 3), "float32")]

    def run(self, feeds):
        return [("y", feeds["x"])]


class Crasher(Echo):
    name = "crasher"

    def load(self, model, work_dir):
        os.abort()


register_engine("echo", "crash_plugin:Echo")
register_engine("crasher", "crash_plugin:Crasher")
"""


def test_an_engine_that_kills_the_worker_is_named(tmp_path: Path, monkeypatch: Any) -> None:
    import os
    import sys

    plugins = tmp_path / "plugins"
    write_tree(plugins, {"crash_plugin.py": CRASH_PLUGIN})
    monkeypatch.setenv("PYTHONPATH", str(plugins) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    repo = tmp_path / "repo"
    write_tree(repo, {f"{MODEL_DIR}/inference.json": "{}", f"{MODEL_DIR}/inference.pdiparams": b""})
    rec = make_record(repo, [("export", Stage.EXPORT, ["python", "export_model.py"], None, Status.PASSED)])
    out = CHECKS["agreement"](
        ctx_for(repo, rec),
        engines=["echo", "crasher"],
        plugins=["crash_plugin"],
        model_dir=MODEL_DIR,
        python=sys.executable,
    )
    assert out.verdict is Verdict.FAIL
    assert out.summary.startswith("engine crasher crashed the worker"), out.summary
    assert out.data["crashed_engine"] == "crasher"
    (evidence,) = out.evidence
    assert evidence.path is not None and evidence.path.endswith("alone_crasher/worker.log")


def test_an_engine_stopped_by_the_worker_error_names_it() -> None:
    resp = response([("paddle_inference", "onnxruntime", fig(0.0), True)])
    resp.update(
        ok=False,
        pairs=[],
        error="cannot build inputs: ValueError: no engine reports the model's input shapes; set "
        "agreement.inputs",
    )
    resp["engines"]["paddle_inference"] = {"ok": False, "error": None, "outputs": []}
    out = summarise_response(resp, ["paddle_inference", "onnxruntime"], 0.99999)
    assert out.verdict is Verdict.FAIL
    assert "paddle_inference: cannot build inputs" in out.summary
    assert any(e.text.startswith("engine paddle_inference failed: cannot build inputs") for e in out.evidence)


def test_each_ill_typed_argument_is_named_before_any_work(tmp_path: Path) -> None:
    fn = CHECKS["agreement"]
    cases: dict[str, tuple[Any, str]] = {
        "engines": (["a", 1], "engines[1]: expected a non-empty string, got int 1"),
        "seed": (True, "seed: expected an integer, got true"),
        "inputs": (3, "inputs: expected a path, got int 3"),
        "plugins": ("mod", "plugins: expected a list of module names, got 'mod'"),
        "engine_options": ({"onnxruntime": 1}, "engine_options.onnxruntime: expected a mapping"),
        "model_dir": (["m"], "model_dir: expected a path, got a list"),
        "timeout_s": (0, "timeout_s: expected a number > 0, got int 0"),
        "bogus": (1, "bogus: unknown key 'bogus'"),
    }
    for key, (value, words) in cases.items():
        out = fn(ctx_for(tmp_path, None), **{key: value})
        assert out.verdict is Verdict.FAIL, key
        assert out.summary.startswith("agreement: bad arguments: ") and words in out.summary, out.summary


def test_a_model_dir_without_a_model_fails_naming_it(tmp_path: Path) -> None:
    rec = make_record(tmp_path, [("export", Stage.EXPORT, ["python", "e.py"], None, Status.PASSED)])
    out = CHECKS["agreement"](ctx_for(tmp_path, rec), model_dir="nowhere")
    assert out.verdict is Verdict.FAIL and out.summary == "no inference model in nowhere"
    assert out.evidence[0].path == "nowhere"
