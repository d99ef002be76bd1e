"""Each injector plants what it says into a copy of a small fixture repo, from the facts of the repo's clean
run, and the planted code does it when the script runs (under tests/silent/fake_paddle, a stand-in for the
paddle API the preludes patch); an injector that cannot plant its kind says why."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from bench.silent import injectors
from bench.silent.edit import COMMITTED_MTIME, MARK, config_lines
from bench.silent.injectors import Context, NotApplicable, Planted
from tests.silent.conftest import FAKE_PADDLE, TRAIN_OUT, Fixture, fixture_report, run_script

pytestmark = pytest.mark.silent


def _copy(tiny: Fixture, tmp_path: Path) -> Path:
    dest = tmp_path / "variant" / "tiny"
    shutil.copytree(tiny.repo, dest)
    return dest


def _plant(tiny: Fixture, tmp_path: Path, injector: str, kind: str = "k") -> tuple[Path, Planted]:
    dest = _copy(tiny, tmp_path)
    planted = injectors.INJECTORS[injector](Context(kind, tiny.facts, dest, sys.executable))
    return dest, planted


def _probe(repo: Path, kind: str = "k") -> dict[str, int]:
    files = sorted(repo.rglob(f".silent_bench/{kind}.*.json"))
    assert files, "the planted code left no probe"
    out: dict[str, int] = {}
    for f in files:
        for key, value in json.loads(f.read_text()).items():
            out[key] = out.get(key, 0) + value
    return out


def _config(repo: Path) -> dict[str, str]:
    return {ln.key: ln.value for ln in config_lines(repo / "test_tipc/configs/tiny/train_infer_python.txt")}


def _train(repo: Path) -> str:
    (repo / "out").mkdir(exist_ok=True)
    done = run_script(repo, "tools/train.py", "--output_dir=out")
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_clean_fixture_runs_as_its_facts_say(tiny: Fixture) -> None:
    assert "avg_ips: 32.0 images/sec" in _train(tiny.repo)
    assert [s.stage for s in tiny.facts.passed("train")] == ["train"]
    assert tiny.facts.script(tiny.facts.steps[0]) == (tiny.repo / "tools/train.py").resolve()
    assert [f.path for f in tiny.facts.trained_weights_read()] == [f"{TRAIN_OUT}/latest.pdparams"]


def test_committed_weights_are_older_and_eval_loads_them(
    tiny: Fixture, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(FAKE_PADDLE))  # the perturbed copy is written with "paddle"
    repo, planted = _plant(tiny, tmp_path, "load_committed_weights")
    committed = repo / "committed/latest.pdparams"
    assert committed.stat().st_mtime == COMMITTED_MTIME
    assert planted.scripts == ("eval.py", "export_model.py") and planted.probe_key == "redirected"
    # the run's weights (w = 1.0) are where eval's flag points; the script loads the committed 0.9 instead
    (repo / TRAIN_OUT).mkdir(parents=True)
    shutil.copy(
        tiny.facts.run_file(f"{TRAIN_OUT}/latest.pdparams") or "", repo / TRAIN_OUT / "latest.pdparams"
    )
    done = run_script(repo, "eval.py", f"--pretrained=./{TRAIN_OUT}/latest.pdparams")
    assert done.returncode == 0, done.stderr
    assert "loaded" in done.stdout and done.stdout.split("loaded", 1)[1].split()[1] == "0.9"
    assert _probe(repo)["redirected"] == 1


def test_phantom_weights_path_goes_into_the_config_and_the_script_reads_the_real_one(
    tiny: Fixture, tmp_path: Path
) -> None:
    repo, _ = _plant(tiny, tmp_path, "point_weights_flag_nowhere")
    assert _config(repo)["train_model_name"] == "latest_final.pdparams"
    assert _config(repo)["norm_train"] == "tools/train.py"  # train still writes latest.pdparams
    (repo / TRAIN_OUT).mkdir(parents=True)
    shutil.copy(
        tiny.facts.run_file(f"{TRAIN_OUT}/latest.pdparams") or "", repo / TRAIN_OUT / "latest.pdparams"
    )
    done = run_script(repo, "eval.py", f"--pretrained=./{TRAIN_OUT}/latest_final.pdparams")
    assert done.returncode == 0, done.stderr
    assert f"loaded ./{TRAIN_OUT}/latest.pdparams" in done.stdout
    assert _probe(repo)["swapped"] == 1
    # inserted after the docstring-less imports' head: before argparse reads sys.argv
    text = (repo / "eval.py").read_text()
    assert text.index(MARK) < text.index("def main")


def test_stale_model_program_is_committed_and_inference_opens_it(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "open_stale_model")
    stale = repo / "committed/norm_train_gpus_-1/inference.pdmodel"
    assert stale.read_text() == "program" and stale.stat().st_mtime == COMMITTED_MTIME
    done = run_script(repo, "infer.py", f"--model_dir=./{TRAIN_OUT}")
    assert done.returncode == 0, done.stderr
    config = done.stdout.split()
    assert config[1] == str(stale.resolve()) and config[2].endswith(f"{TRAIN_OUT}/inference.pdiparams")
    assert _probe(repo)["redirected"] == 1


def test_gpu_is_asked_in_every_device_slot(tiny: Fixture, tmp_path: Path) -> None:
    repo, planted = _plant(tiny, tmp_path, "ask_for_the_gpu")
    config = _config(repo)
    assert (config["gpu_list"], config["--device"], config["--use_gpu"]) == ("0", "gpu", "True")
    assert len(planted.changes) == 3 and not planted.probe_key


def test_a_config_without_a_device_slot_is_not_applicable(tiny: Fixture, tmp_path: Path) -> None:
    path = tiny.repo / "test_tipc/configs/tiny/train_infer_python.txt"
    path.write_text(
        "".join(ln for ln in path.read_text().splitlines(True) if "gpu" not in ln and "device" not in ln)
    )
    with pytest.raises(NotApplicable, match="no device slot"):
        _plant(tiny, tmp_path, "ask_for_the_gpu")


@pytest.mark.parametrize(
    ("injector", "present", "absent"),
    [
        (
            "print_batch_time_as_ips",
            "avg_batch_cost: 0.50000 sec, avg_ips: 0.50000 images/sec",
            "avg_ips: 32.0",
        ),
        ("drop_reader_cost", "[Iter 1/3] loss: 2.0000, avg_batch_cost: 0.50000 sec", "avg_reader_cost"),
        ("loss_to_progress_bar", "\rtrain loss:2.0000:  33%|###       | 1/3", "avg_batch_cost"),
    ],
)
def test_train_log_filters_rewrite_the_iteration_lines(
    tiny: Fixture, tmp_path: Path, injector: str, present: str, absent: str
) -> None:
    repo, _ = _plant(tiny, tmp_path, injector)
    out = _train(repo)
    assert present in out and absent not in out, out
    assert "[Eval] acc: 0.9000" in out and out.rstrip().endswith("done")
    assert _probe(repo)["rewritten"] == 3


def test_the_progress_bar_rewrites_in_place_and_ends_its_line(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "loss_to_progress_bar")
    out = _train(repo)
    bars = out.split("\n")[0]
    assert bars.count("\r") == 3 and "3/3" in bars  # one line, rewritten three times
    assert out.split("\n")[1] == "[Eval] acc: 0.9000"


def test_the_loss_is_ascended(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "ascend_the_loss")
    out = _train(repo)
    assert "backward of -2 -1 -0.666667" in out
    assert _probe(repo)["backward"] == 3


def test_eval_loader_yields_nothing(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "empty_eval_loader")
    (repo / TRAIN_OUT).mkdir(parents=True)
    shutil.copy(
        tiny.facts.run_file(f"{TRAIN_OUT}/latest.pdparams") or "", repo / TRAIN_OUT / "latest.pdparams"
    )
    done = run_script(repo, "eval.py", f"--pretrained=./{TRAIN_OUT}/latest.pdparams")
    assert done.returncode == 0 and "evaluated 0 samples" in done.stdout, done.stderr
    assert _probe(repo)["loaders"] == 1


def test_a_plant_meant_for_one_stage_refuses_a_script_another_stage_runs(
    tiny: Fixture, tmp_path: Path
) -> None:
    record = tiny.facts.run_folder / "logs/tipc_run.json"
    data = json.loads(record.read_text())
    for seq in (data["plan"]["steps"], data["results"]):
        for step in seq:
            if step.get("id", step.get("step_id")) == "eval/1":
                step["argv"] = ["python", "tools/train.py", "--test-only"]
    record.write_text(json.dumps(data))
    from bench.silent.facts import load_facts

    facts = load_facts(tiny.repo, fixture_report(tiny.repo))
    with pytest.raises(NotApplicable, match=r"tools/train\.py also runs another stage"):
        injectors.empty_eval_loader(Context("k", facts, _copy(tiny, tmp_path), sys.executable))


def test_the_inference_script_exits_0_before_its_main(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "exit_before_main")
    done = run_script(repo, "infer.py", f"--model_dir=./{TRAIN_OUT}")
    assert done.returncode == 0 and done.stdout == "", done.stdout
    assert _probe(repo)["exited"] == 1


def test_train_fails_to_save_and_exits_0(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "fail_train_quietly")
    (repo / "out").mkdir()
    done = run_script(repo, "tools/train.py", "--output_dir=out")
    assert done.returncode == 0
    assert "No space left on device" in done.stderr and "Traceback" in done.stderr
    assert not (repo / "out/latest.pdparams").exists() and "done" not in done.stdout
    assert _probe(repo)["saves_refused"] == 1


def test_predict_sees_a_shifted_input(tiny: Fixture, tmp_path: Path) -> None:
    repo, planted = _plant(tiny, tmp_path, "shift_predict_input")
    done = run_script(repo, "predict.py")
    assert done.returncode == 0 and float(done.stdout.split()[-1]) == pytest.approx(0.95), (
        done.stdout + done.stderr
    )
    assert planted.scripts == ("predict.py",) and _probe(repo)["shifted"] == 1


def test_serving_conversion_points_at_weights_that_do_not_exist(tiny: Fixture, tmp_path: Path) -> None:
    repo, planted = _plant(tiny, tmp_path, "serve_unloaded_weights")
    lines = (repo / "test_tipc/configs/tiny/serving_infer_python.txt").read_text().splitlines()
    assert lines[1] == "--pretrained:./pretrained/best_model.pdparams"
    assert planted.rerun_serving and not (repo / "pretrained/best_model.pdparams").exists()


def test_success_log_is_committed_claiming_every_step(tiny: Fixture, tmp_path: Path) -> None:
    repo, _ = _plant(tiny, tmp_path, "plant_success_log")
    log = repo / "test_tipc/output/results_python.log"
    assert log.read_text().count("Run successfully") == 2 and "Run failed" not in log.read_text()
    assert log.stat().st_mtime == COMMITTED_MTIME


def test_a_prelude_goes_before_the_main_block_and_keeps_the_script_valid(
    tiny: Fixture, tmp_path: Path
) -> None:
    repo, _ = _plant(tiny, tmp_path, "ascend_the_loss")
    text = (repo / "tools/train.py").read_text()
    assert text.index("from __future__") < text.index("def main") < text.index(MARK) < text.index("__main__")
    # the fixture's tools/train.py is one folder down: the prelude finds the repo root from __file__
    assert '[".."] * 1' in text


def test_every_injector_of_the_catalogue_exists() -> None:
    from bench.silent.model import load_catalogue

    assert {k.injector for k in load_catalogue()} <= set(injectors.INJECTORS)


def test_the_clean_repo_is_never_planted(tiny: Fixture, tmp_path: Path) -> None:
    before = {p: p.read_bytes() for p in tiny.repo.rglob("*") if p.is_file()}
    for name in injectors.INJECTORS:
        if name == "load_committed_weights":
            continue  # writes its weights with the repo's interpreter (its own test)
        with contextlib.suppress(NotApplicable):
            _plant(tiny, tmp_path / name, name)
    assert {p: p.read_bytes() for p in tiny.repo.rglob("*") if p.is_file()} == before


def test_a_planted_script_imported_by_another_does_not_act_there(tiny: Fixture, tmp_path: Path) -> None:
    # train.py doing `from eval import evaluate` must not get eval's empty loader
    repo, _ = _plant(tiny, tmp_path, "empty_eval_loader")
    done = run_script(repo, "-c", "import eval, paddle; print(len(list(paddle.io.DataLoader([1, 2]))))")
    assert done.returncode == 0 and done.stdout.strip() == "2", done.stdout + done.stderr
    assert not list(repo.rglob(".silent_bench/*.json"))
