"""Render test_tipc_template/ in a jinja2 sandbox and write the result safely.

Safety rules: templates run in `SandboxedEnvironment` with `StrictUndefined`; every output path must resolve
inside the destination (no `..`, no absolute paths, no symlink leading out); existing files are replaced only
with `force`; everything is rendered in memory and written to a temporary folder first, then moved into place,
so a failed render or write leaves no partial folder.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from tipc.core.errors import UserError
from tipc.core.resources import data_dir

if TYPE_CHECKING:
    from jinja2.sandbox import SandboxedEnvironment

# template file (relative to test_tipc_template/) -> output path pattern (relative to test_tipc/)
MANIFEST: dict[str, tuple[tuple[str, str], ...]] = {
    "template": (("config_template.txt.j2", "configs/{model}/train_infer_python.txt"),),
    "compact": (("config_compact.txt.j2", "configs/{model}/train_infer_python.txt"),),
}
COMMON_FILES: tuple[tuple[str, str], ...] = (
    ("test_train_inference_python.sh.j2", "test_train_inference_python.sh"),
    ("common_func.sh.j2", "common_func.sh"),
    ("prepare.sh.j2", "prepare.sh"),
    ("README.md.j2", "README.md"),
    ("tipc.yaml.j2", "tipc.yaml"),  # optional: skipped when it renders empty
    ("docs/test_train_inference_python.md.j2", "docs/test_train_inference_python.md"),
    # The serving chain: rendered only when the repo ships a Python serving deployment (else empty, skipped).
    ("config_serving.txt.j2", "configs/{model}/serving_infer_python.txt"),
    ("test_serving_infer_python.sh.j2", "test_serving_infer_python.sh"),
    ("docs/test_serving_infer_python.md.j2", "docs/test_serving_infer_python.md"),
)
EXECUTABLE_SUFFIXES = (".sh",)
MODEL_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,127}$")


def check_model_name(model: str) -> None:
    if not MODEL_NAME.match(model) or ".." in model:
        raise UserError(
            f"invalid model name {model!r}: use letters, digits, '_', '-', '.', '+' (no path separators, "
            "no '..'), starting with a letter or digit"
        )


def _environment(template_root: Path) -> SandboxedEnvironment:
    from jinja2 import FileSystemLoader, StrictUndefined
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        loader=FileSystemLoader(str(template_root)),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["shell_quote"] = lambda value: shlex.quote(str(value))
    return env


def render_files(dialect: str, model: str, context: Mapping[str, Any]) -> dict[str, str]:
    """Every output file (path relative to test_tipc/) -> its text. Raises UserError if a template fails."""
    from jinja2 import TemplateError

    check_model_name(model)
    root = data_dir("test_tipc_template")
    env = _environment(root)
    files: dict[str, str] = {}
    for template_name, pattern in (*MANIFEST[dialect], *COMMON_FILES):
        out = pattern.format(model=model)
        try:
            text = env.get_template(template_name).render(**context)
        except TemplateError as exc:
            raise UserError(f"{root / template_name}: template failed to render: {exc}") from exc
        if not text.strip():
            continue  # an optional file with nothing to say
        # Every generated file ends with exactly one newline (a positional config must).
        files[out] = text.rstrip("\n") + "\n"
    return files


def safe_target(dest: Path, rel: str) -> Path:
    """`dest/rel`, refusing anything that would land outside `dest` (.., absolute paths, symlinks)."""
    pure = PurePosixPath(rel)
    if pure.is_absolute() or rel.startswith(("/", "\\")) or ".." in pure.parts or not pure.parts:
        raise UserError(f"refusing to write {rel!r}: output paths must stay inside {dest}")
    root = dest.resolve()
    target = dest.joinpath(*pure.parts)
    # Walk every existing component: a symlink anywhere on the way may point outside.
    current = dest
    for part in pure.parts:
        current = current / part
        if current.is_symlink() or current.exists():
            real = current.resolve()
            if real != root and root not in real.parents:
                raise UserError(f"refusing to write {current}: it resolves to {real}, outside {dest}")
    real = target.resolve()
    if root not in real.parents:
        raise UserError(f"refusing to write {rel!r}: it resolves to {real}, outside {dest}")
    return target


def check_destination(repo: Path, dest: Path) -> None:
    repo_real = repo.resolve()
    real = dest.resolve()
    if dest.exists() and not dest.is_dir():
        raise UserError(f"refusing to write into {dest}: it exists and is not a folder")
    if real != repo_real and repo_real not in real.parents:
        raise UserError(f"refusing to write into {dest}: it resolves to {real}, outside the repo {repo}")


@dataclass(frozen=True)
class PlannedFile:
    rel: str  # relative to the destination
    target: Path
    text: str
    old: str | None  # current content when the file exists

    @property
    def changed(self) -> bool:
        return self.old != self.text


def plan_writes(dest: Path, files: Mapping[str, str]) -> list[PlannedFile]:
    planned = []
    for rel, text in files.items():
        target = safe_target(dest, rel)
        old: str | None = None
        if target.is_file():
            old = target.read_text(encoding="utf-8", errors="replace")
        elif target.exists():
            raise UserError(f"refusing to write {target}: it exists and is not a regular file")
        planned.append(PlannedFile(rel, target, text, old))
    return planned


def diff_text(planned: PlannedFile, label: str) -> str:
    if planned.old is None:
        return planned.text
    lines = difflib.unified_diff(
        planned.old.splitlines(keepends=True),
        planned.text.splitlines(keepends=True),
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
    )
    # A last line without a newline is marked the way diff(1) does, not glued to the next diff line.
    return "".join(ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines)


def write_all(dest: Path, planned: list[PlannedFile], *, force: bool) -> list[str]:
    """Write every planned file, or none. Returns the relative paths written."""
    clashes = [p.target for p in planned if p.old is not None]
    if clashes and not force:
        listing = "\n".join(f"  {c}" for c in clashes)
        raise UserError(
            f"these files exist already (use --force to overwrite, --dry-run to see a diff):\n{listing}"
        )
    try:
        return _write_staged(dest, planned)
    except OSError as exc:
        raise UserError(f"cannot write {dest}: {exc}") from exc


def _write_staged(dest: Path, planned: list[PlannedFile]) -> list[str]:
    dest_parent = dest.parent
    dest_parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tipc-init-", dir=dest_parent))
    try:
        for p in planned:
            staged = staging.joinpath(*PurePosixPath(p.rel).parts)
            staged.parent.mkdir(parents=True, exist_ok=True)
            with open(staged, "w", encoding="utf-8", newline="\n") as fh:
                fh.write(p.text)
            if staged.suffix in EXECUTABLE_SUFFIXES:
                staged.chmod(0o755)
        if not dest.exists():
            # Fresh folder: one rename, atomic on the same file system.
            os.replace(staging, dest)
        else:
            for p in planned:
                # Re-check right before moving: the tree may have changed since planning.
                target = safe_target(dest, p.rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging.joinpath(*PurePosixPath(p.rel).parts), target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return [p.rel for p in planned]
