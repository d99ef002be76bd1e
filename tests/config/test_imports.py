"""What a repo's entry scripts import, read statically (tipc.config.imports)."""

from __future__ import annotations

from pathlib import Path

from tipc.config.imports import entry_scripts, scan


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_imports_are_followed_through_the_repos_own_packages(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "tools/train.py": "import os\nimport numpy as np\nfrom ppcls.data import build\nimport utils\n",
            "ppcls/__init__.py": "from . import data\n",
            "ppcls/data/__init__.py": "import cv2\nfrom .reader import read\nfrom .transforms import *\n",
            "ppcls/data/reader.py": "try:\n    import lmdb\nexcept ImportError:\n    lmdb = None\n",
            "utils.py": "def f():\n    import mc\n    return mc\nimport yaml\n",
        },
    )
    found = scan(repo, [repo / "tools" / "train.py"])
    assert found.entries == ("tools/train.py",)
    assert {"ppcls/__init__.py", "ppcls/data/__init__.py", "ppcls/data/reader.py", "utils.py"} <= set(
        found.files
    )
    assert set(found.external) == {"os", "numpy", "cv2", "yaml"}
    assert str(found.external["cv2"]) == "ppcls/data/__init__.py:1"
    # guarded by an ImportError handler, or imported inside a function: needed only when that code runs
    assert set(found.optional) == {"lmdb", "mc"}
    # a module of the repo's own package that is not there (its folder deleted)
    assert set(found.missing_local) == {"ppcls.data.transforms"}


def test_paddle_chains_follow_aliases(tmp_path: Path) -> None:
    repo = _repo(
        tmp_path,
        {
            "train.py": (
                "import paddle\nimport paddle.fluid as fluid\nfrom paddle import nn\n"
                "x = paddle.optimizer.RMSprop\ny = fluid.layers.fc\nz = nn.Linear\n"
            )
        },
    )
    apis = scan(repo, [repo / "train.py"]).paddle_apis
    assert {"paddle.fluid", "paddle.optimizer.RMSprop", "paddle.fluid.layers.fc", "paddle.nn.Linear"} <= set(
        apis
    )
    assert str(apis["paddle.optimizer.RMSprop"]) == "train.py:4"


def test_entry_scripts_of_an_argv(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"tools/train.py": "", "pkg/__init__.py": "", "pkg/main.py": ""})
    argv = ["python3.7", "tools/train.py", "--epochs=1"]
    assert entry_scripts(argv, repo, repo) == [repo / "tools" / "train.py"]
    assert entry_scripts(["python", "-m", "pkg.main"], repo, repo) == [(repo / "pkg" / "main.py").resolve()]
    assert entry_scripts(["python", "/etc/passwd.py"], repo, repo) == []  # not the repo's


def test_unparsable_files_are_listed_not_fatal(tmp_path: Path) -> None:
    repo = _repo(tmp_path, {"train.py": "import lib\n", "lib.py": "print 'python 2'\n"})
    found = scan(repo, [repo / "train.py"])
    assert found.unreadable == ("lib.py",)
