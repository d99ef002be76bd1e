"""The acceptance batches of `tipc review`, too heavy for the default test suite.

Default: 12 submissions made from the demo, reviewed together (default rulesets); what each must get:
  clean (folder), clean.tar.gz, clean.zip, clean git repo@v1    PASS
  git repo@HEAD whose newer commit crashes training             FAIL, a basic.train rule, step train/ named
  no licence (.tar.gz)                                          FAIL artefacts.licence
  notebook importing a missing helper (.zip)                    FAIL artefacts.helpers_present
  export script crashes                                         FAIL, step export/ named
  no TIPC config                                                ERROR, tipc check's own message
  hostile: writes outside its area, reaches for the network    FAIL, nothing written outside, no network
  hangs                                                         TIMEOUT within budget + grace
  eats memory                                                   FAIL, the memory limit named
then: no process left, nothing written outside the work areas, a second run skips all 12.

--real-repos DIR: the five real repos (DIR/*.tar.gz) reviewed together (`--python`, `--device cpu`,
`--paddle-compat export`), then each checked alone with `tipc check` and the same options; prints, per repo,
the overall verdict and the rules whose verdicts differ between the two.

    python bench/review_batch.py [--jobs 2] [--budget 300]
    python bench/review_batch.py --real-repos ../shared/real-repos --python .venv-repos/bin/python
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.helpers.processes import leftovers  # noqa: E402
from tests.review import submissions as subs  # noqa: E402


def _env() -> dict[str, str]:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env.pop("FLAGS_enable_pir_api", None)
    return env


def _tipc(*args: str) -> tuple[int, dict[str, Any], str]:
    res = subprocess.run(
        [sys.executable, "-m", "tipc", *args], capture_output=True, text=True, env=_env(), check=False
    )
    try:
        data = json.loads(res.stdout)
    except ValueError:
        data = {}
    return res.returncode, data, res.stderr


def _demo_batch(tmp: Path) -> tuple[list[str], dict[str, tuple[str, str | None]], list[Path]]:
    made = tmp / "made"
    made.mkdir()
    out = tmp / "out"
    canaries = [tmp / "canary.txt", out / "escaped.txt", made / "escaped.txt"]
    expected: dict[str, tuple[str, str | None]] = {}
    args: list[str] = []

    def add(arg: Path | str, name: str, verdict: str, rule: str | None) -> None:
        args.append(str(arg))
        expected[name] = (verdict, rule)

    hangs = subs.copy_demo(made / "hangs")
    subs.hang(hangs)
    add(hangs, "hangs", "TIMEOUT", "review.budget")
    clean = subs.copy_demo(made / "clean")
    add(clean, "clean", "PASS", None)
    tgz = subs.copy_demo(made / "tgz" / "clean_tgz")
    (tgz / "SUBMISSION.txt").write_text("tgz\n")
    add(subs.as_tar_gz(tgz, tmp / "clean_tgz.tar.gz"), "clean_tgz", "PASS", None)
    zipped = subs.copy_demo(made / "zip" / "clean_zip")
    (zipped / "SUBMISSION.txt").write_text("zip\n")
    add(subs.as_zip(zipped, tmp / "clean_zip.zip"), "clean_zip", "PASS", None)
    git = subs.git_repo(subs.copy_demo(made / "gitrepo"))
    add(f"{git}@v1", "gitrepo@v1", "PASS", None)
    subs.train_crash(git)
    subs.git_commit_all(git, "a change that breaks training")
    add(f"{git}@HEAD", "gitrepo@HEAD", "FAIL", "basic.train")
    lic = subs.copy_demo(made / "lic" / "no_licence")
    subs.no_licence(lic)
    add(subs.as_tar_gz(lic, tmp / "no_licence.tar.gz"), "no_licence", "FAIL", "artefacts.licence")
    helper = subs.copy_demo(made / "helper" / "missing_helper")
    subs.missing_helper(helper)
    add(
        subs.as_zip(helper, tmp / "missing_helper.zip"), "missing_helper", "FAIL", "artefacts.helpers_present"
    )
    export = subs.copy_demo(made / "broken_export")
    subs.broken_export(export)
    add(export, "broken_export", "FAIL", None)
    noconf = subs.copy_demo(made / "no_config")
    subs.no_config(noconf)
    add(noconf, "no_config", "ERROR", "check.exit_2")
    hostile = subs.copy_demo(made / "hostile")
    subs.hostile(canaries)(hostile)
    add(hostile, "hostile", "FAIL", "basic.train")
    hog = subs.copy_demo(made / "memory_hog")
    subs.eat_memory(hog)
    add(hog, "memory_hog", "FAIL", "basic.train")
    return args, expected, canaries


def demo(args: argparse.Namespace) -> int:
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="tipc-review-batch-") as tmp_name:
        tmp = Path(tmp_name)
        paths, expected, canaries = _demo_batch(tmp)
        out = tmp / "out"
        opts = [
            "--out",
            str(out),
            "--format",
            "json",
            "--jobs",
            str(args.jobs),
            "--budget",
            str(args.budget),
            "--memory-limit",
            args.memory_limit,
        ]
        t0 = time.monotonic()
        code, summary, stderr = _tipc("review", *paths, *opts)
        wall = time.monotonic() - t0
        if not summary:
            print(stderr[-3000:])
            return 3
        print(f"{len(paths)} submissions, --jobs {args.jobs}: {wall:.1f} s, exit {code}\n")
        for row in summary["submissions"]:
            want_verdict, want_rule = expected[row["name"]]
            ok = row["verdict"] == want_verdict and (
                want_rule is None or (row["first_failure"] or "").startswith(want_rule)
            )
            must_say = {
                "memory_hog": "memory limit",
                "broken_export": "step export/",
                "hostile": "download",
                "gitrepo@HEAD": "step train/",
            }.get(row["name"])
            if must_say is not None and must_say not in (row["cause"] or ""):
                ok = False
            if row["name"] == "hangs" and row["wall_s"] > args.budget + 20:
                ok = False
            mark = "ok " if ok else "BAD"
            print(
                f"{mark} {row['name']:16s} {row['verdict']:8s} {row['wall_s'] or 0:6.1f} s  "
                f"{(row['first_failure'] or '')}: {(row['cause'] or '')[:110]}"
            )
            if not ok:
                problems.append(f"{row['name']}: expected {want_verdict} {want_rule or ''}")
        left = leftovers(str(out))
        escaped = [str(c) for c in canaries if c.exists()]
        escaped += [p for p in [os.path.expanduser("~/.tipc_review_escape")] if os.path.exists(p)]
        print(f"\nprocesses left: {len(left)}; files written outside the work areas: {escaped or 'none'}")
        problems += [f"left running: {p}" for p in left] + [f"escaped: {p}" for p in escaped]
        if code != 1:
            problems.append(f"exit {code}, expected 1")
        t0 = time.monotonic()
        _, again, _ = _tipc("review", *paths, *opts)
        cached = sum(1 for r in again.get("submissions", []) if r["cached"])
        print(f"second run: {cached}/{len(paths)} skipped as unchanged, {time.monotonic() - t0:.1f} s")
        if cached != len(paths):
            problems.append("the second run checked unchanged submissions again")
    print("\n" + ("every verdict as expected" if not problems else "PROBLEMS:\n  " + "\n  ".join(problems)))
    return 0 if not problems else 1


def _rules(report_path: str | None) -> dict[str, str]:
    if not report_path or not Path(report_path).is_file():
        return {}
    report = json.loads(Path(report_path).read_text())
    return {r["id"]: r["verdict"] for r in report.get("rules", [])}


def real_repos(args: argparse.Namespace) -> int:
    archives = sorted(Path(args.real_repos).glob("*.tar.gz"))
    if not archives:
        print(f"no *.tar.gz in {args.real_repos}")
        return 2
    common = ["--python", args.python, "--device", "cpu", "--paddle-compat", "export"]
    # the same rulesets both ways (the review's default adds submission-artefacts to check's default)
    common += ["--ruleset", "tipc-basic", "--ruleset", "competition", "--ruleset", "submission-artefacts"]
    with tempfile.TemporaryDirectory(prefix="tipc-review-real-") as tmp_name:
        tmp = Path(tmp_name)
        t0 = time.monotonic()
        code, summary, stderr = _tipc(
            "review",
            *map(str, archives),
            "--out",
            str(tmp / "out"),
            "--format",
            "json",
            "--jobs",
            str(args.jobs),
            "--budget",
            str(args.budget),
            *common,
        )
        print(
            f"review of {len(archives)} real repos, --jobs {args.jobs}: "
            f"{time.monotonic() - t0:.0f} s, exit {code}"
        )
        if not summary:
            print(stderr[-3000:])
            return 3
        rows = {r["name"]: r for r in summary["submissions"]}
        differences = 0
        for archive in archives:
            name = archive.name[: -len(".tar.gz")]
            alone_dir = tmp / "alone"
            alone_dir.mkdir(exist_ok=True)
            with tarfile.open(archive) as tar:
                tar.extractall(alone_dir, filter="data")
            repo = alone_dir / name
            report_dir = tmp / "alone-reports" / name
            t1 = time.monotonic()
            code_alone, report, _ = _tipc(
                "check", str(repo), "--format", "json", "--report-dir", str(report_dir), *common
            )
            alone = {r["id"]: r["verdict"] for r in report.get("rules", [])}
            row = rows.get(name, {})
            together = _rules(row.get("report_json"))
            diff = sorted(k for k in set(alone) | set(together) if alone.get(k) != together.get(k))
            differences += len(diff)
            print(
                f"{name:36s} review {row.get('verdict', '?'):7s} alone exit {code_alone} "
                f"({time.monotonic() - t1:.0f} s); rules differing: {diff or 'none'}"
            )
            for k in diff:
                print(f"    {k}: review {together.get(k)} / alone {alone.get(k)}")
            shutil.rmtree(repo, ignore_errors=True)
        print(f"\n{differences} rule verdict(s) differ between the review and the checks one by one")
    return 0 if differences == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=float, default=300.0, help="per-submission budget (default: 300)")
    parser.add_argument("--memory-limit", default="1500M", help="per-check memory limit (default: 1500M)")
    parser.add_argument("--real-repos", metavar="DIR", help="review the real repos in DIR instead")
    parser.add_argument(
        "--python",
        default=str(ROOT / ".venv-repos" / "bin" / "python"),
        help="interpreter for the real repos (default: .venv-repos/bin/python)",
    )
    args = parser.parse_args()
    return real_repos(args) if args.real_repos else demo(args)


if __name__ == "__main__":
    raise SystemExit(main())
