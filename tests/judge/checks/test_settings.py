from pathlib import Path

import pytest

from tests.judge.checks.checks_fixtures import write_tree
from tipc.core.errors import ConfigError
from tipc.judge.checks.settings import Settings, Tolerances, as_settings, load_settings, parse_settings

GOOD = """\
agreement:
  inputs: lite_data/infer_inputs.npy     # preprocessed float32 batch
  tolerances: {atol: 1.0e-5, rtol: 1.0e-4, cosine_min: 0.99999}
  predict_args: "predict.py --img_path {image}"
  images: [lite_data/test/0.png]
log_fields: {require_eval: true}
convergence:
  max_iters: 50
"""


def test_absent_file_gives_defaults(tmp_path: Path) -> None:
    s = load_settings(tmp_path)
    assert s == Settings()
    assert s.agreement.tolerances == Tolerances(1e-5, 1e-4, 0.99999)
    assert s.agreement.engines == ("paddle_inference", "onnxruntime")


def test_good_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"test_tipc/tipc.yaml": GOOD})
    s = load_settings(tmp_path)
    assert s.agreement.inputs == "lite_data/infer_inputs.npy"
    assert s.agreement.predict_args == ("predict.py", "--img_path", "{image}")
    assert s.agreement.images == ("lite_data/test/0.png",)
    assert s.log_fields.require_eval is True
    assert s.convergence.max_iters == 50 and s.convergence.alpha == 0.05


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("agreement:\n  inputs: a.npy\n  tolerence: {atol: 1}\n", 3, "unknown key 'tolerence'"),
        ("log_fields:\n  require_eval: yes please\n", 2, "expected true or false"),
        ("agreement:\n  tolerances:\n    atol: big\n", 3, "expected a number"),
        ("convergence:\n  max_iters: 2\n", 2, "integer >= 3"),
        ("agreement:\n  engines: [onnxruntime]\n", 2, "at least two engines"),
        ("agreement: [1, 2]\n", 1, "expected a mapping"),
        ("agreement:\n  inputs: [a\n", 3, "invalid YAML"),
        ("colour: red\n", 1, "unknown key 'colour'"),
    ],
)
def test_bad_files_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(text)
    assert info.value.line == line, info.value.render()
    assert words in info.value.message
    assert info.value.render().startswith(f"test_tipc/tipc.yaml:{line}:")


def test_as_settings_accepts_raw_mappings_and_values() -> None:
    assert as_settings(None) == Settings()
    s = Settings()
    assert as_settings(s) is s
    assert as_settings({"log_fields": {"require_eval": False}}).log_fields.require_eval is False
    with pytest.raises(ConfigError):
        as_settings({"log_fields": {"require_eval": "no"}})


def test_engine_plugins_and_options() -> None:
    s = parse_settings(
        "agreement:\n  plugins: [my_pkg.serving_engine]\n"
        "  engines: [paddle_inference, serving]\n  engine_options: {serving: {url: 'http://127.0.0.1:9393'}}\n"
    )
    assert s.agreement.plugins == ("my_pkg.serving_engine",)
    assert s.agreement.engine_options == {"serving": {"url": "http://127.0.0.1:9393"}}
    with pytest.raises(ConfigError) as info:
        parse_settings("agreement:\n  engine_options:\n    serving: 3\n")
    assert info.value.line == 3


def test_serving_model_dir_is_a_setting_the_serving_check_reads(tmp_path: Path) -> None:
    from tipc.judge.checks.base import CheckContext
    from tipc.judge.checks.serving import find_model_dir

    settings = parse_settings("serving:\n  model_dir: out/model\n")
    assert settings.serving.model_dir == "out/model"
    write_tree(tmp_path, {"out/model/inference.json": "{}", "out/model/inference.pdiparams": "x"})
    found, how = find_model_dir(CheckContext(repo=tmp_path, settings=settings))
    assert found == (tmp_path / "out/model").resolve() and "tipc.yaml" in how
    with pytest.raises(ConfigError, match="model_dir"):
        parse_settings("serving:\n  model_dir: 3\n")
