"""The runner on tiny `sys.executable -c` steps: real processes, real exit codes, real process groups."""

from __future__ import annotations

import json
import os
import shlex
import signal
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil
import pytest

from tests.helpers.ports import free_port
from tests.helpers.trees import tree_hashes, write_tree
from tipc.core.errors import UserError
from tipc.core.results import parse_results_log, status_line
from tipc.core.steps import Mode, Plan, Stage, Status, Step
from tipc.execute.observer import NullObserver
from tipc.execute.own_parts import paddle_version_on_path as _paddle_version_on_path
from tipc.execute.record import RECORD_FILENAME, StepResult, load_record, record_location
from tipc.execute.runner import (
    RunOptions,
    execute,
    exit_code,
    find_record,
    paddle_version,
    python_substitutions,
    record_path,
)
from tipc.execute.runner import interpreters as interpreters_mod
from tipc.execute.runner import servers as servers_mod
from tipc.execute.runner.facts import _Facts

PY = sys.executable
OUT = "test_tipc/output/m/lite_train_lite_infer"
FAST = RunOptions(probe_versions=False, step_timeout_s=60)

REPO_FILES = {
    "train.py": "print('train')\n",
    "test_tipc/configs/m/train_infer_python.txt": "=" * 27 + "train_params" + "=" * 27 + "\n",
    "lite_data/a.txt": "1 2 3\n",
    "sub/keep.txt": "keep\n",
}


def step(step_id: str, code: str, stage: Stage = Stage.OTHER, **kw: Any) -> Step:
    return Step(step_id, stage, (PY, "-c", textwrap.dedent(code)), **kw)


def make_plan(repo: Path, steps: list[Step], fmt: str = "template") -> Plan:
    return Plan(
        config_path="test_tipc/configs/m/train_infer_python.txt",
        repo=str(repo),
        mode=Mode.LITE_TRAIN_LITE_INFER,
        dialect="template",
        model_name="m",
        output_dir=OUT,
        results_log=f"{OUT}/results_python.log",
        status_format=fmt,
        steps=tuple(steps),
    )


def statuses(record: Any) -> dict[str, Status]:
    return {r.step_id: r.status for r in record.results}


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_tree(tmp_path / "repo", REPO_FILES)


def test_real_exit_codes_crashes_and_logs(repo: Path) -> None:
    before = tree_hashes(repo, skip=OUT, dirs=True)
    plan = make_plan(
        repo,
        [
            step("ok", "print('fine')"),
            step("exit3", "import sys; print('bye', file=sys.stderr); sys.exit(3)"),
            step("raise", "raise RuntimeError('boom')"),
            step("abort", "import os; os.abort()"),
        ],
    )
    record = execute(plan, FAST)
    assert statuses(record) == {
        "ok": Status.PASSED,
        "exit3": Status.FAILED,
        "raise": Status.FAILED,
        "abort": Status.FAILED,
    }
    by_id = {r.step_id: r for r in record.results}
    assert by_id["ok"].exit_code == 0
    assert by_id["exit3"].exit_code == 3 and by_id["exit3"].reason == "exit code 3"
    assert by_id["raise"].exit_code == 1
    assert by_id["abort"].exit_code == -signal.SIGABRT and "SIGABRT" in by_id["abort"].reason
    # stdout and stderr both land in the step's log (the template script loses train stderr: bug 35)
    assert (repo / str(by_id["exit3"].log)).read_text() == "bye\n"
    assert "RuntimeError: boom" in (repo / str(by_id["raise"].log)).read_text()
    assert str(by_id["ok"].log).startswith(f"{OUT}/tipc_logs/")
    assert exit_code(record) == 1
    assert tree_hashes(repo, skip=OUT, dirs=True) == before
    assert all(gone(r.pid) for r in record.results if r.pid)


def test_failed_input_blocks_dependents_transitively(repo: Path) -> None:
    plan = make_plan(
        repo,
        [
            step("train", "import sys; sys.exit(2)", Stage.TRAIN),
            step("eval", "print(1)", Stage.EVAL, depends_on=("train",)),
            step("export", "print(1)", Stage.EXPORT, depends_on=("train",)),
            step("infer", "print(1)", Stage.INFER, depends_on=("export",)),
            step("other", "print(1)"),
        ],
        fmt="ocr",
    )
    record = execute(plan, FAST)
    assert statuses(record) == {
        "train": Status.FAILED,
        "eval": Status.BLOCKED,
        "export": Status.BLOCKED,
        "infer": Status.BLOCKED,
        "other": Status.PASSED,
    }
    infer = record.result("infer")
    assert infer is not None and infer.exit_code is None and infer.pid is None
    assert "export" in infer.reason and "root cause: train failed" in infer.reason
    assert not (repo / OUT / "tipc_logs" / "infer.log").exists()  # never ran
    lines = parse_results_log((repo / OUT / "results_python.log").read_text().splitlines(), "ocr")
    # blocked steps are reported as failed, so CI aggregators that count lines still see them
    assert [p.ok for p in lines] == [False, False, False, False, True]
    assert exit_code(record) == 1


def test_status_lines_use_the_plan_format_and_status_command(repo: Path) -> None:
    plan = make_plan(
        repo,
        [
            step("a", "print(1)", status_command="python a.py > x.log 2>&1 ", log=f"{OUT}/a.log"),
            step("b", "raise SystemExit(1)", status_command="python b.py"),
        ],
        fmt="seg_det",
    )
    execute(plan, FAST)
    text = (repo / OUT / "results_python.log").read_text()
    assert text == (
        status_line(
            "seg_det", ok=True, command="python a.py > x.log 2>&1 ", model_name="m", log_path=f"./{OUT}/a.log"
        )
        + "\n"
        + status_line(
            "seg_det", ok=False, command="python b.py", model_name="m", log_path=f"./{OUT}/tipc_logs/b.log"
        )
        + "\n"
    )
    execute(plan, RunOptions(probe_versions=False, no_color=True))
    lines = (repo / OUT / "results_python.log").read_text().splitlines()
    assert len(lines) == 4  # appended across runs, as the scripts do
    assert "\x1b" not in lines[2] and "\x1b" not in lines[3]


def test_timeout_stops_the_step_and_its_grandchild(repo: Path) -> None:
    pid_file = repo / OUT / "pids.json"
    code = f"""
        import json, subprocess, sys, time
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(json.dumps([g.pid]))
        print("spawned", flush=True)
        time.sleep(120)
    """
    plan = make_plan(
        repo, [step("hang", code, timeout_s=2.0), step("next", "print(1)", depends_on=("hang",))]
    )
    record = execute(plan, FAST)
    hang = record.result("hang")
    assert hang is not None and hang.status is Status.TIMEOUT and hang.exit_code is None
    assert "2 s" in hang.reason and "step limit" in hang.reason
    assert statuses(record)["next"] is Status.BLOCKED
    grandchild = json.loads(pid_file.read_text())[0]
    assert hang.pid is not None and gone(hang.pid) and gone(grandchild)


def test_run_timeout_blocks_steps_not_started(repo: Path) -> None:
    plan = make_plan(repo, [step("slow", "import time; time.sleep(60)"), step("later", "print(1)")])
    record = execute(plan, RunOptions(probe_versions=False, run_timeout_s=1.0))
    slow, later = record.result("slow"), record.result("later")
    assert slow is not None and slow.status is Status.TIMEOUT and "run limit" in slow.reason
    assert later is not None and later.status is Status.BLOCKED and "run limit" in later.reason


def test_only_skips_other_stages(repo: Path) -> None:
    plan = make_plan(
        repo,
        [
            step("train", "print(1)", Stage.TRAIN),
            step("infer", "print(2)", Stage.INFER, depends_on=("train",)),
        ],
    )
    record = execute(plan, RunOptions(probe_versions=False, only_stages=("infer",)))
    train = record.result("train")
    assert train is not None and train.status is Status.SKIPPED and "--only infer" in train.reason
    assert statuses(record)["infer"] is Status.PASSED  # a stage left out on purpose does not block
    assert exit_code(record) == 0
    lines = (repo / OUT / "results_python.log").read_text().splitlines()
    assert len(lines) == 1  # skipped steps write no status line


def test_env_cwd_and_env_delta(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIPC_TEST_DROP", "x")
    code = """
        import os
        print(os.getcwd())
        print(os.environ.get("CUDA_VISIBLE_DEVICES"), os.environ.get("TIPC_TEST_DROP"))
    """
    plan = make_plan(
        repo,
        [step("s", code, cwd="sub", env=(("CUDA_VISIBLE_DEVICES", "0"),), unset_env=("TIPC_TEST_DROP",))],
    )
    record = execute(plan, FAST)
    r = record.result("s")
    assert r is not None and r.status is Status.PASSED
    assert (repo / str(r.log)).read_text().splitlines() == [str((repo / "sub").resolve()), "0 None"]
    delta = dict(r.env_delta)
    assert delta["CUDA_VISIBLE_DEVICES"] == "0" and delta["TIPC_TEST_DROP"] is None


def test_shell_step_runs_through_the_shell(repo: Path) -> None:
    plan = make_plan(repo, [Step("sh", Stage.OTHER, ("sh", "-c", "echo hello | tr a-z A-Z"), shell=True)])
    record = execute(plan, FAST)
    r = record.result("sh")
    assert r is not None and r.status is Status.PASSED
    assert (repo / str(r.log)).read_text() == "HELLO\n"


def test_missing_interpreter_and_missing_cwd_are_failures_not_crashes(repo: Path) -> None:
    plan = make_plan(
        repo,
        [
            Step("nobin", Stage.OTHER, ("/nonexistent/tool", "x")),
            step("nocwd", "print(1)", cwd="no/such/dir"),
        ],
    )
    record = execute(plan, FAST)
    nobin, nocwd = record.result("nobin"), record.result("nocwd")
    assert nobin is not None and nobin.status is Status.FAILED and "cannot start" in nobin.reason
    assert nocwd is not None and nocwd.status is Status.FAILED and "does not exist" in nocwd.reason


def test_log_outside_the_output_dir_is_redirected(repo: Path) -> None:
    before = tree_hashes(repo, skip=OUT, dirs=True)
    plan = make_plan(
        repo, [step("s", "print(1)", log="test_tipc/output/m/lite_train_lite_infer_export_0.log")]
    )
    record = execute(plan, FAST)
    r = record.result("s")
    assert r is not None and str(r.log).startswith(f"{OUT}/tipc_logs/")
    assert any("outside the output dir" in n for n in record.notes)
    assert tree_hashes(repo, skip=OUT, dirs=True) == before


def test_python_substitution(repo: Path) -> None:
    missing = "python3.0"  # a config's interpreter that does not exist here
    s = Step(
        "s",
        Stage.OTHER,
        (missing, "-c", "import sys; print(sys.executable)"),
        status_command=f"{missing} -c x",
    )
    plan = make_plan(repo, [s])
    mapping, notes = python_substitutions(plan, FAST)
    assert mapping == {missing: PY} and "python3.0" in notes[0]
    record = execute(plan, FAST)
    r = record.result("s")
    assert r is not None and r.status is Status.PASSED and r.argv[0] == PY
    assert any("python3.0" in n for n in record.notes)
    line = (repo / OUT / "results_python.log").read_text()
    assert f"{PY} -c x!" in line
    forced, _ = python_substitutions(make_plan(repo, [step("t", "1")]), RunOptions(python="/opt/py"))
    assert forced == {PY: "/opt/py"}


def test_record_written_and_found(repo: Path) -> None:
    plan = make_plan(repo, [step("a", "print(1)")])
    record = execute(plan, FAST)
    path = repo / OUT / RECORD_FILENAME
    assert find_record(repo, plan) == path
    loaded = load_record(path)
    assert loaded.results == record.results and loaded.ended is not None
    assert loaded.host["cpu_count"] == os.cpu_count()
    other = make_plan(repo, [step("a", "print(1)")])
    assert find_record(repo, Plan(**{**other.__dict__, "mode": "whole_infer"})) is None


def test_rerun_failed_reuses_passed_steps(repo: Path) -> None:
    counter = repo / OUT / "count.txt"
    flag = repo / OUT / "flag"
    plan = make_plan(
        repo,
        [
            step(
                "a",
                f"p={str(counter)!r}; import os; n=int(open(p).read()) if os.path.exists(p) else 0; "
                f"open(p,'w').write(str(n+1))",
            ),
            step(
                "b", f"import os,sys; sys.exit(0 if os.path.exists({str(flag)!r}) else 1)", depends_on=("a",)
            ),
        ],
    )
    first = execute(plan, FAST)
    assert statuses(first) == {"a": Status.PASSED, "b": Status.FAILED}
    flag.write_text("")
    second = execute(plan, RunOptions(probe_versions=False, rerun_failed=True))
    assert statuses(second) == {"a": Status.PASSED, "b": Status.PASSED}
    a = second.result("a")
    assert a is not None and a.reused and counter.read_text() == "1"


class _InterruptAt(NullObserver):
    def __init__(self, step_id: str) -> None:
        self.step_id = step_id

    def step_started(self, index: int, total: int, step: Step) -> None:
        if step.id == self.step_id:
            raise KeyboardInterrupt


def test_interrupt_between_steps_writes_record_and_resume_continues(repo: Path) -> None:
    plan = make_plan(repo, [step("a", "print(1)"), step("b", "print(2)"), step("c", "print(3)")])
    record = execute(plan, FAST, _InterruptAt("b"))
    assert statuses(record) == {"a": Status.PASSED, "b": Status.INTERRUPTED}
    assert exit_code(record) == 130
    on_disk = load_record(repo / OUT / RECORD_FILENAME)
    assert statuses(on_disk) == statuses(record)
    resumed = execute(plan, RunOptions(probe_versions=False, resume=True))
    assert statuses(resumed) == {"a": Status.PASSED, "b": Status.PASSED, "c": Status.PASSED}
    assert [r.reused for r in resumed.results] == [True, False, False]


class _CtrlCOnLine(NullObserver):
    """Sends the runner a real SIGINT once the step says it is running (like Ctrl-C in a terminal)."""

    def step_output(self, step: Step, line: str) -> None:
        if line == "running":
            os.kill(os.getpid(), signal.SIGINT)


def test_sigint_during_a_step_stops_its_group_and_nothing_else(repo: Path) -> None:
    pid_file = repo / OUT / "pids.json"
    code = f"""
        import json, subprocess, sys, time
        g = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pid_file)!r}, "w").write(json.dumps([g.pid]))
        print("running", flush=True)
        time.sleep(120)
    """
    plan = make_plan(repo, [step("long", code), step("after", "print(1)")])
    record = execute(plan, FAST, _CtrlCOnLine())
    assert statuses(record) == {"long": Status.INTERRUPTED}
    long = record.result("long")
    assert long is not None and long.pid is not None and gone(long.pid)
    assert gone(json.loads(pid_file.read_text())[0])
    assert exit_code(record) == 130
    assert psutil.Process().is_running()  # the runner itself is untouched


SERVER = """
import http.server, sys
port = int(sys.argv[1])
once = len(sys.argv) > 2
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", port), H)
if once:
    srv.handle_request()  # readiness probe
    srv.handle_request()  # the first client
    sys.exit(0)
srv.serve_forever()
"""

CLIENT = "import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())"
# For a `once` server, which exits after its first client: that client also waits until the port refuses
# connections (the server process has closed its socket on exit), so whether the runner sees the server gone
# before the next client does not depend on how quickly it notices a step's end.
CLIENT_UNTIL_SERVER_GONE = (
    CLIENT
    + """
import socket, time, urllib.parse
port = urllib.parse.urlsplit(sys.argv[1]).port
for _ in range(1000):
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        break
    time.sleep(0.01)
time.sleep(0.1)
"""
)


def _server_plan(repo: Path, port: int, *, once: bool = False, clients: int = 1, **kw: Any) -> Plan:
    server_argv = (PY, "-c", SERVER, str(port), *(["once"] if once else []))
    steps = [
        Step("serve", Stage.SERVE, server_argv, background=True, ready_url=f"http://127.0.0.1:{port}/", **kw)
    ]
    for i in range(clients):
        steps.append(
            Step(
                f"client{i}",
                Stage.CLIENT,
                (PY, "-c", CLIENT_UNTIL_SERVER_GONE if once else CLIENT, f"http://127.0.0.1:{port}/"),
                depends_on=("serve",),
            )
        )
    steps.append(step("after", "print('no server needed')"))
    return make_plan(repo, steps)


def test_background_server_is_polled_kept_for_dependents_then_stopped(repo: Path) -> None:
    record = execute(_server_plan(repo, free_port(), clients=2), FAST)
    assert statuses(record) == {
        "serve": Status.PASSED,
        "client0": Status.PASSED,
        "client1": Status.PASSED,
        "after": Status.PASSED,
    }
    serve = record.result("serve")
    client1 = record.result("client1")
    assert serve is not None and client1 is not None
    assert "stopped by tipc" in serve.reason and serve.pid is not None and gone(serve.pid)
    assert serve.ended is not None and client1.ended is not None and serve.ended >= client1.ended
    assert (repo / str(client1.log)).read_text() == "ok\n"


def test_server_dying_while_dependents_run_is_a_failure(repo: Path) -> None:
    record = execute(_server_plan(repo, free_port(), once=True, clients=2), FAST)
    st = statuses(record)
    assert st["serve"] is Status.FAILED and st["client0"] is Status.PASSED and st["client1"] is Status.BLOCKED
    serve = record.result("serve")
    assert serve is not None and "while its dependents ran" in serve.reason and serve.exit_code == 0


def test_server_exiting_before_ready_fails_and_blocks(repo: Path) -> None:
    port = free_port()
    plan = make_plan(
        repo,
        [
            Step(
                "serve",
                Stage.SERVE,
                (PY, "-c", "import sys; sys.exit(4)"),
                background=True,
                ready_url=f"tcp://127.0.0.1:{port}",
            ),
            Step("client", Stage.CLIENT, (PY, "-c", "print(1)"), depends_on=("serve",)),
        ],
    )
    record = execute(plan, FAST)
    serve = record.result("serve")
    assert serve is not None and serve.status is Status.FAILED and serve.exit_code == 4
    assert "exit code 4" in serve.reason
    assert statuses(record)["client"] is Status.BLOCKED


def test_server_never_ready_times_out_and_is_stopped(repo: Path) -> None:
    port = free_port()  # nobody listens there
    plan = make_plan(
        repo,
        [
            Step(
                "serve",
                Stage.SERVE,
                (PY, "-c", "import time; time.sleep(120)"),
                background=True,
                ready_url=f"tcp://127.0.0.1:{port}",
                timeout_s=1.0,
            ),
            Step("client", Stage.CLIENT, (PY, "-c", "print(1)"), depends_on=("serve",)),
        ],
    )
    record = execute(plan, FAST)
    serve = record.result("serve")
    assert serve is not None and serve.status is Status.TIMEOUT and "never answered" in serve.reason
    assert serve.pid is not None and gone(serve.pid)
    assert statuses(record)["client"] is Status.BLOCKED


def test_server_without_ready_url_is_ready_at_once_and_noted(repo: Path) -> None:
    serve = Step("serve", Stage.SERVE, (PY, "-c", "import time; time.sleep(60)"), background=True)
    client = Step("client", Stage.CLIENT, (PY, "-c", "print(1)"), depends_on=("serve",))
    record = execute(make_plan(repo, [serve, client]), FAST)
    assert statuses(record) == {"serve": Status.PASSED, "client": Status.PASSED}
    r = record.result("serve")
    assert r is not None and r.reason.startswith("ready after") and "stopped by tipc" in r.reason
    assert r.pid is not None and gone(r.pid)
    assert any("background step without ready_url" in n for n in record.notes), record.notes


def test_server_that_cannot_start_fails_without_a_process(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(argv: Any, **kw: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr("tipc.execute.proc.Background", refused)
    missing = Step("nodir", Stage.SERVE, (PY, "-c", "print(1)"), background=True, cwd="no/such/dir")
    absent = Step("noexe", Stage.SERVE, (str(repo / "server"),), background=True)
    record = execute(make_plan(repo, [missing, absent]), FAST)
    nodir, noexe = record.result("nodir"), record.result("noexe")
    assert nodir is not None and nodir.status is Status.FAILED and nodir.pid is None
    assert nodir.reason == "working directory no/such/dir does not exist"
    assert noexe is not None and noexe.status is Status.FAILED and noexe.pid is None
    assert noexe.reason == f"cannot start {str(repo / 'server')!r}: Permission denied"
    assert noexe.started is not None and noexe.ended is not None


def test_server_whose_port_another_process_holds_is_not_ready(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tipc.execute.sandbox import ports

    # Something else answering on the port once the server is up: the server step fails and is stopped.
    monkeypatch.setattr(ports, "held_by_others", lambda port, tree: "pid 1 (someone)")
    record = execute(_server_plan(repo, free_port()), FAST)
    serve = record.result("serve")
    assert serve is not None and serve.status is Status.FAILED
    assert "the port is not held by the server tipc started (held by pid 1 (someone))" in serve.reason
    assert serve.pid is not None and gone(serve.pid)
    assert statuses(record)["client0"] is Status.BLOCKED


def test_unknown_dependency_blocks(repo: Path) -> None:
    record = execute(make_plan(repo, [step("x", "print(1)", depends_on=("ghost",))]), FAST)
    x = record.result("x")
    assert x is not None and x.status is Status.BLOCKED and "ghost" in x.reason


def test_resources_are_sampled(repo: Path) -> None:
    # burn CPU time (not wall time): on a loaded machine a wall-clock loop gets less CPU
    code = "import time; b = bytearray(60 * 1024 * 1024)\nwhile time.process_time() < 0.8: pass"
    record = execute(make_plan(repo, [step("mem", code)]), FAST)
    r = record.result("mem")
    assert r is not None and r.status is Status.PASSED
    res = r.resources
    assert res.peak_rss_bytes is not None and res.peak_rss_bytes >= 60 * 1024 * 1024
    assert res.cpu_time_s is not None and res.cpu_time_s > 0.5
    assert len(res.samples) >= 2
    data = json.loads((repo / OUT / RECORD_FILENAME).read_text())
    step_json = data["results"][0]["resources"]
    assert step_json["peak_gpu_mem_bytes"] in ("n/a",) or isinstance(step_json["peak_gpu_mem_bytes"], int)


def test_step_result_round_trips_new_fields() -> None:
    r = StepResult("a", Status.PASSED, pid=12, reused=True)
    assert StepResult.from_json(r.to_json()) == r


@dataclass(frozen=True)
class _NewerStep(Step):
    """Step fields landing with other branches (status_log, requires_*); the runner reads them if present."""

    status_log: str | None = None
    requires_modules: tuple[str, ...] = ()
    requires_reason: str = ""


def test_missing_module_skips_the_step_and_its_dependents(repo: Path) -> None:
    plan = make_plan(
        repo,
        [
            _NewerStep(
                "serve",
                Stage.SERVE,
                (PY, "-c", "print(1)"),
                requires_modules=("json", "no_such_mod_xyz"),
                requires_reason="Paddle Serving is not installable here",
            ),
            step("client", "print(1)", Stage.CLIENT, depends_on=("serve",)),
            _NewerStep("ok", Stage.OTHER, (PY, "-c", "print(1)"), requires_modules=("json",)),
        ],
    )
    record = execute(plan, FAST)
    assert statuses(record) == {"serve": Status.SKIPPED, "client": Status.SKIPPED, "ok": Status.PASSED}
    serve, client = record.result("serve"), record.result("client")
    assert (
        serve is not None and serve.reason == "Paddle Serving is not installable here [needs no_such_mod_xyz]"
    )
    assert client is not None and "serve was skipped" in client.reason
    assert exit_code(record) == 0


def test_status_log_names_the_scripts_log_path(repo: Path) -> None:
    s = _NewerStep("train", Stage.TRAIN, (PY, "-c", "print(1)"), status_command="python train.py",
                   status_log=f"{OUT}/norm_train_gpus_0_autocast_null.log")  # fmt: skip
    execute(make_plan(repo, [s], fmt="ocr"), FAST)
    line = (repo / OUT / "results_python.log").read_text().rstrip("\n")
    assert line == status_line(
        "ocr",
        ok=True,
        command="python train.py",
        model_name="m",
        log_path=f"./{OUT}/norm_train_gpus_0_autocast_null.log",
    )
    execute(make_plan(repo, [s], fmt="clas"), FAST)
    last = (repo / OUT / "results_python.log").read_text().splitlines()[-1]
    assert f" - {repo.resolve()}/{OUT}/norm_train_gpus_0_autocast_null.log ! " in last


def test_only_keeps_the_server_its_clients_need(repo: Path) -> None:
    port = free_port()
    plan = _server_plan(repo, port)
    record = execute(plan, RunOptions(probe_versions=False, only_stages=("client",)))
    assert statuses(record) == {
        "serve": Status.PASSED,
        "client0": Status.PASSED,
        "after": Status.SKIPPED,
    }


def test_interrupt_while_a_server_runs_stops_the_server(repo: Path) -> None:
    record = execute(_server_plan(repo, free_port()), FAST, _InterruptAt("client0"))
    serve, client = record.result("serve"), record.result("client0")
    assert serve is not None and serve.status is Status.PASSED and "interrupted" in serve.reason
    assert serve.pid is not None and gone(serve.pid)
    assert client is not None and client.status is Status.INTERRUPTED
    assert exit_code(record) == 130


def test_interrupt_while_a_server_is_polled_stops_it(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def ctrl_c(url: str, timeout_s: float) -> bool:
        raise KeyboardInterrupt

    monkeypatch.setattr(servers_mod, "probe", ctrl_c)
    port = free_port()
    record = execute(_server_plan(repo, port), FAST)
    assert statuses(record) == {"serve": Status.INTERRUPTED}
    assert exit_code(record) == 130
    left = [p for p in psutil.Process().children(recursive=True) if str(port) in " ".join(p.cmdline())]
    assert left == []  # the server's group was stopped


def test_previous_record_of_another_mode_is_not_reused(repo: Path) -> None:
    plan = make_plan(repo, [step("a", "print(1)")])
    execute(plan, FAST)
    other_mode = Plan(**{**plan.__dict__, "mode": "whole_infer"})
    record = execute(other_mode, RunOptions(probe_versions=False, rerun_failed=True))
    a = record.result("a")
    assert a is not None and not a.reused
    # OUT names model and mode, so another config of the same model and mode shares its record file
    other_config = Plan(**{**plan.__dict__, "config_path": "test_tipc/configs/m/train_linux_amp.txt"})
    assert record_path(other_config) == record_path(plan)
    record = execute(other_config, RunOptions(probe_versions=False, rerun_failed=True))
    a = record.result("a")
    assert a is not None and not a.reused
    assert any("another config or mode" in n for n in record.notes)


SHARED = "test_tipc/output"  # the template dialect's LOG_PATH: every model and mode log here


def shared_plan(
    repo: Path, steps: list[Step], mode: Mode = Mode.LITE_TRAIN_LITE_INFER, model: str = "m", config: str = ""
) -> Plan:
    return Plan(
        config_path=config or f"test_tipc/configs/{model}/train_infer_python.txt",
        repo=str(repo),
        mode=mode,
        dialect="template",
        model_name=model,
        output_dir=SHARED,
        results_log=f"{SHARED}/results_python.log",
        status_format="template",
        steps=tuple(steps),
    )


def test_shared_output_dir_keeps_a_record_per_mode_and_config(repo: Path) -> None:
    plans = [
        shared_plan(repo, [step("a", "print('lite')")]),
        shared_plan(repo, [step("a", "print('whole')")], mode=Mode.WHOLE_INFER),
        shared_plan(repo, [step("a", "print('n')")], model="n"),
        shared_plan(
            repo, [step("a", "print('amp')")], config="test_tipc/configs/m/train_amp_infer_python.txt"
        ),
    ]
    for plan in plans:
        assert exit_code(execute(plan, FAST)) == 0
    paths = [record_path(plan) for plan in plans]
    assert len(set(paths)) == len(plans)
    assert not (repo / SHARED / RECORD_FILENAME).exists()
    for plan, path in zip(plans, paths, strict=True):
        assert path == repo / record_location(plan) and path.is_relative_to(repo / SHARED)
        assert find_record(repo, plan) == path  # what `tipc check --reuse-run` reads
        on_disk = load_record(path)
        assert (on_disk.plan.mode, on_disk.plan.model_name, on_disk.plan.config_path) == (
            plan.mode,
            plan.model_name,
            plan.config_path,
        )
        assert on_disk.plan.steps == plan.steps


def test_resume_in_shared_output_dir_survives_another_mode(repo: Path) -> None:
    lite = shared_plan(repo, [step("a", "print(1)"), step("b", "print(2)"), step("c", "print(3)")])
    record = execute(lite, FAST, _InterruptAt("b"))
    assert statuses(record) == {"a": Status.PASSED, "b": Status.INTERRUPTED}
    # another mode runs in between: it used to overwrite the one shared record
    execute(shared_plan(repo, [step("a", "print(1)")], mode=Mode.WHOLE_INFER), FAST)
    resumed = execute(lite, RunOptions(probe_versions=False, resume=True))
    assert statuses(resumed) == {"a": Status.PASSED, "b": Status.PASSED, "c": Status.PASSED}
    assert [r.reused for r in resumed.results] == [True, False, False]


def test_changed_command_is_rerun_on_resume(repo: Path) -> None:
    execute(make_plan(repo, [step("a", "print(1)")]), FAST)
    record = execute(make_plan(repo, [step("a", "print(2)")]), RunOptions(probe_versions=False, resume=True))
    a = record.result("a")
    assert a is not None and not a.reused and (repo / str(a.log)).read_text() == "2\n"


def test_probe_without_a_listener_is_not_ready_and_a_bad_scheme_is_refused(repo: Path) -> None:
    from tipc.execute.serving.ready import probe

    port = free_port()
    assert not probe(f"http://127.0.0.1:{port}/", 0.5)
    assert not probe(f"tcp://127.0.0.1:{port}", 0.5)
    with pytest.raises(UserError):
        probe("ftp://x", 0.5)


def test_bad_ready_url_fails_the_step_without_starting_it(repo: Path) -> None:
    s = Step("serve", Stage.SERVE, (PY, "-c", "print(1)"), background=True, ready_url="ftp://127.0.0.1:1")
    record = execute(make_plan(repo, [s]), FAST)
    r = record.result("serve")
    assert r is not None and r.status is Status.FAILED and "ready_url" in r.reason and r.pid is None


def test_a_second_run_on_the_same_output_dir_is_refused(repo: Path) -> None:
    from tipc.execute.runner import LOCK_FILENAME
    from tipc.execute.runner.execution import _exclusive

    (repo / OUT).mkdir(parents=True)
    with _exclusive(repo / OUT / LOCK_FILENAME), pytest.raises(UserError, match="another tipc run"):
        execute(make_plan(repo, [step("a", "print(1)")]), FAST)
    record = execute(make_plan(repo, [step("a", "print(1)")]), FAST)  # free again afterwards
    assert statuses(record) == {"a": Status.PASSED}


def test_shell_step_interpreter_is_substituted(repo: Path) -> None:
    from tipc.execute.runner.interpreters import _substituted

    s = Step("s", Stage.OTHER, ("bash", "-c", "python3.0 x.py | tee y.log"), shell=True,
             status_command="python3.0 x.py | tee y.log")  # fmt: skip
    argv, status = _substituted(s, {"python3.0": "/opt/my python/bin/python"})
    assert argv == ("bash", "-c", "'/opt/my python/bin/python' x.py | tee y.log")
    assert status == "/opt/my python/bin/python x.py | tee y.log"


# ---------------------------------------------------------------- facts about the run, gathered beside steps


def _fake_python(folder: Path, body: str) -> Path:
    """An interpreter named like a config's `python3.9` (so the runner treats it as the steps' python)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "python3.9"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_versions_are_probed_beside_the_steps_and_a_missing_paddle_is_noted(
    repo: Path, tmp_path: Path
) -> None:
    no_site = _fake_python(tmp_path / "bin", f'exec "{PY}" -S "$@"')  # runs, but sees no site-packages
    plan = make_plan(repo, [Step("a", Stage.OTHER, (str(no_site), "-c", "print(1)"))])
    record = execute(plan, RunOptions(step_timeout_s=60))
    assert statuses(record) == {"a": Status.PASSED}
    assert record.python == str(no_site)
    assert record.paddle_version is None and record.git_commit is None  # tmp_path is no git checkout
    assert any(f"paddle is not importable by {no_site}" in n for n in record.notes)
    assert record.host["cpu_count"] == os.cpu_count()
    assert load_record(repo / OUT / RECORD_FILENAME) == record


def test_a_probe_still_running_is_stopped_on_cancel(tmp_path: Path) -> None:
    hangs = _fake_python(tmp_path / "bin", "exec sleep 60")
    facts = _Facts(str(hangs), tmp_path, probe_versions=True).start()
    while facts._running is None:  # bounded: the probe starts at once
        assert not facts.wait(0.01), "the probe ended before it could be cancelled"
    pid = facts._running
    assert pid is not None
    facts.cancel()
    assert facts.wait(30) and facts.paddle_version is None and gone(pid)


def test_the_environment_probe_is_stopped_on_cancel(tmp_path: Path) -> None:
    # Would answer the version query (the paddleversion.py probe) at once; the environment probe, asked
    # first, hangs: cancelled there, nothing more is asked.
    python = _fake_python(
        tmp_path / "bin", 'case "$1" in *paddleversion.py) echo 3.3.1; exit 0;; esac\nexec sleep 60'
    )
    facts = _Facts(str(python), tmp_path, probe_versions=True).start()
    deadline = time.monotonic() + 30

    def probing_environment() -> bool:  # the running probe is the hanging one (not git, not the version)
        pid = facts._running
        try:
            return pid is not None and b"sleep" in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False

    while not probing_environment() and time.monotonic() < deadline:
        assert not facts.wait(0.01), "the probes ended before the environment probe could be cancelled"
    pid = facts._running
    assert pid is not None
    facts.cancel()
    assert facts.wait(10) and gone(pid)
    assert facts.environment is not None  # says it could not run
    assert facts.paddle_version is None


def _answering_python(folder: Path, dist: str | None) -> Path:
    """Answers the environment probe (paddle_dist_version: `dist`) and the version probe (8.0.0), noting
    each call in folder/asked."""
    line = "TIPC_ENVPROBE " + json.dumps({"probe": 1, "paddle_dist_version": dist})
    return _fake_python(
        folder,
        f'echo "$1" >> {folder}/asked\n'
        f"case \"$1\" in *paddleversion.py) echo 8.0.0;; *envprobe.py) echo {shlex.quote(line)};; esac",
    )


def test_the_environment_probe_answers_the_version_query(tmp_path: Path) -> None:
    python = _answering_python(tmp_path / "bin", "9.1.0")
    facts = _Facts(str(python), tmp_path, probe_versions=True).start()
    assert facts.wait(30) and facts.paddle_version == "9.1.0"
    asked = (tmp_path / "bin" / "asked").read_text()
    assert "envprobe.py" in asked and "paddleversion.py" not in asked  # one interpreter start, not two


@pytest.mark.parametrize(
    ("dist", "env"),
    [
        (None, None),  # no metadata there: that probe imports paddle
        ("9.1.0", {**os.environ, "PYTHONPATH": "/elsewhere"}),  # the chain's env moves the search path
    ],
)
def test_the_version_probe_is_asked_where_the_environment_probe_cannot_answer(
    tmp_path: Path, dist: str | None, env: dict[str, str] | None
) -> None:
    python = _answering_python(tmp_path / "bin", dist)
    facts = _Facts(str(python), tmp_path, probe_versions=True, env=env).start()
    assert facts.wait(30) and facts.paddle_version == "8.0.0"
    assert "paddleversion.py" in (tmp_path / "bin" / "asked").read_text()


def test_paddle_version_from_installed_folders(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    (second / "paddlepaddle-3.3.1.dist-info").mkdir(parents=True)
    first.mkdir()
    path = [str(first), str(second), str(tmp_path / "missing")]
    assert _paddle_version_on_path(path, tmp_path) == "3.3.1"
    (first / "paddlepaddle_gpu-3.0.0.dist-info").mkdir()
    assert _paddle_version_on_path(path, tmp_path) == "3.0.0"  # the GPU build first, as the probe asks
    (first / "paddlepaddle_gpu-2.6.0.dist-info").mkdir()
    assert _paddle_version_on_path(path, tmp_path) is None  # two in one place: the interpreter must say
    assert _paddle_version_on_path([str(tmp_path / "missing")], tmp_path) is None


def test_tipcs_own_python_needs_no_process_to_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "site" / "paddlepaddle-9.8.7.dist-info").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "site")])

    def no_process(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("started a process")

    monkeypatch.setattr("tipc.execute.proc.capture", no_process)
    assert paddle_version(PY, tmp_path) == "9.8.7"
    assert interpreters_mod._unusable(PY) is None
    monkeypatch.setattr(sys, "path", [str(tmp_path / "nothing here")])
    with pytest.raises(AssertionError, match="started a process"):
        paddle_version(PY, tmp_path)  # not on the path: the interpreter is asked after all


def test_not_applicable_step_is_skipped_with_its_reason_and_never_run(repo: Path) -> None:
    why = "gpu_list item '0,1' is a distributed launch on GPUs 0,1; --device cpu runs on the CPU only"
    plan = make_plan(
        repo,
        [
            step("train", "print(1)", Stage.TRAIN),
            step("launch", "open('ran.txt', 'w').write('x')", Stage.TRAIN, not_applicable=why),
            step("eval", "print(1)", Stage.EVAL, depends_on=("launch",)),
            step("infer", "open('infer.txt', 'w').write('x')", Stage.INFER, depends_on=("eval",)),
        ],
    )
    record = execute(plan, FAST)
    assert statuses(record) == {
        "train": Status.PASSED,
        "launch": Status.SKIPPED,
        "eval": Status.SKIPPED,
        "infer": Status.SKIPPED,  # two steps down the chain, still not run
    }
    assert not (repo / "infer.txt").exists()
    launch, evaluate = record.result("launch"), record.result("eval")
    assert launch is not None and launch.reason == f"not applicable: {why}"
    assert evaluate is not None and "launch was skipped (not applicable: " in evaluate.reason
    assert not (repo / "ran.txt").exists()
    assert exit_code(record) == 0
    # the status log gets lines for steps that ran only
    assert len((repo / OUT / "results_python.log").read_text().splitlines()) == 1


def test_step_and_server_logs_are_capped_and_the_record_says_what_they_dropped(repo: Path) -> None:
    """Issue 22: a step printing far more than --log-limit keeps a log of about that size (head and tail),
    with the dropped byte count in the log and in its record; a server's log too, once stopped."""
    limit = 128 << 10
    loud = "import sys\nfor i in range(20000):\n    sys.stdout.write(f'{i:07d} ' + 'x' * 92 + '\\n')\n"
    said = repo.parent / "server_said_it_all"
    serve = Step(
        "serve",
        Stage.SERVE,
        (
            PY,
            "-c",
            loud + f"sys.stdout.flush(); open({str(said)!r}, 'w').close()\nimport time; time.sleep(60)",
        ),
        background=True,
    )
    wait = f"import os, time\nwhile not os.path.exists({str(said)!r}):\n    time.sleep(0.05)\n"
    plan = make_plan(
        repo,
        [
            Step("loud", Stage.TRAIN, (PY, "-c", loud)),
            serve,
            Step("client", Stage.CLIENT, (PY, "-c", wait), depends_on=("serve",), timeout_s=60),
        ],
    )
    record = execute(plan, RunOptions(probe_versions=False, step_timeout_s=60, log_limit_bytes=limit))
    total = 20000 * 101
    for step_id in ("loud", "serve"):
        result = record.result(step_id)
        assert result is not None and result.status is Status.PASSED, result
        assert result.log_dropped == total - limit
        log = repo / str(result.log)
        text = log.read_text()
        assert log.stat().st_size < limit + 300
        assert text.startswith("0000000 x") and text.endswith("0019999 " + "x" * 92 + "\n")
        assert f"[tipc: {total - limit} bytes of output dropped here" in text
    on_disk = json.loads((repo / record_location(plan)).read_text())
    dropped = {r["step_id"]: r["log_dropped_bytes"] for r in on_disk["results"]}
    assert dropped == {"loud": total - limit, "serve": total - limit, "client": 0}
    assert StepResult.from_json(on_disk["results"][0]).log_dropped == total - limit
