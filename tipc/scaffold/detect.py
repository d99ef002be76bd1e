"""Find what a repo has for TIPC: entry scripts, lite data, images for inference, pretrained weights.

Only reads the tree (and lists tar members); never runs or extracts anything.
"""

from __future__ import annotations

import ast
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

# Candidate paths per role, most conventional first. The inference role prefers a script that uses
# Paddle Inference (see `_uses_paddle_inference`).
SCRIPT_CANDIDATES: dict[str, tuple[str, ...]] = {
    "train": ("train.py", "tools/train.py", "tools/train_net.py", "main.py"),
    "eval": ("eval.py", "tools/eval.py", "evaluate.py", "val.py", "tools/val.py"),
    "export": (
        "export_model.py",
        "tools/export_model.py",
        "export.py",
        "tools/export.py",
        "deploy/export_model.py",
    ),
    "infer": (
        "infer.py",
        "deploy/python/infer.py",
        "deploy/inference_python/infer.py",
        "deploy/infer.py",
        "inference.py",
        "tools/infer.py",
    ),
    "predict": ("predict.py", "tools/predict.py", "tools/infer.py"),
}

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".JPEG", ".JPG", ".PNG")
WEIGHT_DIRS = (
    "pretrained",
    "pretrain",
    "pretrain_models",
    "pretrained_models",
    "weights",
    "checkpoints",
    ".",
)


@dataclass(frozen=True)
class LiteData:
    dir: str | None  # repo-relative directory, e.g. "lite_data"
    tar: str | None  # repo-relative archive, e.g. "lite_data.tar"
    tar_has_top_dir: bool = True  # members of the tar live under `<dir>/`
    images: tuple[str, ...] = ()  # repo-relative image files (from the dir, or listed in the tar)
    input_arrays: tuple[str, ...] = ()  # repo-relative *input*.npy/.npz: preprocessed batches for agreement
    train_samples: int | None = None  # files under a `train` folder (else all files); None when unknown


@dataclass
class RepoScan:
    root: Path
    scripts: dict[str, str] = field(default_factory=dict)  # role -> repo-relative path
    lite: LiteData | None = None
    weights: tuple[str, ...] = ()  # repo-relative *.pdparams, best first


def _uses_paddle_inference(path: Path) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return "paddle.inference" in text or "create_predictor" in text or "paddle_infer" in text


def find_scripts(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for role, candidates in SCRIPT_CANDIDATES.items():
        present = [c for c in candidates if (root / c).is_file()]
        if role == "infer":
            engine = [c for c in present if _uses_paddle_inference(root / c)]
            present = engine or [c for c in present if c != "tools/infer.py"] or present
        if present:
            found[role] = present[0]
    # A training-engine predictor is not a Paddle Inference script: keep roles distinct.
    if found.get("predict") == found.get("infer"):
        found.pop("predict", None)
    return found


def images_under(directory: Path, root: Path, limit: int = 50) -> tuple[str, ...]:
    images: list[str] = []
    for path in sorted(directory.rglob("*")):
        if path.suffix in IMAGE_SUFFIXES and path.is_file():
            images.append(path.relative_to(root).as_posix())
            if len(images) >= limit:
                break
    return tuple(images)


def _lite_archives(root: Path) -> list[Path]:
    """Lite-data archives at the top level or one folder down (`test_images/lite_data.tar`), top first."""
    found: list[Path] = []
    for pattern in ("*", "*/*"):
        for p in sorted(root.glob(pattern)):
            rel = p.relative_to(root).parts
            if rel[0] in ("test_tipc", "output") or rel[0].startswith("."):
                continue
            if p.is_file() and "lite" in p.name and p.name.endswith((".tar", ".tar.gz", ".tgz")):
                found.append(p)
    return found


def _lite_dirs(root: Path) -> list[Path]:
    """Lite-data folders at the top level: `*lite*data*`, then `*_lite*`."""
    dirs = [p for p in sorted(root.iterdir()) if p.is_dir() and ("lite" in p.name and "data" in p.name)]
    dirs += [
        p for p in sorted(root.glob("*_lite*")) if p.is_dir() and p not in dirs and not p.name.startswith(".")
    ]
    return dirs


def _in_folder(directory: Path, root: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(images, input arrays) in the lite-data folder; none when it is not there (yet)."""
    if not directory.is_dir():
        return (), ()
    arrays = tuple(
        p.relative_to(root).as_posix()
        for p in sorted(directory.rglob("*"))
        if p.suffix in (".npy", ".npz") and "input" in p.name and p.is_file()
    )
    return images_under(directory, root), arrays


def _archive_files(tar: Path) -> list[str]:
    """The archive's file names (no leading `./`); none when it cannot be read."""
    try:
        with tarfile.open(tar) as archive:
            return [m.name.lstrip("./") for m in archive.getmembers() if m.isfile()]
    except (tarfile.TarError, OSError):
        return []


def find_lite_data(root: Path) -> LiteData | None:
    dirs = _lite_dirs(root)
    tars = _lite_archives(root)
    if not dirs and not tars:
        return None
    tar = tars[0] if tars else None
    if dirs:
        directory = dirs[0]
    else:
        assert tar is not None
        # prepare.sh extracts into the repo root: the folder lands there whatever the archive's folder.
        directory = root / tar.name.split(".tar")[0].split(".tgz")[0]
    rel_dir = directory.relative_to(root).as_posix()
    has_top = True
    images, arrays = _in_folder(directory, root)
    samples = train_samples([p.relative_to(root).as_posix() for p in directory.rglob("*") if p.is_file()])
    names = _archive_files(tar) if tar is not None else []
    if names:
        samples = samples or train_samples(names)
        has_top = all(n.split("/", 1)[0] == directory.name for n in names)
        if not images:
            prefix = "" if has_top else rel_dir + "/"
            images = tuple(sorted(prefix + n for n in names if n.endswith(IMAGE_SUFFIXES))[:50])
    return LiteData(
        dir=rel_dir,
        tar=tar.relative_to(root).as_posix() if tar else None,
        tar_has_top_dir=has_top,
        images=images,
        input_arrays=arrays,
        train_samples=samples,
    )


def train_samples(paths: list[str]) -> int | None:
    """How many files a lite training split holds: those under a `train*` folder, else every data file."""
    data = [p for p in paths if not p.endswith((".txt", ".md", ".json", ".yaml", ".yml"))]
    train = [p for p in data if any(part.lower().startswith("train") for part in p.split("/")[:-1])]
    return len(train or data) or None


def find_weights(root: Path, model: str) -> tuple[str, ...]:
    found: list[str] = []
    for name in WEIGHT_DIRS:
        directory = root / name
        if not directory.is_dir():
            continue
        pattern = "*.pdparams" if name == "." else "**/*.pdparams"
        for path in sorted(directory.glob(pattern)):
            rel = path.relative_to(root).as_posix()
            if path.is_file() and rel not in found and not rel.startswith(("test_tipc/output", "output/")):
                found.append(rel)
    # The model's own name in the file name is the strongest hint.
    found.sort(key=lambda r: (model.lower() not in r.lower(), r))
    return tuple(found)


def saved_checkpoint_names(script: Path) -> tuple[str, ...]:
    """String literals naming a `.pdparams` file in a training script, e.g. "latest.pdparams"."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return ()
    # Pieces of f-strings name per-epoch files (f"epoch_{n}.pdparams"): not a stable name, unless the piece
    # is the whole file name after a formatted folder (f"{save_dir}/best_model.pdparams").
    in_fstrings = {
        id(v)
        for n in ast.walk(tree)
        if isinstance(n, ast.JoinedStr)
        for i, v in enumerate(n.values)
        if not (i == len(n.values) - 1 and isinstance(v, ast.Constant) and "/" in str(v.value) and i > 0)
    }
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in in_fstrings:
            value = node.value.rsplit("/", 1)[-1]
            if value.endswith(".pdparams") and not value.startswith(".") and not {"{", "%"} & set(value):
                names.append(value)
    order = ("latest", "final", "last", "model", "best")
    unique = list(dict.fromkeys(names))
    unique.sort(key=lambda n: next((i for i, w in enumerate(order) if w in n), len(order)))
    return tuple(unique)


def scan(root: Path, model: str) -> RepoScan:
    return RepoScan(
        root=root,
        scripts=find_scripts(root),
        lite=find_lite_data(root),
        weights=find_weights(root, model),
    )
