"""The injected sitecustomize, in real Python processes: what it records, what it leaves alone, chaining."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from tests.helpers.trees import write_tree
from tipc.execute.lineage import INJECT_DIR, load, step_env

SITECUSTOMIZE = INJECT_DIR / "sitecustomize.py"


def run_py(code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_source_is_python_3_8_and_standard_library_only() -> None:
    tree = ast.parse(SITECUSTOMIZE.read_text(), feature_version=(3, 8))
    imported = {
        (n.module or "").split(".")[0] if isinstance(n, ast.ImportFrom) else a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, ast.Import | ast.ImportFrom)
        for a in n.names
    }
    assert "tipc" not in imported and "paddle" not in imported
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


def test_records_reads_writes_renames_copies_and_removes(tmp_path: Path) -> None:
    lineage = tmp_path / "lineage"
    (tmp_path / "in.txt").write_text("x")
    env = step_env(lineage, "train/a b", None)
    proc = run_py(
        """
        import os, shutil
        open("in.txt").read()
        os.makedirs("out", exist_ok=True)
        with open("out/w.pdparams", "wb") as fh:
            fh.write(b"w")
        fd = os.open("raw.bin", os.O_WRONLY | os.O_CREAT)
        os.close(fd)
        shutil.copyfile("in.txt", "copy.txt")
        os.replace("copy.txt", "moved.txt")
        os.remove("moved.txt")
        import json, email.parser  # stdlib reads are not recorded
        print("done")
        """,
        tmp_path,
        env,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "done"
    target = Path(env["TIPC_LINEAGE_FILE"])
    assert target.name == "train_a_b.jsonl"
    rows = records(target)
    header = rows[0]
    assert header["kind"] == "process" and header["step"] == "train/a b"
    seen = {(Path(str(r["path"])).name, r["mode"]) for r in rows[1:]}
    assert ("in.txt", "read") in seen
    assert ("w.pdparams", "write") in seen
    assert ("raw.bin", "write") in seen
    assert ("copy.txt", "write") in seen and ("moved.txt", "write") in seen
    assert ("copy.txt", "delete") in seen and ("moved.txt", "delete") in seen
    assert all(str(r["path"]).startswith(str(tmp_path)) for r in rows[1:]), rows
    assert all(not str(r["path"]).endswith(".py") for r in rows[1:])
    steps = load(lineage)
    assert set(steps) == {"train/a b"}
    assert {Path(a.path).name for a in steps["train/a b"].reads} == {"in.txt"}


def test_does_nothing_without_the_variable_and_never_breaks_the_program(tmp_path: Path) -> None:
    env = {"PYTHONPATH": str(INJECT_DIR)}
    proc = run_py("open(__import__('os').devnull).read(); print('ok')", tmp_path, env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok" and proc.stderr == ""
    # an unwritable lineage file: the program still runs and prints nothing extra
    blocker = tmp_path / "file"
    blocker.write_text("")
    env = step_env(blocker / "sub", "s", None)  # a folder under a plain file cannot exist
    proc = run_py("open('x.txt', 'w').write('1'); print('ok')", tmp_path, env)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok" and proc.stderr == ""


def test_chains_to_the_sitecustomize_it_hides(tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import builtins\nbuiltins.TIPC_OTHER_SITE = 42\n")
    env = step_env(tmp_path / "lineage", "s", str(other))
    assert env["PYTHONPATH"].split(os.pathsep) == [str(INJECT_DIR), str(other)]
    proc = run_py("import builtins; print(builtins.TIPC_OTHER_SITE)", tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "42"


FAKE_PADDLE = {
    "paddle/__init__.py": """
import os
from paddle import jit, static, inference, framework

def save(obj, path):
    with open(path + ".tmp", "wb") as fh:
        fh.write(b"w")
    os.rename(path + ".tmp", path)

def load(path):
    return os.path.getsize(path)
""",
    "paddle/framework.py": "def use_pir_api():\n    return True\n",
    "paddle/jit.py": """
import subprocess

def save(layer, path):
    # as Paddle's C++ writer does it: no Python open, so no audit event names these files
    subprocess.run(["touch", path + ".json", path + ".pdiparams"], check=True)

def load(path):
    return path
""",
    "paddle/static.py": "def load_inference_model(path_prefix, executor, **kw):\n    return path_prefix\n",
    "paddle/inference.py": """
class Config:
    def __init__(self, *args):
        self.args = args
    def set_model(self, *args):
        self.args = args
""",
}


def test_wraps_paddle_loaders_once_paddle_is_imported(tmp_path: Path) -> None:
    site = tmp_path / "site"
    write_tree(site, FAKE_PADDLE)
    work = tmp_path / "work"
    (work / "m").mkdir(parents=True)
    (work / "m" / "model.pdmodel").write_text("stale, not rewritten by jit.save")
    env = step_env(tmp_path / "lineage", "export", str(site))
    proc = run_py(
        """
        import paddle
        from paddle import inference
        paddle.save({}, "w.pdparams")
        paddle.load("w.pdparams")
        paddle.jit.save(None, "m/model")
        paddle.jit.load("m/model")
        c = inference.Config("n/model.json", "n/model.pdiparams")
        assert isinstance(c, inference.Config) and c.args == ("n/model.json", "n/model.pdiparams")
        c.set_model("m/model.pdmodel", "m/model.pdiparams")
        paddle.static.load_inference_model("s/model", None)
        print("ok")
        """,
        work,
        env,
    )
    assert proc.returncode == 0, proc.stderr
    got = {
        (os.path.relpath(str(r["path"]), work), r["mode"], r["via"])
        for r in records(Path(env["TIPC_LINEAGE_FILE"]))[1:]
    }
    modes = {(p, m) for p, m, _ in got}
    assert ("w.pdparams", "write") in modes and ("w.pdparams", "read") in modes
    assert ("m/model.json", "write", "paddle.jit.save") in got
    assert ("m/model.pdiparams", "write", "paddle.jit.save") in got
    assert not any(p == "m/model.pdmodel" and m == "write" for p, m in modes)  # untouched stale file
    assert ("m/model.json", "read", "paddle.jit.load") in got  # PIR on: .json, not .pdmodel
    assert ("n/model.json", "read", "paddle.inference.Config") in got  # each (path, mode) once
    assert ("m/model.pdmodel", "read", "paddle.inference.Config.set_model") in got
    assert ("s/model.json", "read", "paddle.static.load_inference_model") in got
    assert ("s/model.pdiparams", "read", "paddle.static.load_inference_model") in got
