"""isolate_serving: the serving chain tipc runs writes only under test_tipc/output; plans stay faithful."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from tests.serve.test_plan import OCR, TUTORIAL, plan_of
from tipc.core.findings import Level
from tipc.core.steps import Overrides, Stage
from tipc.planning.serving import find_serving_config, isolate_serving, plan_serving

DEMO_CONFIG = """===========================serving_params===========================
model_name:lenet_digits
python:python
trans_model:export_model.py
--pretrained:./pretrained/lenet_digits_pretrained.pdparams
--save_inference_dir:./inference/lenet_digits_infer/
null:null
null:null
null:null
serving_dir:./deploy/serving_python
web_service:-m tipc serve ../../inference/lenet_digits_infer --port 18093 --name lenet_digits
pipline:pipeline_http_client.py
--image_dir:../../lite_data/infer/
"""
OUT = "test_tipc/output/lenet_digits/serving_infer"


def test_demo_layout_moves_logs_export_and_the_servers_model_dir(tmp_path: Path) -> None:
    faithful = plan_of(tmp_path, DEMO_CONFIG)
    assert faithful.output_dir == "log/lenet_digits/serving_infer"  # `tipc plan` shows the script's paths
    plan = isolate_serving(faithful)
    assert plan.output_dir == OUT and plan.results_log == f"{OUT}/results_serving.log"
    convert, server, client = plan.steps
    assert convert.argv[-1] == f"--save_inference_dir={OUT}/inference/lenet_digits_infer/"
    assert convert.log == f"{OUT}/python_trans_model_lenet_digits.log"
    assert f"--save_inference_dir={OUT}/inference/lenet_digits_infer/" in convert.status_command
    assert "./inference/" not in convert.status_command
    assert server.cwd == "deploy/serving_python"
    assert server.argv[4] == f"../../{OUT}/inference/lenet_digits_infer"
    assert server.status_command.startswith(f"python -m tipc serve ../../{OUT}/inference/lenet_digits_infer")
    assert server.log == f"{OUT}/python_server.log"
    # The client reads only the lite data (an input): unchanged; its status line names the moved log.
    assert client.argv == faithful.steps[2].argv
    assert client.log == f"{OUT}/server_infer_gpu_batchsize_1.log"
    assert f"../../{OUT}/server_infer_gpu_batchsize_1.log" in client.status_command
    isolate = [f for f in plan.findings if f.code == "TIPC-ISOLATE"]
    assert len(isolate) == 3 and all(f.level is Level.INFO for f in isolate)
    assert [f.line for f in isolate] == [1, 4, 11]  # the config line each rewrite comes from
    # Every path any step writes or reads from the conversion now lies under the output dir.
    for step in plan.steps:
        assert step.log is not None and step.log.startswith(OUT + "/")


def test_isolation_is_idempotent_and_ignores_other_chains(tmp_path: Path) -> None:
    plan = isolate_serving(plan_of(tmp_path, DEMO_CONFIG))
    again = isolate_serving(plan)
    assert again.steps == plan.steps and again.output_dir == plan.output_dir
    assert len(again.findings) == len(plan.findings)
    train = replace(plan, chain="train_infer_python")
    assert isolate_serving(train) is train


def test_tutorial_outputs_read_through_config_yml_are_moved_with_a_warning(tmp_path: Path) -> None:
    plan = isolate_serving(plan_of(tmp_path, TUTORIAL))
    out = "test_tipc/output/mobilenet_v3_small/serving_infer"
    convert = plan.steps[0]
    assert f"--serving_server={out}/deploy/serving_python/serving_server/" in convert.argv
    assert f"--serving_client={out}/deploy/serving_python/serving_client/" in convert.argv
    assert "--dirname=./inference/mobilenet_v3_small_infer/" in convert.argv  # an input: never moved
    warnings = [f for f in plan.findings if f.code == "TIPC-ISOLATE" and f.level is Level.WARNING]
    # The server folder is read through config.yml (tipc cannot redirect that); no server reads the client's.
    [warning] = warnings
    assert "deploy/serving_python/serving_server" in warning.message and "config.yml" in warning.message


def test_ocr_model_config_options_follow_the_moved_serving_folders(tmp_path: Path) -> None:
    faithful = plan_of(tmp_path, OCR, overrides=Overrides(device="cpu"))
    plan = isolate_serving(faithful)
    out = "test_tipc/output/ch_PP-OCRv3/serving_infer/python"
    assert plan.output_dir == faithful.output_dir == out  # PaddleOCR already logs under test_tipc/output
    det = plan.step("serving/convert_det")
    assert f"--serving_server={out}/deploy/pdserving/ppocr_det_v3_serving/" in det.argv
    server = next(s for s in plan.steps if s.stage is Stage.SERVE)
    assert server.cwd == "deploy/pdserving"
    rel = f"../../{out}/deploy/pdserving"
    assert f"op.det.local_service_conf.model_config={rel}/ppocr_det_v3_serving" in server.argv
    assert f"op.rec.local_service_conf.model_config={rel}/ppocr_rec_v3_serving" in server.argv
    assert not [f for f in plan.findings if f.code == "TIPC-ISOLATE" and f.level is Level.WARNING]


def test_find_serving_config_prefers_the_one_beside_the_train_config(tmp_path: Path) -> None:
    header = "===========================serving_params===========================\n"
    for rel in ("a/serving_infer_python.txt", "b/serving_infer_python.txt", "b/serving_infer_cpp.txt"):
        path = tmp_path / "test_tipc/configs" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(header, encoding="utf-8")
    (tmp_path / "test_tipc/configs/b/train_infer_python.txt").write_text("x\n", encoding="utf-8")
    near = tmp_path / "test_tipc/configs/b/train_infer_python.txt"
    assert find_serving_config(tmp_path, near) == tmp_path / "test_tipc/configs/b/serving_infer_python.txt"
    assert find_serving_config(tmp_path) == tmp_path / "test_tipc/configs/a/serving_infer_python.txt"
    assert find_serving_config(tmp_path / "nothing") is None


def test_the_demo_config_is_found_and_isolated() -> None:
    demo = Path(__file__).resolve().parents[2] / "examples/lenet_digits"
    config = find_serving_config(demo, demo / "test_tipc/configs/lenet_digits/train_infer_python.txt")
    assert config is not None and config.name == "serving_infer_python.txt"
    assert isolate_serving(plan_serving(config)).output_dir == OUT
