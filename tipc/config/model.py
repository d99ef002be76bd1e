"""The typed config: every slot a script reads, by name, with its source line and column.

A `Slot` holds what the dialect's splitter gives for one array element (key and value exactly as bash sees
them, `\\r` and spaces kept). Slots a dialect does not use, or that fall past the end of the array (after
blank lines shifted everything up), are present but empty with `line == 0`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

from tipc.config import bash
from tipc.core.findings import Finding


@dataclass(frozen=True)
class Slot:
    key: str = ""
    value: str = ""
    line: int = 0  # 1-based physical line; 0 = the script reads nothing here
    col: int = 0  # 1-based column of the value
    raw: str = ""  # the whole array line
    index: int = -1  # idx in the scripts' array
    overridden: bool = False  # changed in memory by --set / --device

    @property
    def present(self) -> bool:
        return self.line > 0

    @property
    def is_null(self) -> bool:
        return self.value == "null"

    @property
    def items(self) -> list[str]:
        """The `|` list as a loop over it iterates (empty value: no iteration)."""
        return bash.ifs_split(self.value, "|")

    def mode_value(self, mode: str) -> str:
        return bash.mode_value(self.value, mode)

    def with_value(self, value: str) -> Slot:
        return replace(self, value=value, overridden=True)


EMPTY = Slot()

# Canonical slot names shared by all dialects (a dialect maps the ones it reads to array indices).
SLOT_NAMES: tuple[str, ...] = (
    "model_name",
    "python",
    "gpu_list",
    "train_use_gpu",
    "autocast",
    "epoch",
    "save_model",
    "train_batch",
    "pretrain",
    "train_model_name",
    "train_infer_img_dir",
    "train_param1",
    "train_param2",
    "trainer_list",
    "norm_train",
    "pact_train",
    "fpgm_train",
    "distill_train",
    "trainer1",
    "trainer2",
    "eval",
    "eval_param1",
    "save_infer",
    "export_weight",
    "norm_export",
    "pact_export",
    "fpgm_export",
    "distill_export",
    "export1",
    "export2",
    "kl_quant_export",
    "inference_dir",
    "infer_model",
    "infer_export",
    "infer_quant",
    "inference",
    "infer_use_gpu",
    "infer_mkldnn",
    "infer_threads",
    "infer_batch",
    "infer_trt",
    "infer_precision",
    "infer_model_dir",
    "infer_image",
    "infer_save_log",
    "infer_benchmark",
    "infer_param1",
    "infer_param2",
    "data_path",
    "nodes",
)


@dataclass(frozen=True)
class Section:
    """An optional trailing section found by its header (e.g. train_benchmark_params)."""

    name: str
    header_line: int
    slots: tuple[Slot, ...]

    def get(self, key: str) -> Slot | None:
        for slot in self.slots:
            if slot.key == key:
                return slot
        return None


@dataclass(frozen=True)
class TipcConfig:
    """A train_infer_python config read the way one dialect's script reads it."""

    path: str
    dialect: str
    chain: str  # "train_infer_python", or the other chain the file belongs to
    line_count: int
    crlf: bool
    model_name: Slot = EMPTY
    python: Slot = EMPTY
    gpu_list: Slot = EMPTY
    train_use_gpu: Slot = EMPTY
    autocast: Slot = EMPTY
    epoch: Slot = EMPTY
    save_model: Slot = EMPTY
    train_batch: Slot = EMPTY
    pretrain: Slot = EMPTY
    train_model_name: Slot = EMPTY
    train_infer_img_dir: Slot = EMPTY
    train_param1: Slot = EMPTY
    train_param2: Slot = EMPTY
    trainer_list: Slot = EMPTY
    norm_train: Slot = EMPTY
    pact_train: Slot = EMPTY
    fpgm_train: Slot = EMPTY
    distill_train: Slot = EMPTY
    trainer1: Slot = EMPTY
    trainer2: Slot = EMPTY
    eval: Slot = EMPTY
    eval_param1: Slot = EMPTY
    save_infer: Slot = EMPTY
    export_weight: Slot = EMPTY
    norm_export: Slot = EMPTY
    pact_export: Slot = EMPTY
    fpgm_export: Slot = EMPTY
    distill_export: Slot = EMPTY
    export1: Slot = EMPTY
    export2: Slot = EMPTY
    kl_quant_export: Slot = EMPTY
    inference_dir: Slot = EMPTY
    infer_model: Slot = EMPTY
    infer_export: Slot = EMPTY
    infer_quant: Slot = EMPTY
    inference: Slot = EMPTY
    infer_use_gpu: Slot = EMPTY
    infer_mkldnn: Slot = EMPTY
    infer_threads: Slot = EMPTY
    infer_batch: Slot = EMPTY
    infer_trt: Slot = EMPTY
    infer_precision: Slot = EMPTY
    infer_model_dir: Slot = EMPTY
    infer_image: Slot = EMPTY
    infer_save_log: Slot = EMPTY
    infer_benchmark: Slot = EMPTY
    infer_param1: Slot = EMPTY
    infer_param2: Slot = EMPTY
    data_path: Slot = EMPTY
    nodes: Slot = EMPTY
    sections: tuple[Section, ...] = ()
    findings: tuple[Finding, ...] = ()
    extra_args: str = ""  # PaddleSeg: `key:value;key:value` on the file's last line

    @property
    def engine_51(self) -> bool:
        """True for the 51-line family (trainer/export dispatch by slot key)."""
        return not self.dialect.startswith("compact")

    def slot(self, name: str) -> Slot:
        value = getattr(self, name)
        assert isinstance(value, Slot)
        return value

    def slots(self) -> Mapping[str, Slot]:
        """Every slot by name, in declaration order; built once per config (lint and planning ask often).
        Kept beside the fields, not as one: equality, `replace` and the JSON form never see it."""
        found: dict[str, Slot] | None = self.__dict__.get("_slot_map")
        if found is None:
            found = {name: getattr(self, name) for name in _slot_fields()}
            self.__dict__["_slot_map"] = found
        return found

    def section(self, name: str) -> Section | None:
        for section in self.sections:
            if section.name == name:
                return section
        return None

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "dialect": self.dialect,
            "chain": self.chain,
            "line_count": self.line_count,
            "crlf": self.crlf,
            "slots": {
                name: {"key": s.key, "value": s.value, "line": s.line, "col": s.col}
                for name, s in self.slots().items()
                if s.present
            },
            "sections": {
                sec.name: {s.key: {"value": s.value, "line": s.line} for s in sec.slots}
                for sec in self.sections
            },
        }


def with_slots(config: TipcConfig, **changes: Slot) -> TipcConfig:
    return replace(config, **changes)  # type: ignore[arg-type]


__all__ = ["EMPTY", "SLOT_NAMES", "Section", "Slot", "TipcConfig", "with_slots"]


_SLOT_FIELDS: tuple[str, ...] = ()


def _slot_fields() -> tuple[str, ...]:
    """TipcConfig's slot fields in declaration order (computed once: `fields()` is slow in a hot loop)."""
    global _SLOT_FIELDS
    if not _SLOT_FIELDS:
        _SLOT_FIELDS = tuple(f.name for f in fields(TipcConfig) if f.name in SLOT_NAMES)
    return _SLOT_FIELDS
