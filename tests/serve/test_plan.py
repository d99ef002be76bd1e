"""Serving-config planning: models tutorial and PaddleOCR layouts, located errors, the Paddle Serving skip."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.helpers.trees import write_tree
from tipc.core.errors import ConfigError, UserError
from tipc.core.steps import Overrides, Plan, Stage, Step
from tipc.execute.serving.requirements import unmet_requirement
from tipc.planning.serving import PADDLE_SERVING_REASON, plan_serving

# PaddlePaddle/models tutorials/mobilenetv3_prod/Step6:
# test_tipc/configs/mobilenet_v3_small/serving_infer_python.txt
TUTORIAL = """===========================serving_params===========================
model_name:mobilenet_v3_small
python:python3.7
trans_model:-m paddle_serving_client.convert
--dirname:./inference/mobilenet_v3_small_infer/
--model_filename:inference.pdmodel
--params_filename:inference.pdiparams
--serving_server:./deploy/serving_python/serving_server/
--serving_client:./deploy/serving_python/serving_client/
serving_dir:./deploy/serving_python
web_service:web_service.py
pipline:pipeline_http_client.py
--image_dir:../../lite_data/test/"""

# The older template layout described in tipc-format.md §7.1 (a devices line with `--opt`).
TEMPLATE_WITH_DEVICES = TUTORIAL.replace(
    "web_service:web_service.py\n",
    'web_service:web_service.py --config=config.yml\n--opt op.imagenet.local_service_conf.devices:"0"|null\n',
)

# PaddleOCR test_tipc/configs/ch_PP-OCRv3/model_linux_gpu_normal_normal_serving_python_linux_gpu_cpu.txt
OCR = """===========================serving_params===========================
model_name:ch_PP-OCRv3
python:python3.7
trans_model:-m paddle_serving_client.convert
--det_dirname:./inference/ch_PP-OCRv3_det_infer/
--model_filename:inference.pdmodel
--params_filename:inference.pdiparams
--det_serving_server:./deploy/pdserving/ppocr_det_v3_serving/
--det_serving_client:./deploy/pdserving/ppocr_det_v3_client/
--rec_dirname:./inference/ch_PP-OCRv3_rec_infer/
--rec_serving_server:./deploy/pdserving/ppocr_rec_v3_serving/
--rec_serving_client:./deploy/pdserving/ppocr_rec_v3_client/
serving_dir:./deploy/pdserving
web_service:web_service.py --config=config.yml --opt op.det.concurrency="1" op.rec.concurrency="1"
op.det.local_service_conf.devices:gpu|null
op.det.local_service_conf.use_mkldnn:False
op.det.local_service_conf.thread_num:6
op.det.local_service_conf.use_trt:False
op.det.local_service_conf.precision:fp32
op.det.local_service_conf.model_config:
op.rec.local_service_conf.model_config:
pipline:pipeline_http_client.py
--image_dir:../../doc/imgs/1.jpg
"""

OCR_DET = (
    OCR.replace("model_name:ch_PP-OCRv3\n", "model_name:ch_PP-OCRv3_det\n")
    .replace("--rec_dirname:./inference/ch_PP-OCRv3_rec_infer/", "--rec_dirname:null")
    .replace("web_service:web_service.py", "web_service:web_service_det.py")
)


def plan_of(tmp_path: Path, config_text: str, extra: dict[str, str] | None = None, **kw: object) -> Plan:
    files = {"test_tipc/configs/m/serving.txt": config_text, **(extra or {})}
    repo = write_tree(tmp_path, files)
    return plan_serving(repo / "test_tipc/configs/m/serving.txt", **kw)  # type: ignore[arg-type]


SERVING_SERVER_PY = "from paddle_serving_server.web_service import WebService, Op\n"


def test_tutorial_config_plans_convert_server_client(tmp_path: Path) -> None:
    plan = plan_of(
        tmp_path,
        TUTORIAL,
        {
            "deploy/serving_python/web_service.py": SERVING_SERVER_PY,
            "deploy/serving_python/config.yml": "worker_num: 20\nhttp_port: 18093\nrpc_port: 9993\n",
            "deploy/serving_python/pipeline_http_client.py": "import requests\n",
        },
    )
    assert plan.chain == "serving" and plan.dialect == "models_serving" and plan.status_format == "compact"
    assert plan.repo == str(tmp_path.resolve())
    assert plan.output_dir == "log/mobilenet_v3_small/serving_infer"
    convert, server, client = plan.steps
    assert convert.argv == (
        "python3.7",
        "-m",
        "paddle_serving_client.convert",
        "--dirname=./inference/mobilenet_v3_small_infer/",
        "--model_filename=inference.pdmodel",
        "--params_filename=inference.pdiparams",
        "--serving_server=./deploy/serving_python/serving_server/",
        "--serving_client=./deploy/serving_python/serving_client/",
    )
    assert convert.stage is Stage.EXPORT and convert.source_lines == (4, 5, 6, 7, 8, 9)
    assert server.stage is Stage.SERVE and server.background
    assert server.argv == ("python3.7", "web_service.py") and server.cwd == "deploy/serving_python"
    assert server.ready_url == "tcp://127.0.0.1:18093"
    assert server.depends_on == (convert.id,)
    assert client.stage is Stage.CLIENT and client.depends_on == (server.id,)
    assert client.argv == ("python3.7", "pipeline_http_client.py", "--image_dir=../../lite_data/test/")
    assert client.log == "log/mobilenet_v3_small/serving_infer/server_infer_gpu_batchsize_1.log"
    assert (
        "> ../../log/mobilenet_v3_small/serving_infer/server_infer_gpu_batchsize_1.log 2>&1"
        in client.status_command
    )
    for step in plan.steps:
        assert step.requires_reason == PADDLE_SERVING_REASON
    assert convert.requires_modules == ("paddle_serving_client",)
    assert server.requires_modules == client.requires_modules == ("paddle_serving_server",)


def test_python_override_and_device_loop(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, TEMPLATE_WITH_DEVICES, overrides=Overrides(python=sys.executable))
    servers = [s for s in plan.steps if s.stage is Stage.SERVE]
    assert [s.id for s in servers] == ["serving/server/gpu", "serving/server/cpu"]
    assert servers[0].argv == (
        sys.executable,
        "web_service.py",
        "--config=config.yml",
        "--opt",
        "op.imagenet.local_service_conf.devices=0",
    )
    assert servers[1].argv[-1] == "op.imagenet.local_service_conf.devices="
    assert plan.results_log.endswith("serving_infer_python.log")
    cpu_only = plan_of(tmp_path / "b", TEMPLATE_WITH_DEVICES, overrides=Overrides(device="cpu"))
    assert [s.id for s in cpu_only.steps if s.stage is Stage.SERVE] == ["serving/server/cpu"]


def test_tipc_serve_as_web_service_needs_no_paddle_serving(tmp_path: Path) -> None:
    text = TUTORIAL.replace("trans_model:-m paddle_serving_client.convert", "trans_model:null").replace(
        "web_service:web_service.py",
        "web_service:-m tipc serve ../../inference/m_infer --port 18093 --name m",
    )
    plan = plan_of(tmp_path, text, {"deploy/serving_python/pipeline_http_client.py": "import json\n"})
    server, client = plan.steps
    assert server.ready_url == "http://127.0.0.1:18093/v2/health/ready"
    assert server.requires_modules == client.requires_modules == ()
    assert server.depends_on == ()


def test_ocr_system_config_converts_det_and_rec_and_loops_devices(tmp_path: Path) -> None:
    plan = plan_of(
        tmp_path,
        OCR,
        {
            "deploy/pdserving/web_service.py": SERVING_SERVER_PY,
            "deploy/pdserving/config.yml": "http_port: 9998\n",
        },
    )
    assert plan.dialect == "ocr_serving" and plan.status_format == "ocr"
    assert plan.output_dir == "test_tipc/output/ch_PP-OCRv3/serving_infer/python"
    ids = [s.id for s in plan.steps]
    assert ids == [
        "serving/convert_det",
        "serving/convert_rec",
        "serving/server/gpu/usetrt_False/precision_fp32",
        "serving/client/gpu/usetrt_False/precision_fp32/pipeline_http_client.py",
        "serving/server/cpu/usemkldnn_False/threads_6",
        "serving/client/cpu/usemkldnn_False/threads_6/pipeline_http_client.py",
    ]
    rec = plan.step("serving/convert_rec")
    assert "--dirname=./inference/ch_PP-OCRv3_rec_infer/" in rec.argv
    assert "--serving_server=./deploy/pdserving/ppocr_rec_v3_serving/" in rec.argv
    cpu = plan.step("serving/server/cpu/usemkldnn_False/threads_6")
    assert cpu.argv[:6] == (
        "python3.7",
        "web_service.py",
        "--config=config.yml",
        "--opt",
        "op.det.concurrency=1",
        "op.rec.concurrency=1",
    )
    assert cpu.argv[6:] == (
        "op.det.local_service_conf.devices=",
        "op.det.local_service_conf.use_mkldnn=False",
        "op.det.local_service_conf.thread_num=6",
        "op.det.local_service_conf.model_config=ppocr_det_v3_serving",
        "op.rec.local_service_conf.model_config=ppocr_rec_v3_serving",
    )
    assert cpu.ready_url == "tcp://127.0.0.1:9998"
    client = plan.step("serving/client/cpu/usemkldnn_False/threads_6/pipeline_http_client.py")
    assert client.log == (
        "test_tipc/output/ch_PP-OCRv3/serving_infer/python/"
        "python_client_cpu_pipeline_http_usemkldnn_False_threads_6_batchsize_1.log"
    )
    assert plan.results_log.endswith("python/results_python_serving.log")


def test_ocr_det_config_converts_det_only(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, OCR_DET, overrides=Overrides(device="cpu"))
    assert [s.id for s in plan.steps if s.stage is Stage.EXPORT] == ["serving/convert_det"]
    server = next(s for s in plan.steps if s.stage is Stage.SERVE)
    assert server.argv[1] == "web_service_det.py"
    assert not any("rec.local_service_conf.model_config" in a for a in server.argv)
    # No config.yml to read a port from: a located warning, not a crash.
    assert any(f.code == "TIPC-SERVE-READY" and f.line == 14 for f in plan.findings)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("model_name:x\n", 1, "serving_params"),
        (TUTORIAL.replace("serving_dir:./deploy/serving_python", "serve_dir:./deploy"), 10, "serving_dir"),
        (TUTORIAL.replace("python:python3.7", "interpreter:python3.7"), 3, "python"),
        ("\n".join(TUTORIAL.splitlines()[:8]), 8, "ends early"),
        (
            TUTORIAL.replace("pipline:pipeline_http_client.py\n", "client:pipeline_http_client.py\n"),
            11,
            "pipline",
        ),
        ("===serving_infer_python_params===\nmodel_name:x\n", 1, "PaddleDetection"),
        (TUTORIAL.replace("web_service:web_service.py", "--op:GeneralClasOp"), 1, "C++ serving"),
    ],
)
def test_bad_configs_give_located_errors(tmp_path: Path, text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_of(tmp_path, text)
    assert info.value.line == line
    assert message in info.value.message
    assert info.value.render().startswith(str(tmp_path / "test_tipc/configs/m/serving.txt"))


def test_blank_line_and_crlf_are_reported(tmp_path: Path) -> None:
    text = TUTORIAL.replace("serving_dir:", "\nserving_dir:").replace("\n", "\r\n")
    plan = plan_of(tmp_path, text)
    codes = {(f.code, f.line) for f in plan.findings}
    assert ("TIPC-BLANK", 10) in codes and ("TIPC-CRLF", 1) in codes
    assert plan.step("serving/server/default").cwd == "deploy/serving_python"


def test_config_read_through_the_config_parser(tmp_path: Path) -> None:
    # a BOM is dropped, and a trailing blank line moves no slot (nothing to warn about)
    plan = plan_of(tmp_path, "\ufeff" + TUTORIAL + "\n\n")
    assert plan.step("serving/server/default").cwd == "deploy/serving_python"
    assert not [f for f in plan.findings if f.code == "TIPC-BLANK"]
    # what no script could read is a located ConfigError from tipc.config's reader
    config = tmp_path / "test_tipc/configs/m/serving.txt"
    config.write_bytes(TUTORIAL.encode() + b"\x00")
    with pytest.raises(ConfigError) as info:
        plan_serving(config)
    assert "NUL" in info.value.message and info.value.line == TUTORIAL.count("\n") + 1
    config.write_bytes(b"x" * (300 * 1024))
    with pytest.raises(ConfigError, match="larger than"):
        plan_serving(config)


def test_set_override_and_unknown_key(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, TUTORIAL, overrides=Overrides(sets=(("--image_dir", "../../other/"),)))
    assert plan.steps[-1].argv[-1] == "--image_dir=../../other/"
    with pytest.raises(UserError):
        plan_of(tmp_path / "b", TUTORIAL, overrides=Overrides(sets=(("--nope", "1"),)))


def test_unmet_requirement_asks_the_interpreter(tmp_path: Path) -> None:
    needs = Step(
        id="s",
        stage=Stage.SERVE,
        argv=(sys.executable, "web_service.py"),
        requires_modules=("paddle_serving_server",),
        requires_reason=PADDLE_SERVING_REASON,
    )
    reason = unmet_requirement(needs, tmp_path)
    assert (
        reason is not None and reason.startswith(PADDLE_SERVING_REASON) and "paddle_serving_server" in reason
    )
    present = Step(
        id="t", stage=Stage.SERVE, argv=("python3.7-does-not-exist", "x.py"), requires_modules=("json",)
    )
    assert unmet_requirement(present, tmp_path) is None
    assert unmet_requirement(Step(id="u", stage=Stage.OTHER, argv=("x",)), tmp_path) is None


def test_plan_round_trips_through_json(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, TUTORIAL, {"deploy/serving_python/web_service.py": SERVING_SERVER_PY})
    assert Plan.from_json(plan.to_json()) == plan


def test_the_demo_serving_config_needs_no_paddle_serving() -> None:
    root = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
    plan = plan_serving(root / "test_tipc/configs/lenet_digits/serving_infer_python.txt")
    assert plan.repo == str(root)
    export, server, client = plan.steps
    assert export.argv[:2] == ("python", "export_model.py")
    assert "--save_inference_dir=./inference/lenet_digits_infer/" in export.argv
    assert server.argv == (
        "python",
        "-m",
        "tipc",
        "serve",
        "../../inference/lenet_digits_infer",
        "--port",
        "18093",
        "--name",
        "lenet_digits",
    )
    assert server.ready_url == "http://127.0.0.1:18093/v2/health/ready"
    assert client.argv == ("python", "pipeline_http_client.py", "--image_dir=../../lite_data/infer/")
    assert not any(s.requires_modules for s in plan.steps)
