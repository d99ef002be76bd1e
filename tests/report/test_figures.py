"""The report's SVG figures: names wrap, never cut; the lineage graph's layout."""

from __future__ import annotations

import re

from tipc.report.figures import CHAR_W, lineage_svg, timeline_svg, wrap
from tipc.report.model import StepSummary

INFER = (
    "infer/norm_train/gpus_-1/autocast_null/"
    "python_infer_cpu_usemkldnn_False_threads_1_precision_fp32_batchsize_1"
)


def _spans(svg: str, cls: str) -> list[str]:
    """The text of each <text class=cls>, its tspans joined."""
    out = []
    for body in re.findall(rf'<text class="{cls}"[^>]*>(.*?)</text>', svg):
        out.append("".join(re.findall(r"<tspan[^>]*>(.*?)</tspan>", body)))
    return out


def test_wrap_keeps_every_character_and_breaks_at_separators() -> None:
    lines = wrap(INFER, 40)
    assert "".join(lines) == INFER and all(len(line) <= 40 for line in lines)
    assert lines[0] == "infer/norm_train/gpus_-1/autocast_null/"
    assert wrap("short", 40) == ["short"]
    assert wrap("x" * 25, 10) == ["x" * 10, "x" * 10, "x" * 5]  # nowhere to break: at the width


def test_lineage_names_are_whole_and_fit_their_boxes() -> None:
    steps = ["train/norm_train/gpus_-1/autocast_null", "export/norm_train/gpus_-1/autocast_null", INFER]
    lineage = {
        "steps": [{"id": s, "recorded": True} for s in steps],
        "files": [
            {"path": "out/a/latest.pdparams", "kind": "weights"},
            {"path": "out/b/latest.pdparams", "kind": "weights"},  # the same name: told apart by its folder
            {"path": "out/inference.pdmodel", "kind": "model"},
        ],
        "edges": [
            {"step": steps[0], "file": "out/a/latest.pdparams", "kind": "wrote"},
            {"step": steps[1], "file": "out/a/latest.pdparams", "kind": "read", "fresh": True},
            {"step": steps[1], "file": "out/b/latest.pdparams", "kind": "read", "fresh": False},
            {"step": steps[1], "file": "out/inference.pdmodel", "kind": "wrote"},
            {"step": steps[2], "file": "out/inference.pdmodel", "kind": "read", "fresh": True},
        ],
    }
    svg = lineage_svg(lineage, width=1240)
    labels = _spans(svg, "label")
    assert labels[:3] == steps  # steps first, whole
    assert labels[3:] == ["a/latest.pdparams", "! b/latest.pdparams", "inference.pdmodel"]
    assert "…" not in svg
    # every label line fits the width of its box at the monospace character width
    for node in re.findall(r'<g class="node (?:step|file)">.*?</g>', svg):
        width = float(re.search(r'width="([\d.]+)"', node).group(1))  # type: ignore[union-attr]
        lines = re.findall(r"<tspan[^>]*>(.*?)</tspan>", node)
        assert max(len(line) for line in lines) * CHAR_W + 16 <= width
    assert svg.count('class="stale read"') == 1 and svg.count("<path class=") == 5


def test_the_timeline_names_every_step_whole() -> None:
    def step(sid: str, started: float) -> StepSummary:
        return StepSummary(
            id=sid,
            stage=sid.split("/")[0],
            trainer=None,
            status="passed",
            exit_code=0,
            duration_s=3.0,
            peak_rss_bytes=None,
            peak_gpu_mem_bytes=None,
            log=None,
            reason="",
            started=started,
        )

    svg = timeline_svg([step("train/norm_train/gpus_-1/autocast_null", 0.0), step(INFER, 3.0)])
    assert _spans(svg, "label step-name") == ["train/norm_train/gpus_-1/autocast_null", INFER]
    assert "…" not in svg
