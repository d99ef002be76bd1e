"""The demo repo's own scripts, run for real (Paddle on CPU) in a scratch copy of examples/lenet_digits."""

from __future__ import annotations

import math
import re
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from tipc.execute import proc

pytestmark = pytest.mark.integration

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
ITER_RE = re.compile(
    r"^\[Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\]\[Iter (?P<it>\d+)/(?P<iters>\d+)\] "
    r"loss: (?P<loss>\S+), acc: (?P<acc>\S+), lr: (?P<lr>\S+), "
    r"avg_reader_cost: (?P<reader>\S+) sec, avg_batch_cost: (?P<batch>\S+) sec, "
    r"avg_samples: (?P<samples>\S+), avg_ips: (?P<ips>\S+) images/sec$"
)
EVAL_RE = re.compile(r"^\[Eval\] acc: (?P<acc>[0-9.]+)$")
RESULT_RE = re.compile(r"^image_name: (?P<path>\S+), class_id: (?P<class_id>\d+), prob: (?P<prob>\S+)$")
EPOCHS = 4
TIMEOUT_S = 300


def run(repo: Path, argv: Sequence[str], env: dict[str, str] | None = None) -> list[str]:
    lines: list[str] = []
    result = proc.run(
        list(argv), cwd=repo, env=proc.build_env(None, env or {}), timeout_s=TIMEOUT_S, on_line=lines.append
    )
    assert result.exit_code == 0, f"{' '.join(argv)} exited {result.exit_code}:\n" + "\n".join(lines[-30:])
    return lines


def python(repo: Path, *args: str, env: dict[str, str] | None = None) -> list[str]:
    return run(repo, [sys.executable, *args], env=env)


def results(lines: list[str]) -> dict[str, tuple[int, float]]:
    found = {}
    for line in lines:
        match = RESULT_RE.match(line)
        if match:
            found[Path(match["path"]).name] = (int(match["class_id"]), float(match["prob"]))
    return found


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("demo") / "lenet_digits"
    shutil.copytree(
        DEMO,
        dest,
        ignore=shutil.ignore_patterns("output", "__pycache__", "inference.*", "lite_data"),
    )
    # the repo ships only the archive as far as the scripts are concerned: prepare.sh must unpack it
    run(
        dest,
        [
            "bash",
            "test_tipc/prepare.sh",
            "test_tipc/configs/lenet_digits/train_infer_python.txt",
            "lite_train_lite_infer",
        ],
    )
    assert (dest / "lite_data" / "train_list.txt").is_file()
    return dest


@pytest.fixture(scope="module")
def trained(repo: Path) -> tuple[Path, list[str]]:
    lines = python(
        repo, "train.py", "--device=cpu", f"--epochs={EPOCHS}", "--batch_size=16", "--output_dir=out"
    )
    return repo / "out", lines


def test_prepare_is_idempotent(repo: Path) -> None:
    lines = run(
        repo,
        [
            "bash",
            "test_tipc/prepare.sh",
            "test_tipc/configs/lenet_digits/train_infer_python.txt",
            "whole_infer",
        ],
    )
    assert any("already present" in line for line in lines)


def test_train_logs_every_iteration_with_finite_fields_and_converges(trained: tuple[Path, list[str]]) -> None:
    out, lines = trained
    iters = [m for m in map(ITER_RE.match, lines) if m]
    assert iters, "no iteration lines"
    per_epoch = int(iters[0]["iters"])
    assert len(iters) == EPOCHS * per_epoch  # one line per iteration, none skipped
    for m in iters:
        for field in ("loss", "reader", "batch", "ips"):
            assert math.isfinite(float(m[field])), m.group(0)
        assert float(m["batch"]) > 0 and float(m["ips"]) > 0
    first = [float(m["loss"]) for m in iters if m["epoch"] == "1"]
    last = [float(m["loss"]) for m in iters if m["epoch"] == str(EPOCHS)]
    assert sum(last) / len(last) < 0.5 * sum(first) / len(first)
    evals = [float(m["acc"]) for m in map(EVAL_RE.match, lines) if m]
    assert len(evals) == EPOCHS
    assert evals[-1] > 0.5  # ten classes: chance is 0.1
    assert (out / "latest.pdparams").is_file() and (out / "best_model.pdparams").is_file()


def test_eval_reproduces_the_last_epoch_accuracy(repo: Path, trained: tuple[Path, list[str]]) -> None:
    out, train_lines = trained
    last_train_eval = [m["acc"] for m in map(EVAL_RE.match, train_lines) if m][-1]
    lines = python(repo, "eval.py", f"--pretrained={out / 'latest.pdparams'}", "--device=cpu")
    assert [m["acc"] for m in map(EVAL_RE.match, lines) if m] == [last_train_eval]


@pytest.mark.parametrize("pir", [False, True], ids=["pdmodel", "pir-json"])
def test_predict_and_infer_agree(repo: Path, trained: tuple[Path, list[str]], pir: bool) -> None:
    out, _ = trained
    weights = out / "latest.pdparams"
    model_dir = out / ("inference_pir" if pir else "inference")
    python(
        repo,
        "export_model.py",
        f"--pretrained={weights}",
        f"--save_inference_dir={model_dir}",
        env={"FLAGS_enable_pir_api": "1" if pir else "0"},
    )
    program = model_dir / ("inference.json" if pir else "inference.pdmodel")
    assert program.is_file() and (model_dir / "inference.pdiparams").is_file()

    predicted = results(
        python(repo, "predict.py", f"--pretrained={weights}", "--img_path=./lite_data/infer/")
    )
    infer_lines = python(
        repo,
        "infer.py",
        f"--model_dir={model_dir}",
        "--img_path=./lite_data/infer/",
        "--batch_size=4",
        "--use_gpu=True",  # on a CPU-only build this must warn and fall back, not crash
        "--benchmark=True",
    )
    inferred = results(infer_lines)
    assert len(predicted) == 10 and predicted.keys() == inferred.keys()
    for name, (class_id, prob) in predicted.items():
        assert inferred[name][0] == class_id, name
        assert abs(inferred[name][1] - prob) <= 1e-5, name
    text = "\n".join(infer_lines)
    assert "total time spent(s)" in text and "inference_time(ms)" in text
    if "CUDA_version: False" in text:
        assert "not compiled with CUDA" in text and "runtime_device: cpu" in text


def test_export_without_weights_warns(repo: Path, tmp_path: Path) -> None:
    lines = python(
        repo, "export_model.py", "--pretrained=./missing.pdparams", f"--save_inference_dir={tmp_path}"
    )
    assert any("does not exist" in line and "random init" in line for line in lines)


def test_shipped_weights_reproduce_shipped_ground_truth(repo: Path, tmp_path: Path) -> None:
    model_dir = tmp_path / "shipped"
    python(
        repo,
        "export_model.py",
        "--pretrained=./pretrained/lenet_digits_pretrained.pdparams",
        f"--save_inference_dir={model_dir}",
    )
    log = tmp_path / "python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log"
    # the same command the config's whole_infer runs; compare_results reads its log
    infer = proc.run(
        [
            sys.executable,
            "infer.py",
            f"--model_dir={model_dir}",
            "--img_path=./lite_data/infer/",
            "--use_gpu=False",
            "--enable_mkldnn=False",
            "--cpu_threads=1",
            "--batch_size=1",
            "--precision=fp32",
        ],
        cwd=repo,
        timeout_s=TIMEOUT_S,
        log_path=log,
    )
    assert infer.exit_code == 0, log.read_text()
    gt = "./test_tipc/results/python_*.txt"
    ok = run(
        repo,
        [
            sys.executable,
            "test_tipc/compare_results.py",
            f"--gt_file={gt}",
            f"--log_file={log}",
            "--atol=1e-5",
            "--rtol=1e-4",
        ],
    )
    assert any("consistent!" in line for line in ok)

    # the comparison can fail: a tampered ground truth must be caught
    tampered = tmp_path / "python_tampered_precision_fp32.txt"
    text = next((repo / "test_tipc" / "results").glob("python_*fp32*.txt")).read_text()
    tampered.write_text(re.sub(r'"prob": [0-9.]+', '"prob": 0.5', text, count=1))
    result = proc.run(
        [
            sys.executable,
            "test_tipc/compare_results.py",
            f"--gt_file={tampered}",
            f"--log_file={log}",
            "--atol=1e-5",
            "--rtol=1e-4",
        ],
        cwd=repo,
        timeout_s=TIMEOUT_S,
    )
    assert result.exit_code == 1


CONFIG = "test_tipc/configs/lenet_digits/train_infer_python.txt"
STATUS_LOG = Path("test_tipc/output/results_python.log")


def test_bash_chain_whole_infer_runs_export_and_inference(repo: Path) -> None:
    (repo / STATUS_LOG).unlink(missing_ok=True)
    bin_dir = str(Path(sys.executable).parent)  # the config says `python:python`
    run(
        repo,
        ["bash", "test_tipc/test_train_inference_python.sh", CONFIG, "whole_infer"],
        env={"PATH": f"{bin_dir}:{proc.build_env(None, {})['PATH']}"},
    )
    status = (repo / STATUS_LOG).read_text().splitlines()
    assert len(status) == 2
    assert all(line.startswith("\x1b[33m Run successfully with command - python ") for line in status)
    assert "export_model.py --pretrained=./pretrained/lenet_digits_pretrained.pdparams" in status[0]
    assert (
        "infer.py --use_gpu=False --enable_mkldnn=False --cpu_threads=1 --model_dir=./pretrained" in status[1]
    )
    log = repo / "test_tipc/output/python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log"
    assert len(results(log.read_text().splitlines())) == 10


def test_bash_chain_reports_a_failing_command(repo: Path) -> None:
    lines = (repo / CONFIG).read_text().splitlines()
    lines[37] = "infer_export:null"
    lines[39] = "inference:no_such_infer.py"
    broken = repo / "test_tipc/configs/lenet_digits/broken.txt"
    broken.write_text("\n".join(lines) + "\n")
    (repo / STATUS_LOG).unlink(missing_ok=True)
    bin_dir = str(Path(sys.executable).parent)
    out: list[str] = []
    result = proc.run(
        ["bash", "test_tipc/test_train_inference_python.sh", str(broken.relative_to(repo)), "whole_infer"],
        cwd=repo,
        env=proc.build_env(None, {"PATH": f"{bin_dir}:{proc.build_env(None, {})['PATH']}"}),
        timeout_s=TIMEOUT_S,
        on_line=out.append,
    )
    assert result.exit_code == 1
    status = (repo / STATUS_LOG).read_text().splitlines()
    assert len(status) == 1 and "Run failed with command - python no_such_infer.py " in status[0]
