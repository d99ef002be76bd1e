"""`tipc matrix`: interpreters per version, the environment spec, cached environments, the table; and on the
demo over two real Paddle versions (both pass), plus a variant calling an API that Paddle 2.6.2 lacks.

The integration test installs paddlepaddle 2.6.2 (Python 3.10) and 3.3.1 into environments under the user
cache dir the first time (35-45 s each from PyPI here); later runs reuse them (stamp files), so then it costs
the four lite chains."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.children import tipc_env
from tests.helpers.pythons import pyenv_pythons
from tipc.core.errors import UserError
from tipc.modelci import matrix

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"


def test_interpreters_per_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    fake = tmp_path / "pyenv" / "versions" / "3.9.18" / "bin"
    fake.mkdir(parents=True)
    (fake / "python3.9").write_text("")
    monkeypatch.setenv("PYENV_ROOT", str(tmp_path / "pyenv"))
    chosen = matrix.pythons_for(["2.6.2", "3.3.1"], [])
    assert chosen == {"2.6.2": str(fake / "python3.9"), "3.3.1": sys.executable}
    assert matrix.pythons_for(["2.6.2", "3.3.1"], ["/p", "3.3.1=/q"]) == {"2.6.2": "/p", "3.3.1": "/q"}
    with pytest.raises(UserError, match=r"9\.9\.9 is not one of the --paddle versions"):
        matrix.pythons_for(["3.3.1"], ["9.9.9=/x"])
    with pytest.raises(UserError, match="expected a version"):
        matrix.paddle_major("latest")


def test_requirements_and_install_spec(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text(
        "paddlepaddle>=3.0\npaddlepaddle-gpu==2.6\nnumpy  # arrays\n\n-e .\nPillow\n"
    )
    reqs = matrix.requirements(tmp_path)
    assert reqs == ["numpy", "Pillow"]
    assert matrix.install_spec("3.3.1", reqs) == ["paddlepaddle==3.3.1", "numpy", "Pillow"]
    assert matrix.install_spec("2.6.2", reqs) == ["paddlepaddle==2.6.2", "numpy<2", "Pillow"]
    assert matrix.install_spec("2.6.2", []) == ["paddlepaddle==2.6.2", "numpy<2"]


def test_environments_are_created_once_then_reused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TIPC_ENV_CACHE")  # the session's (tests/conftest.py): this test reads the XDG default
    monkeypatch.setenv("PATH", "/nonexistent")  # no uv: venv + pip
    calls: list[list[str]] = []

    def runner(argv: list[str], cwd: Path) -> tuple[int | None, str]:
        calls.append(argv)
        if argv[1:3] == ["-m", "venv"]:
            (Path(argv[3]) / "bin").mkdir(parents=True)
            (Path(argv[3]) / "bin" / "python").write_text("")
        return 0, "3.9.18\n" if argv[1] == "-c" else ""

    env = matrix.ensure_env("2.6.2", "/py39", ["Pillow"], runner=runner)
    assert not env.reused and env.path.parent == tmp_path / "tipc" / "envs"
    assert env.path.name.startswith("paddle-2.6.2-py3.9.18-")
    assert calls[1] == ["/py39", "-m", "venv", str(env.path)]
    assert calls[2][-3:] == ["paddlepaddle==2.6.2", "Pillow", "numpy<2"]
    again = matrix.ensure_env("2.6.2", "/py39", ["Pillow"], runner=runner)
    assert again.reused and again.path == env.path and len(calls) == 4  # only the version query ran

    def failing(argv: list[str], cwd: Path) -> tuple[int | None, str]:
        return (0, "3.9.18\n") if argv[1] == "-c" else (1, "ERROR: No matching distribution found")

    with pytest.raises(UserError, match="No matching distribution"):
        matrix.ensure_env("2.5.0", "/py39", [], runner=failing)
    assert not any(p.name.startswith("paddle-2.5.0") for p in (tmp_path / "tipc" / "envs").iterdir())


def test_table_and_first_broken() -> None:
    ok = matrix.Column("3.3.1", None, 0, {"train": "passed"}, {"train.loss.last": 0.07})
    bad = matrix.Column("2.6.2", None, 1, {"train": "failed", "eval": "blocked"}, {})
    columns = [bad, ok]
    assert matrix.first_broken(columns) is bad and bad.broken == ["stage train failed", "stage eval blocked"]
    text = matrix.table(columns)
    assert text.splitlines()[0].split() == ["metric", "Paddle", "2.6.2", "Paddle", "3.3.1"]
    assert "stage train      failed        passed" in text
    assert "train.loss.last  missing       0.07" in text
    assert "environment      setup failed  setup failed" in text
    assert matrix.to_json(columns)["first_broken"] == "2.6.2"
    assert matrix.first_broken([ok]) is None


def test_timing_rows_alone_never_name_a_broken_version() -> None:
    """Issue 25: identical effect metrics and every stage passed, yet "first broken version: Paddle 2.6.2"
    from timing rows on a loaded machine."""
    kinds = {
        "train.loss.last": "effect",
        "stage.train.time_s": "performance",
        "resources.peak_rss_mb": "resource",
    }
    slow = matrix.Column(
        "2.6.2",
        None,
        0,
        {"train": "passed"},
        {"train.loss.last": 0.07, "stage.train.time_s": 9.0},
        verdicts={"train.loss.last": "PASS", "stage.train.time_s": "FAIL", "resources.peak_rss_mb": "FAIL"},
        kinds=kinds,
        load="load differs: run-queue wait per CPU second 2.10 (baseline 0.30; ...)",
    )
    assert slow.broken == [] and matrix.first_broken([slow]) is None
    assert slow.moved == ["stage.train.time_s FAIL", "resources.peak_rss_mb FAIL"]
    worse = matrix.Column(
        "3.0.0",
        None,
        0,
        {"train": "passed"},
        {},
        verdicts={"train.loss.last": "FAIL", "stage.eval": "FAIL"},
        kinds=kinds,
    )
    assert worse.broken == ["train.loss.last FAIL", "stage.eval FAIL"]


def test_a_version_pip_cannot_install_is_not_installable_with_pips_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TIPC_ENV_CACHE", str(tmp_path / "envs"))
    monkeypatch.setenv("PATH", "/nonexistent")  # no uv: venv + pip
    pip_out = (
        "Looking in links: /opt/wheels\n"
        "ERROR: Could not find a version that satisfies the requirement paddlepaddle==9.9.9 (from versions: "
        "2.6.2, 3.0.0, 3.3.1)\nERROR: No matching distribution found for paddlepaddle==9.9.9\n"
    )

    def runner(argv: list[str], cwd: Path) -> tuple[int | None, str]:
        if argv[1:3] == ["-m", "venv"]:
            (Path(argv[3]) / "bin").mkdir(parents=True)
            return 0, ""
        return (0, "3.11.7\n") if argv[1] == "-c" else (1, pip_out)

    with pytest.raises(matrix.NotInstallable) as info:
        matrix.ensure_env("9.9.9", "/py", [], runner=runner)
    assert info.value.reason.startswith("ERROR: Could not find a version that satisfies the requirement")
    assert "paddlepaddle==9.9.9 (from versions: 2.6.2, 3.0.0, 3.3.1)" in info.value.reason
    assert not list((tmp_path / "envs").iterdir())  # the half-made environment is gone
    column = matrix.Column("9.9.9", None, None, not_installable=info.value.reason)
    assert column.broken == [] and "not installable" in matrix.table([column])
    uv = (
        "  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of "
        "paddlepaddle==9.9.9 and you require paddlepaddle==9.9.9, we can conclude that your requirements are "
        "unsatisfiable.\n"
    )
    assert matrix.pip_reason(uv).startswith("Because there is no version of paddlepaddle==9.9.9")


def test_releases_between_and_bisection() -> None:
    available = ["3.3.1", "3.3.0", "3.2.2", "3.2.1", "3.2.0", "3.1.1", "3.1.0", "3.0.0", "3.0.0rc1", "2.6.2"]
    between = matrix.releases_between(available, "3.3.1", "2.6.2")
    assert between == ["2.6.2", "3.0.0", "3.1.0", "3.1.1", "3.2.0", "3.2.1", "3.2.2", "3.3.0", "3.3.1"]
    with pytest.raises(UserError, match="final versions"):
        matrix.releases_between(available, "3.0.0rc1", "3.3.1")
    probed: list[str] = []

    def probe(version: str) -> matrix.Column:
        probed.append(version)
        if version == "3.1.1":
            return matrix.Column(version, None, None, not_installable="no wheel for this Python")
        broken = matrix.version_key(version) >= (3, 2, 0)  # type: ignore[operator]
        return matrix.Column(version, None, 1 if broken else 0, {"train": "failed" if broken else "passed"})

    first, columns = matrix.bisect(between, probe)
    assert first is not None and first.version == "3.2.0"
    assert len(probed) <= 5 and len(columns) == len(probed)  # 9 releases: ends, then a binary search
    none, _ = matrix.bisect(between[:3], probe)
    assert none is None  # the newest of those works: nothing to bisect


def _python310() -> str:
    found = pyenv_pythons("3.10")
    which = shutil.which("python3.10")
    if not found and which is None:
        pytest.skip("no Python 3.10 here for Paddle 2.6.2 (the demo uses Python 3.10 syntax)")
    return str(found[-1]) if found else str(which)


def _matrix(repo: Path, python: str, cache: Path, *versions: str) -> tuple[int, dict[str, Any], str]:
    env = tipc_env(TIPC_ENV_CACHE=str(cache))  # never ~/.cache/tipc/envs
    argv = [
        sys.executable,
        "-m",
        "tipc",
        "matrix",
        str(repo),
        "--python",
        f"2.6.2={python}",
        "--format",
        "json",
    ]
    for v in versions:
        argv += ["--paddle", v]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=2400, check=False)
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout), done.stderr


@pytest.fixture
def env_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """This test's Paddle environments (~1.4 GB): removed after it, not kept with pytest's temp folders."""
    cache = tmp_path_factory.mktemp("envs")
    yield cache
    shutil.rmtree(cache, ignore_errors=True)


@pytest.mark.integration
def test_the_demo_over_two_paddle_versions(env_cache: Path, tmp_path: Path) -> None:
    # The demo uses Python 3.10 syntax (zip(strict=...)), so Paddle 2.6.2 gets Python 3.10 here (its wheels
    # cover it); under the default Python 3.9 the matrix rightly shows 2.6.2 broken at the infer stage.
    # The environments go to a temp cache made for this test (pip's own cache makes the install quick).
    python = _python310()
    cache = env_cache
    plain = tmp_path / "plain"
    shutil.copytree(DEMO, plain, ignore=shutil.ignore_patterns("output", "__pycache__"))
    code, result, stderr = _matrix(plain, python, cache, "2.6.2", "3.3.1", "9.9.9")
    versions = {v["paddle"]: v for v in result["versions"]}
    assert result["first_broken"] is None, stderr[-2000:]
    assert code == 2  # 9.9.9 could not be installed, and nothing broke
    for version in ("2.6.2", "3.3.1"):
        v = versions[version]
        assert set(v["stages"].values()) == {"passed"}, v
        assert v["metrics"]["eval.acc"] > 0.5 and "train.avg_ips" in v["metrics"]
        assert str(v["env"]).startswith(str(cache)) and f"paddle-{version}-" in str(v["env"])
    assert (
        "paddlepaddle==9.9.9" in str(versions["9.9.9"]["not_installable"])
        and versions["9.9.9"]["broken"] == []
    )

    # A variant calling paddle.linalg.matrix_exp, which Paddle 2.6.2 does not have: 2.6.2 is the first broken.
    variant = tmp_path / "variant"
    shutil.copytree(DEMO, variant, ignore=shutil.ignore_patterns("output", "__pycache__"))
    train = variant / "train.py"
    text = train.read_text()
    marker = "    set_seed(args.seed)\n"
    assert text.count(marker) == 1
    train.write_text(text.replace(marker, marker + "    paddle.linalg.matrix_exp(paddle.eye(2))\n"))
    code, result, _ = _matrix(variant, python, cache, "2.6.2", "3.3.1")
    versions = {v["paddle"]: v for v in result["versions"]}
    assert code == 1 and result["first_broken"] == "2.6.2"
    assert versions["2.6.2"]["stages"]["train"] == "failed"
    assert "stage train failed" in versions["2.6.2"]["broken"]
    assert versions["2.6.2"]["env_reused"] is True and versions["3.3.1"]["broken"] == []
