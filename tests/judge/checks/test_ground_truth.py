from collections.abc import Mapping
from pathlib import Path

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Mode, Stage, Status
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckOutcome, Verdict
from tipc.judge.checks.ground_truth import compare_results, parse_result

FP32_LOG = f"{OUTPUT_DIR}/python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1.log"
FP16_LOG = f"{OUTPUT_DIR}/python_infer_gpu_usetrt_True_precision_fp16_batchsize_1.log"
GT32 = "test_tipc/results/python_demo_results_fp32.txt"


def infer_log(probs: dict[str, tuple[int, float]]) -> str:
    lines = ["I1122 predictor created"]
    lines += [f"image_name: lite_data/test/{k}, class_id: {c}, prob: {p}" for k, (c, p) in probs.items()]
    return "\n".join(lines) + "\n"


def run(
    tmp_path: Path,
    files: Mapping[str, str | bytes],
    logs: list[str],
    mode: Mode = Mode.WHOLE_INFER,
    **args: object,
) -> CheckOutcome:
    write_tree(tmp_path, files)
    rec = make_record(
        tmp_path,
        [
            (f"infer/{n}", Stage.INFER, ["python", "infer.py"], log, Status.PASSED)
            for n, log in enumerate(logs)
        ],
        mode=mode,
    )
    return CHECKS["ground_truth"](ctx_for(tmp_path, rec), **args)


GT = (
    'lite_data/test/0.png\t{"class_id": 3, "prob": 0.9812}\n'
    'lite_data/test/10.png\t{"class_id": 7, "prob": 0.51}\n'
)


def test_parse_results_in_every_shape() -> None:
    assert parse_result('{"class_id": 3, "prob": 0.98}') == {"class_id": [3.0], "prob": [0.98]}
    assert parse_result(", class_id: 3, prob: 0.98") == {"class_id": [3.0], "prob": [0.98]}
    assert parse_result("[[1, 2, 3, 4], [5, 6, 7, 8]]") == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
    assert parse_result("10 20 30 40") == [10.0, 20.0, 30.0, 40.0]
    assert parse_result("scores: [0.1, 0.2] label: 3") == {"scores": [0.1, 0.2], "label": [3.0]}


def test_compare_results_semantics() -> None:
    assert compare_results([1.0, 2.0], [1.0005, 2.002], 1e-3, 1e-3)[0]
    ok, why, diff = compare_results([1.0], [1.1], 1e-3, 1e-3)
    assert not ok and "values[0]" in why and abs(diff - 0.1) < 1e-9
    assert not compare_results({"a": [1.0]}, {"b": [1.0]}, 1e-3, 1e-3)[0]


def test_matching_log_passes(tmp_path: Path) -> None:
    files = {GT32: GT, FP32_LOG: infer_log({"0.png": (3, 0.98125), "10.png": (7, 0.5103)})}
    out = run(tmp_path, files, [FP32_LOG])
    assert out.verdict is Verdict.PASS, out.summary
    assert len(out.data["rows"]) == 2


def test_difference_is_located_and_sized(tmp_path: Path) -> None:
    files = {GT32: GT, FP32_LOG: infer_log({"10.png": (7, 0.51), "0.png": (3, 0.95)})}
    out = run(tmp_path, files, [FP32_LOG])
    assert out.verdict is Verdict.FAIL
    ev = out.evidence[0]
    assert ev.path == FP32_LOG and ev.line == 3  # 0.png is on line 3; "10.png" on line 2 is not a match
    assert "prob[0]" in ev.text and "0.95" in ev.text and f"{GT32}:1" in ev.text


def test_missing_key_and_class_change_fail(tmp_path: Path) -> None:
    out = run(tmp_path, {GT32: GT, FP32_LOG: infer_log({"0.png": (3, 0.9812)})}, [FP32_LOG])
    assert out.verdict is Verdict.FAIL and "10.png: no prediction" in out.summary
    out = run(
        tmp_path, {GT32: GT, FP32_LOG: infer_log({"0.png": (4, 0.9812), "10.png": (7, 0.51)})}, [FP32_LOG]
    )
    assert out.verdict is Verdict.FAIL and "class_id" in out.summary


def test_precision_buckets_and_tolerances(tmp_path: Path) -> None:
    gt16 = GT.replace("0.9812", "0.98")
    files = {
        GT32: GT,
        "test_tipc/results/python_demo_results_fp16.txt": gt16,
        FP32_LOG: infer_log({"0.png": (3, 0.9812), "10.png": (7, 0.51)}),
        FP16_LOG: infer_log({"0.png": (3, 0.9801), "10.png": (7, 0.51)}),
    }
    assert run(tmp_path, files, [FP32_LOG, FP16_LOG]).verdict is Verdict.PASS
    files[FP16_LOG] = infer_log({"0.png": (3, 0.985), "10.png": (7, 0.51)})
    assert run(tmp_path, files, [FP32_LOG, FP16_LOG]).verdict is Verdict.FAIL
    assert run(tmp_path, files, [FP32_LOG, FP16_LOG], atol=0.01).verdict is Verdict.PASS


def test_not_applicable_and_unlabelled_logs(tmp_path: Path) -> None:
    out = run(tmp_path, {FP32_LOG: "x\n"}, [FP32_LOG])
    assert out.verdict is Verdict.NA
    plain = f"{OUTPUT_DIR}/infer.log"
    out = run(tmp_path, {GT32: GT, plain: infer_log({"0.png": (3, 0.9812)})}, [plain])
    assert out.verdict is Verdict.WARN and out.data["skipped_logs"] == [plain]
    out = run(
        tmp_path / "other", {"test_tipc/results/python_demo_results_fp16.txt": GT, FP16_LOG: ""}, [FP16_LOG]
    )
    assert out.verdict is Verdict.FAIL and "no fp32" in out.summary
    assert run(tmp_path, {GT32: GT}, [FP32_LOG], atol="x").verdict is Verdict.FAIL


def test_ground_truth_named_after_the_log(tmp_path: Path) -> None:
    # the demo's layout: test_tipc/results/<log stem>.txt, no model name in the file name
    gt = f"test_tipc/results/{Path(FP32_LOG).stem}.txt"
    files = {gt: GT, FP32_LOG: infer_log({"0.png": (3, 0.9812), "10.png": (7, 0.51)})}
    out = run(tmp_path, files, [FP32_LOG])
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["ground_truth"] == [gt]
    write_tree(tmp_path, {FP32_LOG: infer_log({"0.png": (3, 0.9812), "10.png": (7, 0.6)})})
    out = run(tmp_path, {}, [FP32_LOG])
    assert out.verdict is Verdict.FAIL and out.evidence[-1].line == 3 and f"{gt}:2" in out.summary


def test_only_modes_that_infer_with_the_pretrained_model(tmp_path: Path) -> None:
    files = {GT32: GT, FP32_LOG: infer_log({"0.png": (3, 0.5), "10.png": (7, 0.51)})}
    out = run(tmp_path, files, [FP32_LOG], mode=Mode.LITE_TRAIN_LITE_INFER)
    assert out.verdict is Verdict.NA and "weights trained during the run" in out.summary
    assert (
        run(tmp_path, files, [FP32_LOG], mode=Mode.LITE_TRAIN_LITE_INFER, modes="all").verdict is Verdict.FAIL
    )
    assert run(tmp_path, files, [FP32_LOG], mode=Mode.WHOLE_INFER).verdict is Verdict.FAIL


def test_bad_arguments_are_named(tmp_path: Path) -> None:
    for args, words in (
        ({"gt_glob": ""}, "gt_glob: expected a glob, got ''"),
        ({"rtol": -1}, "rtol: expected a number >= 0, got int -1"),
        ({"modes": [1]}, "modes[0]: expected a non-empty string, got int 1"),
        (
            {"tol": 1},
            "tol: unknown key 'tol'; did you mean 'rtol'? expected one of: atol, gt_glob, modes, rtol",
        ),
    ):
        out = run(tmp_path, {GT32: GT}, [FP32_LOG], **args)
        assert out.verdict is Verdict.FAIL and out.summary == f"ground_truth: bad arguments: {words}"


def test_unusable_ground_truth_and_missing_logs_are_located(tmp_path: Path) -> None:
    assert run(tmp_path, {GT32: GT}, []).verdict is Verdict.SKIP  # no inference step ran
    out = run(tmp_path / "empty", {GT32: "lite_data/test/0.png\n"}, [FP32_LOG])
    assert out.verdict is Verdict.FAIL and out.summary == "ground-truth file has no entries"
    first = out.evidence[0]
    assert first.text == "unparsable ground-truth line: 1: no result after the key"
    assert (first.path, first.line) == (GT32, 1)
    out = run(tmp_path / "nolog", {GT32: GT}, [FP32_LOG])
    assert out.verdict is Verdict.FAIL and out.summary == "inference log of infer/0 not found"
    assert out.evidence[0].path == FP32_LOG
