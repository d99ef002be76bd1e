"""The commands a repo's docs give, planned as steps: seed 004 §4.1.3 ("按照文档操作步骤") and §4.2.3
("根据文档说明流程") ask that following the docs works, so tipc follows them.

    plan.plan_documented(repo, model_name=..., config=..., overrides=...) -> Documented

The shell code blocks of README.md, `test_tipc/docs/*.md` and `deploy/**/README*.md` (in that order, each
doc starting in the repo root) are read into commands; `cd` and `export` carry over to the commands after
them in the same doc. Every command is one of (the vocabulary is data: specs/documented/commands.yaml):

- run: a python or shell script, or a file utility (`tar -xf`): a step, run as written, with the chain's
  switches (`--device cpu` adds the script's CPU flag; the runner puts `--python` in place of `python3`);
- setup: fetches or installs (`git clone`, `pip install`, `wget`, `conda`): a step run only with
  `--network`, otherwise listed with what it would fetch;
- chain: the TIPC scripts (`bash test_tipc/test_train_inference_python.sh`, `tipc run`): tipc runs the
  chain itself, so they are listed, not run twice;
- handled / outside / template: stopping processes (tipc stops what it started), tools outside the
  acceptance's python chain (cmake, adb, paddle2onnx), usage templates with placeholders: listed, not run.

What a command needs decides whether it can run: an input the repo lacks that an earlier command makes is
a dependency on that step (a skipped download skips what needs it, with the reason); a full dataset the
repo does not ship is replaced by the TIPC config's lite data for the same option, stated as a
substitution; missing weights or archives at the repo's top (downloads) make the step not applicable.
Pure apart from reading the docs, the config and the scripts' flags.

Modules, each importing only those listed before it: `model` (the values), `reading` (the docs and their
code blocks), `words` (shell words and paths), `configs` (the lite data and backbones of the TIPC configs),
`state`, `classify`, `inputs` (the planner's state and its two layers: what a command is, what it needs and
makes), `planner` (`_Planner`, doc by doc), `plan` (`plan_documented`).
"""
