"""Serving detection and rendering for `tipc init`: deploy/*serving*/ with a client -> the serving chain."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.scaffold.scaffold_fixtures import DEMO_FILES, SERVING_FILES, build_tree
from tipc.config.script_flags import read_flags
from tipc.core.steps import Stage
from tipc.planning.serving import plan_serving
from tipc.scaffold import infer_slots, render_test_tipc
from tipc.scaffold.detect import scan
from tipc.scaffold.filled import ServingDeploy
from tipc.scaffold.serving import client_url, fill_serving, find_serving

SERVING_CONFIG = "configs/lenet_digits/serving_infer_python.txt"
SERVING_FILES_OUT = {SERVING_CONFIG, "test_serving_infer_python.sh", "docs/test_serving_infer_python.md"}


@pytest.fixture
def serving_repo(tmp_path: Path) -> Path:
    return build_tree(tmp_path / "repo", {**DEMO_FILES, **SERVING_FILES})


def _config_lines(text: str) -> list[tuple[str, str]]:
    return [tuple(line.split(":", 1)) for line in text.splitlines()[1:]]  # type: ignore[misc]


# ---- detection --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        (
            {"deploy/serving_python/pipeline_http_client.py": ""},
            ("deploy/serving_python", "pipeline_http_client.py"),
        ),
        ({"deploy/serving/my_client.py": ""}, ("deploy/serving", "my_client.py")),
        # a conventional pipeline client wins over another *client* script
        (
            {"deploy/pdserving/a_client.py": "", "deploy/pdserving/pipeline_http_client.py": ""},
            ("deploy/pdserving", "pipeline_http_client.py"),
        ),
        # Python over C++; a C++ folder alone is not a Python deployment
        (
            {"deploy/serving_cpp/client.py": "", "deploy/serving_python/client.py": ""},
            ("deploy/serving_python", "client.py"),
        ),
        ({"deploy/serving_cpp/client.py": ""}, None),
        ({"deploy/serving_python/README.md": ""}, None),  # no client script
        ({"deploy/python/infer.py": ""}, None),  # not a serving folder
        ({"serving/pipeline_http_client.py": ""}, None),  # only deploy/ is looked at, like the rules
        ({}, None),
    ],
)
def test_find_serving(tmp_path: Path, files: dict[str, str], expected: tuple[str, str] | None) -> None:
    root = build_tree(tmp_path / "r", {"train.py": "", **files})
    found = find_serving(root)
    assert (found.dir, found.client) == expected if found else expected is None


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('p.add_argument("--url", default="http://127.0.0.1:18093/lenet/prediction")', (18093, "lenet")),
        ('p.add_argument("--server_url", default="http://localhost:9292/ocr/prediction/")', (9292, "ocr")),
        ('p.add_argument("--port", type=int, default=8866)', (8866, None)),
        ('url = "http://127.0.0.1:18080/imagenet/prediction"', (18080, "imagenet")),  # hard-coded
        ('url = "http://example.com/x"', None),  # no port
        ('p.add_argument("--url", default=None)', None),
    ],
)
def test_client_url_is_read_statically(tmp_path: Path, source: str, expected: object) -> None:
    client = tmp_path / "client.py"
    client.write_text(f"import argparse\np = argparse.ArgumentParser()\n{source}\n")
    found = client_url(client, read_flags(client, tmp_path))
    assert (found[0] if found else None) == expected


# ---- filling ----------------------------------------------------------------------------------------


def test_serving_config_has_the_models_tutorial_layout(serving_repo: Path) -> None:
    filled = infer_slots(serving_repo, "lenet_digits", "template")
    assert filled.serving is not None and filled.serving.todos == []
    files = render_test_tipc(filled, serving_repo)
    text = files[SERVING_CONFIG]
    assert text.splitlines()[0] == "===========================serving_params==========================="
    assert _config_lines(text) == [
        ("model_name", "lenet_digits"),
        ("python", "python"),
        ("trans_model", "export_model.py"),
        ("--pretrained", "./pretrained/lenet_digits.pdparams"),
        ("--save_inference_dir", "./inference/lenet_digits_infer/"),
        ("null", "null"),
        ("null", "null"),
        ("null", "null"),
        ("serving_dir", "./deploy/serving_python"),
        ("web_service", "-m tipc serve ../../inference/lenet_digits_infer --port 18093 --name lenet_digits"),
        ("pipline", "pipeline_http_client.py"),
        ("--image_dir", "../../lite_data/images/"),  # the client's own default, inside the lite data
    ]


def test_generated_serving_config_plans_with_tipc_serve(serving_repo: Path, tmp_path: Path) -> None:
    files = render_test_tipc(infer_slots(serving_repo, "lenet_digits", "template"), serving_repo)
    config = serving_repo / "test_tipc" / SERVING_CONFIG
    config.parent.mkdir(parents=True)
    config.write_text(files[SERVING_CONFIG])
    plan = plan_serving(config, repo=serving_repo)
    assert [s.stage for s in plan.steps] == [Stage.EXPORT, Stage.SERVE, Stage.CLIENT]
    export, server, client = plan.steps
    assert export.argv[1:] == (
        "export_model.py",
        "--pretrained=./pretrained/lenet_digits.pdparams",
        "--save_inference_dir=./inference/lenet_digits_infer/",
    )
    assert server.background and server.cwd == "deploy/serving_python"
    assert server.ready_url == "http://127.0.0.1:18093/v2/health/ready"
    assert client.argv[1:] == ("pipeline_http_client.py", "--image_dir=../../lite_data/images/")
    assert not any(s.requires_modules for s in plan.steps)  # nothing needs Paddle Serving
    assert [f for f in plan.findings if f.level.name != "INFO"] == []


def test_client_image_flag_gets_the_lite_data_when_its_default_points_elsewhere(tmp_path: Path) -> None:
    client = SERVING_FILES["deploy/serving_python/pipeline_http_client.py"].replace(
        '"../../lite_data/images/"', '"./imgs/"'
    )
    repo = build_tree(tmp_path / "r", {**DEMO_FILES, "deploy/serving_x/pipeline_http_client.py": client})
    filled = infer_slots(repo, "lenet_digits", "template")
    assert filled.serving is not None
    assert filled.serving.slots["image"] == ("--image_dir", "../../lite_data/images/")
    assert filled.serving.slots["serving_dir"] == ("serving_dir", "./deploy/serving_x")


def test_what_cannot_be_inferred_becomes_a_todo_not_a_guess(tmp_path: Path) -> None:
    # No export script, no weights, a client without a port and with a required flag nobody passes.
    repo = build_tree(
        tmp_path / "r",
        {
            "train.py": "import argparse\n",
            "deploy/serving/client.py": (
                "import argparse\np = argparse.ArgumentParser()\n"
                'p.add_argument("--img", default="x.png")\np.add_argument("--token", required=True)\n'
            ),
        },
    )
    filled = infer_slots(repo, "m", "template")
    assert filled.serving is not None
    todos = [t.format() for t in filled.serving.todos]
    assert any(t.startswith("serving trans_model:") for t in todos)
    assert any(t.startswith("serving web_service:") and "9998" in t for t in todos)
    assert any("--token" in t for t in todos)
    assert any(t.startswith("serving image:") for t in todos)
    assert all(t in [x.format() for x in filled.todos] for t in todos)  # printed by `tipc init` too
    files = render_test_tipc(filled, repo)
    assert "--port 9998 --name m" in files["configs/m/serving_infer_python.txt"]
    doc = files["docs/test_serving_infer_python.md"]
    assert "## TODO before the serving chain can pass" in doc and "--token" in doc
    assert "TODO" not in files["configs/m/serving_infer_python.txt"]


def test_export_flags_follow_the_train_chain_overrides(serving_repo: Path) -> None:
    filled = infer_slots(serving_repo, "lenet_digits", "template", [("save_inference.key", "--out")])
    assert filled.serving is not None
    assert filled.serving.slots["trans_save_dir"] == ("--out", "./inference/lenet_digits_infer/")


def test_fill_serving_refuses_colons_in_values(tmp_path: Path) -> None:
    # The first lite image lies under a folder with ':' in its name: bash would cut the value there.
    client = SERVING_FILES["deploy/serving_python/pipeline_http_client.py"].replace(
        '"../../lite_data/images/"', '"./imgs/"'
    )
    files = {**DEMO_FILES, "lite_data/im:g/0.png": "x", "deploy/serving_python/client.py": client}
    repo = build_tree(tmp_path / "r", files)
    base = infer_slots(repo, "lenet_digits", "template")
    filled = fill_serving(
        scan(repo, "lenet_digits"), base, ServingDeploy("deploy/serving_python", "client.py")
    )
    assert all(":" not in k + v for k, v in filled.slots.values())
    assert filled.slots["image"] == ("null", "null")
    assert any(t.format().startswith("serving image:") and "':'" in t.format() for t in filled.todos)


# ---- rendering --------------------------------------------------------------------------------------


def test_no_serving_files_without_a_serving_deployment(demo_repo: Path) -> None:
    filled = infer_slots(demo_repo, "lenet_digits", "template")
    assert filled.serving is None
    assert not SERVING_FILES_OUT & set(render_test_tipc(filled, demo_repo))


@pytest.mark.parametrize("dialect", ["template", "compact"])
def test_serving_files_are_rendered_in_both_dialects(serving_repo: Path, dialect: str) -> None:
    files = render_test_tipc(infer_slots(serving_repo, "lenet_digits", dialect), serving_repo)
    assert set(files) >= SERVING_FILES_OUT
    wrapper = files["test_serving_infer_python.sh"]
    assert '--mode "$mode"' in wrapper and 'run "$repo_root" --config "$config"' in wrapper
    doc = files["docs/test_serving_infer_python.md"]
    # what the competition rules read: the script's command, how to start the service and send a request
    assert f"bash test_tipc/test_serving_infer_python.sh test_tipc/{SERVING_CONFIG} serving_infer" in doc
    assert "Start the service" in doc and "Send a request" in doc and "client" in doc
    assert "Paddle Serving cannot be installed" in doc
    # the planned commands, as tipc plans them
    assert "`python -m tipc serve ../../inference/lenet_digits_infer --port 18093 --name lenet_digits`" in doc
    assert "http://127.0.0.1:18093/v2/health/ready" in doc
    readme = files["README.md"]
    assert "test_serving_infer_python.sh" in readme


def test_generated_serving_wrapper_passes_shellcheck(serving_repo: Path, tmp_path: Path) -> None:
    shellcheck = shutil.which("shellcheck") or shutil.which(
        "shellcheck", path=str(Path(sys.executable).parent)
    )
    if shellcheck is None:
        pytest.skip("shellcheck not found")
    files = render_test_tipc(infer_slots(serving_repo, "lenet_digits", "template"), serving_repo)
    script = tmp_path / "test_serving_infer_python.sh"
    script.write_text(files["test_serving_infer_python.sh"])
    result = subprocess.run([shellcheck, "--severity=style", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
