"""What several test files need, in one place (import from the module, e.g. `from tests.helpers.trees import
tree_hashes`):

- `children`: `tipc(*args)` runs `python -m tipc` in a child as a user does; `tipc_env()` its environment.
- `demo`: the demo repo (`DEMO`), `copy_demo(dest)`, and the shared run and check values (`DemoRun`,
  `DemoCheck`) that tests/conftest.py's `demo_run` and `demo_checked` fixtures hand out.
- `ports`: `free_port()`, and a demo copy's own serving port (`use_free_port`, `port_of`).
- `trees`: `write_tree(root, files)` builds a repo from a dict, `tree_hashes(root)` says whether it changed,
  `tar_bytes(files)` packs one.
- `git`: `git(repo, *args)` with a fixed identity (commits work under any $HOME).
- `pythons`: the other interpreters on this machine (pyenv's, then PATH).
- `processes`: which processes a test left behind.
- `once`: results made once per pytest run and shared by the xdist workers.
- `browser`: headless Chromium (screenshots, the DOM after scripts ran, layout measures).
- `guards`: the suite's guards against touching the real $HOME or the network (tests/conftest.py applies
  them).
"""
