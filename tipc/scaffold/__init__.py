"""`tipc init`: scaffold a conformant test_tipc/ folder from test_tipc_template/ (jinja2, sandboxed).

detect.py finds entry scripts and lite data, config/script_flags.py reads argparse flags statically,
dataflow.py where weights are saved and loaded, fill/ maps them onto config slots (and lists TODOs),
render.py renders and writes safely, fix_config.py cleans up an existing hand-edited config. No module
here imports jinja2 at import time except inside functions.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from tipc.core.steps import Mode
from tipc.scaffold.detect import scan
from tipc.scaffold.fill.context import MODE_KEYS
from tipc.scaffold.fill.whole import apply_sets, choose_dialect, fill
from tipc.scaffold.filled import Filled
from tipc.scaffold.render import check_model_name, render_files
from tipc.scaffold.serving import CONFIG_NAME as SERVING_CONFIG_NAME
from tipc.scaffold.serving import config_text, fill_serving, find_serving
from tipc.scaffold.slots import line_count, slots_of

__all__ = ["Filled", "build_context", "infer_slots", "render_test_tipc"]


def infer_slots(
    repo: Path, model: str, dialect: str | None, sets: list[tuple[str, str]] | None = None
) -> Filled:
    """Scan `repo` and fill every slot of `dialect`; `sets` (`--set slot=value`) win over inference.

    `dialect` None picks the layout from the repo (`choose_dialect`).

    Raises UserError for an invalid model name or an unknown slot in `sets`.
    """
    from tipc.core.errors import UserError

    check_model_name(model)
    found = scan(repo, model)
    reason = ""
    if dialect is None:
        dialect, reason = choose_dialect(found)
    filled = fill(found, model, dialect)
    if reason:
        filled.notes.insert(0, f"layout: {dialect} ({reason})")
    errors = apply_sets(filled, list(sets or ()))
    if errors:
        raise UserError("; ".join(errors))
    deploy = find_serving(repo)
    if deploy is not None:
        # After --set: the serving export reuses the (possibly overridden) export flags of the train chain.
        filled.serving = fill_serving(found, filled, deploy)
        filled.todos += filled.serving.todos
        filled.notes += filled.serving.notes
    return filled


def build_context(filled: Filled) -> dict[str, object]:
    slots = slots_of(filled.dialect)
    line_slots = {name: filled.line(name) for name in slots}
    todos = [t.format(slots.get(t.slot) if t.slot else None) for t in filled.todos]
    lite = filled.lite
    weights = filled.slots["infer_model"][1]
    return {
        "s": line_slots,
        "model": filled.model,
        "dialect": filled.dialect,
        "dialect_title": "51-line template" if filled.dialect == "template" else "32-line compact",
        "config_lines": line_count(filled.dialect),
        "todos": todos,
        "notes": list(filled.notes),
        "paper": "-",
        "model_type": "-",
        "modes": [str(m) for m in (*MODE_KEYS, Mode.WHOLE_INFER)],
        "gpu_list": filled.slots["gpu_list"][1],
        "has_mkldnn": filled.slots.get("mkldnn", ("null", "null"))[0] != "null",
        "has_threads": filled.slots.get("cpu_threads", ("null", "null"))[0] != "null",
        "train_script": filled.scripts.get("train", "train.py"),
        "infer_script": filled.scripts.get("infer", "infer.py"),
        "lite_dir": lite.dir if lite else None,
        "lite_archive": lite.archive if lite else None,
        "lite_archive_zip": bool(lite and lite.archive and lite.archive.endswith(".zip")),
        "lite_archive_has_top_dir": lite.archive_has_top_dir if lite else True,
        "lite_extract_to": lite.extract_to if lite else ".",
        "weights": weights.removeprefix("./") if weights != "null" else None,
        "weights_dir": posixpath.dirname(weights.removeprefix("./")) or "." if weights != "null" else None,
        "agreement_inputs": lite.input_arrays[0] if lite and lite.input_arrays else None,
        "agreement_images": _agreement_images(filled),
        "serving": _serving_context(filled),
    }


def _serving_context(filled: Filled) -> dict[str, object] | None:
    serving = filled.serving
    if serving is None:
        return None
    return {
        "config": config_text(serving),
        "config_name": SERVING_CONFIG_NAME,
        "dir": serving.deploy.dir,
        "client": serving.deploy.client,
        "port": serving.port,
        "service": serving.service,
        "export_dir": serving.export_dir,
        "todos": [t.format() for t in serving.todos],
        "plan": None,
    }


def _agreement_images(filled: Filled) -> list[str]:
    """Images for the predict-vs-infer check where the config's train-mode inference passes none (compact)."""
    key, value = filled.slots.get("image", ("null", "null"))
    if filled.dialect != "compact" or key == "null" or value == "null":
        return []
    if "predict" not in filled.scripts:
        return []
    return [value.removeprefix("./")]


def render_test_tipc(filled: Filled, repo: Path) -> dict[str, str]:
    """Every file of test_tipc/ (relative path -> text).

    Two passes: the config first, then the docs with what tipc's own planner makes of that config in every
    mode (commands, output folder, log names, status-line format), so the docs match what really runs.
    """
    context = build_context(filled)
    context["plans"] = []
    first = render_files(filled.dialect, filled.model, context)
    config_rel = f"configs/{filled.model}/train_infer_python.txt"
    context["plans"] = plan_modes(first[config_rel], config_rel, repo, filled.dialect)
    serving = context["serving"]
    if isinstance(serving, dict):  # the serving section, when the model has one (None otherwise)
        serving_rel = f"configs/{filled.model}/{SERVING_CONFIG_NAME}"
        serving["plan"] = plan_serving_chain(first[serving_rel], serving_rel, repo)
    return render_files(filled.dialect, filled.model, context)


def plan_serving_chain(config_text: str, config_rel: str, repo: Path) -> dict[str, object] | None:
    """What tipc plans for the generated serving config (steps, logs, status lines); None on failure."""
    import shlex
    import tempfile

    from tipc.core.errors import TipcError
    from tipc.planning.planner import status_line
    from tipc.planning.serving import plan_serving

    with tempfile.TemporaryDirectory(prefix="tipc-init-plan-") as tmp:
        config = Path(tmp) / "test_tipc" / config_rel
        config.parent.mkdir(parents=True)
        config.write_text(config_text, encoding="utf-8")
        try:
            planned = plan_serving(config, repo=repo)
        except TipcError:
            return None
    steps = [
        {
            "id": s.id,
            "command": shlex.join(s.argv),
            "cwd": s.cwd or ".",
            "log": s.log or "",
            "background": s.background,
            "ready_url": s.ready_url or "",
        }
        for s in planned.steps
    ]
    return {
        "output_dir": planned.output_dir,
        "results_log": planned.results_log,
        "steps": steps,
        "status_ok": [_ANSI.sub("", status_line(planned, s, True)).strip() for s in planned.steps],
    }


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plan_modes(config_text: str, config_rel: str, repo: Path, dialect: str) -> list[dict[str, object]]:
    """The planned commands of every mode for the docs; [] when planning fails (the docs stay generic)."""
    import shlex
    import tempfile

    from tipc.core.errors import TipcError
    from tipc.planning.planner import plan, status_line

    out: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="tipc-init-plan-") as tmp:
        config = Path(tmp) / "test_tipc" / config_rel
        config.parent.mkdir(parents=True)
        config.write_text(config_text, encoding="utf-8")
        for mode in (*MODE_KEYS, Mode.WHOLE_INFER):
            try:
                planned = plan(config, mode, repo=repo, dialect=dialect)
            except TipcError:
                return []
            root = planned.output_dir.rstrip("/") + "/"
            logs = [s.log or s.status_log for s in planned.steps]
            out.append(
                {
                    "mode": str(mode),  # plain text for the templates and any YAML
                    "output_dir": planned.output_dir,
                    "results_log": planned.results_log,
                    "commands": [shlex.join(s.argv) for s in planned.steps],
                    "logs": [log.removeprefix(root) for log in logs if log],
                    "status_ok": _ANSI.sub("", status_line(planned, planned.steps[0], True)).strip()
                    if planned.steps
                    else "",
                    "status_failed": _ANSI.sub("", status_line(planned, planned.steps[-1], False)).strip()
                    if planned.steps
                    else "",
                }
            )
    return out
