"""scripts/stray_files.py: large files and packages cannot be committed (four wheels and a .rwprobe
once were)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "stray_files.py"


def _guard(cwd: Path, *names: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), *names], cwd=cwd, capture_output=True, text=True, check=False
    )


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def test_tracked_wheels_archives_and_large_files_fail_by_name(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / "README.md").write_text("fine\n")
    (tmp_path / "small.tar").write_bytes(b"\0" * 1024)  # an uncompressed tar of test data is allowed
    _git(tmp_path, "add", "README.md", "small.tar")
    assert _guard(tmp_path).returncode == 0
    (tmp_path / "numpy-2.0-cp311-linux_x86_64.whl").write_bytes(b"PK")
    (tmp_path / "big.bin").write_bytes(b"\0" * ((1 << 20) + 1))
    _git(tmp_path, "add", ".")
    result = _guard(tmp_path)
    assert result.returncode == 1
    assert "numpy-2.0-cp311-linux_x86_64.whl: a .whl file" in result.stderr
    assert "big.bin: 1.0 MiB (over 1 MiB)" in result.stderr
    assert "README.md" not in result.stderr and "small.tar" not in result.stderr


def test_named_files_are_checked_without_git(tmp_path: Path) -> None:
    (tmp_path / "a.tar.gz").write_bytes(b"")
    (tmp_path / "ok.py").write_text("x = 1\n")
    assert _guard(tmp_path, "ok.py").returncode == 0
    result = _guard(tmp_path, "ok.py", "a.tar.gz")
    assert result.returncode == 1 and "a.tar.gz: a .tar.gz file" in result.stderr


def test_this_repository_has_no_stray_files() -> None:
    result = _guard(ROOT)
    assert result.returncode == 0, result.stderr
