"""Documented commands as a plan: which docs, which blocks, what each command is and what it needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tipc.core.errors import ConfigError
from tipc.core.steps import Overrides, Stage
from tipc.planning import docs_vocab
from tipc.planning.documented.model import DocCommand, Documented, Kind
from tipc.planning.documented.plan import plan_documented
from tipc.planning.documented.reading import code_blocks, logical_lines
from tipc.planning.documented.words import split_segments

DEMO = Path(__file__).resolve().parents[2] / "examples" / "lenet_digits"
DEMO_CONFIG = DEMO / "test_tipc" / "configs" / "lenet_digits" / "train_infer_python.txt"


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _by_text(documented: Documented, start: str) -> DocCommand:
    return next(c for c in documented.commands if c.text.startswith(start))


# ------------------------------------------------------------------------------------- reading a doc


def test_code_blocks_keep_lines_and_info_strings() -> None:
    text = "intro\n```bash\npython a.py \\\n  --x=1\n```\n  ~~~\n  out\n  ~~~\n```python\nimport a\n```\n"
    blocks = code_blocks(text)
    assert [(b.line, b.info) for b in blocks] == [(2, "bash"), (6, ""), (9, "python")]
    lines = logical_lines(blocks[0], docs_vocab.load())
    assert lines == [(3, "python a.py --x=1", False)]


def test_prompts_are_removed_and_comments_dropped() -> None:
    block = code_blocks("```\n$ python t.py\n> python e.py\n# a comment\nloss: 1.0\n```\n")[0]
    assert [t for _, t, _ in logical_lines(block, docs_vocab.load())] == [
        "python t.py",
        "python e.py",
        "loss: 1.0",
    ]


def test_segments_split_at_and_semicolon_and_background() -> None:
    segs = split_segments("cd /tmp && curl -O http://x/a.zip; python s.py --p 8 & python c.py 2>&1 | tee l")
    assert [(s.text, s.background, s.shell) for s in segs] == [
        ("cd /tmp", False, False),
        ("curl -O http://x/a.zip", False, False),
        ("python s.py --p 8", True, False),
        ("python c.py 2>&1 | tee l", False, True),
    ]
    assert split_segments("echo 'a && b' # note")[0].text == "echo 'a && b'"


# ------------------------------------------------------------------------------------- the demo


def test_demo_commands_are_planned_in_doc_order_with_their_needs() -> None:
    documented = plan_documented(
        DEMO, model_name="lenet_digits", config=DEMO_CONFIG, overrides=Overrides(device="cpu")
    )
    plan = documented.plan
    assert plan.chain == "documented" and plan.output_dir == "test_tipc/output/lenet_digits/documented"
    assert documented.docs[0] == "README.md"
    run = [c for c in documented.commands if c.kind is Kind.RUN]
    assert [c.purpose for c in run][:6] == ["data", "train", "eval", "predict", "export", "infer"]
    infer = plan.step(_by_text(documented, "python infer.py").step_id)
    export = next(c for c in documented.commands if c.text.endswith("--save_inference_dir=./inference"))
    assert infer.depends_on == (export.step_id,)
    # the TIPC scripts are the chain, run by tipc itself; what reads their output waits for them
    chain = [c for c in documented.commands if c.kind is Kind.CHAIN]
    assert chain and all(plan.step(c.step_id).not_applicable for c in chain)
    compare = plan.step(_by_text(documented, "python test_tipc/compare_results.py").step_id)
    assert compare.depends_on and compare.depends_on[0] in {c.step_id for c in chain}
    # the serving doc: the server in the background, polled; the client waits for it
    server = plan.step(_by_text(documented, "python -m tipc serve").step_id)
    client = plan.step(_by_text(documented, "python pipeline_http_client.py").step_id)
    assert server.background and server.stage is Stage.SERVE and server.cwd == "deploy/serving_python"
    assert server.ready_url == "http://127.0.0.1:18093/v2/health/ready"
    assert server.id in client.depends_on and client.stage is Stage.CLIENT
    # output blocks (the training log, the eval output) are not commands
    assert not any(c.text.startswith(("[Epoch", "image_name", "{")) for c in documented.commands)


# ------------------------------------------------------------------------------------- a real-shaped README

README = """\
# Model

| model | top-1 acc | weights |
|---|---|---|
| m | 0.71 | [link](https://x/w.pdparams) |

```bash
git clone https://github.com/someone/the_model.git
cd the_model
pip install -r requirements.txt
wget https://example.com/models/model_best.pdparams
tar -xf test_images/lite_data.tar
```

```
python train.py --data-path=/data/ILSVRC2012 --epochs 120
[Epoch 1] loss: 6.9
```

```shell
export CUDA_VISIBLE_DEVICES=0,1
python -m paddle.distributed.launch --gpus="0,1" train.py --data-path=/data/ILSVRC2012
python eval.py --data-path=/data/ILSVRC2012 --pretrained=./model_best.pdparams
python predict.py --pretrained your_model_path --img images/a.jpg
|--train.sh
visualdl --logdir ./logs
bash test_tipc/test_train_inference_python.sh test_tipc/configs/m/train_infer_python.txt lite_train_lite_infer
```
"""

CONFIG = """\
===========================train_params===========================
model_name:m
python:python3.7
gpu_list:0
--data-path:./lite_data
norm_train:train.py
"""


@pytest.fixture
def shaped(tmp_path: Path) -> Path:
    return _write(
        tmp_path / "the_model",
        {
            "README.md": README,
            "requirements.txt": "numpy\npaddlepaddle>=2.2\n",
            "train.py": "import argparse\n",
            "eval.py": "",
            "predict.py": "",
            "test_images/lite_data.tar": "",
            "test_tipc/configs/m/train_infer_python.txt": CONFIG,
        },
    )


def test_setup_commands_are_listed_with_what_they_fetch(shaped: Path) -> None:
    documented = plan_documented(
        shaped, model_name="m", config=shaped / "test_tipc/configs/m/train_infer_python.txt"
    )
    kinds = {c.text: c for c in documented.commands}
    pip = kinds["pip install -r requirements.txt"]
    assert pip.kind is Kind.SETUP and "numpy, paddlepaddle>=2.2" in pip.why and "--network" in pip.why
    wget = kinds["wget https://example.com/models/model_best.pdparams"]
    assert (
        wget.kind is Kind.SETUP
        and "would download https://example.com/models/model_best.pdparams" in wget.why
    )
    # `cd the_model` after cloning this repo is the repo itself
    assert kinds["tar -xf test_images/lite_data.tar"].cwd == "."
    with_network = plan_documented(shaped, model_name="m", network=True)
    assert not with_network.plan.step(wget.step_id).not_applicable


def test_a_full_dataset_is_replaced_by_the_lite_data_and_said(shaped: Path) -> None:
    config = shaped / "test_tipc/configs/m/train_infer_python.txt"
    documented = plan_documented(shaped, model_name="m", config=config)
    train = _by_text(documented, "python train.py --data-path=/data/ILSVRC2012 --epochs 120")
    step = documented.plan.step(train.step_id)
    assert "--data-path=./lite_data" in step.argv and not step.not_applicable
    # ./lite_data comes out of the documented tar
    tar = _by_text(documented, "tar -xf")
    assert step.depends_on == (tar.step_id,)
    (sub,) = documented.substitutions_of(train.step_id)
    assert sub.written == "/data/ILSVRC2012" and sub.used == "./lite_data"
    assert sub.source == "test_tipc/configs/m/train_infer_python.txt:5"


def test_what_needs_an_offline_download_is_not_applicable_with_the_reason(shaped: Path) -> None:
    documented = plan_documented(shaped, model_name="m", overrides=Overrides(device="cpu"))
    plan = documented.plan
    ev = plan.step(_by_text(documented, "python eval.py").step_id)
    wget = _by_text(documented, "wget")
    assert ev.depends_on == (wget.step_id,)  # skipped with the wget's reason
    launch = plan.step(_by_text(documented, "python -m paddle.distributed.launch").step_id)
    assert "multi-device launch" in launch.not_applicable
    assert dict(launch.env)["CUDA_VISIBLE_DEVICES"] == "0,1"
    template = _by_text(documented, "python predict.py")
    assert template.kind is Kind.TEMPLATE and "your_model_path" in template.why
    assert _by_text(documented, "visualdl").kind is Kind.OUTSIDE
    assert _by_text(documented, "bash test_tipc/").kind is Kind.CHAIN
    assert not any(c.text.startswith(("|--", "[Epoch")) for c in documented.commands)


def test_a_multi_device_launch_is_not_run_on_a_machine_without_a_gpu(shaped: Path) -> None:
    """The docs are right for a GPU machine: a launch that aborts for want of GPUs is not the repo's
    failure (on DnCNN_paddle `paddle.distributed.launch --selected_gpus '0,1'` failed its docs)."""

    def launch(gpus: bool | None) -> str:
        documented = plan_documented(shaped, model_name="m", gpus=gpus)
        step = documented.plan.step(_by_text(documented, "python -m paddle.distributed.launch").step_id)
        return step.not_applicable

    assert "on a machine without a GPU" in launch(False)
    for known in (True, None):  # with a GPU, or not known: planned as written (its data is another matter)
        assert "GPU" not in launch(known) and "multi-device" not in launch(known)


def test_a_missing_weights_file_after_a_documented_download_is_not_applicable(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "r",
        {
            "README.md": "```bash\nwget https://x/m_pretrained.pdparams\n"
            "python eval.py --pretrained=./other.pdparams\n"
            "python eval.py --img ./images/typo.png\n```\n",
            "eval.py": "",
            "images/a.png": "",
        },
    )
    documented = plan_documented(repo, model_name="m")
    other = documented.plan.step(_by_text(documented, "python eval.py --pretrained").step_id)
    assert (
        "the docs download weights" in other.not_applicable
        and "cannot happen offline" in other.not_applicable
    )
    # a file missing inside a folder the repo ships is a typo: it runs, and fails with its own error
    typo = documented.plan.step(_by_text(documented, "python eval.py --img").step_id)
    assert not typo.not_applicable


def test_without_the_sandbox_documented_commands_do_not_run(shaped: Path) -> None:
    documented = plan_documented(shaped, model_name="m", sandboxed=False)
    tar = documented.plan.step(_by_text(documented, "tar -xf").step_id)
    assert "only in tipc's sandbox" in tar.not_applicable


def test_a_deploy_doc_with_no_python_chain_command_is_listed_not_run(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "r",
        {
            "README.md": "```bash\npython train.py\n```\n",
            "train.py": "",
            "deploy/cpp/README.md": "```bash\nmkdir build\ncmake ..\n```\n",
        },
    )
    documented = plan_documented(repo, model_name="m")
    mkdir = _by_text(documented, "mkdir build")
    assert mkdir.kind is Kind.OUTSIDE and "another deployment" in mkdir.why


def test_repeated_commands_run_once(tmp_path: Path) -> None:
    repo = _write(
        tmp_path / "r", {"README.md": "```\n$ python e.py\nout\n```\n```bash\npython e.py\n```\n", "e.py": ""}
    )
    documented = plan_documented(repo, model_name="m")
    assert [c.kind for c in documented.commands] == [Kind.RUN, Kind.REPEAT]
    assert len(documented.plan.steps) == 1


def test_a_broken_vocabulary_is_a_located_error(tmp_path: Path) -> None:
    text = (
        docs_vocab.default_path().read_text(encoding="utf-8").replace("prompts: ['\\$\\s+'", "prompts: ['(('")
    )
    bad = tmp_path / "commands.yaml"
    bad.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        docs_vocab.load(bad)
    assert info.value.line is not None and "regular expression" in info.value.message
