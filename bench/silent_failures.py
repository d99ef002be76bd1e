"""The silent-failure benchmark: how well tipc's rules catch what real TIPC repos get wrong while their own
bash script says "Run successfully".

For each repo (the demo, examples/lenet_digits, and the real repos of ../shared/real-repos that
bench/silent/repos.yaml lists with their ground truth) it runs `tipc check --format json` (rulesets
tipc-basic + competition, the repo's own switches) on the clean repo, then plants each kind of
bench/silent/catalogue.yaml that applies into a copy (bench/silent/injectors.py) and checks that copy. It
prints the kind x repo matrix (caught by which rule, with its evidence, or missed; n/a with the reason),
then the false alarms: rules failing on a clean repo that its ground truth does not list as failing.

One check at a time; the full matrix takes about an hour on 2 cores. Rules are judged on this from now on,
and again on repos the kinds were not written for: the injectors work from each repo's own run, never from
its name.

    python bench/silent_failures.py [--repos DIR] [--repo NAME ...] [--kinds ID ...] [--json OUT]
                                    [--markdown OUT] [--work DIR] [--resume] [--keep]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.silent import model, render  # noqa: E402
from bench.silent.runner import RepoResult, run_repo  # noqa: E402

DEFAULT_REPOS = Path(os.environ.get("TIPC_REAL_REPOS", ROOT.parent / "shared" / "real-repos"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="folder of the real-repo tarballs")
    parser.add_argument(
        "--repo", action="append", default=[], help="only this repo (repeatable; the demo: lenet_digits)"
    )
    parser.add_argument("--kinds", nargs="+", default=[], metavar="ID", help="only these kinds")
    parser.add_argument("--json", type=Path, help="write the matrix as JSON here")
    parser.add_argument("--markdown", type=Path, help="write the printed matrix here too")
    parser.add_argument("--work", type=Path, help="work folder (default: a temporary one)")
    parser.add_argument("--resume", action="store_true", help="reuse the cells a previous run left in --work")
    parser.add_argument("--keep", action="store_true", help="keep the checked copies")
    args = parser.parse_args(argv)
    try:
        kinds = catalogue = model.load_catalogue()
        repos = model.load_repos(kinds=kinds)
    except model.DataError as exc:
        print(f"silent_failures: {exc}", file=sys.stderr)
        return 2
    if args.kinds:
        unknown = sorted(set(args.kinds) - {k.id for k in kinds})
        if unknown:
            print(f"silent_failures: unknown kind(s) {unknown}", file=sys.stderr)
            return 2
        kinds = tuple(k for k in catalogue if k.id in args.kinds)
    names = {r.name for r in repos} | {"lenet_digits"}
    if set(args.repo) - names:
        print(f"silent_failures: unknown repo(s) {sorted(set(args.repo) - names)}", file=sys.stderr)
        return 2
    chosen = [r for r in repos if not args.repo or r.name in args.repo]
    missing = [
        r.name for r in chosen if r.source == "tarball" and not (args.repos / f"{r.name}.tar.gz").is_file()
    ]
    if missing:
        print(f"silent_failures: skipped, no tarball in {args.repos}: {', '.join(missing)}", file=sys.stderr)
        chosen = [r for r in chosen if r.name not in missing]
    work = args.work or Path(tempfile.mkdtemp(prefix="tipc-silent-"))
    work.mkdir(parents=True, exist_ok=True)
    results: list[RepoResult] = []
    for spec in chosen:
        results.append(
            run_repo(spec, kinds, work, args.repos, resume=args.resume, keep=args.keep, catalogue=catalogue)
        )
    text = render.markdown(kinds, results)
    print(text)
    if args.markdown:
        args.markdown.write_text(text)
    if args.json:
        args.json.write_text(json.dumps(render.as_json(kinds, results), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
