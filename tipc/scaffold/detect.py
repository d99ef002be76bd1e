"""Find what a repo has for TIPC: entry scripts, lite data, images for inference, pretrained weights.

Only reads the tree (and lists tar members); never runs or extracts anything.
"""

from __future__ import annotations

import ast
import posixpath
import re
import tarfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

# Candidate paths per role, most conventional first. The inference role prefers a script that uses
# Paddle Inference (see `_uses_paddle_inference`).
SCRIPT_CANDIDATES: dict[str, tuple[str, ...]] = {
    "train": ("train.py", "tools/train.py", "tools/train_net.py", "main.py"),
    "eval": ("eval.py", "tools/eval.py", "evaluate.py", "val.py", "tools/val.py", "test.py", "tools/test.py"),
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
    archive: str | None  # repo-relative archive (.tar, .tar.gz, .tgz, .zip), e.g. "lite_data.tar"
    archive_has_top_dir: bool = True  # members of the archive live under `<dir>/`
    images: tuple[str, ...] = ()  # repo-relative image files (from the dir, or listed in the archive)
    input_arrays: tuple[str, ...] = ()  # repo-relative *.npy/.npz: preprocessed inputs for inference
    train_samples: int | None = None  # samples under a `train` folder (else all); None when unknown
    extract_to: str = "."  # where prepare.sh unpacks the archive (repo-relative)
    files: tuple[str, ...] = ()  # repo-relative data files (listed in the archive when not extracted)
    origin: str = ""  # why this is the lite data, for the README


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


def _is_command_script(path: Path) -> bool:
    """A script run from the command line (argparse), not a unit-test module (`test.py` may be either)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    tests = re.search(r"^\s*(?:import|from)\s+(?:pytest|unittest)\b", text, re.M)
    return "add_argument" in text and not tests


def find_scripts(root: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for role, candidates in SCRIPT_CANDIDATES.items():
        present = [c for c in candidates if (root / c).is_file()]
        present = [c for c in present if not c.endswith("test.py") or _is_command_script(root / c)]
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


# Name tokens of the few-sample data sets repos ship for a quick run (`mini_supervisely`, `train_mini`).
LITE_TOKENS = frozenset({"lite", "mini", "tiny", "toy"})
ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
TIPC_DATA = "test_tipc/data"  # where TIPC repos keep (or unpack) their lite data
# Files a data folder does not hold: a folder with any of these is code (`deploy/lite/` is Paddle Lite).
_CODE_SUFFIXES = frozenset(
    {
        ".py",
        ".java",
        ".cc",
        ".cpp",
        ".c",
        ".h",
        ".hpp",
        ".js",
        ".ts",
        ".kt",
        ".gradle",
        ".sh",
        ".go",
        ".rs",
        ".swift",
        ".m",
        ".mm",
        ".cmake",
        ".ipynb",
    }
)
_SKIP = frozenset(
    {"output", "node_modules", "__pycache__", "venv", ".venv", "site-packages", "build", "dist"}
)
# Top folders of code, configs and docs: `configs/pp_humanseg_lite/` is a model's config, not data.
_NOT_DATA_TOPS = frozenset(
    {"configs", "config", "docs", "doc", "deploy", "tools", "scripts", "tests", "test_tipc"}
)
_DOC_SUFFIXES = (".txt", ".md", ".json", ".yaml", ".yml", ".rst", ".html")
_MAX_SCAN_FILES = 20_000  # a folder bigger than this is not looked into any further


def lite_named(name: str) -> bool:
    """`mini_supervisely`, `train_mini`, `lite_data`, `ucf_tiny.zip`: a name token marks few-sample data."""
    stem = _archive_stem(name)
    tokens = {t for t in re.split(r"[^a-z]+", stem.lower()) if t}
    return bool(tokens & LITE_TOKENS) or ("lite" in stem.lower() and "data" in stem.lower())


def _archive_stem(name: str) -> str:
    for suffix in ARCHIVE_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _skipped(rel: tuple[str, ...]) -> bool:
    return any(p.startswith(".") or p in _SKIP for p in rel) or rel[:2] in (("test_tipc", "output"),)


def _data_files(directory: Path) -> list[Path] | None:
    """The files of a data folder; None when it holds code, fewer than two data files (lists, configs and
    docs aside), or too many to be a lite data set's."""
    files: list[Path] = []
    for path in directory.rglob("*"):
        if path.is_file():
            if path.suffix.lower() in _CODE_SUFFIXES:
                return None
            files.append(path)
            if len(files) > _MAX_SCAN_FILES:
                return None
    data = [f for f in files if not f.name.endswith(_DOC_SUFFIXES)]
    return files if len(data) >= 2 else None


def _lite_archives(root: Path) -> list[Path]:
    """Lite-data archives at the top level or one folder down (`test_images/lite_data.tar`), top first."""
    found: list[Path] = []
    for pattern in ("*", "*/*"):
        for p in sorted(root.glob(pattern)):
            rel = p.relative_to(root).parts
            if rel[0] in ("test_tipc", "output") or rel[0].startswith("."):
                continue
            if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES) and lite_named(p.name):
                found.append(p)
    return found


def _lite_dirs(root: Path) -> list[Path]:
    """Lite-data folders at the top level: `*lite*data*`, then `*_lite*`."""
    dirs = [p for p in sorted(root.iterdir()) if p.is_dir() and ("lite" in p.name and "data" in p.name)]
    dirs += [
        p for p in sorted(root.glob("*_lite*")) if p.is_dir() and p not in dirs and not p.name.startswith(".")
    ]
    return dirs


def _named_dirs(root: Path) -> list[Path]:
    """Data folders named as lite data one or two levels down (`data/mini_set`, `SIDD_patches/train_mini`).

    Split folders of one data set (`SIDD_patches/train_mini`, `SIDD_patches/val_mini`) stand for their parent.
    """
    hits: list[Path] = []
    for pattern in ("*", "*/*"):
        for p in sorted(root.glob(pattern)):
            rel = p.relative_to(root).parts
            named = p.is_dir() and not _skipped(rel) and rel[0] not in _NOT_DATA_TOPS and lite_named(p.name)
            if named and _data_files(p) is not None:
                hits.append(p)
    out: list[Path] = []
    for p in hits:
        siblings = [h for h in hits if h.parent == p.parent]
        chosen = p.parent if len(siblings) > 1 and p.parent != root else p
        if chosen not in out:
            out.append(chosen)
    return out


def _tipc_data(root: Path) -> tuple[list[Path], list[Path]]:
    """(folders, archives) in test_tipc/data: the repo's own TIPC lite data; lite names first."""
    base = root / TIPC_DATA
    if not base.is_dir():
        return [], []
    entries = sorted(base.iterdir(), key=lambda p: (not lite_named(p.name), p.name))
    dirs = [p for p in entries if p.is_dir() and not p.name.startswith(("_", ".")) and _data_files(p)]
    archives = [p for p in entries if p.is_file() and p.name.endswith(ARCHIVE_SUFFIXES)]
    return dirs, archives


def _archive_files(archive: Path) -> list[str]:
    """The archive's file names (no leading `./`, no `__MACOSX/`); none when it cannot be read."""
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                names = [i.filename for i in zf.infolist() if not i.is_dir()]
        else:
            with tarfile.open(archive) as tf:
                names = [m.name for m in tf.getmembers() if m.isfile()]
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError):
        return []
    names = [n[2:] if n.startswith("./") else n for n in names]
    return [n for n in names if not n.startswith("__MACOSX/") and "/." not in "/" + n]


def _from_archive(root: Path, archive: Path, origin: str) -> LiteData:
    """The folder an archive unpacks to: in test_tipc/data it unpacks in place (as the TIPC prepare scripts
    do), elsewhere at the repo root (`tar -xf test_images/lite_data.tar` creates `./lite_data`)."""
    in_tipc = archive.parent == root / TIPC_DATA
    dest = archive.parent if in_tipc else root
    names = _archive_files(archive)
    tops = {n.split("/", 1)[0] for n in names if "/" in n}
    has_top = bool(names) and len(tops) == 1 and all("/" in n for n in names)
    directory = dest / next(iter(tops)) if has_top else dest / _archive_stem(archive.name)
    inside = [(dest / n) if has_top else (directory / n) for n in names]
    files = tuple(p.relative_to(root).as_posix() for p in inside)
    return _lite(root, directory, archive, has_top, dest, files, origin)


def _lite(
    root: Path,
    directory: Path,
    archive: Path | None,
    has_top: bool,
    dest: Path,
    listed: tuple[str, ...],
    origin: str,
) -> LiteData:
    """LiteData for a folder (listed from disk when it is there, else from the archive's names)."""
    if directory.is_dir():
        files = tuple(p.relative_to(root).as_posix() for p in sorted(directory.rglob("*")) if p.is_file())
    else:
        files = listed
    images = tuple(sorted(f for f in files if f.endswith(IMAGE_SUFFIXES)))[:50]
    arrays = tuple(f for f in files if f.endswith((".npy", ".npz")) and "input" in f.rsplit("/", 1)[-1])
    # Arrays saved beside the data set (`test_tipc/data/example.npy`) are inference inputs too.
    if directory.parent == root / TIPC_DATA:
        arrays += tuple(
            p.relative_to(root).as_posix() for p in sorted(directory.parent.glob("*.np[yz]")) if p.is_file()
        )
    arrays = tuple(sorted(arrays, key=lambda a: ("input" not in a.rsplit("/", 1)[-1], a)))
    return LiteData(
        dir=directory.relative_to(root).as_posix(),
        archive=archive.relative_to(root).as_posix() if archive else None,
        archive_has_top_dir=has_top,
        images=images,
        input_arrays=arrays,
        train_samples=_listed_train_samples(directory) or train_samples(list(files)),
        extract_to=dest.relative_to(root).as_posix() if dest != root else ".",
        files=files,
        origin=origin,
    )


def find_lite_data(root: Path) -> LiteData | None:
    """The repo's lite data, strongest evidence first: a top-level `lite_data/` or `*lite*.tar`, the repo's
    own test_tipc/data (folders, then archives to unpack), then data folders and archives named as lite data
    (`data/mini_*`, `SIDD_patches/{train,val}_mini`, `mini_ucf.zip`)."""
    dirs, archives = _lite_dirs(root), _lite_archives(root)
    if dirs:
        named = next((a for a in archives if _archive_stem(a.name) == dirs[0].name), None)
        if named is not None:
            return _from_archive(root, named, f"{dirs[0].name}/ (also packed as {named.name})")
        return _lite(root, dirs[0], None, True, root, (), f"{dirs[0].name}/")
    if archives:
        return _from_archive(root, archives[0], f"{archives[0].relative_to(root).as_posix()}, unpacked")
    tipc_dirs, tipc_archives = _tipc_data(root)
    if tipc_dirs:
        rel = tipc_dirs[0].relative_to(root).as_posix()
        return _lite(root, tipc_dirs[0], None, True, root, (), f"{rel}/ (the repo's TIPC data folder)")
    if tipc_archives:
        rel = tipc_archives[0].relative_to(root).as_posix()
        return _from_archive(root, tipc_archives[0], f"{rel}, unpacked in place")
    named_dirs = _named_dirs(root)
    if named_dirs:
        rel = named_dirs[0].relative_to(root).as_posix()
        return _lite(root, named_dirs[0], None, True, root, (), f"{rel}/ (named as few-sample data)")
    return None


_MAX_LIST_BYTES = 1024 * 1024


def _listed_train_samples(directory: Path) -> int | None:
    """Lines of the training list a data set ships (`train_list.txt`, `ucf101_train_split_1.txt`): the
    samples, where files alone miscount them (a video is a folder of frames)."""
    counts = []
    for path in sorted(directory.rglob("*")) if directory.is_dir() else []:
        name = path.name.lower()
        listing = path.suffix.lower() in (".txt", ".list", ".csv") and "train" in name and path.is_file()
        if listing and path.stat().st_size <= _MAX_LIST_BYTES:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
            counts.append(sum(1 for line in lines if line.strip()))
    return min((c for c in counts if c > 0), default=None)


def train_samples(paths: list[str]) -> int | None:
    """How many samples a lite training split holds: the files under a `train*` folder, else every data
    file, counted by name without suffix, so that paired folders (`gt/x.png` + `input/x.png`,
    `Images/x.jpg` + `Annotations/x.png`) count one sample per pair."""
    data = [p for p in paths if not p.endswith(_DOC_SUFFIXES)]
    train = [p for p in data if any(part.lower().startswith("train") for part in p.split("/")[:-1])]
    stems = {posixpath.splitext(posixpath.basename(p))[0] for p in train or data}
    return len(stems) or None


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
