from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.pythons import pyenv_pythons
from tipc.execute.envinfo import MARKER, PROBE, EnvInfo, collect, parse_probe_output

SAMPLE = {
    "probe": 1,
    "python_version": "3.11.7",
    "python_executable": "/tmp/repovenv/bin/python",
    "platform": "Linux-6.1-x86_64",
    "paddle_version": "3.3.1",
    "paddle_commit": "7688495538f4d6c1893f084dd238a402e8f68ab6",
    "paddle_build": "cpu",
    "cuda_version": None,
    "pir": True,
    "export_format": "json+pdiparams",
    "paddle_error": None,
    "packages": {"numpy": "1.26.4", "pillow": "10.4.0", "opencv": "4.10.0.84", "scikit-learn": "1.1.3"},
    "cpu_model": "AMD EPYC",
    "cpu_count": 2,
    "memory_total_bytes": 8 * 2**30,
    "gpus": [],
}


def probe_output(data: object, noise: str = "W1123 paddle says hello\n") -> str:
    return noise + MARKER + json.dumps(data) + "\n"


def test_parse_and_header_lines() -> None:
    info = parse_probe_output("/tmp/repovenv/bin/python", probe_output(SAMPLE))
    assert info.python == "/tmp/repovenv/bin/python"
    assert info.header_lines() == [
        "Paddle 3.3.1 (cpu build, commit 7688495) · by default: PIR on, export json+pdiparams",
        "Python 3.11.7 · numpy 1.26.4 · Pillow 10.4.0 · opencv 4.10.0.84 · scikit-learn 1.1.3",
        "CPU: AMD EPYC (2 cores) · 8.0 GiB RAM · GPU: none",
    ]


def test_gpu_build_and_gpus() -> None:
    data = {
        **SAMPLE,
        "paddle_build": "gpu",
        "cuda_version": "12.6",
        "gpus": ["NVIDIA H100"] * 2,
        "pir": False,
        "export_format": "pdmodel+pdiparams",
    }
    lines = parse_probe_output("python", probe_output(data)).header_lines()
    assert (
        lines[0] == "Paddle 3.3.1 (gpu build, CUDA 12.6, commit 7688495) · by default: PIR off, "
        "export pdmodel+pdiparams"
    )
    assert lines[2].endswith("GPU: 2 x NVIDIA H100")


def test_no_paddle_and_unknowns() -> None:
    data: dict[str, Any] = {
        "python_version": "3.6.15",
        "python_executable": "/usr/bin/python3.6",
        "paddle_version": None,
        "paddle_error": "ModuleNotFoundError: No module named 'paddle'",
        "packages": {},
        "gpus": None,
    }
    lines = parse_probe_output("python3.6", probe_output(data)).header_lines()
    assert (
        lines[0]
        == "Paddle: not importable by /usr/bin/python3.6: ModuleNotFoundError: No module named 'paddle'"
    )
    assert lines[1] == "Python 3.6.15 · numpy - · Pillow - · opencv - · scikit-learn -"
    assert lines[2] == "CPU: unknown · GPU: unknown"


def test_the_last_marker_line_wins_and_garbage_is_an_error() -> None:
    out = probe_output({**SAMPLE, "paddle_version": "2.6.2"}) + probe_output(SAMPLE, noise="")
    assert parse_probe_output("p", out).paddle_version == "3.3.1"
    broken = parse_probe_output("p", "Traceback ...\nSyntaxError: invalid syntax\n")
    assert broken.error is not None and "SyntaxError" in broken.error
    assert broken.header_lines() == [f"Environment unknown: {broken.error}"]
    assert parse_probe_output("p", MARKER + "{nope").error is not None
    assert parse_probe_output("p", MARKER + "[1]").error is not None


def test_wrong_types_read_as_unknown() -> None:
    info = EnvInfo.from_json(
        {"pir": "yes", "cpu_count": True, "gpus": "none", "packages": ["x"], "paddle_version": 3}
    )
    assert (info.pir, info.cpu_count, info.gpus, info.packages, info.paddle_version) == (
        None,
        None,
        None,
        {},
        None,
    )


def test_json_round_trip() -> None:
    info = parse_probe_output("/p", probe_output(SAMPLE))
    assert EnvInfo.from_json(json.loads(json.dumps(info.to_json()))) == info


def test_a_missing_interpreter_is_reported_not_raised(tmp_path: Path) -> None:
    info = collect(str(tmp_path / "no-python"), cwd=tmp_path, timeout_s=10)
    assert info.error is not None
    assert info.header_lines()[0].startswith("Environment unknown")


def _pythons() -> list[str]:
    candidates = [sys.executable, "/work/main/.venv/bin/python", "/tmp/repovenv/bin/python"]
    return [p for p in dict.fromkeys(candidates) if os.access(p, os.X_OK)]


@pytest.mark.integration
@pytest.mark.parametrize("python", _pythons())
def test_probe_under_real_interpreters(python: str, tmp_path: Path) -> None:
    info = collect(python, cwd=tmp_path, timeout_s=120)
    assert info.error is None
    assert info.python_version and info.python_version.startswith("3.")
    assert info.python_executable
    assert info.cpu_count and info.cpu_count >= 1
    assert info.memory_total_bytes and info.memory_total_bytes > 2**20
    if info.paddle_version is not None:
        major = int(info.paddle_version.split(".")[0])
        assert info.paddle_build in ("cpu", "gpu")
        assert info.paddle_commit and len(info.paddle_commit) >= 7
        assert info.pir is (major >= 3)  # the default, with FLAGS_enable_pir_api unset here
        assert info.export_format == ("json+pdiparams" if major >= 3 else "pdmodel+pdiparams")
    assert len(info.header_lines()) == 3


@pytest.mark.integration
def test_probe_sees_the_pir_flag_of_the_chain(tmp_path: Path) -> None:
    python = next((p for p in _pythons() if p != sys.executable), sys.executable)
    env = {**os.environ, "FLAGS_enable_pir_api": "0"}
    info = collect(python, cwd=tmp_path, env=env, timeout_s=120)
    if info.paddle_version is None:
        pytest.skip(f"no paddle under {python}")
    assert info.pir is False
    assert info.export_format == "pdmodel+pdiparams"


@pytest.mark.integration
def test_probe_runs_on_python36_without_paddle(tmp_path: Path) -> None:
    found = pyenv_pythons("3.6")
    if not found:
        pytest.skip("no python3.6 here")
    info = collect(str(found[0]), cwd=tmp_path, timeout_s=60)
    assert info.error is None and info.python_version and info.python_version.startswith("3.6")
    assert PROBE.is_file()
