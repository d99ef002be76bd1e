from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from tipc.core.causes import hide_own_frames
from tipc.core.errors import ConfigError
from tipc.core.steps import Mode, Overrides, Plan, Stage, Status, Step
from tipc.execute.record import RunRecord, StepResult
from tipc.judge.causes import (
    OPERATORS,
    Cause,
    Context,
    Earlier,
    default_path,
    diagnose,
    diagnose_log,
    explain_record,
    explain_step,
    load_catalogue,
    read_tail,
)

DATA = Path(__file__).parent / "data" / "causes"
TRACE = 'Traceback (most recent call last):\n  File "tools/train.py", line 8, in <module>\n'
P3 = Context(paddle="3.3.1", pir=True)
P26 = Context(paddle="2.6.2", pir=False)
EXPORT_PASSED = (Earlier("export/1", "export", "passed"),)


def ids(causes: list[Cause]) -> list[str]:
    return [c.id for c in causes]


def first(output: str, **facts: object) -> Cause:
    found = diagnose(output, **facts)  # type: ignore[arg-type]
    assert found, f"no cause for {output!r}"
    return found[0]


def ctx(**kw: object) -> Context:
    return replace(P3, **kw)  # type: ignore[arg-type]


# --- real logs captured on this machine (tests/judge/data/causes/README.md) ---------------------------------


def test_real_paddle3_pdmodel_log_under_paddle3_with_export_passed() -> None:
    [cause] = diagnose_log(DATA / "nf.log", exit_code=1, context=ctx(earlier=EXPORT_PASSED))
    assert cause.id == "paddle3-export-format"
    assert cause.switch == "--paddle-compat export"
    assert "inference.pdmodel" in cause.evidence and "NotFound" in cause.evidence
    assert "FLAGS_enable_pir_api=0" in cause.remedy and "3.3.1" in cause.cause


def test_the_pir_cause_needs_paddle3_pir_on_and_an_export_that_passed() -> None:
    # Paddle 2.6.2 exports .pdmodel: whatever went wrong, it is not the PIR format
    assert "paddle3-export-format" not in ids(
        diagnose_log(DATA / "nf.log", context=replace(P26, earlier=EXPORT_PASSED))
    )
    # PIR switched off (--paddle-compat export): its usual remedy is already in force
    off = ctx(pir=False, switches=frozenset({"paddle-compat-export"}), earlier=EXPORT_PASSED)
    assert "paddle3-export-format" not in ids(diagnose_log(DATA / "nf.log", context=off))
    # unknown Paddle version: the precondition does not hold
    assert "paddle3-export-format" not in ids(
        diagnose_log(DATA / "nf.log", context=Context(earlier=EXPORT_PASSED))
    )


def test_a_blocked_export_is_named_as_the_root_of_a_missing_pdmodel() -> None:
    blocked = Earlier(
        "export/1",
        "export",
        "blocked",
        reason="not run: its input step train/1 did not pass (failed); root cause: train/1 failed",
        writes=("/tmp/causes/none",),
    )
    found = diagnose_log(DATA / "nf.log", context=replace(P26, earlier=(blocked,), depends_on=("export/1",)))
    assert ids(found) == ["upstream-output-missing"]
    assert found[0].upstream == "export/1"
    assert "export/1" in found[0].cause and "blocked" in found[0].cause


def test_real_zero_d_index_log() -> None:
    assert ids(diagnose_log(DATA / "zd.log", context=P3)) == ["zero-d-tensor-index"]
    # Paddle 2.4 gives 1-D results: the 0-D cause does not hold, the exception is still shown
    old = diagnose_log(DATA / "zd.log", context=Context(paddle="2.4.2"))
    assert ids(old) == ["unrecognised-exception"] and "IndexError" in old[0].cause


def test_real_gpu_on_cpu_build_log() -> None:
    cause = diagnose_log(DATA / "gpu.log", context=P3)[0]
    assert cause.id == "gpu-flag-on-cpu-build"
    assert "not compiled with CUDA" in cause.evidence


def test_gpu_asked_under_device_cpu_names_where_it_is_hard_coded(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text(
        "import paddle\nimport argparse\n\n\n\n\n\n\n\n\n\npaddle.set_device('gpu')\n", encoding="utf-8"
    )
    out = (
        'Traceback (most recent call last):\n  File "main.py", line 12, in <module>\n'
        "ValueError: ... not compiled with CUDA"
    )
    on_cpu = ctx(switches=frozenset({"device-cpu"}), repo=repo)
    found = diagnose(out, cwd=repo, context=on_cpu)
    assert ids(found) == ["gpu-hard-coded"]
    assert "main.py:12" in found[0].cause and "no switch changes it" in found[0].cause
    assert "--device cpu" not in found[0].remedy.replace("`--device cpu` is in force", "")
    assert found[0].switch is None  # its usual switch is in force already


def test_gpu_hard_coded_in_a_config_module_the_entry_script_imports(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "cfg").mkdir(parents=True)
    (repo / "cfg" / "__init__.py").write_text("", encoding="utf-8")
    (repo / "cfg" / "settings.py").write_text("lr = 0.1\ndevice = 'gpu:0'\n", encoding="utf-8")
    on_cpu = ctx(
        switches=frozenset({"device-cpu"}),
        repo=repo,
        code_files=("train.py", "cfg/__init__.py", "cfg/settings.py"),
    )
    (repo / "train.py").write_text("from cfg.settings import device\n", encoding="utf-8")
    cause = diagnose("W1201 device set error, use default device...\nCUDA is not available", context=on_cpu)[
        0
    ]
    assert cause.id == "gpu-hard-coded" and "cfg/settings.py:2" in cause.cause


def test_real_numpy_alias_log_names_the_alias() -> None:
    cause = diagnose_log(DATA / "np.log")[0]
    assert cause.id == "numpy-removed-alias"
    assert "`np.int`" in cause.cause


def test_real_multi_gpu_launch_on_cpu_needs_the_argv() -> None:
    argv = ["python3.7", "-m", "paddle.distributed.launch", "--gpus=0,1", "train.py"]
    assert ids(diagnose_log(DATA / "launch.log", argv=argv))[0] == "multi-gpu-on-cpu"
    # without the launch argv, "substring not found" alone explains nothing: the exception is shown
    assert ids(diagnose_log(DATA / "launch.log", argv=["python", "train.py"])) == ["unrecognised-exception"]


def test_a_failed_prepare_is_not_the_cause_of_a_multi_gpu_launch() -> None:
    prepare = Earlier("prepare", "prepare", "failed", reason="exit code 4", cause="the download failed")
    argv = ["python3.7", "-m", "paddle.distributed.launch", "--gpus=0,1", "train.py"]
    context = ctx(earlier=(prepare,), prepare_text="tar xf lite_data.tar\nln -s lite_data data\nwget x")
    assert ids(diagnose_log(DATA / "launch.log", argv=argv, context=context)) == ["multi-gpu-on-cpu"]


def test_a_failed_prepare_is_not_the_cause_of_an_unrelated_infer_failure() -> None:
    prepare = Earlier("prepare", "prepare", "failed", reason="exit code 4", cause="the download failed")
    out = TRACE + "ValueError: (InvalidArgument) The inverse of Fused batch norm variance should be finite.\n"
    found = diagnose(out, context=ctx(stage="infer", earlier=(prepare,), prepare_text="wget x -P data"))
    # the model's weights are not finite (training diverged): nothing to do with prepare.sh
    assert ids(found) == ["non-finite-weights"]
    assert "prepare" not in found[0].cause


def test_real_lite_data_missing_after_a_failed_prepare_names_both_own_error_first() -> None:
    prepare = Earlier(
        "prepare", "prepare", "failed", reason="exit code 4", cause="the download failed", log="p.log"
    )
    context = ctx(
        earlier=(prepare,), prepare_text="tar -xf test_images/lite_data.tar\nln -s lite_data data\n"
    )
    found = diagnose_log(DATA / "step6_train_nodata.log", exit_code=1, context=context)
    assert ids(found) == ["lite-data-missing", "upstream-output-missing"]
    assert "./data/train" in found[0].evidence
    assert found[1].upstream == "prepare" and "prepare.sh names `data`" in found[1].cause
    assert "the download failed" in found[1].cause


def test_lite_data_missing_with_no_prepare_says_so() -> None:
    found = diagnose_log(DATA / "step6_train_nodata.log", context=ctx(switches=frozenset({"no-prepare"})))
    assert ids(found) == ["lite-data-missing-no-prepare"]
    assert "--no-prepare" in found[0].remedy


def test_real_dataloader_worker_segfault_log() -> None:
    cause = diagnose_log(DATA / "worker_crash.log", exit_code=1)[0]
    assert cause.id == "dataloader-worker-crash"
    assert "segmentation fault encountered in DataLoader workers" in cause.evidence


def test_real_module_missing_from_the_repo(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "paddlevision").mkdir(parents=True)  # the package is there, its `models` folder was deleted
    (repo / "paddlevision" / "__init__.py").write_text("from .models import *\n", encoding="utf-8")
    out = TRACE + "ModuleNotFoundError: No module named 'paddlevision.models'\n"
    [cause] = diagnose(out, context=ctx(repo=repo))
    assert cause.id == "module-missing-from-repo"
    assert "`paddlevision.models`" in cause.cause and "no interpreter change" in cause.cause


def test_real_module_not_installed_names_the_interpreter_and_the_pip_line(tmp_path: Path) -> None:
    [cause] = diagnose(
        TRACE + "ModuleNotFoundError: No module named 'cv2'\n",
        context=ctx(repo=tmp_path, python="/opt/py/bin/python"),
    )
    assert cause.id == "module-not-found"
    assert "/opt/py/bin/python -m pip install opencv-python" in cause.remedy


def test_real_can_log_with_its_repo_layout(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "paddlevision").mkdir(parents=True)
    [cause] = diagnose_log(DATA / "can_train.log", context=ctx(repo=repo))
    assert cause.id == "module-missing-from-repo"


def test_real_download_failure_log() -> None:
    cause = diagnose_log(DATA / "download.log")[0]
    assert cause.id == "weights-download-failed"
    assert cause.switch == "--network"


def test_a_download_failing_with_the_network_allowed_is_another_cause() -> None:
    cause = diagnose_log(DATA / "download.log", context=Context(switches=frozenset({"network"})))[0]
    assert cause.id == "download-failed-online"
    assert cause.switch is None


def test_real_prepare_wget_without_network() -> None:
    cause = diagnose_log(DATA / "wget.log", exit_code=4)[0]
    assert cause.id == "weights-download-failed"
    assert "videotag.bj.bcebos.com" in cause.evidence


def test_real_prepare_pip_install_without_network() -> None:
    [cause] = diagnose_log(DATA / "pip.log", exit_code=1)
    assert cause.id == "pip-install-failed"
    assert "`pip install unrar`" in cause.cause


# --- failures seen on unseen repos (issue 24) ---------------------------------------------------------------


def test_zlib_clash_of_paddle_2() -> None:
    out = TRACE + "zlib.error: Error -2 while decompressing data: inconsistent stream state\n"
    cause = first(out, context=P26)
    assert cause.id == "zlib-clash"
    assert cause.switch == "--paddle-compat zlib"


def test_empty_training_set() -> None:
    out = (
        TRACE
        + '  File "/x/paddle/io/dataloader/batch_sampler.py", line 140, in __init__\n'
        + "ValueError: num_samples should be a positive integer, but got num_samples=0\n"
    )
    assert first(out, context=P3).id == "empty-dataset"


def test_an_api_change_shows_the_paddle_message_and_where(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    out = (
        "Traceback (most recent call last):\n"
        f'  File "{repo}/models/loss.py", line 40, in forward\n'
        "    m = paddle.max(x)\n"
        '  File "/venv/paddle/tensor/math.py", line 3000, in max\n'
        "ValueError: (InvalidArgument) Tensor need be reduced must not empty.\n"
        "  [Hint: Expected x.numel() > 0, but received x.numel():0 <= 0:0.]\n"
    )
    cause = first(out, context=ctx(repo=repo))
    assert cause.id == "empty-input-to-paddle"
    assert "Tensor need be reduced must not empty" in cause.cause
    assert "models/loss.py:40" in cause.cause and "3.3.1" in cause.cause
    assert "older Paddle" in cause.cause  # reducing an empty tensor returned a value before


# --- weights: who names them and who should have made them --------------------------------------------------


def test_a_pretrained_backbone_on_the_first_step_is_not_called_a_train_output(tmp_path: Path) -> None:
    out = (
        "FileNotFoundError: [Errno 2] No such file or directory: './pretrained/ResNet50_pretrained.pdparams'"
    )
    argv = ["python", "train.py", "--pretrained=./pretrained/ResNet50_pretrained.pdparams"]
    [cause] = diagnose(out, argv=argv, context=ctx(repo=tmp_path))
    assert cause.id == "pretrained-backbone-missing"
    assert "ResNet50_pretrained.pdparams" in cause.cause and "command line" in cause.cause


def test_a_backbone_path_in_the_model_file_on_an_export_step(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "models").mkdir(parents=True)
    (repo / "models" / "net.py").write_text(
        "import paddle\n\nBACKBONE = './weights/hrnet_w18_imagenet.pdparams'\n", encoding="utf-8"
    )
    out = "ValueError: The ``path`` (./weights/hrnet_w18_imagenet.pdparams) to load model not exists."
    train = Earlier("train/1", "train", "passed")
    [cause] = diagnose(
        out, argv=["python", "export.py"], context=ctx(repo=repo, stage="export", earlier=(train,))
    )
    assert cause.id == "pretrained-backbone-missing"
    assert "models/net.py:3" in cause.cause


def test_a_weights_path_written_in_the_code(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "export.py").write_text(
        "import paddle\nstate = paddle.load('logs/net_best.pdparams')\n", encoding="utf-8"
    )
    out = "ValueError: The ``path`` (logs/net_best.pdparams) to load model not exists."
    train = Earlier("train/1", "train", "passed")
    [cause] = diagnose(out, argv=["python", "export.py"], context=ctx(repo=repo, earlier=(train,)))
    assert cause.id == "weights-path-in-code"
    assert "export.py:2" in cause.cause


def test_weights_the_config_names_where_train_did_not_write(tmp_path: Path) -> None:
    out = "FileNotFoundError: [Errno 2] No such file or directory: './log/resnet18/final.pdparams'"
    argv = ["python", "eval.py", "--pretrained=./log/resnet18/final.pdparams"]
    train = Earlier("train/1", "train", "passed")
    [cause] = diagnose(out, argv=argv, context=ctx(repo=tmp_path, earlier=(train,)))
    assert cause.id == "weights-not-written-by-train"
    assert "train/1" in cause.cause


def test_weights_after_a_failed_train_follow_from_it(tmp_path: Path) -> None:
    out = "FileNotFoundError: [Errno 2] No such file or directory: './out/final.pdparams'"
    argv = ["python", "eval.py", "--pretrained=./out/final.pdparams"]
    train = Earlier(
        "train/1", "train", "failed", reason="exit code 1", cause="The code imports `x`", writes=("./out",)
    )
    found = diagnose(out, argv=argv, context=ctx(repo=tmp_path, earlier=(train,), depends_on=("train/1",)))
    assert ids(found) == ["upstream-output-missing"]
    assert "The code imports `x`" in found[0].cause


# --- the last resort: the exception itself ------------------------------------------------------------------


def test_an_unrecognised_failure_shows_its_exception_type_message_and_frame(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    out = (
        "Traceback (most recent call last):\n"
        f'  File "{repo}/tools/train.py", line 88, in <module>\n'
        "    main()\n"
        '  File "/venv/lib/python3.11/site-packages/x.py", line 5, in f\n'
        "KeyError: 'lr_scheduler'\n"
    )
    [cause] = diagnose(out, context=ctx(repo=repo, log="test_tipc/output/x/train.log"))
    assert cause.id == "unrecognised-exception"
    assert "`KeyError: 'lr_scheduler'`" in cause.cause and "tools/train.py:88" in cause.cause
    assert "test_tipc/output/x/train.log" in cause.remedy


def test_a_failure_without_an_exception_shows_the_exit_code_and_last_line() -> None:
    [cause] = diagnose("epoch 1\nsomething odd happened", exit_code=3)
    assert cause.id == "unrecognised-exit"
    assert "code 3" in cause.cause and "something odd happened" in cause.cause


def test_the_last_resort_gives_way_to_any_other_cause() -> None:
    assert ids(diagnose("AttributeError: module 'numpy' has no attribute 'int'")) == ["numpy-removed-alias"]


# --- tipc's own frames --------------------------------------------------------------------------------------

INJECTED = (
    "Traceback (most recent call last):\n"
    '  File "/r/infer.py", line 78, in load_predictor\n'
    "    config = inference.Config(model_file_path, params_file_path)\n"
    "             ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    '  File "/opt/tipc/tipc/execute/lineage/inject/sitecustomize.py", line 411, in __init__\n'
    "    base.__init__(self, *args, **kwargs)  # type: ignore[misc]\n"
    "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: (NotFound) Cannot open file ./out/inference.pdmodel, please confirm\n"
)


def test_tipc_injected_frames_are_hidden_from_tracebacks() -> None:
    shown = hide_own_frames(INJECTED)
    assert "sitecustomize" not in shown and "base.__init__" not in shown
    assert 'File "/r/infer.py", line 78' in shown and "inference.Config(" in shown
    assert shown.splitlines()[-1].startswith("RuntimeError: (NotFound)")
    assert hide_own_frames("no traceback\n") == "no traceback\n"


def test_the_frame_a_cause_names_is_the_repos_not_tipcs() -> None:
    [cause] = diagnose(
        INJECTED.replace("(NotFound) Cannot open file ./out/inference.pdmodel", "odd"),
        context=ctx(repo=Path("/r")),
    )
    assert cause.id == "unrecognised-exception" and "infer.py:78" in cause.cause


# --- the machine --------------------------------------------------------------------------------------------


def test_a_timeout_on_a_loaded_machine_asks_for_a_longer_stage_limit() -> None:
    found = diagnose("epoch 1", context=ctx(status="timeout", stage="train", load=(6.6, 2)))
    assert ids(found) == ["timeout-loaded"]
    assert "--stage-timeout train=SECONDS" in found[0].remedy and "6.6 on 2 cores" in found[0].cause
    assert ids(diagnose("epoch 1", context=ctx(status="timeout", load=(0.5, 2)))) == ["timeout"]


# --- the other catalogue entries, on real-looking excerpts --------------------------------------------------


def test_auto_log_missing_is_not_the_generic_module_cause(tmp_path: Path) -> None:
    out = TRACE + "    import auto_log\nModuleNotFoundError: No module named 'auto_log'\n"
    assert ids(diagnose(out, context=ctx(repo=tmp_path))) == ["missing-auto-log"]


def test_paddle_fluid_import() -> None:
    out = TRACE + "    import paddle.fluid as fluid\nModuleNotFoundError: No module named 'paddle.fluid'\n"
    found = diagnose(out, context=P3)
    assert ids(found)[0] == "paddle-fluid-removed"
    assert "paddlepaddle==2.5.2" in found[0].remedy


@pytest.mark.parametrize(
    "out",
    [
        "test_tipc/test_train_inference_python.sh: line 285: python3.7: command not found",
        "FileNotFoundError: [Errno 2] No such file or directory: 'python3.7'",
    ],
)
def test_interpreter_missing(out: str) -> None:
    cause = first(out)
    assert cause.id == "python-interpreter-missing"
    assert cause.switch == "--python"


@pytest.mark.parametrize(
    "out",
    [
        "RuntimeError: Download from https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams failed. "
        "Retry limit reached",
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x.org', port=443): Max retries "
        "exceeded with url: /w.pdparams",
    ],
)
def test_download_failures(out: str) -> None:
    assert first(out).id == "weights-download-failed"


@pytest.mark.parametrize(
    "out",
    [
        "Cannot use GPU because you have installed CPU version PaddlePaddle.",
        "AssertionError: CUDA is not available",
    ],
)
def test_gpu_on_cpu_build(out: str) -> None:
    assert first(out).id == "gpu-flag-on-cpu-build"


@pytest.mark.parametrize(
    "out",
    [
        "W1123 22:01:01.1 gpu_resources.cc:1] Please use PaddlePaddle with GPU version.",
        "device set error, use default device...",
    ],
)
def test_gpu_fallback_warning(out: str) -> None:
    assert first(out).id == "gpu-fallback-warning"


def test_the_exception_comes_before_a_gpu_fallback_warning() -> None:
    out = (
        "device set error, use default device...\n"
        + TRACE
        + "FileNotFoundError: [Errno 2] No such file or directory: './data/train'\n"
    )
    assert ids(diagnose(out)) == ["lite-data-missing", "gpu-fallback-warning"]


@pytest.mark.parametrize(
    "out",
    [
        "RuntimeError: DataLoader reader thread raised an exception.",
        "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly",
        "SystemError: (Fatal) Blocking queue is killed because the data reader raises an exception.",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm)",
    ],
)
def test_dataloader_worker_crash(out: str) -> None:
    found = diagnose(out + "\nBus error (core dumped)", exit_code=135)
    assert ids(found)[0] == "dataloader-worker-crash"
    assert "num_workers" in found[0].remedy


@pytest.mark.parametrize(
    ("out", "facts"),
    [
        ("epoch 0 iter 3", {"signal_name": "SIGSEGV"}),
        ("epoch 0 iter 3", {"exit_code": -11}),
        ("Segmentation fault (core dumped)", {"exit_code": 139}),
    ],
)
def test_native_crash_from_output_or_facts(out: str, facts: dict[str, object]) -> None:
    cause = first(out, **facts)
    assert cause.id == "native-crash"
    assert "num_workers" in cause.remedy


def test_signal_evidence_names_the_signal() -> None:
    assert first("epoch 0", signal_name="SIGSEGV").evidence == "killed by SIGSEGV"
    assert first("epoch 0", exit_code=-11).evidence == "exit code -11"


def test_invalid_index_to_scalar() -> None:
    out = TRACE + "    score = out[0][0]\nIndexError: invalid index to scalar variable.\n"
    assert ids(diagnose(out, context=P3)) == ["zero-d-tensor-index"]


@pytest.mark.parametrize("name", ["float", "bool", "object", "long"])
def test_numpy_aliases(name: str) -> None:
    cause = first(f"AttributeError: module 'numpy' has no attribute '{name}'.")
    assert cause.id == "numpy-removed-alias"
    assert f"np.{name}" in cause.cause


@pytest.mark.parametrize(
    "out",
    [
        "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
        "AttributeError: type object 'Image' has no attribute 'ANTIALIAS'",
        "AttributeError: 'ImageDraw' object has no attribute 'textsize'",
    ],
)
def test_pillow_removed(out: str) -> None:
    assert first(out).id == "pillow-removed-api"


@pytest.mark.parametrize(
    ("out", "cause_id"),
    [
        ("FileNotFoundError: [Errno 2] No such file or directory: './data/train'", "lite-data-missing"),
        ("AssertionError: ./lite_data/bottle not exists", "lite-data-missing"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: './test_tipc/data/Set2/'",
            "lite-data-missing",
        ),
    ],
)
def test_missing_data_paths(out: str, cause_id: str) -> None:
    found = diagnose(out)
    assert ids(found) == [cause_id]


@pytest.mark.parametrize(
    "out",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'test_tipc/output/m/log.txt'",
    ],
)
def test_other_missing_files_are_not_called_lite_data(out: str) -> None:
    assert "lite-data-missing" not in ids(diagnose(out))
    assert ids(diagnose(out)) == ["unrecognised-exception"]


def test_tsne_on_tiny_data() -> None:
    out = (
        '  File "eval.py", line 168, in plot_tsne\n    tsne_results = tsne.fit_transform(embeds)\n'
        "ValueError: perplexity must be less than n_samples\n"
    )
    assert ids(diagnose(out)) == ["tsne-tiny-data"]


@pytest.mark.parametrize(
    ("out", "facts"),
    [
        ("MemoryError", {}),
        ("Killed", {}),
        ("", {"exit_code": -9}),
        ("", {"exit_code": 137}),
    ],
)
def test_out_of_memory(out: str, facts: dict[str, object]) -> None:
    assert first(out, **facts).id == "out-of-memory"


def test_address_in_use() -> None:
    assert first("OSError: [Errno 98] Address already in use").id == "address-in-use"


def test_generic_module_names_the_module_and_comes_last(tmp_path: Path) -> None:
    out = "ModuleNotFoundError: No module named 'tqdm'\nAttributeError: module 'numpy' has no attribute 'int'"
    found = diagnose(out, context=ctx(repo=tmp_path))
    assert ids(found) == ["numpy-removed-alias", "module-not-found"]
    assert "`tqdm`" in found[1].cause


def test_evidence_is_the_last_matching_line_without_colour() -> None:
    warning = "device set error, use default device"
    out = f"\x1b[31m{warning}...\x1b[0m\nloss 1\n{warning}!"
    assert first(out).evidence == "device set error, use default device!"
    assert first("\x1b[1mIndexError: too many indices for tensor of dimension 0\x1b[0m", context=P3).id == (
        "zero-d-tensor-index"
    )


def test_cause_json_round_trip() -> None:
    cause = first("ModuleNotFoundError: No module named 'auto_log'")
    assert Cause.from_json(cause.to_json()) == cause
    assert Cause.from_json({"id": "x"}) == Cause("x", "", "", None, "")
    linked = Cause("a", "b", "c", upstream="prepare")
    assert Cause.from_json(linked.to_json()) == linked


def test_diagnose_log_reads_only_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    head = "ModuleNotFoundError: No module named 'early'\n"
    log.write_text(head + ("x" * 99 + "\n") * 3000 + "MemoryError\n", encoding="utf-8")
    assert len(read_tail(log)) <= 200_000
    assert ids(diagnose_log(log)) == ["out-of-memory"]
    assert diagnose_log(tmp_path / "missing.log", exit_code=-9)[0].id == "out-of-memory"


# --- from a run record --------------------------------------------------------------------------------------


def _plan(repo: Path, steps: tuple[Step, ...], device: str | None = None) -> Plan:
    return Plan(
        config_path="test_tipc/configs/m/train_infer_python.txt",
        repo=str(repo),
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir="test_tipc/output",
        results_log="test_tipc/output/results_python.log",
        status_format="template",
        steps=steps,
        overrides=Overrides(device=device),
    )


def test_explain_record_reads_preconditions_from_the_record(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "test_tipc" / "output").mkdir(parents=True)
    (repo / "test_tipc" / "prepare.sh").write_text("tar xf lite_data.tar\nwget https://x/w.pdparams\n")
    logs = repo / "test_tipc" / "output"
    (logs / "prepare.log").write_text("wget: unable to resolve host address 'x'\n")
    (logs / "train.log").write_text(
        (DATA / "step6_train_nodata.log").read_text().replace("./data/train", "./lite_data/train")
    )
    (logs / "infer.log").write_text((DATA / "nf.log").read_text())
    steps = (
        Step("prepare", Stage.PREPARE, ("bash", "test_tipc/prepare.sh"), log="test_tipc/output/prepare.log"),
        Step(
            "train/1",
            Stage.TRAIN,
            ("python", "train.py"),
            log="test_tipc/output/train.log",
            writes=(("--out", "./out"),),
        ),
        Step(
            "export/1",
            Stage.EXPORT,
            ("python", "export.py"),
            depends_on=("train/1",),
            writes=(("--save", "/tmp/causes/none"),),
        ),
        Step(
            "infer/1",
            Stage.INFER,
            ("python", "infer.py"),
            log="test_tipc/output/infer.log",
            depends_on=("export/1",),
        ),
    )
    results = (
        StepResult(
            "prepare", Status.FAILED, exit_code=4, log="test_tipc/output/prepare.log", reason="exit code 4"
        ),
        StepResult(
            "train/1", Status.FAILED, exit_code=1, log="test_tipc/output/train.log", reason="exit code 1"
        ),
        StepResult(
            "export/1", Status.BLOCKED, reason="not run: its input step train/1 did not pass (failed)"
        ),
        StepResult(
            "infer/1", Status.FAILED, exit_code=1, log="test_tipc/output/infer.log", reason="exit code 1"
        ),
    )
    record = RunRecord(
        plan=_plan(repo, steps),
        results=results,
        started=0.0,
        paddle_version="3.3.1",
        sandbox={"network": False},
    )
    explained = explain_record(record, lambda r: repo / r.log if r.log else None, repo=repo)
    by_id = {r.step_id: r for r in explained.results}
    assert [r.step_id for r in explained.results] == ["prepare", "train/1", "export/1", "infer/1"]
    assert ids(list(by_id["prepare"].causes)) == ["weights-download-failed"]
    assert ids(list(by_id["train/1"].causes)) == ["lite-data-missing", "upstream-output-missing"]
    assert by_id["train/1"].causes[1].upstream == "prepare"
    # inference lacks the model export would have written: not the PIR format, the blocked export
    assert ids(list(by_id["infer/1"].causes)) == ["upstream-output-missing"]
    assert by_id["infer/1"].causes[0].upstream == "export/1"


def test_explain_step_knows_the_switches_in_force(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "main.py").write_text("import paddle\npaddle.set_device('gpu')\n")
    log = tmp_path / "train.log"
    log.write_text((DATA / "gpu.log").read_text())
    step = Step("train/1", Stage.TRAIN, ("python", "main.py", "--device=cpu"))
    result = StepResult("train/1", Status.FAILED, exit_code=1, argv=step.argv)
    record = RunRecord(
        plan=_plan(repo, (step,), device="cpu"), results=(), started=0.0, paddle_version="3.3.1"
    )
    [cause] = explain_step(record, step, result, log)
    assert cause.id == "gpu-hard-coded" and "main.py:2" in cause.cause


# --- the catalogue file and its schema ----------------------------------------------------------------------


def test_shipped_catalogue_loads_and_has_unique_ids() -> None:
    cat = load_catalogue(default_path())
    assert len(cat) >= 30
    assert len(set(cat.ids())) == len(cat.ids())
    assert cat.ids()[-2:] == ("unrecognised-exception", "unrecognised-exit")
    assert cat.backbones and cat.pip_names["cv2"] == "opencv-python"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "causes.yaml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD_ENTRY = "  - id: x\n    when:\n      - output: 'boom'\n    cause: c\n    remedy: r\n"
HEAD = "schema: tipc.causes/2\ncauses:\n"


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("schema: tipc.causes/1\ncauses: []\n", 1, "schema"),
        ("schema: tipc.causes/2\nextra: 1\ncauses:\n" + GOOD_ENTRY, 2, "unknown key 'extra'"),
        (
            HEAD + "  - id: x\n    when:\n      - eval: '1'\n    cause: c\n    remedy: r\n",
            5,
            "unknown operator 'eval'",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: '(unclosed'\n    cause: c\n    remedy: r\n",
            5,
            "not a valid regular expression",
        ),
        (HEAD + GOOD_ENTRY + GOOD_ENTRY, 8, "duplicate cause id 'x'"),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'boom'\n    cause: 'needs {nope}'\n    remedy: r\n",
            6,
            "{nope}",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - argv: 'launch'\n    cause: c\n    remedy: r\n",
            4,
            "needs an output",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - signal: SIGNOPE\n    cause: c\n    remedy: r\n",
            5,
            "expected a signal name such as SIGSEGV",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'a'\n"
            "      - file_exists: /etc/x\n    cause: c\n    remedy: r\n",
            6,
            "relative path",
        ),
        (
            HEAD
            + "  - id: x\n    when:\n      - output: 'a'\n    cause: c\n    remedy: r\n    switch: network\n",
            8,
            "tipc option",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'a'\n"
            "      - paddle: 'about 3'\n    cause: c\n    remedy: r\n",
            6,
            "version spec",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'a'\n"
            "      - switch: gpu\n    cause: c\n    remedy: r\n",
            6,
            "tipc switch",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'a'\n"
            "      - upstream: {stage: export}\n    cause: c\n    remedy: r\n",
            6,
            "status",
        ),
        (
            HEAD + "  - id: x\n    when:\n      - output: 'no (?P<file>x)'\n"
            "      - follows: prepare\n    cause: c\n    remedy: r\n",
            4,
            "(?P<path>",
        ),
        ("schema: tipc.causes/2\ncauses: [\n", 3, "invalid YAML"),
    ],
)
def test_schema_errors_are_located(tmp_path: Path, body: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_catalogue(write(tmp_path, body))
    assert info.value.line == line, info.value.render()
    assert message in info.value.message
    assert info.value.render().startswith(f"{tmp_path / 'causes.yaml'}:{line}:")


def test_a_placeholder_a_condition_gives_is_allowed(tmp_path: Path) -> None:
    body = (
        HEAD + "  - id: x\n    when:\n      - output: 'boom'\n"
        "      - code: 'boom'\n    cause: 'at {where}'\n    remedy: r\n"
    )
    assert load_catalogue(write(tmp_path, body)).ids() == ("x",)


def test_file_facts_need_the_working_directory(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD + "  - id: stale\n    when:\n      - output: 'Cannot open'\n"
        "      - file_exists: out/inference.json\n    cause: c\n    remedy: r\n",
    )
    cat = load_catalogue(path)
    (tmp_path / "out").mkdir()
    assert cat.diagnose("Cannot open x", cwd=tmp_path) == []
    (tmp_path / "out" / "inference.json").write_text("{}", encoding="utf-8")
    assert [c.id for c in cat.diagnose("Cannot open x", cwd=tmp_path)] == ["stale"]
    assert cat.diagnose("Cannot open x") == []  # unknown without cwd: no cause rests on it


def test_preconditions_on_unknown_facts_do_not_hold(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD + "  - id: p3\n    when:\n      - output: 'boom'\n"
        "      - paddle: '>=3'\n    cause: c\n    remedy: r\n"
        "  - id: up\n    when:\n      - output: 'boom'\n"
        "      - upstream: {stage: export, status: [failed, blocked]}\n"
        "    cause: c\n    remedy: r\n",
    )
    cat = load_catalogue(path)
    assert cat.diagnose("boom") == []
    assert ids(cat.diagnose("boom", context=Context(paddle="3.0.0b1"))) == ["p3"]
    assert cat.diagnose("boom", context=Context(paddle="2.6.2")) == []
    blocked = Context(earlier=(Earlier("export/1", "export", "blocked"),))
    assert ids(cat.diagnose("boom", context=blocked)) == ["up"]


def test_operator_registry_is_closed() -> None:
    assert set(OPERATORS) == {
        "output",
        "output_absent",
        "argv",
        "exit_code",
        "signal",
        "status",
        "stage",
        "file_exists",
        "file_missing",
        "paddle",
        "pir",
        "switch",
        "no_switch",
        "upstream",
        "missing_from",
        "backbone",
        "code",
        "follows",
        "follows_silent",
        "module_in_repo",
        "loaded",
        "any",
    }


def test_records_holding_causes_stay_cheap_to_import(tmp_path: Path) -> None:
    import sys

    from tipc.execute.proc import capture

    code = (
        "import sys, tipc.execute.record; print(sorted(m for m in sys.modules if m.startswith('tipc.judge')))"
    )
    rc, out = capture([sys.executable, "-c", code], cwd=Path(__file__).parents[2])
    assert rc == 0 and out.strip() == "[]", out


def test_no_pattern_backtracks_badly_on_hostile_lines() -> None:
    import time

    load_catalogue()
    hostile = [
        "FileNotFoundError: " + "a/" * 990 + "x",
        "FileNotFoundError: " + "data/" * 390 + "x y",
        "not found " + " " * 1980 + "z",
        "No such file or directory " + "'" * 1900 + "q",
        "DataLoader worker " * 110,
        "No such file or directory: " * 70,
        "Cannot open file " + "a" * 1980,
        "No module named '" + "a." * 990,
        "(InvalidArgument) " + "x " * 990,
        "File not found " + "a/b." * 490,
        "No such file or directory: '" + "data/" * 390,
        "x " + "data/" * 390 + " not found",
        "The ``path`` (" + "a/" * 990,
    ]
    argv = ["python", "-m", "paddle.distributed.launch", "--gpus=0,1"]
    for line in hostile:
        out = "\n".join([line] * 100)  # a ~200 KB log tail of such lines
        started = time.thread_time()
        diagnose(out, argv=argv, exit_code=1, context=P3)
        # CPU time of this thread, which a loaded machine does not stretch (a wall clock read 2.73 s at load
        # 11-30 on 2 cores): the whole linear catalogue takes ~0.1-0.5 s; one pattern that backtracks
        # quadratically took 4.5 to 70 s on such a line
        assert time.thread_time() - started < 3.0, line[:40]


def test_output_absent_holds_only_when_no_line_matches(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        HEAD + "  - id: quiet-crash\n    when:\n      - exit_code: [1]\n"
        "      - output_absent: 'Traceback'\n    cause: c\n    remedy: r\n",
    )
    cat = load_catalogue(path)
    assert [(c.id, c.evidence) for c in cat.diagnose("done", exit_code=1)] == [("quiet-crash", "exit code 1")]
    assert cat.diagnose(TRACE, exit_code=1) == []


def test_every_operator_has_a_matcher() -> None:
    from tipc.judge.causes.matching import _MATCHERS

    assert set(_MATCHERS) == set(OPERATORS)


def test_an_upstream_step_that_hid_its_failure_is_the_root(tmp_path: Path) -> None:
    """Train printed its save error and exited 0 (a silent failure): eval finds no weights; the cause is
    train's hidden error, not where the config points."""
    repo = tmp_path / "repo"
    (repo / "out").mkdir(parents=True)
    (repo / "out" / "train.log").write_text(
        'epoch 1 loss 0.5\nTraceback (most recent call last):\n  File "train.py", line 9, in <module>\n'
        "OSError: [Errno 28] No space left on device: './out/w/latest.pdparams'\n"
    )
    (repo / "out" / "eval.log").write_text(
        "ValueError: The ``path`` (./out/w/latest.pdparams) to load model not exists.\n"
    )
    steps = (
        Step(
            "train/1",
            Stage.TRAIN,
            ("python", "train.py"),
            log="out/train.log",
            writes=(("--out", "./out/w"),),
        ),
        Step(
            "eval/1",
            Stage.EVAL,
            ("python", "eval.py", "--pretrained=./out/w/latest.pdparams"),
            log="out/eval.log",
        ),
    )
    results = (
        StepResult("train/1", Status.PASSED, exit_code=0, log="out/train.log"),
        StepResult("eval/1", Status.FAILED, exit_code=1, log="out/eval.log", argv=steps[1].argv),
    )
    record = RunRecord(plan=_plan(repo, steps), results=results, started=0.0, paddle_version="3.3.1")
    explained = explain_record(record, lambda r: repo / r.log if r.log else None, repo=repo)
    [cause] = explained.results[1].causes
    assert cause.id == "upstream-failed-silently" and cause.upstream == "train/1"
    assert "No space left on device" in cause.cause


def test_an_inference_config_built_from_no_model_path() -> None:
    # PaddleC3D's infer.py run without --model_file/--params_file (their default is None), as Paddle 3.3.1
    # words it: no known cause matched it before
    out = (
        'Traceback (most recent call last):\n  File "infer.py", line 58, in <module>\n'
        "    config = Config(args.model_file, args.params_file)\n"
        "TypeError: __init__(): incompatible constructor arguments. "
        "The following argument types are supported:\n"
        "    1. paddle.base.libpaddle.AnalysisConfig()\n"
        "    2. paddle.base.libpaddle.AnalysisConfig(arg0: paddle.base.libpaddle.AnalysisConfig)\n"
        "    3. paddle.base.libpaddle.AnalysisConfig(arg0: str)\n"
        "    4. paddle.base.libpaddle.AnalysisConfig(arg0: str, arg1: str)\n\n"
        "Invoked with: None, None\n"
    )
    cause = first(out, context=ctx(repo=Path("/repo")))
    assert cause.id == "inference-config-without-model"
    assert "`Config` at infer.py:58 from None" in cause.cause and cause.evidence == "Invoked with: None, None"
    # another constructor called with None is not this cause
    other = out.replace("paddle.base.libpaddle.AnalysisConfig", "cv2.VideoCapture")
    assert "inference-config-without-model" not in ids(diagnose(other, context=P3))
