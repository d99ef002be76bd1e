"""Plan every corpus config in every recorded mode and compare with the commands its own script logged.

The corpus lives in `shared/tipc-corpus` beside the checkout (CI clones it there); TIPC_CORPUS overrides.
Comparison follows the corpus README's normalisation exactly (tipc.planning.corpus). Configs not matched yet
are
strict xfails with the reason, so a newly passing one is noticed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tipc.planning.corpus import compare, iter_cases
from tipc.planning.planner import plan

REPO_ROOT = Path(__file__).parents[2]


def _corpus() -> Path | None:
    candidates: list[str | Path] = [
        os.environ.get("TIPC_CORPUS", ""),
        (REPO_ROOT.parent / "shared" / "tipc-corpus").resolve(),
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


CORPUS = _corpus()

LITE = "lite_train_lite_infer"
# (owner/repo, substring of the config path, mode or "" for all) -> why it does not match yet.
KNOWN_GAPS: dict[tuple[str, str, str], str] = {}


def _gap(owner_repo: str, config: str, mode: str) -> str | None:
    for (repo, cue, gap_mode), reason in KNOWN_GAPS.items():
        if repo == owner_repo and cue in config and gap_mode in ("", mode):
            return reason
    return None


def _params() -> list[object]:
    if CORPUS is None:
        return [
            pytest.param(None, None, marks=pytest.mark.skip(reason="corpus not found: shared/tipc-corpus"))
        ]
    out: list[object] = []
    for case in iter_cases(CORPUS):
        for mode in case.expected:
            rel = case.config.relative_to(case.repo).as_posix()
            reason = _gap(case.owner_repo, rel, mode)
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            out.append(pytest.param(case, mode, marks=marks, id=f"{case.owner_repo}:{rel}:{mode}"))
    return out


def test_shape_detection_agrees_with_fingerprints_for_the_main_families() -> None:
    """Without the script (config shape only) the big families are still recognised."""
    if CORPUS is None:
        pytest.skip("corpus not found: shared/tipc-corpus")
    from tipc.config.detect import detect
    from tipc.config.parse import parse_file

    main = {"ocr", "clas", "det", "seg", "compact", "video", "rec", "gan"}
    for case in iter_cases(CORPUS):
        if case.dialect in main:
            assert detect(parse_file(case.config), case.config, None).dialect == case.dialect, case.name


@pytest.mark.parametrize(("case", "mode"), _params())
def test_plan_matches_corpus(case: object, mode: str) -> None:
    assert case is not None
    # Inside the real repo the script's fingerprint picks the dialect; the corpus carries that fingerprint.
    result = compare(
        plan(case.config, mode, repo=case.repo, dialect=case.dialect),  # type: ignore[attr-defined]
        case.expected[mode],  # type: ignore[attr-defined]
    )
    assert result.ok, result.detail


def test_device_cpu_leaves_no_gpu_flag_in_any_corpus_plan() -> None:
    if CORPUS is None:
        pytest.skip("corpus not found: shared/tipc-corpus")
    import re

    from tipc.core.steps import Overrides, Stage

    gpu = re.compile(r"(use_gpu=True|device=gpu|--device gpu|distributed\.launch|Global\.device=gpu)")
    for case in iter_cases(CORPUS):
        for mode in case.expected:
            result = plan(
                case.config, mode, repo=case.repo, dialect=case.dialect, overrides=Overrides(device="cpu")
            )
            default = plan(case.config, mode, repo=case.repo, dialect=case.dialect)
            # Training names (ids, logs, folders) are the script's own: nothing is renamed for the CPU.
            # (Inference may gain CPU steps: a gpu-only inference line becomes its CPU form.)
            trained = [s for s in result.steps if s.stage is not Stage.INFER]
            assert {s.id for s in trained} <= {s.id for s in default.steps}, (case.name, mode)
            assert {s.log for s in trained} <= {s.log for s in default.steps}, (case.name, mode)
            for step in result.steps:
                launch = "distributed.launch" in " ".join(step.argv)
                assert not launch or step.not_applicable, (case.name, mode, step.id)
                if not step.not_applicable:
                    assert not gpu.search(" ".join(step.argv)), (case.name, mode, step.id)


def test_a_command_without_quotes_or_escapes_is_split_as_shlex_splits_it() -> None:
    import random
    import shlex

    from tipc.planning.corpus import _PLAIN

    rng = random.Random(3)
    alphabet = list("ab =/-.\t\n\r'\"\\#$\x0b\x0c\x1c\x1f\x85\xa0\u3000\u2028é")
    plain = 0
    for _ in range(20000):
        command = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 10)))
        if _PLAIN.search(command) is None:
            plain += 1
            assert shlex.split(command) == command.split(), repr(command)
    assert plain > 1000  # the fast path was exercised
