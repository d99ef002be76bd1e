"""Words for a lineage graph (its `to_json()` form), shared by the reporters: one line per step.

`train wrote W` / `eval read W (train)` / `export read W (train), wrote M` / `infer read M (export)`; only
weights and model files are named, and a read that did not see this run's version is flagged with `!`.
"""

from __future__ import annotations

from typing import Any

ARTEFACT_KINDS = ("weights", "model")


def short(path: str, width: int = 60) -> str:
    """The path itself: a shortened one could not be opened (the reports map paths to where they are)."""
    return path


def _origin(node: dict[str, Any]) -> str:
    origin = node.get("origin")
    if origin == "committed":
        date = node.get("commit_date")
        return f"committed {date}" if date else "committed"
    if origin == "preexisting":
        return "there before the run"
    if origin == "missing" or not node.get("exists", True):
        return "does not exist"
    if origin == "external":
        return "outside the repo"
    return "not written by this run"


def step_lines(lineage: dict[str, Any]) -> list[tuple[str, list[str], list[str]]]:
    """(step id, reads, writes) per recorded step, each item a short description; artefacts only."""
    files = {f["path"]: f for f in lineage.get("files", []) if isinstance(f, dict) and "path" in f}
    out: list[tuple[str, list[str], list[str]]] = []
    stages = {str(s.get("id")): str(s.get("stage")) for s in lineage.get("steps", []) if isinstance(s, dict)}
    for step in lineage.get("steps", []):
        if not isinstance(step, dict) or not step.get("recorded"):
            continue
        sid = str(step.get("id"))
        reads: list[str] = []
        writes: list[str] = []
        for edge in lineage.get("edges", []):
            if not isinstance(edge, dict) or edge.get("step") != sid:
                continue
            node = files.get(str(edge.get("file")))
            if node is None or node.get("kind") not in ARTEFACT_KINDS:
                continue
            name = short(str(node["path"]))
            if edge.get("kind") == "wrote":
                writes.append(name)
            elif edge.get("fresh"):
                by = [w for w in node.get("written_by", []) if w != sid]
                reads.append(f"{name} (from {stages.get(by[0], by[0])})" if by else name)
            else:
                reads.append(f"! {name} ({_origin(node)})")
        out.append((sid, reads, writes))
    return out


def summary_lines(lineage: dict[str, Any]) -> list[str]:
    lines = []
    for sid, reads, writes in step_lines(lineage):
        parts = []
        if reads:
            parts.append("read " + ", ".join(reads))
        if writes:
            parts.append("wrote " + ", ".join(writes))
        lines.append(f"{sid}: " + ("; ".join(parts) if parts else "no weights or model file"))
    return lines
