import os
import time
from pathlib import Path

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.execute.record import RunRecord
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import Verdict

EXPORT_LOG = f"{OUTPUT_DIR}/norm_train_gpus_0_autocast_null/export.log"
INFER_LOG = f"{OUTPUT_DIR}/python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log"
MODEL_DIR = f"{OUTPUT_DIR}/norm_train_gpus_0_autocast_null"


def record(
    tmp_path: Path,
    *,
    infer_argv: list[str] | None = None,
    started: float | None = None,
    host: dict[str, object] | None = None,
) -> RunRecord:
    return make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", f"--save_inference_dir={MODEL_DIR}"],
                EXPORT_LOG,
                Status.PASSED,
            ),
            (
                "infer",
                Stage.INFER,
                infer_argv or ["python", "infer.py", "--use_gpu=False", f"--model_dir={MODEL_DIR}"],
                INFER_LOG,
                Status.PASSED,
            ),
        ],
        started=started,
        host=host,
    )


def model_files(mtime: float | None = None) -> dict[str, str | bytes]:
    return {f"{MODEL_DIR}/inference.json": "{}", f"{MODEL_DIR}/inference.pdiparams": b"\0"}


def test_fresh_model_passes(tmp_path: Path) -> None:
    write_tree(tmp_path, {EXPORT_LOG: "exported to ...\n", INFER_LOG: "class_id: 1\n", **model_files()})
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5)))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["model"]["format"] == "pir-json"


def test_untrained_export_fails_with_line(tmp_path: Path) -> None:
    log = "loading config\nW1122 The weight file ./output/best.pdparams does not exist! random init.\nsaved\n"
    write_tree(tmp_path, {EXPORT_LOG: log, INFER_LOG: "", **model_files()})
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5)))
    assert out.verdict is Verdict.FAIL
    ev = out.evidence[0]
    assert (ev.path, ev.line) == (EXPORT_LOG, 2) and "weights were not loaded" in ev.text
    skip = "UserWarning: Skip loading for fc.weight. fc.weight is not found in the provided dict.\n"
    write_tree(tmp_path, {EXPORT_LOG: skip})
    assert (
        CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5))).verdict
        is Verdict.FAIL
    )


def test_stale_and_missing_model_fail(tmp_path: Path) -> None:
    write_tree(tmp_path, {EXPORT_LOG: "ok\n", INFER_LOG: "", **model_files()})
    old = time.time() - 3600
    for name in ("inference.json", "inference.pdiparams"):
        os.utime(tmp_path / MODEL_DIR / name, (old, old))
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5)))
    assert out.verdict is Verdict.FAIL and out.summary.startswith("stale model file")
    assert out.evidence[0].path == f"{MODEL_DIR}/inference.json"
    (tmp_path / MODEL_DIR / "inference.json").unlink()
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path)))
    assert out.verdict is Verdict.FAIL and "inference model missing" in out.summary


def test_pdmodel_format_found(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            EXPORT_LOG: "ok\n",
            INFER_LOG: "",
            f"{MODEL_DIR}/inference.pdmodel": b"\0",
            f"{MODEL_DIR}/inference.pdiparams": b"\0",
        },
    )
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5)))
    assert out.verdict is Verdict.PASS and out.data["model"]["format"] == "pdmodel"


def test_gpu_flag_on_cpu_build(tmp_path: Path) -> None:
    gpu_argv = ["python", "infer.py", "--use_gpu=True", f"--model_dir={MODEL_DIR}"]
    log = (
        "I1122 loading\n"
        "E1122 13:27:28.746031 13066 analysis_config.cc:169] Please use PaddlePaddle with GPU version.\n"
    )
    write_tree(tmp_path, {EXPORT_LOG: "ok\n", INFER_LOG: log, **model_files()})
    rec = record(tmp_path, infer_argv=gpu_argv, started=time.time() - 5)
    out = CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL and (out.evidence[0].path, out.evidence[0].line) == (INFER_LOG, 2)
    assert CHECKS["artefacts"](ctx_for(tmp_path, rec)).verdict is Verdict.FAIL
    assert CHECKS["artefacts"](ctx_for(tmp_path, rec), gpu=False).verdict is Verdict.PASS
    # no fall-back message, but the record says Paddle has no CUDA
    write_tree(tmp_path, {INFER_LOG: "class_id: 1\n"})
    rec = record(tmp_path, infer_argv=["python", "infer.py", "--device", "gpu"], host={"paddle_cuda": False})
    out = CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL and "CPU-only" in out.evidence[0].text
    rec = record(tmp_path, infer_argv=["python", "infer.py", "--device", "gpu"], host={"paddle_cuda": True})
    assert CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec)).verdict is Verdict.PASS
    assert CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, record(tmp_path))).verdict is Verdict.PASS


def test_no_record_and_bad_args(tmp_path: Path) -> None:
    assert CHECKS["artefacts"](ctx_for(tmp_path, None)).verdict is Verdict.SKIP
    assert CHECKS["artefacts"](ctx_for(tmp_path, None), stale_slack_s=-1).verdict is Verdict.FAIL
    assert CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, None), x=1).verdict is Verdict.FAIL
    rec = make_record(tmp_path, [("train", Stage.TRAIN, ["python", "t.py"], None, Status.PASSED)])
    assert CHECKS["artefacts"](ctx_for(tmp_path, rec)).verdict is Verdict.NA


def test_cpu_wheel_detected_from_package_metadata(tmp_path: Path) -> None:
    import dataclasses

    from tipc.judge.checks import artefacts

    # a stand-in interpreter answering the metadata probe (which wheel is installed)
    fake = tmp_path / "fake_python"
    fake.write_text('#!/bin/sh\necho \'{"cpu": true, "gpu": false}\'\n')
    fake.chmod(0o755)
    write_tree(tmp_path, {EXPORT_LOG: "ok\n", INFER_LOG: "class_id: 1\n", **model_files()})
    rec = record(tmp_path, infer_argv=["python", "infer.py", "--use_gpu=True"])
    rec = dataclasses.replace(rec, python=str(fake))
    artefacts._probe_cache.clear()
    out = CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL, out.summary
    assert "CPU wheel" in out.evidence[0].text and out.evidence[0].path == INFER_LOG
    fake.write_text('#!/bin/sh\necho \'{"cpu": false, "gpu": true}\'\n')
    artefacts._probe_cache.clear()
    assert CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec)).verdict is Verdict.PASS
    artefacts._probe_cache.clear()


# The official TIPC tutorial (PaddlePaddle/models tutorials/mobilenetv3_prod/Step6) on a CPU-only build:
# train.py asks for the GPU by default (no flag on its command), fails to set it and goes on with the CPU.
STEP6_TRAIN_LOG = """\
Namespace(data_path='./lite_data', model='mobilenet_v3_small', device='gpu', batch_size=4, epochs=5)
device set error, use default device...
Loading data
[Epoch 0, iter: 0] top1: 0.00000, top5: 0.00000, lr: 0.00100, loss: 6.96104, avg_reader_cost: 0.40512 sec, \
avg_batch_cost: 1.80277 sec, avg_samples: 4.0, avg_ips: 2.21881 images/sec.
"""
TRAIN_LOG = f"{OUTPUT_DIR}/tipc_logs/train_norm_train_gpus_0.log"


def test_silent_fallback_in_a_passed_train_step_fails(tmp_path: Path) -> None:
    write_tree(tmp_path, {TRAIN_LOG: STEP6_TRAIN_LOG})
    rec = make_record(
        tmp_path,
        [
            (
                "train/norm_train/gpus_0",
                Stage.TRAIN,
                ["python3.7", "train.py", "--epochs=5"],
                TRAIN_LOG,
                Status.PASSED,
            )
        ],
    )
    out = CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL
    ev = out.evidence[0]
    assert (ev.path, ev.line, ev.excerpt) == (TRAIN_LOG, 2, "device set error, use default device...")
    assert "train/norm_train/gpus_0 asked for the GPU but Paddle fell back to CPU" in ev.text


def test_dashed_flag_spellings_are_seen(tmp_path: Path) -> None:
    # sldyns/DnCNN_paddle: `--use-gpu:True|False` and `--model-dir:./test_tipc/output/` in the config;
    # liuxtakeoff/cutpaste_paddle: `--save-inference-dir:deploy`.
    model_dir = f"{OUTPUT_DIR}/norm_train_gpus_0"
    log = (
        "E1122 13:27:28.746031 13066 analysis_config.cc:169] Please use PaddlePaddle with GPU version.\n"
        "denoised image saved to ./test_tipc/output/test002.png\n"
    )
    write_tree(
        tmp_path,
        {
            EXPORT_LOG: "ok\n",
            INFER_LOG: log,
            f"{model_dir}/model.json": "{}",
            f"{model_dir}/model.pdiparams": b"\0",
        },
    )
    rec = make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", "--save-inference-dir", model_dir],
                EXPORT_LOG,
                Status.PASSED,
            ),
            (
                "infer",
                Stage.INFER,
                ["python", "infer.py", "--use-gpu=True", f"--model-dir={model_dir}"],
                INFER_LOG,
                Status.PASSED,
            ),
        ],
        started=time.time() - 5,
    )
    out = CHECKS["artefacts"](ctx_for(tmp_path, rec), gpu=False)
    assert out.verdict is Verdict.PASS and out.data["model"]["model_file"].endswith("model.json")
    gpu = CHECKS["gpu_flag_on_cpu_build"](ctx_for(tmp_path, rec))
    assert gpu.verdict is Verdict.FAIL and "(use-gpu=True)" in gpu.evidence[0].text
    # PaddleOCR style: -o Global.use_gpu=True
    from tipc.core.steps import Step
    from tipc.judge.checks._common import StepRun
    from tipc.judge.checks.artefacts import _gpu_flag

    step = Step(id="infer", stage=Stage.INFER, argv=("python", "tools/infer.py", "-o", "Global.use_gpu=True"))
    assert _gpu_flag(StepRun(step, None)) == "Global.use_gpu=True"


def test_stale_pdmodel_beside_a_fresh_json_export_fails(tmp_path: Path) -> None:
    # sldyns/DnCNN_paddle commits model.pdmodel (2022); on Paddle 3 the export writes model.json and
    # model.pdiparams beside it, and infer.py opens model.pdmodel: the old program runs with the new weights.
    model_dir = f"{OUTPUT_DIR}/DnCNN/norm_train_gpus_0"
    write_tree(
        tmp_path,
        {
            EXPORT_LOG: "ok\n",
            INFER_LOG: "",
            f"{model_dir}/model.pdmodel": b"\0",
            f"{model_dir}/model.json": "{}",
            f"{model_dir}/model.pdiparams": b"\0",
        },
    )
    committed = time.mktime((2022, 6, 1, 12, 0, 0, 0, 0, -1))
    os.utime(tmp_path / model_dir / "model.pdmodel", (committed, committed))
    rec = make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", "--num_of_layers", "17", f"--save-inference-dir={model_dir}"],
                EXPORT_LOG,
                Status.PASSED,
            ),
            (
                "infer",
                Stage.INFER,
                ["python", "infer.py", f"--model-dir={model_dir}"],
                INFER_LOG,
                Status.PASSED,
            ),
        ],
        started=time.time() - 5,
    )
    out = CHECKS["artefacts"](ctx_for(tmp_path, rec), gpu=False)
    assert out.verdict is Verdict.FAIL
    assert out.summary.startswith("stale model file beside this run's export")
    assert out.evidence[0].path == f"{model_dir}/model.pdmodel" and "model.json" in out.summary


def test_the_wheel_probe_reads_this_interpreters_paddle() -> None:
    import importlib.metadata
    import sys

    from tipc.judge.checks import artefacts

    artefacts._probe_cache.clear()
    try:
        importlib.metadata.distribution("paddlepaddle-gpu")
        expected: bool | None = True
    except importlib.metadata.PackageNotFoundError:
        try:
            importlib.metadata.distribution("paddlepaddle")
            expected = False
        except importlib.metadata.PackageNotFoundError:
            expected = None
    assert artefacts._probe_wheel(sys.executable) is expected


def test_each_bad_argument_fails(tmp_path: Path) -> None:
    for args, words in (({"x": 1}, "x: unknown key 'x'"), ({"gpu": "yes"}, "gpu: expected true or false")):
        out = CHECKS["artefacts"](ctx_for(tmp_path, None), **args)
        assert out.verdict is Verdict.FAIL and words in out.summary, args


def test_a_missing_export_log_fails(tmp_path: Path) -> None:
    write_tree(tmp_path, {INFER_LOG: "", **model_files()})
    out = CHECKS["artefacts"](ctx_for(tmp_path, record(tmp_path, started=time.time() - 5)))
    assert out.verdict is Verdict.FAIL and out.summary == "export log of export not found"


def test_an_export_that_did_not_pass_or_run_is_not_judged_for_its_model(tmp_path: Path) -> None:
    # The runner reports the failed export; no model to locate is not a second failure.
    for status in (Status.FAILED, None):
        rec = make_record(tmp_path, [("export", Stage.EXPORT, ["python", "export_model.py"], None, status)])
        out = CHECKS["artefacts"](ctx_for(tmp_path, rec))
        assert out.verdict is Verdict.PASS and out.data == {}, status
