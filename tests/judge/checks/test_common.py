from pathlib import Path

from tests.judge.checks.checks_fixtures import ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks._common import argv_options, physical_lines, unknown_args
from tipc.judge.checks._model import find_model, locate_model
from tipc.judge.checks.base import Verdict
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
    model, _ = locate_model(ctx_for(tmp_path, rec).record, tmp_path)
    assert model is not None and model.model_dir == (tmp_path / "out/det").resolve()
    assert weights_option(rec) == ["-o", "Global.pretrained_model=./output/best_accuracy"]


def test_unknown_args_names_them_sorted_or_gives_none() -> None:
    assert unknown_args("x", {"a": 1}, {"a", "b"}) is None
    failed = unknown_args("x", {"z": 1, "a": 1, "c": 2}, ("a",))
    assert failed is not None and failed.verdict is Verdict.FAIL
    assert failed.summary == "x: bad arguments: unknown argument(s) ['c', 'z']"
