"""README accuracy claims and evaluation metrics, on the shapes real READMEs and logs have."""

from __future__ import annotations

import pytest

from tipc.judge.checks.claims import best_claim, claims, compare, load, measured


def _best(text: str, family: str, *, only: bool = False) -> tuple[float, int] | None:
    claim = best_claim(claims(text), family, only_family=only)
    return (claim.value, claim.line) if claim is not None else None


def test_a_metric_column_of_a_table() -> None:
    text = (
        "# M\n\n| model | data | top-1 acc (100 images) | weights |\n|---|---|---|---|\n"
        "| LeNet | lite | 0.9600 | [w](a/b-2.0.pdparams) |\n"
    )
    assert _best(text, "top1") == (0.96, 5)


def test_a_composite_header_and_the_reproduced_column_over_the_reference() -> None:
    text = (
        "| 模型 | top1/5 acc (参考精度) | top1/5 acc (复现精度) |\n|:--:|:--:|:--:|\n"
        "| MobileNetV3_small | 0.602/- | 0.601/0.826 |\n"
    )
    assert _best(text, "top1") == (0.601, 3)
    assert _best(text, "top5") == (0.826, 3)


def test_a_sentence_picks_the_decimal_not_the_setting() -> None:
    text = "在 BSD68 测试集上做了10次测试，达到验收指标：average PSNR, noise 15: 31.73\n"
    assert _best(text, "psnr") == (31.73, 1)


def test_an_unnamed_metric_column_counts_when_it_is_the_only_metric_measured() -> None:
    text = "| 模型 | 参考精度 | 复现精度 |\n|:--:|:--:|:--:|\n| CAN | 57.00 | 51.72 |\n"
    assert _best(text, "exprate") is None
    assert _best(text, "exprate", only=True) == (51.72, 3)


def test_a_table_under_a_heading_that_names_the_accuracy_states_it() -> None:
    """cutpaste_paddle's per-class table sits under `# 复现精度` and names no metric in its columns: tipc said
    its README "states no accuracy"."""
    table = (
        "| defect_type | CutPaste (3-way) | Li et al. CutPaste (3-way) |\n|:--|--:|--:|\n"
        "| bottle | 90.7 | 98.3 |\n| average | 96.7 | 95.2 |\n"
    )
    assert _best("# 复现精度（Comparison to Li et al.）\n" + table, "auc", only=True) == (96.7, 5)
    # the same table under a heading that names no accuracy is not a claim
    assert claims("## 数据集\n" + table) == []


def test_numbers_in_code_blocks_are_not_claims() -> None:
    text = "```\n[Eval] acc: 0.6400\n```\n"
    assert claims(text) == []


@pytest.mark.parametrize(
    ("line", "family", "value"),
    [
        ("[Eval] acc: 0.9600", "top1", 0.96),
        (" * Acc@1 0.564 Acc@5 0.790", "top1", 0.564),
        (" * Acc@1 0.564 Acc@5 0.790", "top5", 0.79),
        (
            "10 times test on test data, Averate PSNR: 31.73937683053843, Variance: 1.7e-05",
            "psnr",
            31.73937683053843,
        ),
        ("average auroc:0.8750", "auc", 0.875),
        ("mAP = 37.4%", "map", 0.374),
    ],
)
def test_measured_metrics(line: str, family: str, value: float) -> None:
    got = measured(["loss: 0.1648", line])
    assert got[family].value == pytest.approx(value) and got[family].line == 2


def test_the_last_value_in_a_log_is_the_measurement() -> None:
    got = measured(["Test: [0/10] acc1: 0.7812 (0.7812)", " * Acc@1 0.5640"])
    assert got["top1"].value == pytest.approx(0.564)


def test_compare_in_the_measured_scale() -> None:
    metrics = load()
    top1 = metrics.family("top1")
    assert top1 is not None
    (claim,) = claims("| m | acc |\n|---|---|\n| x | 96.0 |\n")
    got = measured(["acc: 0.9600"])["top1"]
    cmp = compare(claim, got, top1)
    assert cmp["claimed"] == pytest.approx(0.96) and cmp["reaches"] and "percentage" in cmp["note"]
    (high,) = claims("| m | acc |\n|---|---|\n| x | 0.9900 |\n")
    low = compare(high, got, top1)
    assert not low["reaches"] and low["diff"] == pytest.approx(-0.03)
