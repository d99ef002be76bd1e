import subprocess
import sys

import pytest

from tipc.cli import VERBS, main


def test_help_lists_every_verb(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for verb in VERBS:
        assert verb in out


def test_no_verb_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2


def test_unknown_verb_is_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["frobnicate"]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_cli_imports_no_paddle_or_heavy_modules() -> None:
    code = (
        "import sys, tipc.cli\n"
        "p = tipc.cli.build_parser()\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'paddle', 'onnxruntime', 'onnx', 'paddle2onnx', 'numpy', 'uvicorn', 'starlette'})\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == ""


def test_a_verb_builds_only_its_own_arguments() -> None:
    # `tipc run` must not pay for the other verbs' parsers (`init` loads the scaffolder to list its slots)
    code = (
        "import sys, tipc.cli\n"
        "p = tipc.cli.build_parser(only='run')\n"
        "print(any(m.startswith('tipc.scaffold') for m in sys.modules))\n"
        "p.parse_args(['run', 'REPO', '--mode', 'whole_infer'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_each_verb_still_has_its_options(capsys: pytest.CaptureFixture[str]) -> None:
    for verb, option in (("run", "--step-timeout"), ("init", "--model"), ("lint", "--format")):
        assert main([verb, "--help"]) == 0
        assert option in capsys.readouterr().out
    assert main(["--debug", "run", "/no/such/repo"]) == 2
    assert "no such file" in capsys.readouterr().err
