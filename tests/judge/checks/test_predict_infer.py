import sys
from pathlib import Path

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.execute.record import RunRecord
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import Verdict
from tipc.judge.checks.predictions import parse_predictions

# Stand-ins for a repo's scripts (real processes, no paddle): the "model" is a digit sum of the file name.
SCRIPT = """\
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--img_path")
p.add_argument("--model_dir", default=None)
a = p.parse_args()
files = sorted(os.listdir(a.img_path)) if os.path.isdir(a.img_path) else [a.img_path]
for f in files:
    n = sum(map(ord, os.path.basename(f)))
    prob = (n % 97) / 97 + OFFSET
    name = os.path.join(a.img_path, f) if os.path.isdir(a.img_path) else f
    print(f"image_name: {name}, class_id: {n % 10}, prob: {prob:.6f}")
"""
INFER_LOG = f"{OUTPUT_DIR}/python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log"


def repo(tmp_path: Path, infer_offset: str = "0.0", with_predict: bool = True) -> Path:
    files: dict[str, str | bytes] = {
        "infer.py": SCRIPT.replace("OFFSET", infer_offset),
        "lite_data/test/0.png": b"png",
        "lite_data/test/1.png": b"png",
    }
    if with_predict:
        files["predict.py"] = SCRIPT.replace("OFFSET", "0.0")
    write_tree(tmp_path, files)
    return tmp_path


def record(tmp_path: Path) -> RunRecord:
    argv = [sys.executable, "infer.py", "--model_dir=./out", "--img_path=lite_data/test"]
    return make_record(tmp_path, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED)])


def test_same_results_pass(tmp_path: Path) -> None:
    r = repo(tmp_path)
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.PASS, out.summary
    assert len(out.data["predict"]) == 2 and out.data["predict"][0]["image"] == "0.png"
    logs = out.data["logs"]
    assert all(p.startswith(OUTPUT_DIR) for p in logs)  # writes only into the run's output folder
    assert sorted(p.name for p in r.iterdir()) == ["infer.py", "lite_data", "predict.py", "test_tipc"]


def test_probability_difference_fails(tmp_path: Path) -> None:
    r = repo(tmp_path, infer_offset="0.001")
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.FAIL
    assert "score 0.319588 (predict.py) vs 0.320588 (infer.py)" in out.summary and "0.png" in out.summary
    assert any(e.path and e.path.endswith("infer_0.log") and e.line == 1 for e in out.evidence)
    # a looser tolerance accepts it
    assert CHECKS["predict_infer_agreement"](ctx_for(r, record(r)), prob_atol=0.01).verdict is Verdict.PASS


def test_explicit_images_and_args(tmp_path: Path) -> None:
    r = repo(tmp_path)
    settings = {
        "agreement": {"images": ["lite_data/test/1.png"], "predict_args": "predict.py --img_path {image}"}
    }
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r), settings))
    assert out.verdict is Verdict.PASS, out.summary
    assert [p["image"] for p in out.data["infer"]] == ["1.png"]


def test_missing_predict_py_fails(tmp_path: Path) -> None:
    r = repo(tmp_path, with_predict=False)
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.FAIL and out.summary == "predict.py not found"
    assert "predict.py not found" in out.evidence[0].text


def test_crashing_script_fails(tmp_path: Path) -> None:
    r = repo(tmp_path)
    (r / "infer.py").write_text("raise SystemExit(3)\n")
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.FAIL and "infer exited 3" in out.summary
    assert out.data["logs"][-1].endswith("/infer_0.log")  # the logs it ran, as on a PASS


def test_parse_predictions(tmp_path: Path) -> None:
    log = tmp_path / "x.log"
    log.write_text(
        "W warn\nimage_name: a/b/3.jpg, class_id: 4, prob: 0.5\nImage: c.png class_ids: [2] scores: [0.25]\n"
    )
    got = parse_predictions(log)
    assert [(g.image, g.label, g.score, g.line) for g in got] == [
        ("3.jpg", 4.0, 0.5, 2),
        ("c.png", 2.0, 0.25, 3),
    ]


def test_no_record_and_bad_args(tmp_path: Path) -> None:
    fn = CHECKS["predict_infer_agreement"]
    assert fn(ctx_for(tmp_path, None)).verdict is Verdict.SKIP
    assert fn(ctx_for(tmp_path, None), images=3).verdict is Verdict.FAIL


def test_predict_gets_the_weights_the_export_used(tmp_path: Path) -> None:
    r = repo(tmp_path)
    # predict.py here refuses to run without the exported model's weights
    (r / "predict.py").write_text(
        SCRIPT.replace("OFFSET", "0.0").replace(
            'p.add_argument("--model_dir", default=None)', 'p.add_argument("--pretrained", required=True)'
        )
    )
    weights = f"{OUTPUT_DIR}/norm_train_gpus_0_autocast_null/latest.pdparams"
    argv = [sys.executable, "infer.py", "--model_dir=./out", "--img_path=lite_data/test"]
    rec = make_record(
        r,
        [
            (
                "export",
                Stage.EXPORT,
                ["python", "export_model.py", f"--pretrained={weights}", "--save_inference_dir=./out"],
                None,
                Status.PASSED,
            ),
            ("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED),
        ],
    )
    out = CHECKS["predict_infer_agreement"](ctx_for(r, rec))
    assert out.verdict is Verdict.PASS, out.summary
    assert f"--pretrained={weights}" in out.data["commands"][0]


def test_predict_py_in_tools_is_found_and_spread_reported(tmp_path: Path) -> None:
    # liuxtakeoff/cutpaste_paddle and the official tutorial keep predict.py in tools/.
    r = repo(tmp_path, with_predict=False)
    write_tree(r, {"tools/predict.py": SCRIPT.replace("OFFSET", "0.0")})
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["commands"][0][1] == "tools/predict.py"
    assert out.data["spread"]["inputs"] == 2
    assert any("spread across 2 inputs" in e.text for e in out.evidence)


def test_constant_results_across_images_are_named(tmp_path: Path) -> None:
    constant = 'print(f"image_name: {f}, class_id: 3, prob: 0.101200")\n'
    r = repo(tmp_path)
    for name in ("infer.py", "predict.py"):
        text = (r / name).read_text(encoding="utf-8")
        head = text.split("for f in files:")[0]
        (r / name).write_text(head + "for f in files:\n    " + constant, encoding="utf-8")
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.PASS and "note: the outputs are constant across 2 inputs" in out.summary


def test_image_slot_the_script_never_passes_is_used(tmp_path: Path) -> None:
    # liuxtakeoff/cutpaste_paddle: `--img-path:images/demo0` in the config, absent from the infer command.
    r = repo(tmp_path)
    config = (
        "===========================infer_params===========================\n"
        "inference:infer.py\n--use-gpu:True|False\n--batch-size:1\n--model-dir:deploy\n"
        "--img_path:lite_data/test/1.png\n--benchmark:False\n"
    )
    write_tree(r, {"test_tipc/configs/demo/train_infer_python.txt": config})
    argv = [sys.executable, "infer.py", "--model_dir=./out"]
    rec = make_record(r, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED)])
    out = CHECKS["predict_infer_agreement"](ctx_for(r, rec))
    assert out.verdict is Verdict.PASS, out.summary
    assert [p["image"] for p in out.data["infer"]] == ["1.png"]
    assert out.data["commands"][1][-1] == "--img_path=lite_data/test/1.png"


def test_the_infer_scripts_own_default_image_is_used(tmp_path: Path) -> None:
    # liuxtakeoff/cutpaste_paddle deploy/infer.py:
    #   parser.add_argument("--img-path", default="images/demo0.png")
    # and a config slot (`images/demo0`) naming no file: with no image on its command it reads its default.
    r = repo(tmp_path)
    text = (r / "infer.py").read_text(encoding="utf-8")
    (r / "infer.py").write_text(
        text.replace(
            'p.add_argument("--img_path")', 'p.add_argument("--img_path", default="lite_data/test/0.png")'
        ),
        encoding="utf-8",
    )
    argv = [sys.executable, "infer.py", "--model_dir=./out"]
    rec = make_record(r, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED)])
    out = CHECKS["predict_infer_agreement"](ctx_for(r, rec))
    assert out.verdict is Verdict.PASS, out.summary
    assert [p["image"] for p in out.data["predict"]] == ["0.png"]


def test_a_weights_option_predict_py_does_not_take_is_left_out(tmp_path: Path) -> None:
    # liuxtakeoff/cutpaste_paddle: export gets --pretrained=..., tools/predict.py declares no --pretrained.
    r = repo(tmp_path)
    steps = [
        (
            "export",
            Stage.EXPORT,
            [sys.executable, "export.py", "--pretrained=./out/final.pdparams"],
            None,
            Status.PASSED,
        ),
        (
            "infer/cpu",
            Stage.INFER,
            [sys.executable, "infer.py", "--img_path=lite_data/test"],
            INFER_LOG,
            Status.PASSED,
        ),
    ]
    out = CHECKS["predict_infer_agreement"](ctx_for(r, make_record(r, steps)))
    assert out.verdict is Verdict.PASS, out.summary
    assert not any("--pretrained" in tok for tok in out.data["commands"][0])
    assert any("takes no --pretrained" in e.text for e in out.evidence)


def test_explicit_infer_args_and_a_single_image(tmp_path: Path) -> None:
    r = repo(tmp_path)
    out = CHECKS["predict_infer_agreement"](
        ctx_for(r, record(r)),
        images="lite_data/test/1.png",
        predict_args=["predict.py", "--img_path={image}"],
        infer_args="infer.py --img_path {image}",
    )
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["images"] == ["lite_data/test/1.png"]
    assert [c[1:] for c in out.data["commands"]] == [
        ["predict.py", "--img_path=lite_data/test/1.png"],
        ["infer.py", "--img_path", "lite_data/test/1.png"],
    ]


def test_an_infer_script_that_prints_no_result_fails(tmp_path: Path) -> None:
    r = repo(tmp_path)
    (r / "infer.py").write_text("print('done')\n")
    out = CHECKS["predict_infer_agreement"](ctx_for(r, record(r)))
    assert out.verdict is Verdict.FAIL
    assert out.summary == "infer printed no result for lite_data/test (predict did)"
    assert str(out.evidence[0].path).endswith("tipc_predict_infer/infer_0.log")
    assert out.data["logs"][-1] == out.evidence[0].path


def test_inference_steps_it_cannot_use(tmp_path: Path) -> None:
    import dataclasses

    fn = CHECKS["predict_infer_agreement"]
    r = repo(tmp_path)
    export = make_record(r, [("export", Stage.EXPORT, [sys.executable, "e.py"], None, Status.PASSED)])
    out = fn(ctx_for(r, export))
    assert out.verdict is Verdict.NA and "no inference step in the plan" in out.summary
    rec = record(r)
    shell = dataclasses.replace(rec.plan.steps[0], shell=True, status_command="sh -c 'infer.py'")
    out = fn(ctx_for(r, dataclasses.replace(rec, plan=dataclasses.replace(rec.plan, steps=(shell,)))))
    assert out.verdict is Verdict.FAIL and "set agreement.infer_args" in out.summary
    assert out.evidence[0].text == "sh -c 'infer.py'"
    bare = make_record(r, [("infer/cpu", Stage.INFER, [sys.executable, "x.py"], INFER_LOG, Status.PASSED)])
    out = fn(ctx_for(r, bare))
    assert out.verdict is Verdict.NA and out.summary.startswith("the inference step names no input tipc can")
    assert out.evidence[0].path == INFER_LOG


# An anomaly detector's predict.py and infer.py print a score, not a class id (liuxtakeoff/cutpaste_paddle's
# infer.py prints `class_id: 0, prob: 0.4543665051460266`; its predict.py prints its verdict in a sentence).
SCORE_SCRIPT = """\
import argparse
p = argparse.ArgumentParser()
p.add_argument("--img-path")
p.add_argument("--model_dir", default=None)
a = p.parse_args()
print(FORMAT)
"""


def _score_repo(tmp_path: Path, predict_line: str, infer_line: str) -> Path:
    write_tree(
        tmp_path,
        {
            "tools/predict.py": SCORE_SCRIPT.replace("FORMAT", predict_line),
            "deploy/infer.py": SCORE_SCRIPT.replace("FORMAT", infer_line),
            "images/demo0.png": b"png",
        },
    )
    return tmp_path


def _score_record(r: Path) -> RunRecord:
    argv = [sys.executable, "deploy/infer.py", "--model_dir=deploy", "--img-path=images/demo0.png"]
    return make_record(r, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED)])


def test_scores_are_compared_at_the_precision_a_script_prints(tmp_path: Path) -> None:
    r = _score_repo(
        tmp_path, '"anomaly score: %.4f" % 0.45437', '"image_name: x.png, prob: 0.4543665051460266"'
    )
    out = CHECKS["predict_infer_agreement"](ctx_for(r, _score_record(r)))
    assert out.verdict is Verdict.PASS, out.summary  # 0.4544 is 0.45437 printed to 4 decimals
    assert out.data["compared_fields"] == ["score"]
    assert out.data["commands"][0][2] == "--img-path=images/demo0.png"  # predict.py's own spelling
    r2 = _score_repo(tmp_path / "b", '"score: %.4f" % 0.4545', '"prob: 0.4543665051460266"')
    out = CHECKS["predict_infer_agreement"](ctx_for(r2, _score_record(r2)))
    assert out.verdict is Verdict.FAIL and "|diff| 0.000133 > 5e-05" in out.summary, out.summary


def test_a_near_constant_score_differing_in_the_fifth_digit_agrees(tmp_path: Path) -> None:
    # the official tutorial's lite model: prob 0.9999877 in one engine, 0.9999754 in the other (1.23e-05)
    r = _score_repo(tmp_path, '"class_id: 886, prob: 0.9999877"', '"class_id: 886, prob: 0.9999754"')
    out = CHECKS["predict_infer_agreement"](ctx_for(r, _score_record(r)))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["compared_fields"] == ["class", "score"]


def test_a_result_in_a_sentence_is_not_applicable_not_a_failure(tmp_path: Path) -> None:
    sentence = '"分类结果为：正常！异常分数为：0.4545"'
    r = _score_repo(tmp_path, sentence, '"image_name: images/demo0.png, class_id: 0, prob: 0.4543665"')
    out = CHECKS["predict_infer_agreement"](ctx_for(r, _score_record(r)))
    assert out.verdict is Verdict.NA, out.summary
    assert "cannot read the result predict printed" in out.summary and "0.4545" in out.summary


def test_a_predict_py_without_the_image_option_is_not_applicable(tmp_path: Path) -> None:
    # sldyns/DnCNN_paddle: predict.py denoises a folder (--data_path); infer.py takes --img-path
    r = _score_repo(tmp_path, '"psnr: 30.1"', '"image_name: x.png, psnr: 30.1"')
    (r / "tools/predict.py").write_text(
        'import argparse\np = argparse.ArgumentParser()\np.add_argument("--data_path")\np.parse_args()\n'
    )
    out = CHECKS["predict_infer_agreement"](ctx_for(r, _score_record(r)))
    assert out.verdict is Verdict.NA and "takes no image option (no --img-path)" in out.summary, out.summary


def test_an_inference_step_without_images_runs_both_on_its_own_inputs(tmp_path: Path) -> None:
    # kongdebug/NAFNet-pd infers on noisy/clean image pairs; txyugood/PaddleC3D on an .npy clip
    script = """\
import argparse
p = argparse.ArgumentParser()
p.add_argument("--noisy-dir")
p.add_argument("--clean-dir")
p.add_argument("--model-dir", default=None)
a = p.parse_args()
print(f"image_name: {a.noisy_dir}, score: {len(a.noisy_dir) + len(a.clean_dir)}")
"""
    write_tree(tmp_path, {"predict.py": script, "infer.py": script, "d/noisy.png": b"n", "d/clean.png": b"c"})
    argv = [
        sys.executable,
        "infer.py",
        "--model-dir=./out",
        "--clean-dir=d/clean.png",
        "--noisy-dir=d/noisy.png",
    ]
    rec = make_record(tmp_path, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.PASSED)])
    out = CHECKS["predict_infer_agreement"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["commands"][0][2:] == ["--clean-dir=d/clean.png", "--noisy-dir=d/noisy.png"]
    only_clean = (
        'import argparse\np = argparse.ArgumentParser()\np.add_argument("--clean_dir")\np.parse_args()\n'
    )
    (tmp_path / "predict.py").write_text(only_clean + 'print("image_name: x, score: 1")\n')
    out = CHECKS["predict_infer_agreement"](ctx_for(tmp_path, rec))
    assert out.data["commands"][0][2:] == ["--clean_dir=d/clean.png"]  # what it takes, as it spells it
    (tmp_path / "predict.py").write_text("import argparse\np = argparse.ArgumentParser()\np.parse_args()\n")
    out = CHECKS["predict_infer_agreement"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.NA and "takes none of the inference step's input options" in out.summary


def test_a_failed_or_blocked_inference_step_fails_the_agreement(tmp_path: Path) -> None:
    """Lieberk's Paddle-Cutpaste: its infer.py fails on Paddle >= 2.5, and the rule went N-A over how its
    predict.py spells the image option; with no inference, prediction and inference cannot agree."""
    r = repo(tmp_path)
    argv = [sys.executable, "infer.py", "--model_dir=./out", "--img_path=lite_data/test"]
    for status in (Status.FAILED, Status.BLOCKED):
        rec = make_record(r, [("infer/cpu", Stage.INFER, argv, INFER_LOG, status)])
        out = CHECKS["predict_infer_agreement"](ctx_for(r, rec))
        assert out.verdict is Verdict.FAIL, out.summary
        said = "exited 1" if status is Status.FAILED else "blocked"  # exited N: its cause is found in the log
        assert f"the chain's inference infer/cpu {said}" in out.summary, out.summary
    skipped = make_record(r, [("infer/cpu", Stage.INFER, argv, INFER_LOG, Status.SKIPPED)])
    assert CHECKS["predict_infer_agreement"](ctx_for(r, skipped)).verdict is not Verdict.FAIL
