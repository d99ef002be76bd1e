"""A plan moved to another output folder keeps its commands and reads nothing of the old folder's logs."""

from __future__ import annotations

from tipc.core.steps import Mode, Plan, Stage, Step
from tipc.planning.relocate import relocate_output


def test_paths_under_the_output_folder_move_and_nothing_else() -> None:
    step = Step(
        id="infer",
        stage=Stage.INFER,
        argv=(
            "python",
            "infer.py",
            "--model_dir=./pretrained",
            "--log=./test_tipc/output/x.log",
            "test_tipc/outputs",
        ),
        log="test_tipc/output/python_infer.log",
        status_command="python infer.py --log=./test_tipc/output/x.log",
    )
    plan = Plan(
        "c.txt",
        "/r",
        Mode.WHOLE_INFER,
        "template",
        "m",
        "test_tipc/output",
        "test_tipc/output/results_python.log",
        "template",
        (step,),
    )
    moved = relocate_output(plan, "test_tipc/output/tipc_pretrained")
    (s,) = moved.steps
    assert s.argv[2:] == (
        "--model_dir=./pretrained",
        "--log=./test_tipc/output/tipc_pretrained/x.log",
        "test_tipc/outputs",
    )
    assert s.log == "test_tipc/output/tipc_pretrained/python_infer.log"
    assert s.status_command.endswith("./test_tipc/output/tipc_pretrained/x.log")
    assert moved.output_dir == "test_tipc/output/tipc_pretrained"
    assert moved.results_log == "test_tipc/output/tipc_pretrained/results_python.log"
    assert relocate_output(moved, "test_tipc/output/tipc_pretrained") is moved
