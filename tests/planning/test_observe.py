"""Plans observed from the repo's own script (tipc.planning.observe).

The real repos (shared/real-repos beside the checkout; TIPC_REAL_REPOS overrides) are unpacked into a fresh
folder under /tmp/observe; the corpus (shared/tipc-corpus) holds recorded observations of some of the same
scripts. Tests needing either skip with the reason when it is absent.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from tests.planning.test_corpus import CORPUS
from tipc.core.steps import Mode, Overrides, Stage
from tipc.execute.observation import observe, plan_for_run
from tipc.planning.corpus import Case, compare, iter_cases
from tipc.planning.observe import cross_check, script_identity
from tipc.planning.planner import plan

CHECKOUT = Path(__file__).resolve().parents[2]
DEMO = CHECKOUT / "examples" / "lenet_digits"
DEMO_CONFIG_REL = "test_tipc/configs/lenet_digits/train_infer_python.txt"
LITE = Mode.LITE_TRAIN_LITE_INFER
# The modes the demo's own script documents in its header (it has no legacy klquant branch).
DEMO_MODES = (
    Mode.LITE_TRAIN_LITE_INFER,
    Mode.LITE_TRAIN_WHOLE_INFER,
    Mode.WHOLE_TRAIN_WHOLE_INFER,
    Mode.WHOLE_INFER,
)


def _real_repos_dir() -> Path:
    return Path(os.environ.get("TIPC_REAL_REPOS", str(CHECKOUT.parent / "shared" / "real-repos")))


def tree_hash(root: Path) -> str:
    """Every path, link target and file content under `root`, in one digest."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        if path.is_symlink():
            digest.update(b"L" + os.readlink(path).encode())
        elif path.is_file():
            digest.update(b"F" + hashlib.sha256(path.read_bytes()).digest())
        else:
            digest.update(b"D")
    return digest.hexdigest()


@pytest.fixture(scope="module")
def real_repos() -> Iterator[dict[str, Path]]:
    source = _real_repos_dir()
    tarballs = sorted(source.glob("*.tar.gz")) if source.is_dir() else []
    if not tarballs:
        pytest.skip(f"real repos not found: {source} (set TIPC_REAL_REPOS)")
    Path("/tmp/observe").mkdir(exist_ok=True)
    where = Path(tempfile.mkdtemp(prefix="tests-", dir="/tmp/observe"))
    repos: dict[str, Path] = {}
    try:
        for tarball in tarballs:
            with tarfile.open(tarball) as archive:
                archive.extractall(where, filter="tar")
            name = tarball.name[: -len(".tar.gz")]
            repos[name] = where / name
        yield repos
    finally:
        shutil.rmtree(where, ignore_errors=True)


def _config_of(repo: Path) -> Path:
    configs = sorted((repo / "test_tipc" / "configs").glob("*/train_infer_python.txt"))
    assert configs, repo
    return configs[0]


# What each real repo's own script runs in lite_train_lite_infer (read from the scripts; see the real repos'
# README): number of commands, the folder its status log goes to, and whether eval/export logs are redirected.
REAL_LITE = {
    "PaddlePaddle__models__Step6": (10, "test_tipc/output/mobilenet_v3_small/lite_train_lite_infer", True),
    "Lieberk__Paddle-Cutpaste": (5, "test_tipc/output/resnet18/lite_train_lite_infer", False),
    "Lllllolita__CAN_Paddle": (10, "test_tipc/output", False),
    "liuxtakeoff__cutpaste_paddle": (5, "log/resnet18/lite_train_lite_infer", False),
    "sldyns__DnCNN_paddle": (5, "test_tipc/output/DnCNN", False),
}


@pytest.mark.integration
def test_real_repos_observed_in_lite_mode_and_left_byte_identical(real_repos: dict[str, Path]) -> None:
    assert set(REAL_LITE) <= set(real_repos)
    for name, (count, output_dir, eval_logged) in REAL_LITE.items():
        repo = real_repos[name]
        config = _config_of(repo)
        before = tree_hash(repo)
        obs = observe(config, LITE, repo=repo)
        assert tree_hash(repo) == before, f"{name}: observing changed the repo"
        result = obs.steps
        assert obs.complete and obs.why_nothing is None, (name, obs.script_output[-2000:])
        assert len(result.steps) == count, (name, [s.argv for s in result.steps])
        assert result.output_dir == output_dir, name
        python = next(
            line.split(":", 1)[1].strip()
            for line in config.read_text().splitlines()
            if line.startswith("python:")
        )
        stages = [s.stage for s in result.steps]
        assert stages[0] is Stage.TRAIN and Stage.OTHER not in stages, (name, stages)
        assert {Stage.TRAIN, Stage.EVAL, Stage.EXPORT, Stage.INFER} <= set(stages), name
        for step in result.steps:
            assert step.argv[0] == python, (name, step.argv)
            assert step.cwd == "."
            assert "tipc-observe" not in " ".join(step.argv) + step.status_command, step
            assert step.source_lines, step
            if step.stage is Stage.TRAIN:
                assert not step.depends_on
            else:
                assert step.depends_on and step.depends_on[0] in {s.id for s in result.steps}
            if step.stage in (Stage.EVAL, Stage.EXPORT):
                assert (step.log is not None) == eval_logged, (name, step)
            if step.stage is Stage.INFER:
                assert step.log is not None and step.log.endswith(".log"), (name, step)
                assert result.step(step.depends_on[0]).stage is Stage.EXPORT


def _corpus_cases_in_real_repos(repos: dict[str, Path]) -> list[tuple[Case, Path, Mode]]:
    """(case, real repo, mode) for each corpus config recorded from one of the real repos' scripts."""
    assert CORPUS is not None
    out: list[tuple[Case, Path, Mode]] = []
    for case in iter_cases(CORPUS):
        top = case.config.relative_to(CORPUS).parts[0]
        root = case.repo.relative_to((CORPUS / top).resolve())
        name = top if root.as_posix() == "." else f"{top}__{root.name}"
        real = repos.get(name)
        if real is None:
            continue
        script = (real / "test_tipc" / "test_train_inference_python.sh").read_bytes()
        if hashlib.sha256(script).hexdigest() != case.script_sha256:
            continue  # recorded from another version of the script
        out.extend((case, real, Mode(mode)) for mode in case.expected)
    return out


@pytest.mark.integration
def test_observed_plan_equals_the_corpus_recording_of_the_same_script(real_repos: dict[str, Path]) -> None:
    if CORPUS is None:
        pytest.skip("corpus not found: shared/tipc-corpus")
    cases = _corpus_cases_in_real_repos(real_repos)
    assert len({id(c) for c, _, _ in cases}) >= 3  # Step6's configs, Lieberk, DnCNN
    for case, real, mode in cases:
        rel = case.config.relative_to(case.repo)
        config = real / rel if (real / rel).is_file() else case.config
        obs = observe(config, mode, repo=real)
        result = compare(obs.steps, case.expected[mode])
        assert result.ok, (real.name, str(rel), mode, result.detail)


def test_demo_observed_plan_equals_the_profile_plan_in_every_mode() -> None:
    config = DEMO / DEMO_CONFIG_REL
    before = tree_hash(DEMO / "test_tipc")
    for mode in DEMO_MODES:
        profile = plan(config, mode, repo=DEMO)
        obs = observe(config, mode, repo=DEMO)
        assert obs.steps.steps, (mode, obs.why_nothing)
        assert cross_check(profile, obs.steps) == [], mode
        assert [s.stage for s in obs.steps.steps] == [s.stage for s in profile.steps]
        assert [s.log for s in obs.steps.steps] == [s.log for s in profile.steps]
        assert obs.steps.results_log == profile.results_log
        assert plan_for_run(config, mode, repo=DEMO).steps == profile.steps
    assert tree_hash(DEMO / "test_tipc") == before


def test_demo_klquant_mode_difference_is_a_finding() -> None:
    """The demo's script has no legacy klquant branch: it runs its chain, which the profile does not plan."""
    config = DEMO / DEMO_CONFIG_REL
    mode = Mode.KLQUANT_WHOLE_INFER
    diffs = cross_check(plan(config, mode, repo=DEMO), observe(config, mode, repo=DEMO).steps)
    assert diffs and {f.code for f in diffs} == {"TIPC040"}
    assert any(f.message.startswith("extra:") for f in diffs)


def test_device_cpu_and_set_are_applied_to_the_copied_config_only() -> None:
    config = DEMO / DEMO_CONFIG_REL
    before = config.read_bytes()
    overrides = Overrides(device="cpu", sets=(("epoch", "1"),))
    obs = observe(config, LITE, repo=DEMO, overrides=overrides)
    assert config.read_bytes() == before
    assert "--epochs=1" in obs.steps.steps[0].argv
    assert cross_check(plan(config, LITE, repo=DEMO, overrides=overrides), obs.steps) == []


# ---------------------------------------------------------------------------------------------------------
# edited scripts


def _demo_copy(tmp_path: Path, name: str) -> Path:
    repo = tmp_path / name
    (repo / "test_tipc" / "configs" / "lenet_digits").mkdir(parents=True)
    for rel in ("test_tipc/common_func.sh", "test_tipc/test_train_inference_python.sh", DEMO_CONFIG_REL):
        shutil.copyfile(DEMO / rel, repo / rel)
    return repo


def _edit(repo: Path, old: str, new: str) -> None:
    script = repo / "test_tipc" / "test_train_inference_python.sh"
    text = script.read_text()
    assert old in text
    script.write_text(text.replace(old, new, 1))


def test_edited_log_path_uses_the_observed_plan(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "logpath")
    _edit(repo, 'LOG_PATH="./test_tipc/output"', 'LOG_PATH="./log/${model_name}/${MODE}"')
    assert script_identity(repo) is None
    result = plan_for_run(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert result.output_dir == "log/lenet_digits/lite_train_lite_infer"
    assert result.results_log == "log/lenet_digits/lite_train_lite_infer/results_python.log"
    assert [s.stage for s in result.steps] == [Stage.TRAIN, Stage.EVAL, Stage.EXPORT, Stage.INFER]
    assert any(a.startswith("--output_dir=./log/lenet_digits/") for a in result.steps[0].argv)
    assert result.steps[1].log is not None and result.steps[1].log.startswith("log/lenet_digits/")
    codes = [f.code for f in result.findings]
    assert "TIPC041" in codes
    assert any(f.code == "TIPC040" and "output folder" in f.message for f in result.findings)


def test_script_sourcing_a_missing_author_path_runs_nothing_and_says_why(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "sourced")
    _edit(repo, "source test_tipc/common_func.sh", "source /home/author/x.sh")
    obs = observe(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert obs.steps.steps == ()
    assert obs.why_nothing is not None
    assert "/home/author/x.sh" in obs.why_nothing and "No such file or directory" in obs.why_nothing
    result = plan_for_run(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert result.steps == ()
    warning = [f for f in result.findings if f.code == "TIPC042"]
    assert warning and warning[0].level.value == "warning" and "/home/author/x.sh" in warning[0].message


THREE_COMMANDS = """\
#!/bin/bash
FILENAME=$1
MODE=$2
python=$(sed -n 3p $FILENAME | cut -d: -f2)
train_py=$(sed -n 16p $FILENAME | cut -d: -f2)
eval_py=$(sed -n 24p $FILENAME | cut -d: -f2)
infer_py=$(sed -n 40p $FILENAME | cut -d: -f2)
out=./output/${MODE}
mkdir -p $out
export FLAGS_use_mkldnn=0
${python} ${train_py} --output_dir=$out > $out/train.log 2>&1
${python} ${eval_py} --pretrained=$out/latest.pdparams > $out/eval.log 2>&1
cd deploy && CUDA_VISIBLE_DEVICES=3 ${python} ../${infer_py} --model_dir=../$out
"""


def test_three_command_script_is_planned_as_its_three_commands(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "three")
    (repo / "deploy").mkdir()
    (repo / "test_tipc" / "test_train_inference_python.sh").write_text(THREE_COMMANDS)
    result = plan_for_run(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert [s.stage for s in result.steps] == [Stage.TRAIN, Stage.EVAL, Stage.INFER]
    train, evaluate, infer = result.steps
    assert train.argv == (
        "python",
        "train.py",
        "--data_dir=./lite_data",
        "--seed=2024",
        "--output_dir=./output/lite_train_lite_infer",
    )
    assert train.log == "output/lite_train_lite_infer/train.log"
    assert train.env_dict["FLAGS_use_mkldnn"] == "0"
    assert evaluate.depends_on == (train.id,)
    # `../infer.py` is not the config's value `infer.py` word for word: labelled by its entry script, so it
    # is gated after train like any inference step and judged as inference
    assert infer.cwd == "deploy" and infer.env_dict["CUDA_VISIBLE_DEVICES"] == "3" and infer.log is None
    assert infer.id.startswith("infer/") and infer.depends_on
    assert any(f.code == "TIPC041" for f in result.findings)
    assert any(f.code == "TIPC040" and f.message.startswith("missing:") for f in result.findings)


def test_a_hanging_script_is_stopped_at_the_timeout(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "hang")
    script = repo / "test_tipc" / "test_train_inference_python.sh"
    script.write_text("#!/bin/bash\npython train.py\nread answer\nwhile true; do :; done\n")
    started = time.monotonic()
    obs = observe(repo / DEMO_CONFIG_REL, LITE, repo=repo, timeout_s=1)
    assert time.monotonic() - started < 120  # the script loops for ever: any bound says it was stopped
    assert obs.timed_out and not obs.complete
    assert [f.code for f in obs.findings if f.code == "TIPC043"] == ["TIPC043"]
    assert len(obs.steps.steps) == 1  # the command before the loop was recorded
    result = plan_for_run(repo / DEMO_CONFIG_REL, LITE, repo=repo, timeout_s=1)
    assert any(f.code == "TIPC043" for f in result.findings)
    assert result.steps == plan(repo / DEMO_CONFIG_REL, LITE, repo=repo).steps  # the profile plan


def test_no_script_gives_the_profile_plan(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "noscript")
    (repo / "test_tipc" / "test_train_inference_python.sh").unlink()
    config = repo / DEMO_CONFIG_REL
    assert plan_for_run(config, LITE, repo=repo) == plan(config, LITE, repo=repo)


@pytest.mark.timing  # a wall-time limit: judged in the timing tier, alone on the machine
def test_observing_is_cheap() -> None:
    config = DEMO / DEMO_CONFIG_REL
    obs = observe(config, LITE, repo=DEMO)
    assert obs.script_s < 5 and obs.duration_s < 10, (obs.script_s, obs.duration_s)


def test_an_absolute_interpreter_is_recorded_and_never_runs_user_code(tmp_path: Path) -> None:
    import sys

    repo = _demo_copy(tmp_path, "abspy")
    (repo / "train.py").write_text("open('RAN', 'w').write('yes')\n")
    script = repo / "test_tipc" / "test_train_inference_python.sh"
    script.write_text(
        "#!/bin/bash\n"
        "export PYTHONPATH=./:$PYTHONPATH\n"
        f"{sys.executable} train.py --data_dir=./lite_data --seed=2024\n"
        f"{sys.executable} -c 'import sys'\n"
        'echo -e "\\033[33m Run successfully with command - '
        f'{sys.executable} train.py --data_dir=./lite_data --seed=2024!  \\033[0m"\n'
    )
    obs = observe(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert not (repo / "RAN").exists()
    assert [s.argv for s in obs.steps.steps] == [
        (sys.executable, "train.py", "--data_dir=./lite_data", "--seed=2024")
    ]
    step = obs.steps.steps[0]
    assert step.stage is Stage.TRAIN and step.env_dict == {"PYTHONPATH": "./"}
    assert step.status_command == f"{sys.executable} train.py --data_dir=./lite_data --seed=2024"
    assert obs.ignored == (f"{sys.executable} -c 'import sys'",)


def test_tipc_init_wrapper_is_planned_by_its_declared_profile(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "wrapper")
    template = (CHECKOUT / "test_tipc_template" / "test_train_inference_python.sh.j2").read_text()
    (repo / "test_tipc" / "test_train_inference_python.sh").write_text(
        template.replace("{{ dialect }}", "template")
    )
    config = repo / DEMO_CONFIG_REL
    assert plan_for_run(config, LITE, repo=repo) == plan(config, LITE, repo=repo)
    obs = observe(config, LITE, repo=repo)  # `tipc` is an inert stand-in: no real run starts
    assert (
        obs.steps.steps == () and obs.why_nothing is not None and "tipc-dialect: template" in obs.why_nothing
    )
    assert not (repo / "test_tipc" / "output").exists()


def test_a_script_that_does_not_parse_says_so(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "broken")
    (repo / "test_tipc" / "test_train_inference_python.sh").write_text("#!/bin/bash\nif [ -n x ]; then\n")
    obs = observe(repo / DEMO_CONFIG_REL, LITE, repo=repo)
    assert obs.steps.steps == () and obs.exit_code != 0
    assert obs.why_nothing is not None and "syntax error" in obs.why_nothing


def test_an_absolute_interpreter_in_the_config_need_not_exist_here(tmp_path: Path) -> None:
    repo = _demo_copy(tmp_path, "abscfg")
    config = repo / DEMO_CONFIG_REL
    config.write_text(config.read_text().replace("python:python\n", "python:/opt/author/bin/python3.7\n", 1))
    obs = observe(config, LITE, repo=repo)
    assert len(obs.steps.steps) == 4, obs.why_nothing
    for step in obs.steps.steps:
        assert step.argv[0] == "/opt/author/bin/python3.7"
        assert step.status_command.startswith("/opt/author/bin/python3.7 ")
    assert cross_check(plan(config, LITE, repo=repo), obs.steps) == []


def test_a_status_line_log_is_kept_only_where_it_is_not_the_stdout_log(tmp_path: Path) -> None:
    from tipc.planning.observe import _Builder, _Status

    root, repo = tmp_path / "copy", tmp_path / "repo"
    # Only the path spelling is exercised: the config objects are not read by status_log_of.
    builder = _Builder(
        config=repo / "c.txt",
        mode=LITE,
        repo=repo,
        root=root,
        tools=tmp_path / "tools",
        cfg=None,  # type: ignore[arg-type]
        parsed=None,  # type: ignore[arg-type]
        start_env={},
        abs_python=None,
        overrides=Overrides(),
    )

    def status(log: str | None) -> _Status:
        return _Status("python x.py", log, "ocr", None)

    assert builder.status_log_of(None, "out/a.log") is None
    assert builder.status_log_of(status(None), "out/a.log") is None
    assert builder.status_log_of(status(f"{root}/out/train.log"), None) == "out/train.log"
    assert builder.status_log_of(status(f" {root}/out/train.log "), "out/train.log") is None
    assert builder.status_log_of(status("././out/eval.log"), "out/train.log") == "out/eval.log"
    assert builder.status_log_of(status("/elsewhere/x.log"), None) == "/elsewhere/x.log"


def test_the_observed_plan_runs_when_a_known_script_runs_other_commands(tmp_path: Path) -> None:
    """A known script (by fingerprint) whose run differs from its profile's plan (a Paddle3D config, a
    PaddleSeg fleet config) runs what the script runs, the differences listed; agreeing, the profile plan."""
    from tipc.planning.observe import choose_plan

    repo = _demo_copy(tmp_path, "known")
    (repo / "deploy").mkdir()
    (repo / "test_tipc" / "test_train_inference_python.sh").write_text(THREE_COMMANDS)
    config = repo / DEMO_CONFIG_REL
    profile = plan(config, LITE, repo=repo)
    obs = observe(config, LITE, repo=repo)
    chosen = choose_plan(
        profile, obs, known=("template", "script fingerprint 0123"), overrides=Overrides(), repo=repo
    )
    assert chosen.steps == obs.steps.steps and chosen.steps != profile.steps
    note = next(f for f in chosen.findings if f.code == "TIPC041")
    assert "is the template script (script fingerprint 0123), but it runs other commands" in note.message
    assert any(f.code == "TIPC040" for f in chosen.findings)
    same = observe(config, LITE, repo=_demo_copy(tmp_path, "same"))
    agreeing = choose_plan(
        profile, replace(same, steps=profile), known=None, overrides=Overrides(), repo=repo
    )
    assert agreeing.steps == profile.steps


def test_agreeing_commands_keep_what_the_script_exported_for_them(tmp_path: Path) -> None:
    """CAN_Paddle's script exports PYTHONPATH=<repo> before its commands: its whole_infer commands match the
    profile's, and the profile plan chosen then lost the variable (the export failed: no module 'models')."""
    from tipc.planning.observe import choose_plan

    repo = _demo_copy(tmp_path, "env")
    config = repo / DEMO_CONFIG_REL
    profile = plan(config, LITE, repo=repo)
    obs = observe(config, LITE, repo=repo)
    exported = replace(
        profile,
        steps=tuple(replace(s, env=(*s.env, ("PYTHONPATH", str(repo)))) for s in profile.steps),
    )
    chosen = choose_plan(profile, replace(obs, steps=exported), known=None, overrides=Overrides(), repo=repo)
    assert [s.id for s in chosen.steps] == [s.id for s in profile.steps]  # still the profile's steps
    assert all(dict(s.env)["PYTHONPATH"] == str(repo) for s in chosen.steps)


def test_a_command_is_labelled_by_its_entry_script_or_its_log() -> None:
    from tipc.planning.observe import stage_of_command

    cases = {
        ("python", "../infer.py", "--model_dir=x"): Stage.INFER,
        ("python", "deploy/inference_python/infer.py"): Stage.INFER,
        ("python3.7", "tools/infer/predict_det.py", "-c", "x.yml"): Stage.INFER,
        ("python", "tools/export_model.py"): Stage.EXPORT,
        ("python", "-m", "tools.train", "-c", "x.yml"): Stage.TRAIN,
        ("python", "val.py"): Stage.OTHER,  # no stage word: the log decides, else other
        ("python", "main.py"): Stage.OTHER,
    }
    for argv, stage in cases.items():
        assert stage_of_command(argv) is stage, argv
    assert stage_of_command(("python", "main.py"), "output/python_infer_cpu_batchsize_1.log") is Stage.INFER
    assert stage_of_command(("python", "tools/eval.py"), "train.log") is Stage.EVAL  # the script first


def test_a_misplaced_key_on_a_line_the_script_runs_as_its_command_is_a_warning(tmp_path: Path) -> None:
    from tipc.core.findings import Level
    from tipc.planning.lint import lint_paths
    from tipc.planning.observe import misplaced_keys_read_as_commands

    repo = _demo_copy(tmp_path, "key")
    config = repo / DEMO_CONFIG_REL
    text = config.read_text()
    assert "\nnorm_export:export_model.py\n" in text
    config.write_text(text.replace("\nnorm_export:export_model.py\n", "\nexport_train:export_model.py\n"))
    found = [f for f in lint_paths([config]) if f.code == "TIPC105"]
    assert [(f.line, f.level) for f in found] == [(30, Level.ERROR)]  # a trainer key in the export block
    runs = plan_for_run(config, LITE, repo=repo)
    judged = misplaced_keys_read_as_commands(found, runs)
    assert [(f.line, f.level) for f in judged] == [(30, Level.WARNING)]
    assert "the repo's script reads this line as its export command" in judged[0].message
    # a key in a parameter slot stays an error: the line is no command the plan runs
    shifted = replace(found[0], line=29)
    assert misplaced_keys_read_as_commands([shifted], runs)[0].level is Level.ERROR
