import sys
from pathlib import Path

import pytest

from tipc.cli import main
from tipc.execute import proc


def test_serve_cli_module_imports_no_model_stack(tmp_path: Path) -> None:
    code = (
        "import sys, tipc.commands.serve, tipc.serve, tipc.planning.serving, tipc.execute.serving.client; "
        "heavy = [m for m in ('paddle', 'numpy', 'uvicorn', 'starlette') if m in sys.modules]; "
        "sys.exit(1 if heavy else 0)"
    )
    assert proc.run([sys.executable, "-c", code], cwd=tmp_path, timeout_s=60).exit_code == 0


@pytest.mark.parametrize("argv", [["--port", "70000"], ["--workers", "0"], ["--max-body-bytes", "-1"]])
def test_bad_arguments_exit_2(tmp_path: Path, argv: list[str]) -> None:
    assert main(["serve", str(tmp_path), *argv]) == 2


def test_missing_model_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "inference.json").write_text("{}")
    assert main(["serve", str(tmp_path)]) == 2
    assert "no inference.pdiparams" in capsys.readouterr().err


def test_plan_chain_serving_lists_convert_server_and_client(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tipc.cli import main

    demo = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
    config = demo / "test_tipc" / "configs" / "lenet_digits" / "serving_infer_python.txt"
    assert main(["plan", str(config), "--chain", "serving", "--format", "json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert [s["stage"] for s in steps] == ["export", "serve", "client"]
    assert steps[1]["background"] and steps[1]["ready_url"]


def test_plan_chain_mismatch_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    from tipc.cli import main

    demo = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
    config = demo / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"
    assert main(["plan", str(config), "--chain", "serving"]) == 2
    assert "drives the train_infer_python chain" in capsys.readouterr().err
