import math
import random
from pathlib import Path

from tests.judge.checks.checks_fixtures import OUTPUT_DIR, ctx_for, make_record, write_tree
from tipc.core.steps import Stage, Status
from tipc.judge.checks import CHECKS
from tipc.judge.checks.base import CheckOutcome, Verdict
from tipc.judge.checks.convergence import analyse_curve

LOG = f"{OUTPUT_DIR}/tipc_logs/train.log"


def curve(fn: object, n: int = 100, seed: int = 0) -> list[tuple[int, float]]:
    rng = random.Random(seed)
    return [(i, fn(i, rng)) for i in range(1, n + 1)]  # type: ignore[operator]


def test_noisy_but_converging_passes() -> None:
    for seed in range(5):
        c = curve(lambda i, r: 2.3 * math.exp(-i / 30) + 0.3 + r.gauss(0, 0.3), seed=seed)
        verdict, summary, data = analyse_curve(c)
        assert verdict is Verdict.PASS, summary
        assert data["mann_kendall"]["p_decreasing"] < 0.05
        assert data["curve"][0] == [1, c[0][1]]


def test_slow_real_looking_decrease_passes() -> None:
    # cross-entropy on 10 classes that drops from 2.30 to ~1.9 with minibatch noise
    c = curve(lambda i, r: 2.30 - 0.004 * i + r.gauss(0, 0.08), seed=3)
    assert analyse_curve(c)[0] is Verdict.PASS


def test_flat_and_diverging_fail() -> None:
    flat = curve(lambda i, r: 2.3 + r.gauss(0, 0.2))
    verdict, summary, _ = analyse_curve(flat)
    assert verdict is Verdict.FAIL and "does not decrease" in summary
    constant = [(i, 2.302585) for i in range(100)]
    assert analyse_curve(constant)[0] is Verdict.FAIL
    up = curve(lambda i, r: 1.0 + 0.02 * i + r.gauss(0, 0.2))
    verdict, summary, _ = analyse_curve(up)
    assert verdict is Verdict.FAIL and "diverges" in summary


def test_explosion_fails() -> None:
    c = [(i, 2.0 - 0.01 * i if i < 90 else 2.0 * 3.0 ** (i - 89)) for i in range(100)]
    verdict, summary, data = analyse_curve(c)
    assert verdict is Verdict.FAIL and "exploded" in summary and data["explosion"]["iter"] == 99


def test_too_few_points_is_not_applicable_with_the_values() -> None:
    verdict, summary, _ = analyse_curve([(1, 2.0), (2, 1.0), (3, 0.5)])
    assert verdict is Verdict.NA and "fewer than the 8 needed" in summary and "2, 1, 0.5" in summary


def log_of(losses: list[float], every: int = 1) -> str:
    lines = []
    for n, loss in enumerate(losses):
        it = (n + 1) * every
        lines.append(
            f"[Epoch 1/1][Iter {it}/{len(losses) * every}] loss: {loss:.5f}, avg_reader_cost: 0.001 sec, "
            "avg_batch_cost: 0.01 sec, avg_samples: 8, avg_ips: 800 images/sec"
        )
    return "\n".join(lines) + "\n"


def run(tmp_path: Path, text: str, **args: object) -> CheckOutcome:
    write_tree(tmp_path, {LOG: text})
    rec = make_record(
        tmp_path, [("train/norm_train", Stage.TRAIN, ["python", "train.py"], LOG, Status.PASSED)]
    )
    return CHECKS["convergence"](ctx_for(tmp_path, rec), **args)


def test_check_reads_the_log_and_uses_the_first_100_iterations(tmp_path: Path) -> None:
    rng = random.Random(7)
    losses = [2.3 * math.exp(-i / 25) + 0.2 + rng.gauss(0, 0.1) for i in range(100)]
    losses += [5.0 + rng.gauss(0, 0.1) for _ in range(100)]  # after iter 100: not judged
    out = run(tmp_path, log_of(losses))
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["points"] == 100 and out.data["total_points"] == 200
    assert out.evidence[0].path == LOG and out.evidence[0].line == 1
    assert out.evidence[1].line == 100


def test_sparse_logging_uses_logged_points(tmp_path: Path) -> None:
    losses = [2.3 - 0.1 * i for i in range(20)]
    out = run(tmp_path, log_of(losses, every=10))
    assert out.verdict is Verdict.PASS and out.data["points"] == 10  # iters 10..100
    out = run(tmp_path, log_of(losses, every=25))
    assert out.verdict is Verdict.PASS
    assert "logged points" in out.data["selection"]


def test_nan_in_log_fails_with_location(tmp_path: Path) -> None:
    losses = [2.3 - 0.01 * i for i in range(30)]
    text = log_of(losses).replace("loss: 2.15000", "loss: nan")
    out = run(tmp_path, text)
    assert out.verdict is Verdict.FAIL and "nan" in out.summary
    assert out.evidence[0].line == 16


def test_flat_log_fails_and_args_validate(tmp_path: Path) -> None:
    rng = random.Random(1)
    out = run(tmp_path, log_of([2.3 + rng.gauss(0, 0.05) for _ in range(60)]))
    assert out.verdict is Verdict.FAIL
    assert run(tmp_path, log_of([1.0] * 5), alpha=2).verdict is Verdict.FAIL
    assert "bad arguments" in run(tmp_path, log_of([1.0] * 5), window="x").summary
    assert run(tmp_path, "no losses here\n").verdict is Verdict.NA
    assert CHECKS["convergence"](ctx_for(tmp_path, None)).verdict is Verdict.SKIP


def test_down_then_back_up_is_divergence() -> None:
    c = curve(lambda i, r: (2.0 - 0.03 * i if i < 40 else 0.8 + 0.05 * (i - 40)) + r.gauss(0, 0.05))
    verdict, summary, _ = analyse_curve(c)
    assert verdict is Verdict.FAIL and "diverges" in summary


def test_flat_low_loss_passes_only_when_allowed() -> None:
    c = curve(lambda i, r: 0.05 + r.gauss(0, 0.01))
    assert analyse_curve(c)[0] is Verdict.FAIL
    verdict, summary, _ = analyse_curve(c, flat_ok_below=0.1)
    assert verdict is Verdict.PASS and "already converged" in summary
    flat_high = curve(lambda i, r: 2.3 + r.gauss(0, 0.01))
    assert analyse_curve(flat_high, flat_ok_below=0.1)[0] is Verdict.FAIL


def test_flat_ok_below_through_the_check(tmp_path: Path) -> None:
    rng = random.Random(2)
    text = log_of([0.05 + rng.gauss(0, 0.01) for _ in range(40)])
    assert run(tmp_path, text).verdict is Verdict.FAIL
    assert run(tmp_path, text, flat_ok_below=0.1).verdict is Verdict.PASS
    assert run(tmp_path, text, flat_ok_below="low").verdict is Verdict.FAIL


def _log(losses: list[float]) -> str:
    return "".join(
        f"[Epoch 1/1][Iter {i}/{len(losses)}] loss: {v:.4f}, avg_reader_cost: 0.001 sec, "
        f"avg_batch_cost: 0.01 sec, avg_ips: 100.0 images/sec\n"
        for i, v in enumerate(losses, start=1)
    )


def test_path_judges_shipped_logs_without_a_run(tmp_path: Path) -> None:
    rng = random.Random(0)
    down = [2.3 * math.exp(-i / 30) + rng.uniform(0, 0.05) for i in range(120)]
    up = [0.5 + i / 20 + rng.uniform(0, 0.05) for i in range(120)]
    write_tree(tmp_path, {"test_log/log_train.txt": _log(down)})
    check = CHECKS["convergence"]
    out = check(ctx_for(tmp_path, None), path="{,**/}test_log/log_train.txt", max_iters=100)
    assert out.verdict is Verdict.PASS, out.summary
    assert out.data["points"] == 100 and out.data["log"] == "test_log/log_train.txt"
    write_tree(tmp_path, {"b/test_log/log_train.txt": _log(up)})
    out = check(ctx_for(tmp_path, None), path="{,**/}test_log/log_train.txt")
    assert out.verdict is Verdict.FAIL and out.summary.startswith("2 logs: ")
    assert {e.path for e in out.evidence} == {"test_log/log_train.txt", "b/test_log/log_train.txt"}
    assert check(ctx_for(tmp_path, None), path="none.txt").verdict is Verdict.FAIL
    assert check(ctx_for(tmp_path, None), path="/abs.txt").verdict is Verdict.FAIL


# Real lite runs log a handful of points: liuxtakeoff/cutpaste_paddle (2 epochs of 1 batch) and the official
# TIPC tutorial (PaddlePaddle/models tutorials/mobilenetv3_prod/Step6, 5 iterations).
CUTPASTE_LOG = """\
epoch:1/2 loss:1.1137 acc:0.500 avg_reader_cost:0.012 avg_batch_cost:2.415 avg_ips:2.415 lr:0.000100
epoch:2/2 loss:1.2472 acc:0.500 avg_reader_cost:0.006 avg_batch_cost:2.102 avg_ips:2.102 lr:0.000100
"""
STEP6_LOSSES = [6.96, 4.88, 6.48, 5.25, 6.33]


def test_two_rising_points_are_not_applicable_naming_the_values(tmp_path: Path) -> None:
    # too little data to tell a trend from noise: N-A with the reason, never FAIL (issue 23)
    out = run(tmp_path, CUTPASTE_LOG)
    assert out.verdict is Verdict.NA
    assert "2 loss point(s), fewer than the 8 needed to judge convergence" in out.summary
    assert "it rises: 1.114 at iter 1, 1.247 at iter 2" in out.summary


def test_a_short_noisy_curve_gets_the_same_verdict_whichever_way_it_ends(tmp_path: Path) -> None:
    # the official tutorial's 5 lite points fall in one run and rise in the next: both are N-A
    for losses in (STEP6_LOSSES, [6.908, 5.693, 5.765, 5.075, 2.113], [6.1, 6.9, 5.2, 6.4, 7.0]):
        out = run(tmp_path, log_of(losses))
        assert out.verdict is Verdict.NA, out.summary
        assert "5 loss point(s), fewer than the 8 needed" in out.summary and f"{losses[0]:.4g}" in out.summary


def test_few_points_that_never_change_or_explode_still_fail() -> None:
    verdict, summary, _ = analyse_curve([(1, 64.0), (2, 64.0), (3, 64.0)])
    assert verdict is Verdict.FAIL and "does not change: 64 at every one of 3 iterations" in summary
    verdict, summary, _ = analyse_curve([(1, 64.0), (2, 64.0)])
    assert verdict is Verdict.NA  # two equal values may be a printing precision
    verdict, summary, _ = analyse_curve([(1, 2.0), (2, 1.5), (3, 1.2)])
    assert verdict is Verdict.NA and "it falls" in summary
    verdict, summary, _ = analyse_curve([(1, 2.0), (2, 1.5), (3, 90.0)])
    assert verdict is Verdict.FAIL and "exploded" in summary


def test_each_bad_argument_is_named_and_a_window_is_used(tmp_path: Path) -> None:
    text = log_of([2.3 - 0.01 * i for i in range(30)])
    for args, words in (
        ({"nope": 1}, "nope: unknown key 'nope'"),
        ({"max_iters": 2.5}, "max_iters: expected an integer >= 1"),
        ({"noise_k": 0}, "noise_k: expected a number > 0"),
        ({"min_points": 2}, "min_points: expected an integer >= 3"),
        ({"window": 0}, "window: expected an integer >= 1"),
        ({"step": 3}, "step: expected a substring of the step id"),
        ({"flat_ok_below": "low"}, "flat_ok_below: expected a number"),
    ):
        out = run(tmp_path, text, **args)
        assert out.verdict is Verdict.FAIL, args
        assert out.summary.startswith("convergence: bad arguments: ") and words in out.summary, args
    assert run(tmp_path, text, window=5).data["window"] == 5


def test_bad_settings_and_a_missing_log_fail(tmp_path: Path) -> None:
    out = CHECKS["convergence"](ctx_for(tmp_path, None, {"convergence": {"bogus": 1}}))
    assert out.verdict is Verdict.FAIL and "invalid tipc settings" in out.summary
    rec = make_record(tmp_path, [("train", Stage.TRAIN, ["python", "t.py"], "gone.log", Status.PASSED)])
    out = CHECKS["convergence"](ctx_for(tmp_path, rec))
    assert out.verdict is Verdict.FAIL and out.summary == "train log of train not found"
