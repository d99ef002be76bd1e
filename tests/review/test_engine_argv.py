"""The `tipc check` each submission runs: one check lane inside (submissions are the parallel unit)."""

from __future__ import annotations

from pathlib import Path

from tipc.review.engine import ReviewOptions, check_argv


def test_each_check_runs_one_lane_unless_the_reviewer_says_otherwise() -> None:
    argv = check_argv(Path("/r"), Path("/r/report"), ReviewOptions(submissions=[], out=Path("/tmp/x")), None)
    assert argv[argv.index("--jobs") + 1] == "1"
    argv = check_argv(
        Path("/r"),
        Path("/r/report"),
        ReviewOptions(submissions=[], out=Path("/tmp/x"), check_args=["--jobs", "2"]),
        None,
    )
    assert argv[-2:] == ("--jobs", "2")  # later on the line: argparse keeps the reviewer's value


def _value(argv: tuple[str, ...], flag: str) -> str | None:
    values = [argv[i + 1] for i, word in enumerate(argv[:-1]) if word == flag]
    return values[-1] if values else None  # argparse keeps the last


def test_a_short_budget_bounds_the_documented_chain_and_the_reviewer_can_still_say() -> None:
    def argv(budget: float, *check_args: str) -> tuple[str, ...]:
        options = ReviewOptions(submissions=[], out=Path("/tmp/x"), budget_s=budget, check_args=[*check_args])
        return check_argv(Path("/r"), Path("/r/report"), options, None)

    # check's own 1200 s / 300 s fit a one-hour budget: nothing added
    assert _value(argv(3600), "--docs-timeout") is None and _value(argv(3600), "--docs-step-timeout") is None
    short = argv(600)
    assert _value(short, "--docs-timeout") == "240" and _value(short, "--docs-step-timeout") == "90"
    assert float(_value(short, "--docs-timeout") or 0) < 600  # the basic chain keeps the rest
    mine = argv(600, "--docs-step-timeout", "30")
    assert _value(mine, "--docs-step-timeout") == "30" and _value(mine, "--docs-timeout") == "240"
