"""tipc/execute/probes/envprobe.py's Paddle facts, run as tipc runs it: a standalone script under an
interpreter.

The facts come from paddle's generated version file, read as text; importing paddle is the fallback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tipc.execute.envinfo import MARKER, PROBE

VERSION_FILE = """\
# THIS FILE IS GENERATED FROM PADDLEPADDLE SETUP.PY
#
full_version     = '9.1.0'
major            = '9'
cuda_version     = {cuda!r}
is_tagged        = True
commit           = 'c0ffee0123456789'

def show():
    commit = 'not this one'
"""


def _probe(site: Path, cwd: Path, *flags: str, **env: str) -> dict[str, Any]:
    environ = {k: v for k, v in os.environ.items() if k != "FLAGS_enable_pir_api"}
    res = subprocess.run(
        [sys.executable, *flags, str(PROBE)],
        cwd=cwd,
        env={**environ, "PYTHONPATH": str(site), **env},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    line = [ln for ln in res.stdout.splitlines() if ln.startswith(MARKER)][-1]
    return dict(json.loads(line[len(MARKER) :]))


def _stand_in(site: Path, init: str, version_file: str | None) -> None:
    (site / "paddle" / "version").mkdir(parents=True)
    (site / "paddle" / "__init__.py").write_text(init)
    if version_file is not None:
        (site / "paddle" / "version" / "__init__.py").write_text(version_file)


def test_facts_come_from_the_version_file_without_importing_paddle(tmp_path: Path) -> None:
    # importing this stand-in would fail loudly: the facts must not need it
    _stand_in(tmp_path, "raise SystemExit('imported')\n", VERSION_FILE.format(cuda="12.6"))
    facts = _probe(tmp_path, tmp_path)
    assert facts["paddle_error"] is None
    assert (facts["paddle_version"], facts["paddle_commit"]) == ("9.1.0", "c0ffee0123456789")
    assert (facts["paddle_build"], facts["cuda_version"]) == ("gpu", "12.6")
    assert (facts["pir"], facts["export_format"]) == (True, "json+pdiparams")  # major >= 3: PIR by default
    off = _probe(tmp_path, tmp_path, FLAGS_enable_pir_api="0")
    assert (off["pir"], off["export_format"]) == (False, "pdmodel+pdiparams")


def test_a_cpu_build_and_an_empty_flag_read_as_paddle_reads_them(tmp_path: Path) -> None:
    _stand_in(tmp_path, "raise SystemExit('imported')\n", VERSION_FILE.format(cuda="False"))
    facts = _probe(tmp_path, tmp_path, FLAGS_enable_pir_api="")
    assert (facts["paddle_build"], facts["cuda_version"]) == ("cpu", None)
    assert facts["pir"] is True  # an empty value is paddle's default, not "off"


def test_without_a_version_file_paddle_is_imported(tmp_path: Path) -> None:
    init = (
        "__version__ = '2.5.0'\n"
        "class version:\n    commit = 'abc1234'\n"
        "def is_compiled_with_cuda():\n    return False\n"
        "def get_flags(names):\n    return {names[0]: False}\n"
    )
    _stand_in(tmp_path, init, None)
    facts = _probe(tmp_path, tmp_path)
    assert (facts["paddle_version"], facts["paddle_commit"], facts["paddle_build"]) == (
        "2.5.0",
        "abc1234",
        "cpu",
    )
    assert (facts["pir"], facts["export_format"]) == (False, "pdmodel+pdiparams")


def test_a_paddle_that_is_not_there_is_named(tmp_path: Path) -> None:
    facts = _probe(tmp_path, tmp_path, "-S")  # no site-packages: no paddle
    assert facts["paddle_version"] is None
    assert "No module named 'paddle'" in facts["paddle_error"]


def _dist_info(folder: Path, name: str, version: str) -> None:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_the_metadata_version_is_the_one_paddleversion_prints(tmp_path: Path) -> None:
    """paddle_dist_version: what probes/paddleversion.py prints from metadata, the working folder first."""
    site, cwd = tmp_path / "site", tmp_path / "repo"
    cwd.mkdir()
    _dist_info(site, "paddlepaddle", "9.1.0")
    assert _probe(site, cwd)["paddle_dist_version"] == "9.1.0"
    _dist_info(site, "paddlepaddle_gpu", "9.2.0")  # the GPU build first, as that probe asks
    assert _probe(site, cwd)["paddle_dist_version"] == "9.2.0"
    _dist_info(cwd, "paddlepaddle_gpu", "0.0.1")  # the working folder is searched first there too
    assert _probe(site, cwd)["paddle_dist_version"] == "0.0.1"
    version_probe = PROBE.parent / "paddleversion.py"
    printed = subprocess.run(
        [sys.executable, str(version_probe)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert printed.stdout.strip().splitlines()[-1] == "0.0.1"
    (tmp_path / "empty").mkdir()
    no_paddle = _probe(tmp_path / "empty", tmp_path / "empty", "-S")
    assert no_paddle["paddle_dist_version"] is None  # where that probe would import paddle


def _interpreters() -> list[str]:
    root = Path(__file__).resolve().parents[3]
    candidates = [sys.executable, str(root / ".venv-repos" / "bin" / "python")]
    return [p for p in dict.fromkeys(candidates) if os.access(p, os.X_OK)]


@pytest.mark.integration
@pytest.mark.parametrize("python", _interpreters())
@pytest.mark.parametrize("flag", [None, "0", "1"])
def test_the_version_file_says_what_importing_paddle_says(
    python: str, flag: str | None, tmp_path: Path
) -> None:
    """On real Paddle installs both ways give the same facts (Paddle 2 and 3 formats of the file)."""
    code = (
        "import json, runpy, sys\n"
        f"probe = runpy.run_path({str(PROBE)!r})\n"
        "print(json.dumps([probe['paddle_facts'](), probe['imported_paddle_facts']()]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "FLAGS_enable_pir_api"}
    if flag is not None:
        env["FLAGS_enable_pir_api"] = flag
    res = subprocess.run(
        [python, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert res.returncode == 0, res.stderr[-2000:]
    from_file, imported = json.loads(res.stdout.strip().splitlines()[-1])
    if imported["paddle_version"] is None:
        pytest.skip(f"no paddle under {python}")
    assert from_file == imported


def _probe_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("tipc_envprobe_under_test", PROBE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_folder_scan_answers_as_importlib_metadata_does(tmp_path: Path) -> None:
    """Every distribution installed here, and names spelled otherwise or missing: the same version."""
    import importlib.metadata as metadata

    probe = _probe_module()
    assert probe._Installed.usable(sys.path)
    installed = probe._Installed(sys.path)
    names = sorted({str(d.metadata["Name"]) for d in metadata.distributions()})
    for name in [*names, "no-such-dist", "PaddlePaddle", "scikit_learn", "Scikit.Learn", "pillow"]:
        try:
            expected: str | None = metadata.version(name)
        except metadata.PackageNotFoundError:
            expected = "missing"
        try:
            got = installed.version(name)
        except LookupError:
            got = "missing"
        assert got == expected, name
    # folded, repeated and absent headers, as the email parser (importlib.metadata's) reads them
    import email

    for text in (
        "Metadata-Version: 2.1\r\nName: x\r\nVersion:  1.2\r\n\tpost\r\nVersion: 9\r\n",
        "Name: x\n\nVersion: 1.0\n",  # the body is no header
        "Name: x\nnot a header\nVersion: 1.0\n",
        "version:\t3.0\rName: y\r",
        "",
    ):
        assert probe._version_header(text) == email.message_from_string(text).get("Version"), text


def test_a_zip_on_the_path_is_left_to_importlib_metadata(tmp_path: Path) -> None:
    probe = _probe_module()
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\x00" * 18)
    assert not probe._Installed.usable([str(archive), *sys.path])


def test_platform_and_python_version_say_what_the_platform_module_says() -> None:
    # the probe's own figures (platform.platform() starts `uname -p` and scans the interpreter's binary)
    import platform

    from tipc.execute.probes.envprobe import platform_string, python_version

    assert python_version() == platform.python_version()
    if platform.uname().processor not in ("", "unknown"):
        pytest.skip("platform.platform() names the processor `uname -p` gives here; the probe leaves it out")
    assert platform_string() == platform.platform()
