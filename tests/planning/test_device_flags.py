"""`--device cpu` on entry scripts: each command gets the CPU form of the device flag its script accepts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.config.fixtures import COMPACT, OCR_DET, make_repo
from tipc.config.script_flags import read_flags
from tipc.core.findings import Level
from tipc.core.steps import Overrides, Plan, Stage, Step
from tipc.planning.device_flags import cpu_edit, entry_script
from tipc.planning.planner import format_plan, plan

CONFIG = "test_tipc/configs/mnv3/train_infer_python.txt"
CPU = Overrides(device="cpu")


def _script(body: str) -> str:
    head = "import argparse\n\n\ndef get_args():\n    parser = argparse.ArgumentParser()\n"
    return f"{head}{body}    return parser\n"


def _flag(tmp_path: Path, line: str, extra: str = "") -> tuple[str | None, str, bool]:
    path = tmp_path / "s.py"
    path.write_text(_script(f"    {line}\n") + extra, encoding="utf-8")
    flags = read_flags(path, tmp_path)
    edit = cpu_edit(flags.flags[0], path.read_text(encoding="utf-8"))
    return edit.value, edit.warning, edit.add_switch


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("parser.add_argument('--device', default='gpu')", "cpu"),
        ("parser.add_argument('--device', default='GPU', choices=['GPU', 'CPU', 'XPU'])", "CPU"),
        ("parser.add_argument('--use_gpu', type=str2bool, default=True)", "False"),
        ("parser.add_argument('--use-gpu', default=True)", "False"),
        ("parser.add_argument('--cuda', default=True)", "False"),
        ("parser.add_argument('--use_cuda', type=int, default=1)", "0"),
        # argparse turns any non-empty string into True for type=bool: only '' is false.
        ("parser.add_argument('--cuda', type=bool, default=True)", ""),
        ("parser.add_argument('--use_gpu', choices=['yes', 'no'], default='yes')", "no"),
    ],
)
def test_cpu_value_in_the_form_the_flag_type_accepts(tmp_path: Path, line: str, value: str) -> None:
    got, warning, _ = _flag(tmp_path, line)
    assert (got, warning) == (value, "")


def test_switches(tmp_path: Path) -> None:
    # a GPU switch is simply left out; a CPU switch (or a store_false GPU flag) is added
    assert _flag(tmp_path, "parser.add_argument('--use_gpu', action='store_true')") == (None, "", False)
    assert _flag(tmp_path, "parser.add_argument('--cpu', action='store_true')") == (None, "", True)
    assert _flag(tmp_path, "parser.add_argument('--cpu', dest='use_gpu', action='store_false')")[2]
    assert _flag(tmp_path, "parser.add_argument('--no-cuda', action='store_true')")[2]
    always = _flag(tmp_path, "parser.add_argument('--use_gpu', action='store_true', default=True)")
    assert always[0] is None and "always on" in always[1]


def test_gpu_id_maps_to_cpu_only_when_the_script_shows_it(tmp_path: Path) -> None:
    line = "parser.add_argument('--gpu_id', type=str, default='0')"
    exported = "\nimport os\nopt = get_args().parse_args()\nos.environ['CUDA_VISIBLE_DEVICES'] = opt.gpu_id\n"
    assert _flag(tmp_path, line, exported)[0] == "-1"
    compared = "\nargs = get_args().parse_args()\nif args.gpu_id < 0:\n    pass\n"
    assert _flag(tmp_path, line, compared)[0] == "-1"
    value, warning, _ = _flag(tmp_path, "parser.add_argument('--gpus', type=int, default=0)")
    assert value is None and "GPU id" in warning and "s.py:" in warning
    value, warning, _ = _flag(
        tmp_path, "parser.add_argument('--device', default='gpu', choices=['gpu', 'xpu'])"
    )
    assert value is None and "no cpu among its choices" in warning


def test_entry_script_from_the_command(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "train.py").write_text("", encoding="utf-8")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "infer.py").write_text("", encoding="utf-8")

    def step(*argv: str, cwd: str = ".") -> Step:
        return Step(id="s", stage=Stage.TRAIN, argv=argv, cwd=cwd)

    assert entry_script(step("python3.7", "-u", "tools/train.py", "-c", "a.yml"), tmp_path) == (
        2,
        tmp_path / "tools/train.py",
    )
    assert entry_script(step("python", "-m", "tools.train", "--x"), tmp_path) == (
        2,
        tmp_path / "tools/train.py",
    )
    launch = step("python", "-m", "paddle.distributed.launch", "--gpus=0,1", "tools/train.py")
    assert entry_script(launch, tmp_path) == (4, tmp_path / "tools/train.py")
    assert entry_script(step("python", "infer.py", cwd="deploy"), tmp_path) == (
        1,
        tmp_path / "deploy/infer.py",
    )
    assert entry_script(step("bash", "run.sh"), tmp_path) is None


TRAIN_PY = _script(
    "    parser.add_argument('--device', default='gpu', help='device')\n"
    "    parser.add_argument('--epochs', type=int, default=5)\n"
)
EXPORT_PY = _script("    parser.add_argument('--device', default='cpu')\n")
INFER_PY = _script("    parser.add_argument('--use-gpu', default=False, type=str2bool)\n")


def _compact(tmp_path: Path, config: str = COMPACT, **scripts: str) -> Plan:
    files = {
        CONFIG: config,
        "train.py": scripts.get("train", TRAIN_PY),
        "tools/export_model.py": scripts.get("export", EXPORT_PY),
        "deploy/infer.py": scripts.get("infer", INFER_PY),
    }
    repo = make_repo(tmp_path, files)
    return plan(repo / CONFIG, "lite_train_lite_infer", overrides=CPU)


def test_flag_added_where_the_script_defaults_to_gpu_and_only_there(tmp_path: Path) -> None:
    result = _compact(tmp_path)
    train, evaluate, export, infer = result.steps
    assert train.argv[:3] == ("python3.7", "train.py", "--device=cpu")
    assert evaluate.argv[:4] == ("python3.7", "train.py", "--device=cpu", "--test-only")
    assert "train.py --device=cpu --test-only" in evaluate.status_command
    assert not any(a.startswith("--device") for a in export.argv)  # its default already is the CPU
    assert "--use-gpu=False" in infer.argv
    notes = [f for f in result.findings if f.code == "TIPC900" and "train.py:" in f.message]
    assert len(notes) == 1 and notes[0].level is Level.INFO
    assert "added --device=cpu (--device at train.py:6, default 'gpu')" in notes[0].message
    assert notes[0].line == 14  # the norm_train line naming train.py
    assert Plan.from_json(json.loads(json.dumps(result.to_json()))) == result


def test_passed_value_is_rewritten_not_added_twice(tmp_path: Path) -> None:
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --device gpu")
    train = _compact(tmp_path, config).steps[0]
    assert train.argv[1:4] == ("train.py", "--device", "cpu") and "gpu" not in train.argv
    assert sum(a.startswith("--device") for a in train.argv) == 1
    assert "--device gpu" not in train.status_command and "--device cpu" in train.status_command
    # a value the script's flag names differently from the config's rewrite patterns
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --device=cuda")
    train = _compact(tmp_path / "c", config).steps[0]
    assert "--device=cpu" in train.argv and "--device=cuda" not in train.status_command
    switch = _script("    parser.add_argument('--use_gpu', action='store_true')\n")
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --use_gpu")
    train = _compact(tmp_path / "s", config, train=switch).steps[0]
    assert "--use_gpu" not in train.argv and "--use_gpu" not in train.status_command


def test_bool_flag_passed_false_is_still_true_for_argparse(tmp_path: Path) -> None:
    script = _script("    parser.add_argument('--cuda', type=bool, default=True)\n")
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --cuda False")
    result = _compact(tmp_path, config, train=script)
    assert "--cuda=" in result.steps[0].argv and "False" not in result.steps[0].argv


def test_no_evident_cpu_value_is_a_warning_and_the_command_is_kept(tmp_path: Path) -> None:
    script = _script("    parser.add_argument('--gpus', type=int, default=0)\n")
    result = _compact(tmp_path, train=script)
    assert result.steps[0].argv[:2] == ("python3.7", "train.py") and not result.steps[0].argv[2].startswith(
        "--gpus"
    )
    warnings = [f for f in result.findings if f.code == "TIPC901"]
    assert warnings and warnings[0].level is Level.WARNING and "train.py:6" in warnings[0].message


def test_flags_defined_in_an_imported_module(tmp_path: Path) -> None:
    helper = "def add_args(parser):\n    parser.add_argument('--use_gpu', type=str2bool, default=True)\n"
    script = (
        "import argparse\nfrom tools.program import add_args\n\nparser = argparse.ArgumentParser()\n"
        "add_args(parser)\n"
    )
    config = COMPACT.replace("norm_train:train.py", "norm_train:tools/train.py")
    repo = make_repo(
        tmp_path,
        {CONFIG: config, "tools/train.py": script, "tools/program.py": helper, "tools/__init__.py": ""},
    )
    train = plan(repo / CONFIG, "lite_train_lite_infer", overrides=CPU).steps[0]
    assert train.argv[:3] == ("python3.7", "tools/train.py", "--use_gpu=False")


def test_names_kept_and_multi_gpu_launch_not_applicable(tmp_path: Path) -> None:
    config = COMPACT.replace("gpu_list:0\n", "gpu_list:0|0,1|192.168.0.1,192.168.0.2;0,1\n")
    result = _compact(tmp_path, config)
    assert not any("gpus_-1" in json.dumps(s.to_json()) for s in result.steps)
    single = [s for s in result.steps if "/gpus_0/" in s.id]
    assert single and not any(s.not_applicable for s in single)
    assert "norm_train_gpus_0_autocast_False_nodes_1.log" in " ".join(single[0].argv)
    assert all("CUDA_VISIBLE_DEVICES" not in s.env_dict for s in single)
    others = [s for s in result.steps if s not in single]
    assert others and all(s.not_applicable for s in others)
    launches = [s for s in others if s.stage is Stage.TRAIN]
    assert len(launches) == 2 and all("paddle.distributed.launch" in s.argv for s in launches)
    assert "2 nodes" in launches[1].not_applicable
    assert not any("--device=cpu" in s.argv for s in others)  # not run: left as the script has them
    assert sum(f.code == "TIPC902" for f in result.findings) == 2
    shown = format_plan(result)
    assert shown.count("not applicable (planned, not run): gpu_list item") == len(others)


def test_second_single_device_item_would_repeat_the_cpu_run(tmp_path: Path) -> None:
    result = _compact(tmp_path, COMPACT.replace("gpu_list:0\n", "gpu_list:0|1\n"))
    assert [bool(s.not_applicable) for s in result.steps if s.stage is Stage.TRAIN] == [False, True]
    assert "repeat the CPU run of item '0'" in result.steps[-1].not_applicable


def test_template_use_gpu_items_stay_aligned_with_gpu_list(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"test_tipc/configs/demo/train_infer_python.txt": OCR_DET})
    result = plan(
        repo / "test_tipc/configs/demo/train_infer_python.txt", "lite_train_lite_infer", overrides=CPU
    )
    trains = [s for s in result.steps if s.stage is Stage.TRAIN]
    assert all("Global.use_gpu=False" in s.argv for s in trains)
    assert trains[0].status_log is not None and "gpus_0_" in trains[0].status_log


PROGRAM = """\
from argparse import ArgumentParser


class ArgsParser(ArgumentParser):
    def __init__(self):
        super().__init__()
        self.add_argument("-c", "--config", help="configuration file to use")
        self.add_argument("-o", "--opt", nargs="+", help="set configuration options")


def preprocess():
    return ArgsParser().parse_args()
"""
TRAIN_CFG = "from tools import program\n\nargs = program.preprocess()\n"


def _config_driven(tmp_path: Path, command: str, files: dict[str, str]) -> Step:
    config = COMPACT.replace("norm_train:train.py", f"norm_train:{command}")
    repo = make_repo(
        tmp_path,
        {
            CONFIG: config,
            "tools/__init__.py": "",
            "tools/program.py": PROGRAM,
            "tools/train.py": TRAIN_CFG,
            **files,
        },
    )
    return plan(repo / CONFIG, "lite_train_lite_infer", overrides=CPU).steps[0]


def test_config_driven_script_gets_the_yaml_key_as_an_option(tmp_path: Path) -> None:
    yml = {"configs/det.yml": "Global:\n  use_gpu: true\n  epoch_num: 5\n"}
    train = _config_driven(tmp_path, "tools/train.py -c configs/det.yml -o Global.epoch_num=1", yml)
    # nargs='+': a second -o would replace the first list, so the setting joins it
    assert train.argv[1:6] == ("tools/train.py", "-c", "configs/det.yml", "-o", "Global.use_gpu=False")
    assert (
        train.argv.count("-o") == 1 and "-o Global.use_gpu=False Global.epoch_num=1" in train.status_command
    )
    # a config that already runs on the CPU, and a value already passed, are left alone
    cpu = _config_driven(tmp_path / "c", "tools/train.py -c a.yml", {"a.yml": "Global:\n  use_gpu: false\n"})
    assert cpu.argv[1:4] == ("tools/train.py", "-c", "a.yml") and "-o" not in cpu.argv
    given = _config_driven(tmp_path / "g", "tools/train.py -c configs/det.yml -o Global.use_gpu=True", yml)
    assert [a for a in given.argv if "use_gpu" in a] == ["Global.use_gpu=False"]


def test_config_override_follows_base_includes_and_append_options(tmp_path: Path) -> None:
    files = {
        "configs/runtime.yml": "use_gpu: true\n",
        "configs/yolo.yml": "_BASE_: [\n  'runtime.yml',\n]\nepoch: 3\n",
        "tools/program.py": PROGRAM.replace('nargs="+"', 'action="append"'),
    }
    train = _config_driven(tmp_path, "tools/train.py -c configs/yolo.yml", files)
    assert train.argv[1:4] == ("tools/train.py", "-o", "use_gpu=False")
    files = {"a.yml": "Global:\n  device: gpu\n"}
    train = _config_driven(tmp_path / "d", "tools/train.py -c a.yml", files)
    assert train.argv[1:4] == ("tools/train.py", "-o", "Global.device=cpu")


def test_a_passed_gpu_id_without_cpu_value_does_not_stop_the_device_flag(tmp_path: Path) -> None:
    script = _script(
        "    parser.add_argument('--device', default='gpu')\n    parser.add_argument('--gpu_id', type=int)\n"
    )
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --gpu_id=0")
    result = _compact(tmp_path, config, train=script)
    assert result.steps[0].argv[1:4] == ("train.py", "--device=cpu", "--gpu_id=0")
    assert not any(f.code == "TIPC901" for f in result.findings)  # --device=cpu decides
    alone = _script("    parser.add_argument('--gpu_id', type=int)\n")
    result = _compact(tmp_path / "a", config, train=alone)
    assert result.steps[0].argv[1:3] == ("train.py", "--gpu_id=0")
    warned = {f.message.split(" [")[-1]: f.message for f in result.findings if f.code == "TIPC901"}
    assert "cannot rewrite --gpu_id=0" in warned["train/norm_train/gpus_0/autocast_False]"]
    assert "no device flag added" in warned["eval/norm_train/gpus_0/autocast_False]"]  # eval passes no id


def test_the_yaml_key_is_located_in_its_scope_and_foreign_yaml_is_read(tmp_path: Path) -> None:
    # a model's config, not tipc's: anchors, merge keys and custom tags are read as PyYAML reads them, and
    # the line named is the key's own (not the first `use_gpu:` anywhere in the file)
    yml = {
        "configs/det.yml": "Other:\n  use_gpu: false\nbase: &b\n  use_gpu: true\nGlobal:\n  <<: *b\n"
        "  epoch_num: 5\nOptimizer:\n  lr: !PiecewiseDecay {gamma: 0.1}\n"
    }
    train = _config_driven(tmp_path, "tools/train.py -c configs/det.yml", yml)
    assert train.argv[1:6] == ("tools/train.py", "-o", "Global.use_gpu=False", "-c", "configs/det.yml")
    from tipc.planning.device_flags import _yaml_device_keys

    assert _yaml_device_keys(tmp_path / "configs/det.yml") == {"Global.use_gpu": (True, "det.yml:4")}


def test_a_bool_flag_whose_choices_hold_no_false_value_is_a_warning(tmp_path: Path) -> None:
    value, warning, _ = _flag(tmp_path, "parser.add_argument('--use_gpu', choices=['yes', 'sure'])")
    assert value is None and "has no false value among its choices" in warning and "s.py:" in warning


def test_a_cpu_switch_is_added_bare_and_not_twice(tmp_path: Path) -> None:
    script = _script("    parser.add_argument('--cpu', action='store_true')\n")
    train = _compact(tmp_path, train=script).steps[0]
    assert train.argv[1:3] == ("train.py", "--cpu") and "train.py --cpu" in train.status_command
    config = COMPACT.replace("norm_train:train.py", "norm_train:train.py --cpu")
    train = _compact(tmp_path / "p", config, train=script).steps[0]
    assert train.argv.count("--cpu") == 1 and train.status_command.count("--cpu") == 1
