"""Compare inference logs with the ground truth in test_tipc/results/ (numpy allclose semantics).

    python test_tipc/compare_results.py --gt_file=./test_tipc/results/python_*.txt \
        --log_file=./test_tipc/output/python_infer_*.log --atol=1e-5 --rtol=1e-4

Ground-truth line: `<image path>\t{"class_id": 3, "prob": 0.905353}`; the key is the image's base name.
Log line: `image_name: <path>, class_id: <int>, prob: <float>` (the first line containing the key is used).
Precision buckets (fp32/fp16/int8) come from the file names, as in PaddlePaddle's TIPC. Exit status 1 on any
mismatch or missing image, 2 on unusable input.

    python test_tipc/compare_results.py --make_gt --log_file=<one infer log> --gt_file=<new results file>

writes a ground-truth file from a log (how test_tipc/results/ was produced, from the shipped weights).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys

import numpy as np

RESULT_RE = re.compile(
    r"image_name:\s*(?P<path>\S+),\s*class_id:\s*(?P<class_id>-?\d+),\s*prob:\s*(?P<prob>\S+)"
)
PRECISIONS = ("fp32", "fp16", "int8")


def precision_of(name: str) -> str | None:
    return next((p for p in PRECISIONS if p in os.path.basename(name)), None)


def parse_log(path: str) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            match = RESULT_RE.search(line)
            if match:
                key = os.path.basename(match["path"])
                results.setdefault(key, {"class_id": int(match["class_id"]), "prob": float(match["prob"])})
    return results


def parse_gt(path: str) -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    with open(path, encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                image, value = line.rstrip("\n").split("\t", 1)
                results[os.path.basename(image)] = json.loads(value)
            except ValueError as exc:
                raise SystemExit(f"{path}:{line_no}: expected '<image path>\\t<json>': {exc}") from None
    return results


def compare(gt_path: str, log_path: str, atol: float, rtol: float) -> bool:
    gt = parse_gt(gt_path)
    pred = parse_log(log_path)
    ok = True
    for key, expected in gt.items():
        if key not in pred:
            print(f"{log_path}: no result for {key}")
            ok = False
            continue
        names = sorted(expected)
        want = np.array([expected[n] for n in names], dtype=np.float64)
        got = np.array([pred[key].get(n, np.nan) for n in names], dtype=np.float64)
        if not np.allclose(got, want, atol=atol, rtol=rtol, equal_nan=False):
            expected_text = dict(zip(names, want.tolist()))
            got_text = dict(zip(names, got.tolist()))
            print(f"{key}: expected {expected_text}, got {got_text}")
            ok = False
    if ok:
        print(f"Assert allclose passed! The results of {log_path} and {gt_path} are consistent!")
    else:
        print(f"The results of {log_path} and the results of {gt_path} are inconsistent!")
    return ok


def make_gt(log_path: str, gt_path: str) -> None:
    with open(log_path, encoding="utf-8", errors="replace") as f:
        matches = [m for m in map(RESULT_RE.search, f) if m]
    if not matches:
        raise SystemExit(f"{log_path}: no 'image_name: ..., class_id: ..., prob: ...' lines")
    with open(gt_path, "w", encoding="utf-8") as out:
        for m in matches:
            out.write(
                f"{m['path']}\t{json.dumps({'class_id': int(m['class_id']), 'prob': float(m['prob'])})}\n"
            )
    print(f"wrote {len(matches)} results to {gt_path}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--gt_file", required=True)
    parser.add_argument("--log_file", required=True)
    parser.add_argument("--atol", type=float, default=1e-3)
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--make_gt", action="store_true", help="write --gt_file from --log_file")
    args = parser.parse_args()
    if args.make_gt:
        make_gt(args.log_file, args.gt_file)
        return 0

    gts = {precision_of(p): p for p in sorted(glob.glob(args.gt_file)) if precision_of(p)}
    logs = [p for p in sorted(glob.glob(args.log_file)) if precision_of(p)]
    if not gts or not logs:
        print(
            f"nothing to compare: gt {args.gt_file!r} -> {len(gts)} files, "
            f"log {args.log_file!r} -> {len(logs)} files"
        )
        return 2
    ok = True
    for log_path in logs:
        gt_path = gts.get(precision_of(log_path)) or gts.get("fp32")
        if gt_path is None:
            print(f"{log_path}: no ground truth for its precision")
            ok = False
            continue
        ok = compare(gt_path, log_path, args.atol, args.rtol) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
