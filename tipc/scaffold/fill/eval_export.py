"""The eval and export sections' slots: the eval script (or the training script's eval switch) and its
data, the export script, its output folder and the weights it reads (trained by this chain, or its own
default where train pins it).
"""

from __future__ import annotations

from tipc.scaffold.fill.context import _Ctx, _path_candidates, _where


def _fill_eval(c: _Ctx) -> None:
    eval_script = c.script("eval")
    if eval_script is None:
        c.s["eval"] = ("eval", "null")
        c.note("eval: no eval script found; the eval stage is skipped (eval:null)")
        return
    value = eval_script
    switch = c.eval_switch
    if switch:
        value += f" {switch}"
    eval_data = c.eval_data
    if c.dialect == "compact" and eval_data:
        value += f" {eval_data[0]}={eval_data[1]}"
    for arg in c.fixed_args.get("eval", []):
        value += f" {arg}"
    c.s["eval"] = ("eval", value)


def _fill_export(c: _Ctx) -> None:
    export_script, export = c.script("export"), c.flags("export")
    infer_dir = f"./test_tipc/output/{c.out.model}/whole_infer/inference/"
    if export_script is None or export is None:
        c.s["norm_export"] = ("norm_export", "null")
        c.s["save_inference"] = ("null", "null")
        c.s["export_weight"] = ("null", "null")
        c.todo(
            "norm_export",
            "no export script found (export_model.py, tools/export_model.py): "
            "without export, train modes run no inference",
        )
        return
    c.s["norm_export"] = ("norm_export", " ".join([export_script, *c.fixed_args.get("export", [])]))
    flag = c.use("export", c.find("export", "save_inference"))
    if flag is None:
        c.s["save_inference"] = ("null", "null")
        c.todo(
            "save_inference",
            f"{export_script}: no output-dir flag found for the exported model",
            _path_candidates(export),
        )
    else:
        c.s["save_inference"] = (flag.flag, infer_dir if c.dialect == "compact" else "./output/")
        c.note(f"export save dir: {flag.flag} from {_where(flag)}")
    _fill_export_weight(c, export_script)


def _fill_export_weight(c: _Ctx, export_script: str) -> None:
    if c.export_on_default:
        c.s["export_weight"] = ("null", "null")
        return
    flag, ref = c.export_flag, c.export_ref
    if flag is not None and ref is not None:
        c.note(f"export weights: {flag.flag}: export loads its weights from it ({ref.where(export_script)})")
    else:
        flag = c.find("export", "weights")
        if flag is not None:
            c.note(f"export weights: {flag.flag} from {_where(flag)} (by its name)")
    c.use("export", flag)
    if flag is None:
        c.s["export_weight"] = ("null", "null")
        c.todo(
            "export_weight",
            f"{export_script}: no weights flag found (e.g. --pretrained)",
            _path_candidates(c.flags("export")),
        )
    else:
        c.s["export_weight"] = (flag.flag, "")
