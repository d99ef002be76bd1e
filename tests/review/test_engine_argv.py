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
