from pathlib import Path

import pytest

from tests.judge.checks.checks_fixtures import ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks._common import argv_options, physical_lines
from tipc.judge.checks._model import find_model, locate_model
from tipc.judge.checks.predict_infer import weights_option


def test_argv_options_in_every_shape() -> None:
    argv = [
        "python3.7",
        "tools/export_model.py",
        "-c",
        "configs/det.yml",
        "-o",
        "Global.pretrained_model=./output/best",
        "Global.save_inference_dir=./out/det",
        "--use_gpu=True",
        "--batch_size",
        "8",
        "--lr",
        "-0.1",
        "--flag",
        "key=value",
        "--x=1",
        "bare=2",
    ]
    opts = argv_options(argv)
    assert ("c", "configs/det.yml") in opts
    assert ("Global.pretrained_model", "./output/best") in opts
    assert ("Global.save_inference_dir", "./out/det") in opts
    assert ("use_gpu", "True") in opts and ("batch_size", "8") in opts and ("lr", "-0.1") in opts
    assert ("flag", "key=value") in opts  # a flag followed by a value takes it
    assert ("bare", "2") in opts


def test_physical_lines_split_carriage_returns(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(b"one\r\ntwo\rthree\n\nfour")
    assert list(physical_lines(tmp_path / "a.log")) == [(1, "one"), (2, "two"), (2, "three"), (4, "four")]
    assert list(physical_lines(tmp_path / "missing.log")) == []


def test_find_model_by_dir_prefix_or_other_stem(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "a/inference.pdmodel": b"",
            "a/inference.pdiparams": b"",
            "b/model.json": "{}",
            "b/model.pdiparams": b"",
            "c/ppocr_det.json": "{}",
            "c/ppocr_det.pdiparams": b"",
        },
    )
    a = find_model(tmp_path / "a")
    assert a is not None and a.format == "pdmodel" and a.prefix == tmp_path / "a" / "inference"
    b = find_model(tmp_path / "b")
    assert b is not None and b.format == "pir-json"
    c = find_model(tmp_path / "c" / "ppocr_det")  # an export given as a path prefix
    assert c is not None and c.model_file.name == "ppocr_det.json"
    assert find_model(tmp_path / "nope") is None


def test_locate_model_and_export_weights_from_ocr_style_argv(tmp_path: Path) -> None:
    write_tree(tmp_path, {"out/det/inference.json": "{}", "out/det/inference.pdiparams": b""})
    rec = make_record(
        tmp_path,
        [
            (
                "export",
                Stage.EXPORT,
                [
                    "python",
                    "tools/export_model.py",
                    "-c",
                    "x.yml",
                    "-o",
                    "Global.pretrained_model=./output/best_accuracy",
                    "Global.save_inference_dir=./out/det",
                ],
                None,
                Status.PASSED,
            ),
            (
                "infer",
                Stage.INFER,
                [
                    "python",
                    "tools/infer/predict_det.py",
                    "--det_model_dir=./out/det",
                    "--image_dir=./doc/imgs",
                ],
                None,
                Status.PASSED,
            ),
        ],
    )
    model, _ = locate_model(ctx_for(tmp_path, rec).run_record, tmp_path)
    assert model is not None and model.model_dir == (tmp_path / "out/det").resolve()
    assert weights_option(rec) == ["-o", "Global.pretrained_model=./output/best_accuracy"]


def test_find_model_from_one_of_its_files(tmp_path: Path) -> None:
    """`--model_file=output/model.pdmodel` names the program file itself, not a prefix."""
    write_tree(tmp_path, {"out/model.pdmodel": b"", "out/model.pdiparams": b"", "out/model.json": "{}"})
    by_program = find_model(tmp_path / "out" / "model.pdmodel")
    assert by_program is not None and by_program.model_file.name == "model.pdmodel"  # the format named
    by_json = find_model(tmp_path / "out" / "model.json")
    assert by_json is not None and by_json.model_file.name == "model.json"
    by_params = find_model(tmp_path / "out" / "model.pdiparams")
    assert by_params is not None and by_params.params_file.name == "model.pdiparams"
    assert find_model(tmp_path / "out" / "other.pdmodel") is None


CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "tipc-corpus"
C3D = CORPUS / "txyugood__PaddleC3D" / "test_tipc" / "configs" / "c3d" / "train_infer_python.txt"


@pytest.mark.skipif(not C3D.is_file(), reason=f"corpus config not found: {C3D}")
def test_locate_model_given_as_model_file_on_a_real_config(tmp_path: Path) -> None:
    """PaddleC3D's inference reads `--model_file:output/model.pdmodel` (the PaddleVideo family's form): the
    model the run exported there is found, not looked for as `output/model.pdmodel.pdiparams`."""
    from tipc.execute.record import RunRecord, StepResult
    from tipc.planning.planner import plan

    config = tmp_path / "test_tipc" / "configs" / "c3d" / "train_infer_python.txt"
    config.parent.mkdir(parents=True)
    config.write_bytes(C3D.read_bytes())
    the_plan = plan(config, "lite_train_lite_infer", repo=tmp_path)
    infer = next(s for s in the_plan.steps if s.stage is Stage.INFER)
    given = next(a.split("=", 1)[1] for a in infer.argv if a.startswith("--model_file="))
    assert given.endswith("/model.pdmodel"), infer.argv
    program = (tmp_path / infer.cwd / given).resolve()
    write_tree(program.parent, {"model.pdmodel": b"x", "model.pdiparams": b"x"})
    results = tuple(
        StepResult(step_id=s.id, status=Status.PASSED, exit_code=0, started=1.0, ended=2.0, argv=s.argv)
        for s in the_plan.steps
    )
    record = RunRecord(plan=the_plan, results=results, started=1.0)
    model, candidates = locate_model(record, tmp_path)
    assert model is not None, candidates
    assert model.model_file == program
    assert model.params_file.name == "model.pdiparams"
