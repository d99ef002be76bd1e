from __future__ import annotations

from pathlib import Path

import pytest

from tipc.core.errors import ConfigError
from tipc.judge.causes import (
    OPERATORS,
    Cause,
    default_path,
    diagnose,
    diagnose_log,
    load_catalogue,
    read_tail,
)

DATA = Path(__file__).parent / "data" / "causes"
TRACE = 'Traceback (most recent call last):\n  File "tools/train.py", line 8, in <module>\n'


def ids(causes: list[Cause]) -> list[str]:
    return [c.id for c in causes]


def first(output: str, **facts: object) -> Cause:
    found = diagnose(output, **facts)  # type: ignore[arg-type]
    assert found, f"no cause for {output!r}"
    return found[0]


# --- real logs captured on this machine (tests/judge/data/causes/README.md)
# -----------------------------------


def test_real_paddle3_pdmodel_log() -> None:
    [cause] = diagnose_log(DATA / "nf.log", exit_code=1)
    assert cause.id == "paddle3-export-format"
    assert cause.switch == "--paddle-compat export"
    assert "inference.pdmodel" in cause.evidence and "NotFound" in cause.evidence
    assert "FLAGS_enable_pir_api=0" in cause.remedy


def test_real_zero_d_index_log() -> None:
    assert ids(diagnose_log(DATA / "zd.log")) == ["zero-d-tensor-index"]


def test_real_gpu_on_cpu_build_log() -> None:
    cause = diagnose_log(DATA / "gpu.log")[0]
    assert cause.id == "gpu-flag-on-cpu-build"
    assert "not compiled with CUDA" in cause.evidence


def test_real_numpy_alias_log_names_the_alias() -> None:
    cause = diagnose_log(DATA / "np.log")[0]
    assert cause.id == "numpy-removed-alias"
    assert "`np.int`" in cause.cause


def test_real_multi_gpu_launch_on_cpu_needs_the_argv() -> None:
    argv = ["python3.7", "-m", "paddle.distributed.launch", "--gpus=0,1", "train.py"]
    assert ids(diagnose_log(DATA / "launch.log", argv=argv))[0] == "multi-gpu-on-cpu"
    # without the launch argv, "substring not found" alone explains nothing
    assert "multi-gpu-on-cpu" not in ids(diagnose_log(DATA / "launch.log", argv=["python", "train.py"]))


def test_real_lite_data_missing_log() -> None:
    cause = diagnose_log(DATA / "step6_train_nodata.log", exit_code=1)[0]
    assert cause.id == "lite-data-missing"
    assert "./data/train" in cause.evidence
    assert "prepare.sh" in cause.remedy and "--no-prepare" in cause.remedy


def test_real_dataloader_worker_segfault_log() -> None:
    cause = diagnose_log(DATA / "worker_crash.log", exit_code=1)[0]
    assert cause.id == "dataloader-worker-crash"
    assert "segmentation fault encountered in DataLoader workers" in cause.evidence


def test_real_module_not_found_names_the_module() -> None:
    [cause] = diagnose_log(DATA / "can_train.log")
    assert cause.id == "module-not-found"
    assert "`paddlevision`" in cause.cause and "paddlevision" in cause.remedy


def test_real_download_failure_log() -> None:
    cause = diagnose_log(DATA / "download.log")[0]
    assert cause.id == "weights-download-failed"
    assert cause.switch == "--network"


def test_real_prepare_wget_without_network() -> None:
    cause = diagnose_log(DATA / "wget.log", exit_code=4)[0]
    assert cause.id == "weights-download-failed"
    assert "videotag.bj.bcebos.com" in cause.evidence


def test_real_prepare_pip_install_without_network() -> None:
    [cause] = diagnose_log(DATA / "pip.log", exit_code=1)
    assert cause.id == "pip-install-failed"
    assert "`pip install unrar`" in cause.cause


# --- the other catalogue entries, on real-looking excerpts ---------------------------------------------


def test_auto_log_missing_is_not_the_generic_module_cause() -> None:
    out = TRACE + "    import auto_log\nModuleNotFoundError: No module named 'auto_log'\n"
    assert ids(diagnose(out)) == ["missing-auto-log"]


def test_paddle_fluid_import() -> None:
    out = TRACE + "    import paddle.fluid as fluid\nModuleNotFoundError: No module named 'paddle.fluid'\n"
    assert ids(diagnose(out)) == ["paddle-fluid-removed"]


@pytest.mark.parametrize(
    "out",
    [
        "test_tipc/test_train_inference_python.sh: line 285: python3.7: command not found",
        "FileNotFoundError: [Errno 2] No such file or directory: 'python3.7'",
    ],
)
def test_interpreter_missing(out: str) -> None:
    cause = first(out)
    assert cause.id == "python-interpreter-missing"
    assert cause.switch == "--python"


@pytest.mark.parametrize(
    "out",
    [
        "RuntimeError: Download from https://paddle-hapi.bj.bcebos.com/models/resnet18.pdparams failed. "
        "Retry limit reached",
        "urllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>",
        "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='x.org', port=443): Max retries "
        "exceeded with url: /w.pdparams",
    ],
)
def test_download_failures(out: str) -> None:
    assert first(out).id == "weights-download-failed"


@pytest.mark.parametrize(
    "out",
    [
        "Cannot use GPU because you have installed CPU version PaddlePaddle.",
        "AssertionError: CUDA is not available",
    ],
)
def test_gpu_on_cpu_build(out: str) -> None:
    assert first(out).id == "gpu-flag-on-cpu-build"


@pytest.mark.parametrize(
    "out",
    [
        "W1123 22:01:01.1 gpu_resources.cc:1] Please use PaddlePaddle with GPU version.",
        "device set error, use default device...",
    ],
)
def test_gpu_fallback_warning(out: str) -> None:
    assert first(out).id == "gpu-fallback-warning"


def test_the_exception_comes_before_a_gpu_fallback_warning() -> None:
    out = (
        "device set error, use default device...\n"
        + TRACE
        + "FileNotFoundError: [Errno 2] No such file or directory: './data/train'\n"
    )
    assert ids(diagnose(out)) == ["lite-data-missing", "gpu-fallback-warning"]


@pytest.mark.parametrize(
    "out",
    [
        "RuntimeError: DataLoader reader thread raised an exception.",
        "RuntimeError: DataLoader worker (pid 4242) exited unexpectedly",
        "SystemError: (Fatal) Blocking queue is killed because the data reader raises an exception.",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm)",
    ],
)
def test_dataloader_worker_crash(out: str) -> None:
    found = diagnose(out + "\nBus error (core dumped)", exit_code=135)
    assert ids(found)[0] == "dataloader-worker-crash"
    assert "num_workers" in found[0].remedy


@pytest.mark.parametrize(
    ("out", "facts"),
    [
        ("epoch 0 iter 3", {"signal_name": "SIGSEGV"}),
        ("epoch 0 iter 3", {"exit_code": -11}),
        ("Segmentation fault (core dumped)", {"exit_code": 139}),
    ],
)
def test_native_crash_from_output_or_facts(out: str, facts: dict[str, object]) -> None:
    cause = first(out, **facts)
    assert cause.id == "native-crash"
    assert "num_workers" in cause.remedy


def test_signal_evidence_names_the_signal() -> None:
    assert first("epoch 0", signal_name="SIGSEGV").evidence == "killed by SIGSEGV"
    assert first("epoch 0", exit_code=-11).evidence == "exit code -11"


def test_invalid_index_to_scalar() -> None:
    out = TRACE + "    score = out[0][0]\nIndexError: invalid index to scalar variable.\n"
    assert ids(diagnose(out)) == ["zero-d-tensor-index"]


@pytest.mark.parametrize("name", ["float", "bool", "object", "long"])
def test_numpy_aliases(name: str) -> None:
    cause = first(f"AttributeError: module 'numpy' has no attribute '{name}'.")
    assert cause.id == "numpy-removed-alias"
    assert f"np.{name}" in cause.cause


@pytest.mark.parametrize(
    "out",
    [
        "AttributeError: module 'PIL.Image' has no attribute 'ANTIALIAS'",
        "AttributeError: type object 'Image' has no attribute 'ANTIALIAS'",
        "AttributeError: 'ImageDraw' object has no attribute 'textsize'",
    ],
)
def test_pillow_removed(out: str) -> None:
    assert first(out).id == "pillow-removed-api"


@pytest.mark.parametrize(
    ("out", "cause_id"),
    [
        ("FileNotFoundError: [Errno 2] No such file or directory: './data/train'", "lite-data-missing"),
        ("AssertionError: ./lite_data/bottle not exists", "lite-data-missing"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: './test_tipc/data/Set2/'",
            "lite-data-missing",
        ),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: './log/resnet18/final.pdparams'",
            "weights-missing",
        ),
        ("ValueError: The ``path`` (./log/m/final.pdparams) to load model not exists.", "weights-missing"),
        (
            "FileNotFoundError: [Errno 2] No such file or directory: './output/inference.pdmodel'",
            "paddle3-export-format",
        ),
    ],
)
def test_missing_paths_by_kind(out: str, cause_id: str) -> None:
    assert ids(diagnose(out)) == [cause_id]


@pytest.mark.parametrize(
    "out",
    [
        "FileNotFoundError: [Errno 2] No such file or directory: 'config.yaml'",
        "FileNotFoundError: [Errno 2] No such file or directory: 'test_tipc/output/m/log.txt'",
    ],
)
def test_other_missing_files_are_not_called_lite_data(out: str) -> None:
    assert diagnose(out) == []


def test_tsne_on_tiny_data() -> None:
    out = (
        '  File "eval.py", line 168, in plot_tsne\n    tsne_results = tsne.fit_transform(embeds)\n'
        "ValueError: perplexity must be less than n_samples\n"
    )
    assert ids(diagnose(out)) == ["tsne-tiny-data"]


@pytest.mark.parametrize(
    ("out", "facts"),
    [
        ("MemoryError", {}),
        ("Killed", {}),
        ("", {"exit_code": -9}),
        ("", {"exit_code": 137}),
    ],
)
def test_out_of_memory(out: str, facts: dict[str, object]) -> None:
    assert first(out, **facts).id == "out-of-memory"


def test_address_in_use() -> None:
    assert first("OSError: [Errno 98] Address already in use").id == "address-in-use"


def test_generic_module_names_the_module_and_comes_last() -> None:
    out = "ModuleNotFoundError: No module named 'tqdm'\nAttributeError: module 'numpy' has no attribute 'int'"
    found = diagnose(out)
    assert ids(found) == ["numpy-removed-alias", "module-not-found"]
    assert "`tqdm`" in found[1].cause


def test_nothing_known_gives_no_cause() -> None:
    assert diagnose("epoch 1 loss 0.5\nsomething odd happened", exit_code=1) == []


def test_evidence_is_the_last_matching_line_without_colour() -> None:
    warning = "device set error, use default device"
    out = f"\x1b[31m{warning}...\x1b[0m\nloss 1\n{warning}!"
    assert first(out).evidence == "device set error, use default device!"
    assert first("\x1b[1mIndexError: too many indices for tensor of dimension 0\x1b[0m").id == (
        "zero-d-tensor-index"
    )


def test_cause_json_round_trip() -> None:
    cause = first("ModuleNotFoundError: No module named 'auto_log'")
    assert Cause.from_json(cause.to_json()) == cause
    assert Cause.from_json({"id": "x"}) == Cause("x", "", "", None, "")


def test_diagnose_log_reads_only_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    head = "ModuleNotFoundError: No module named 'early'\n"
    log.write_text(head + ("x" * 99 + "\n") * 3000 + "MemoryError\n", encoding="utf-8")
    assert len(read_tail(log)) <= 200_000
    assert ids(diagnose_log(log)) == ["out-of-memory"]
    assert diagnose_log(tmp_path / "missing.log", exit_code=-9)[0].id == "out-of-memory"


# --- the catalogue file and its schema -----------------------------------------------------------------


def test_shipped_catalogue_loads_and_has_unique_ids() -> None:
    cat = load_catalogue(default_path())
    assert len(cat) >= 16
    assert len(set(cat.ids())) == len(cat.ids())
    assert cat.ids()[-1] == "module-not-found"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "causes.yaml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD_ENTRY = "  - id: x\n    when:\n      - output: 'boom'\n    cause: c\n    remedy: r\n"


@pytest.mark.parametrize(
    ("body", "line", "message"),
    [
        ("schema: other/1\ncauses: []\n", 1, "schema"),
        ("schema: tipc.causes/1\nextra: 1\ncauses:\n" + GOOD_ENTRY, 2, "unknown key 'extra'"),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - eval: '1'\n"
            "    cause: c\n    remedy: r\n",
            5,
            "unknown operator 'eval'",
        ),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - output: '(unclosed'\n"
            "    cause: c\n    remedy: r\n",
            5,
            "not a valid regular expression",
        ),
        ("schema: tipc.causes/1\ncauses:\n" + GOOD_ENTRY + GOOD_ENTRY, 8, "duplicate cause id 'x'"),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - output: 'boom'\n"
            "    cause: 'needs {nope}'\n    remedy: r\n",
            6,
            "{nope}",
        ),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - argv: 'launch'\n"
            "    cause: c\n    remedy: r\n",
            4,
            "needs an output",
        ),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - signal: SIGNOPE\n"
            "    cause: c\n    remedy: r\n",
            5,
            "expected a signal name such as SIGSEGV",
        ),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - output: 'a'\n"
            "      - file_exists: /etc/x\n"
            "    cause: c\n    remedy: r\n",
            6,
            "relative path",
        ),
        (
            "schema: tipc.causes/1\ncauses:\n  - id: x\n    when:\n      - output: 'a'\n    cause: c\n"
            "    remedy: r\n    switch: network\n",
            8,
            "tipc option",
        ),
        ("schema: tipc.causes/1\ncauses: [\n", 3, "invalid YAML"),
    ],
)
def test_schema_errors_are_located(tmp_path: Path, body: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_catalogue(write(tmp_path, body))
    assert info.value.line == line, info.value.render()
    assert message in info.value.message
    assert info.value.render().startswith(f"{tmp_path / 'causes.yaml'}:{line}:")


def test_file_facts_need_the_working_directory(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema: tipc.causes/1\ncauses:\n  - id: stale\n    when:\n      - output: 'Cannot open'\n"
        "      - file_exists: out/inference.json\n    cause: c\n    remedy: r\n",
    )
    cat = load_catalogue(path)
    (tmp_path / "out").mkdir()
    assert cat.diagnose("Cannot open x", cwd=tmp_path) == []
    (tmp_path / "out" / "inference.json").write_text("{}", encoding="utf-8")
    assert [c.id for c in cat.diagnose("Cannot open x", cwd=tmp_path)] == ["stale"]
    assert cat.diagnose("Cannot open x") == []  # unknown without cwd: no cause rests on it


def test_operator_registry_is_closed() -> None:
    assert set(OPERATORS) == {
        "output",
        "output_absent",
        "argv",
        "exit_code",
        "signal",
        "file_exists",
        "file_missing",
        "any",
    }


def test_records_holding_causes_stay_cheap_to_import(tmp_path: Path) -> None:
    import sys

    from tipc.execute.proc import capture

    code = (
        "import sys, tipc.execute.record; "
        "print(sorted(m for m in sys.modules if m.startswith('tipc.judge.rules')))"
    )
    rc, out = capture([sys.executable, "-c", code], cwd=Path(__file__).parents[2])
    assert rc == 0 and out.strip() == "[]", out


def test_no_pattern_backtracks_badly_on_hostile_lines() -> None:
    import time

    load_catalogue()
    hostile = [
        "FileNotFoundError: " + "a/" * 990 + "x",
        "FileNotFoundError: " + "data/" * 390 + "x y",
        "not found " + " " * 1980 + "z",
        "No such file or directory " + "'" * 1900 + "q",
        "DataLoader worker " * 110,
        "No such file or directory: " * 70,
        "Cannot open file " + "a" * 1980,
        "No module named '" + "a." * 990,
    ]
    argv = ["python", "-m", "paddle.distributed.launch", "--gpus=0,1"]
    for line in hostile:
        out = "\n".join([line] * 100)  # a ~200 KB log tail of such lines
        started = time.perf_counter()
        diagnose(out, argv=argv, exit_code=1)
        # linear patterns take ~0.05 s here; one that backtracks quadratically took 4.5 s on the first line
        assert time.perf_counter() - started < 1.5, line[:40]


def test_output_absent_holds_only_when_no_line_matches(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "schema: tipc.causes/1\ncauses:\n  - id: quiet-crash\n    when:\n      - exit_code: [1]\n"
        "      - output_absent: 'Traceback'\n    cause: c\n    remedy: r\n",
    )
    cat = load_catalogue(path)
    assert [(c.id, c.evidence) for c in cat.diagnose("done", exit_code=1)] == [("quiet-crash", "exit code 1")]
    assert cat.diagnose(TRACE, exit_code=1) == []


def test_every_operator_has_a_matcher() -> None:
    from tipc.judge.causes import _MATCHERS

    assert set(_MATCHERS) == set(OPERATORS)
