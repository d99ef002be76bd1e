from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.helpers.pythons import pyenv_pythons
from tipc.core.errors import UserError
from tipc.execute.compat import SWITCHES, compat_env, pythonpath_with_shim, shim_path
from tipc.execute.proc import capture


def test_export_switch_turns_pir_off() -> None:
    assert compat_env(["export"]) == {"FLAGS_enable_pir_api": "0"}
    assert compat_env([]) == {}
    assert "pdmodel" in SWITCHES["export"].description


def test_unknown_switch_lists_the_known_ones() -> None:
    with pytest.raises(UserError) as info:
        compat_env(["export", "nope"])
    assert "'nope'" in str(info.value) and "export" in str(info.value)
    assert info.value.exit_code == 2


def test_pythonpath_gets_the_shim_last_and_once() -> None:
    shim = str(shim_path())
    assert pythonpath_with_shim(None) == shim
    assert pythonpath_with_shim("") == shim
    assert pythonpath_with_shim(os.pathsep.join(["/a", "/b"])) == os.pathsep.join(["/a", "/b", shim])
    once = pythonpath_with_shim("/a")
    assert pythonpath_with_shim(once) == once


def test_shim_folder_holds_auto_log() -> None:
    folder = shim_path()
    assert (folder / "auto_log" / "__init__.py").is_file()
    assert not (folder / "__init__.py").exists()  # the folder itself is a PYTHONPATH entry, not a package


# Written the way PaddlePaddle/models Step6 deploy/inference_python/infer.py uses AutoLog (only
# model_name, batch_size, inference_config and gpu_ids given; four stamps for three stages).
SCRIPT = """
import logging, sys, time
import auto_log

logging.basicConfig(level=logging.INFO, format="DUP %(message)s")  # as paddle's own logging setup does

class Config:  # duck-typed like paddle.inference.Config
    def use_gpu(self): return False
    def ir_optim(self): return True
    def tensorrt_engine_enabled(self): return False
    def mkldnn_enabled(self): return False
    def cpu_math_library_num_threads(self): return 4

autolog = auto_log.AutoLogger(model_name="classification", batch_size=1, inference_config=Config(),
                              gpu_ids=None)
autolog.times.start()
time.sleep(0.02)
autolog.times.stamp()
time.sleep(0.05)
autolog.times.stamp()
autolog.times.stamp()
autolog.times.end(stamp=True)
autolog.report()
print("shim" if getattr(auto_log, "TIPC_SHIM", False) else "real", "paddle" in sys.modules)
"""


def _run_with_shim(python: str, tmp_path: Path) -> str:
    script = tmp_path / "infer.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(shim_path())
    code, out = capture([python, str(script)], cwd=tmp_path, env=env, timeout_s=60)
    assert code == 0, out
    return out


def _check_report(out: str) -> None:
    lines = out.splitlines()
    for header in (
        "----------------------- Model info ----------------------",
        "----------------------- Data info -----------------------",
        "----------------------- Perf info -----------------------",
    ):
        assert any(line.endswith(header) for line in lines), header
    text = "\n".join(lines)
    assert " model_name: classification" in text
    assert " precision: fp32" in text
    assert " batch_size: 1" in text
    assert " runtime_device: cpu" in text and "cpu_math_library_num_threads: 4" in text
    assert " data_num: 1" in text
    perf = next(line for line in lines if "preprocess_time(ms):" in line)
    pre = float(perf.split("preprocess_time(ms): ")[1].split(",")[0])
    inf = float(perf.split("inference_time(ms): ")[1].split(",")[0])
    assert 15 <= pre < 1000 and 40 <= inf < 1000  # the sleeps, in ms
    rss = next(line for line in lines if "cpu_rss(MB):" in line)
    assert float(rss.split("cpu_rss(MB): ")[1].split(",")[0]) > 1
    assert lines[-1] == "shim False"  # the stand-in answered, and it never imported paddle
    assert not any(line.startswith("DUP") for line in lines)  # each line once, whatever the root logger does
    assert all(" root INFO: " in line for line in lines if "model_name:" in line)


def test_shim_reports_like_autolog(tmp_path: Path) -> None:
    _check_report(_run_with_shim(sys.executable, tmp_path))


@pytest.mark.parametrize("version", ["3.7", "3.8"])
def test_shim_runs_on_old_pythons(tmp_path: Path, version: str) -> None:
    # on PATH, or a pyenv install (whose shim on PATH may refuse to run a version not selected)
    pyenv = pyenv_pythons(version)
    for python in [shutil.which(f"python{version}"), *map(str, pyenv)]:
        if python is None:
            continue
        code, out = capture([python, "-c", "import sys; print(sys.version_info[:2])"], cwd=tmp_path)
        if code == 0 and f"(3, {version[2:]})" in out:
            _check_report(_run_with_shim(python, tmp_path))
            return
    pytest.skip(f"no working python{version} on this machine")


def test_installed_auto_log_wins(tmp_path: Path) -> None:
    real = tmp_path / "site" / "auto_log"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "site"), str(shim_path())])
    code, out = capture(
        [sys.executable, "-c", "import auto_log; print(getattr(auto_log, 'REAL', False))"],
        cwd=tmp_path,
        env=env,
    )
    assert code == 0 and out.strip() == "True"
