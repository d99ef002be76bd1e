"""tipc.planning.planner.isolate: known writes outside output_dir are redirected into it; the faithful plan
is kept."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from pathlib import Path

import pytest

from tests.planning.test_corpus import CORPUS
from tipc.core.findings import Level
from tipc.core.steps import Mode, Plan, Stage, Step
from tipc.planning.corpus import Case, compare, iter_cases
from tipc.planning.planner import ISOLATED_DIR, isolate, plan

DEMO_CONFIG = (
    Path(__file__).resolve().parents[2]
    / "examples/lenet_digits/test_tipc/configs/lenet_digits/train_infer_python.txt"
)


def _under(path: str, plan_: Plan) -> bool:
    root = plan_.repo.rstrip("/") + "/"
    rel = path[len(root) :] if path.startswith(root) else path
    rel = posixpath.normpath(rel)
    out = posixpath.normpath(plan_.output_dir)
    return rel == out or rel.startswith(out + "/")


def _cases() -> list[Case]:
    if CORPUS is None:
        pytest.skip("corpus not found: shared/tipc-corpus")
    return list(iter_cases(CORPUS))


def _check_isolated(faithful: Plan, iso: Plan) -> Counter[str]:
    """Asserts the isolation invariants; returns the TIPC910/911 counts."""
    assert iso.isolated and not faithful.isolated
    assert [s.id for s in iso.steps] == [s.id for s in faithful.steps]
    assert isolate(iso) == iso  # idempotent
    warned = {f.message.split(":", 1)[0] for f in iso.findings if f.code == "TIPC911"}
    for step in iso.steps:
        if step.log:
            assert _under(step.log, iso), (step.id, step.log)
        for _key, path in step.writes:
            if step.id not in warned:
                assert _under(path, iso), (step.id, path)
    counts: Counter[str] = Counter()
    for finding in iso.findings[len(faithful.findings) :]:
        counts[finding.code] += 1
        assert finding.code in ("TIPC910", "TIPC911"), finding.format()
        assert finding.level is (Level.INFO if finding.code == "TIPC910" else Level.WARNING)
        if finding.code == "TIPC910":
            new = re.search(r"tipc (?:writes|logs to) (\S+) instead", finding.message)
            assert new is not None and _under(new.group(1).removeprefix("./"), iso), finding.message
    # every rewritten argument lives under <output_dir>/tipc_isolated and nothing else changed shape
    for before, after in zip(faithful.steps, iso.steps, strict=True):
        assert len(before.argv) == len(after.argv)
        for old, rewritten in zip(before.argv, after.argv, strict=True):
            if old != rewritten:
                assert f"/{ISOLATED_DIR}/" in rewritten, (after.id, old, rewritten)
                assert f"{faithful.output_dir}/{ISOLATED_DIR}/" in rewritten
    return counts


def test_every_corpus_plan_isolates_into_its_output_dir() -> None:
    per_dialect: dict[str, Counter[str]] = {}
    for case in _cases():
        for mode in case.expected:
            faithful = plan(case.config, mode, repo=case.repo, dialect=case.dialect)
            iso = isolate(faithful)
            counts = _check_isolated(faithful, iso)
            per_dialect.setdefault(faithful.dialect, Counter()).update(counts)
            # the faithful plan is untouched: it still matches the commands the repo's script logged
            assert compare(faithful, case.expected[mode]).ok, case.name
            assert plan(case.config, mode, repo=case.repo, dialect=case.dialect) == faithful
    # whole_infer exports outside the output folder are in the corpus (Det ./output_inference, Seg and Video
    # into the folder of infer_model, compact save_inference_dir, fastflow's exp_dir) and are redirected
    # justld/DMNet_paddle's inference passes --save_dir=./test_tipc/results, outside test_tipc/output
    for name in ("det", "seg", "video", "compact", "compact_fastflow", "template_dmnet"):
        assert per_dialect[name]["TIPC910"] > 0, (name, per_dialect[name])
    # PaddleSpeech passes no save dir to training/export (null keys), PaddleC3D's copy drops the arguments
    # from its command shapes: both write where their scripts default to, which is reported
    assert per_dialect["speech"]["TIPC911"] > 0
    assert per_dialect["template_c3d"]["TIPC911"] > 0


def test_clas_kl_quant_command_is_reported_as_unknown(tmp_path: Path) -> None:
    case = next(c for c in _cases() if c.dialect == "clas")
    lines = case.config.read_text(encoding="utf-8").splitlines()
    lines[33] = "kl_quant:deploy/slim/quant_post_static.py -c x.yaml -o Global.save_inference_dir=./deploy/m"
    config = tmp_path / "test_tipc" / "configs" / "m" / "train_infer_python.txt"
    config.parent.mkdir(parents=True)
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    iso = isolate(plan(config, "whole_infer", repo=tmp_path, dialect="clas"))
    (warning,) = [f for f in iso.findings if f.code == "TIPC911"]
    assert warning.message.startswith("quant/whole_infer/kl_quant: the KL-quant command of line 34")


def test_isolated_plans_write_nothing_outside_output_dir_for_the_demo() -> None:
    for dialect in ("template", "ocr"):
        for mode in ("lite_train_lite_infer", "whole_infer"):
            faithful = plan(DEMO_CONFIG, mode, dialect=dialect)
            counts = _check_isolated(faithful, isolate(faithful))
            assert counts["TIPC911"] == 0
    faithful = plan(DEMO_CONFIG, "whole_infer", dialect="template")
    iso = isolate(faithful)
    export, infer = iso.steps
    out = f"./{faithful.output_dir}/{ISOLATED_DIR}/pretrained"
    assert f"--save_inference_dir={out}" in export.argv
    assert "--pretrained=./pretrained/lenet_digits_pretrained.pdparams" in export.argv  # reads stay
    assert f"--model_dir={out}" in infer.argv and f"--model_dir={out} " in infer.status_command
    assert export.status_command.endswith(f"--save_inference_dir={out}")
    (note,) = [f for f in iso.findings if f.code == "TIPC910"]
    assert "--save_inference_dir=./pretrained" in note.message and infer.id in note.message
    # the faithful plan still says what the script does
    assert "--save_inference_dir=./pretrained" in faithful.steps[0].argv


def test_ocr_sibling_export_log_moves_into_the_output_dir() -> None:
    faithful = plan(DEMO_CONFIG, "whole_infer", dialect="ocr")
    assert faithful.steps[0].log == "test_tipc/output/lenet_digits/whole_infer_export_0.log"
    export = isolate(faithful).steps[0]
    assert (
        export.log
        == export.status_log
        == "test_tipc/output/lenet_digits/whole_infer/whole_infer_export_0.log"
    )
    assert (
        "> ./test_tipc/output/lenet_digits/whole_infer/whole_infer_export_0.log 2>&1" in export.status_command
    )


def _plan(*steps: Step, output_dir: str = "test_tipc/output/m/whole_infer") -> Plan:
    return Plan(
        config_path="c.txt",
        repo="/r",
        mode=Mode.WHOLE_INFER,
        dialect="x",
        model_name="m",
        output_dir=output_dir,
        results_log=f"{output_dir}/results_python.log",
        status_format="template",
        steps=steps,
    )


def test_unknown_and_unredirectable_writes_are_reported() -> None:
    quant = Step(
        "quant", Stage.QUANT, ("python", "q.py"), status_command="python q.py", writes_unknown="free-form"
    )
    other_cwd = Step(
        "export",
        Stage.EXPORT,
        ("python", "e.py", "--out=../models"),
        cwd="deploy",
        status_command="python e.py --out=../models",
        writes=(("--out", "../models"),),
    )
    missing_arg = Step(
        "export2",
        Stage.EXPORT,
        ("python", "e.py"),
        status_command="python e.py",
        writes=(("--out", "test_tipc/output/m/whole_infer/x"),),  # inside, but not passed: default dir
    )
    iso = isolate(_plan(quant, other_cwd, missing_arg))
    assert iso.steps == (quant, other_cwd, missing_arg)
    warnings = [f for f in iso.findings if f.code == "TIPC911"]
    assert [f.message.split(":")[0] for f in warnings] == ["quant", "export", "export2"]
    assert all(f.level is Level.WARNING for f in warnings)


def test_paths_are_matched_on_boundaries_and_children_follow() -> None:
    export = Step(
        "export",
        Stage.EXPORT,
        ("python", "e.py", "-o", "Global.save_inference_dir=./inference/det/"),
        status_command="python e.py -o Global.save_inference_dir=./inference/det/",
        writes=(("-o Global.save_inference_dir", "./inference/det/"),),
    )
    infer = Step(
        "infer",
        Stage.INFER,
        ("python", "i.py", "--model_dir=./inference/det/sub", "--other=./inference/detx"),
        status_command="python i.py --model_dir=./inference/det/sub --other=./inference/detx > l.log 2>&1 ",
        depends_on=("export",),
    )
    unrelated = Step(
        "infer2", Stage.INFER, ("python", "i.py", "--model_dir=./inference/det"), status_command="x"
    )
    iso = isolate(_plan(export, infer, unrelated))
    new = "./test_tipc/output/m/whole_infer/tipc_isolated/inference/det"
    assert iso.steps[0].argv[-1] == f"Global.save_inference_dir={new}"
    assert iso.steps[0].status_command.endswith(f"-o Global.save_inference_dir={new}")
    assert iso.steps[1].argv[2:] == (f"--model_dir={new}/sub", "--other=./inference/detx")
    assert f"--model_dir={new}/sub --other=./inference/detx >" in iso.steps[1].status_command
    assert iso.steps[2] == unrelated  # not a consumer of the export: left alone
    assert iso.steps[0].writes == (("-o Global.save_inference_dir", new),)


def test_paths_outside_the_repo_get_their_own_folders() -> None:
    steps = tuple(
        Step(
            f"e{n}",
            Stage.EXPORT,
            ("python", "e.py", f"--out={path}"),
            status_command=f"python e.py --out={path}",
            writes=(("--out", path),),
        )
        for n, path in enumerate(("/abs/models", "../up", ".", "/r/models"))
    )
    iso = isolate(_plan(*steps))
    base = "./test_tipc/output/m/whole_infer/tipc_isolated"
    assert [s.argv[-1] for s in iso.steps] == [
        f"--out={base}/abs/abs/models",
        f"--out={base}/__/up",
        f"--out={base}/repo_root",
        f"--out={base}/models",
    ]


def test_a_path_passed_after_its_flag_is_rewritten_too() -> None:
    # PaddleGAN passes `<save_infer_key> <dir>` as two words
    export = Step(
        "export",
        Stage.EXPORT,
        ("python", "e.py", "--output_dir", "./out"),
        status_command="python e.py --output_dir ./out > l.log 2>&1",
        writes=(("--output_dir", "./out"),),
    )
    (step,) = isolate(_plan(export)).steps
    new = "./test_tipc/output/m/whole_infer/tipc_isolated/out"
    assert step.argv[-2:] == ("--output_dir", new)
    assert step.status_command == f"python e.py --output_dir {new} > l.log 2>&1"


def test_an_isolated_plan_survives_the_run_record_round_trip() -> None:
    iso = isolate(plan(DEMO_CONFIG, "whole_infer", dialect="template"))
    again = Plan.from_json(iso.to_json())
    assert again == iso and again.isolated and again.steps[0].writes == iso.steps[0].writes
    assert isolate(again) == again


def test_an_export_into_an_ancestor_of_output_dir_leaves_output_dir_paths_alone() -> None:
    # PaddleSeg's whole_infer exports into ./test_tipc/output/<model>, the parent of output_dir
    export = Step(
        "export",
        Stage.EXPORT,
        ("python", "export.py", "--save_dir=./test_tipc/output/m"),
        status_command="python export.py --save_dir=./test_tipc/output/m",
        writes=(("--save_dir", "./test_tipc/output/m"),),
    )
    results = "./test_tipc/output/m/whole_infer/infer_results"
    log = "./test_tipc/output/m/whole_infer/infer.log"
    infer = Step(
        "infer",
        Stage.INFER,
        ("python", "infer.py", "--config=./test_tipc/output/m/deploy.yaml", f"--save_dir={results}"),
        status_command=(
            f"python infer.py --config=./test_tipc/output/m/deploy.yaml --save_dir={results} > {log} 2>&1 "
        ),
        depends_on=("export",),
        writes=(("--save_dir", results),),
    )
    iso = isolate(_plan(export, infer))
    new = "./test_tipc/output/m/whole_infer/tipc_isolated/test_tipc/output/m"
    assert iso.steps[1].argv[2:] == (f"--config={new}/deploy.yaml", f"--save_dir={results}")
    assert iso.steps[1].status_command == (
        f"python infer.py --config={new}/deploy.yaml --save_dir={results} > {log} 2>&1 "
    )
    assert not [f for f in iso.findings if f.code == "TIPC911"]
