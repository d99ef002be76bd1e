from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tipc.execute import monitor, proc
from tipc.execute.monitor import Monitor, host_info


@pytest.fixture
def no_nvml(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(monitor, "_nvml_state", {"module": None})


def _fake_nvml(pids: list[int], used: int, util: float) -> Any:
    process = [SimpleNamespace(pid=p, usedGpuMemory=used) for p in pids]
    return SimpleNamespace(
        nvmlDeviceGetCount=lambda: 2,
        nvmlDeviceGetHandleByIndex=lambda i: i,
        # device 0 runs our processes, device 1 someone else's
        nvmlDeviceGetComputeRunningProcesses=lambda h: (
            process if h == 0 else [SimpleNamespace(pid=1, usedGpuMemory=5)]
        ),
        nvmlDeviceGetGraphicsRunningProcesses=lambda h: [],
        nvmlDeviceGetUtilizationRates=lambda h: SimpleNamespace(gpu=util if h == 0 else 99.0),
        nvmlDeviceGetName=lambda h: b"Fake GPU",
    )


def test_without_nvml_gpu_figures_are_none(no_nvml: None, tmp_path: Path) -> None:
    mons: list[Monitor] = []
    proc.run(
        [sys.executable, "-c", "import time; time.sleep(0.3)"],
        cwd=tmp_path,
        on_start=lambda pid: mons.append(Monitor(pid).start()),
    )
    res = mons[0].stop()
    assert res.peak_gpu_mem_bytes is None and res.mean_gpu_util_percent is None
    assert res.to_json()["peak_gpu_mem_bytes"] == "n/a"
    assert res.peak_rss_bytes is not None and res.peak_rss_bytes > 0
    assert host_info()["gpus"] == "n/a"


def test_gpu_usage_counts_only_our_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    me = os.getpid()
    monkeypatch.setattr(monitor, "_nvml_state", {"module": _fake_nvml([me], 100 * 2**20, 50.0)})
    mon = Monitor(me)
    mon.sample()
    mon.sample()
    res = mon.stop()
    assert res.peak_gpu_mem_bytes == 100 * 2**20
    assert res.mean_gpu_util_percent == 50.0
    assert monitor.gpu_names() == ["Fake GPU", "Fake GPU"]


def test_broken_nvml_degrades_to_none(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(h: int) -> Any:
        raise RuntimeError("driver went away")

    fake = _fake_nvml([os.getpid()], 1, 1.0)
    fake.nvmlDeviceGetComputeRunningProcesses = boom
    monkeypatch.setattr(monitor, "_nvml_state", {"module": fake})
    mon = Monitor(os.getpid())
    mon.sample()
    assert mon.stop().peak_gpu_mem_bytes is None


def test_interval_backs_off_when_sampling_is_expensive(
    no_nvml: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    ticks = iter([0.0, 0.5, 1.0, 1.02, 2.0, 2.02])  # the first sample (psutil import) is ignored
    monkeypatch.setattr("tipc.execute.monitor.time.thread_time", lambda: next(ticks))
    mon = Monitor(os.getpid())
    mon.sample()
    assert mon.interval_s == monitor.BASE_INTERVAL_S
    mon.sample()  # costs 20 ms of CPU
    assert mon.interval_s == pytest.approx(0.02 / monitor.MAX_OVERHEAD)  # 1% budget => 2 s
    mon.sample()
    assert mon.sampler_cpu_s == pytest.approx(0.54)


def test_a_vanished_process_is_not_an_error(no_nvml: None, tmp_path: Path) -> None:
    res = proc.run([sys.executable, "-c", "pass"], cwd=tmp_path)
    mon = Monitor(res.pid)
    mon.sample()  # the pid is gone: nothing recorded, nothing raised
    assert mon.samples == []
    assert mon.stop().peak_rss_bytes is None


def test_stop_reports_the_samplers_cpu_and_nothing_is_sampled_after_it(no_nvml: None, tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        mon = Monitor(child.pid, interval_s=0.01).start()
        while len(mon.samples) < 3:  # bounded by the child's 30 s: the sampler runs every 10 ms
            assert child.poll() is None
            mon._stop.wait(0.01)
        res = mon.stop()
        taken = len(mon.samples)
        assert res.monitor_cpu_s is not None and res.monitor_cpu_s > 0
        assert len(res.samples) == taken >= 3
        assert mon._thread is not None
        mon._thread.join(timeout=10)
        assert not mon._thread.is_alive() and len(mon.samples) == taken
    finally:
        proc.kill_group(child.pid, reap=child.poll)
        child.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver nodes are Linux's")
def test_without_a_driver_nvml_is_not_even_imported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(monitor, "_nvml_state", {})
    monkeypatch.setattr(monitor, "_NVIDIA_DEVICE_NODES", (str(tmp_path / "nvidiactl"),))
    working = _fake_nvml([os.getpid()], 1, 1.0)  # a pynvml that would answer: it must not be asked
    working.nvmlInit = lambda: None
    monkeypatch.setitem(sys.modules, "pynvml", working)
    assert monitor._nvml() is None and monitor.gpu_names() == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver nodes are Linux's")
def test_with_a_driver_node_nvml_is_asked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    node = tmp_path / "nvidiactl"
    node.touch()
    monkeypatch.setattr(monitor, "_nvml_state", {})
    monkeypatch.setattr(monitor, "_NVIDIA_DEVICE_NODES", (str(tmp_path / "dxg"), str(node)))
    fake = _fake_nvml([os.getpid()], 1, 1.0)
    fake.nvmlInit = lambda: None
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert monitor._nvml() is fake and monitor.gpu_names() == ["Fake GPU", "Fake GPU"]


FORKED_WORKERS = """
import os, sys, time
block = bytearray(120 * 2**20)  # 120 MiB, touched page by page: resident in the parent, and never twice
for i in range(0, len(block), 4096):
    block[i] = 1
kids = []
for _ in range(3):  # forked DataLoader-style workers share it copy-on-write
    pid = os.fork()
    if pid == 0:
        time.sleep(30)
        os._exit(0)
    kids.append(pid)
print("ready", flush=True)
time.sleep(30)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_shared_pages_of_forked_workers_are_counted_once(no_nvml: None) -> None:
    import psutil

    child = subprocess.Popen([sys.executable, "-c", FORKED_WORKERS], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "ready"
        tree = [psutil.Process(child.pid), *psutil.Process(child.pid).children(recursive=True)]
        rss_sum = sum(p.memory_info().rss for p in tree)
        mon = Monitor(child.pid)
        mon.sample()
        peak = mon.stop().peak_rss_bytes
    finally:
        for p in psutil.Process(child.pid).children(recursive=True):
            p.kill()
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()
    block = 120 * 2**20
    assert rss_sum > 3.5 * block  # summing RSS counts the shared block once per process
    assert peak is not None and block <= peak < 2 * block
    assert peak <= psutil.virtual_memory().total


def test_a_step_shorter_than_the_interval_reports_its_peak(no_nvml: None, tmp_path: Path) -> None:
    """Issue 25: a step shorter than the sampling interval reported a few MiB (what the interpreter had
    mapped at the first look). The kernel's high-water mark of each process is the floor now."""
    code = (
        "import time\nb = bytearray(200 * 2**20)\nfor i in range(0, len(b), 4096):\n    b[i] = 1\n"
        "time.sleep(0.3)\n"
    )
    mons: list[Monitor] = []
    proc.run(
        [sys.executable, "-c", code], cwd=tmp_path, on_start=lambda pid: mons.append(Monitor(pid).start())
    )
    res = mons[0].stop()
    assert res.peak_rss_bytes is not None and res.peak_rss_bytes >= 200 * 2**20
    assert res.sched_run_s is not None and res.sched_wait_s is not None and res.sched_run_s > 0


def test_high_water_and_scheduler_figures_of_a_process() -> None:
    hwm = monitor.high_water_rss(os.getpid())
    assert hwm is not None and hwm > 1 << 20
    run_ns, wait_ns = monitor.sched_times(os.getpid()) or (0, -1)
    assert run_ns > 0 and wait_ns >= 0
    assert monitor.high_water_rss(2**22 + 12345) is None and monitor.sched_times(2**22 + 12345) is None


def test_gpu_utilisation_comes_from_the_drivers_per_process_samples(monkeypatch: pytest.MonkeyPatch) -> None:
    """NVML keeps several samples a second per process: their mean, not the device's utilisation at the
    monitor's own looks (which gave a 0 % baseline for short steps)."""
    me = os.getpid()
    fake = _fake_nvml([me], 100 * 2**20, 0.0)
    fake.nvmlDeviceGetProcessUtilization = lambda h, since: (
        [
            SimpleNamespace(pid=me, smUtil=80, timeStamp=since + 1000),
            SimpleNamespace(pid=me, smUtil=60, timeStamp=since + 2000),
            SimpleNamespace(pid=1, smUtil=99, timeStamp=since + 1500),
        ]
        if h == 0
        else []
    )
    monkeypatch.setattr(monitor, "_nvml_state", {"module": fake})
    mon = Monitor(me)
    mon.sample()
    res = mon.stop()
    assert res.mean_gpu_util_percent == 70.0


def test_the_memory_copy_probe_times_a_copy_larger_than_a_cache_and_gives_its_buffer_back() -> None:
    probe = monitor.CopyProbe(size=8 << 20)
    for _ in range(3):
        probe.measure()
    assert len(probe.times_ms) == 3 and all(t > 0 for t in probe.times_ms)
    median = probe.release()
    assert median == pytest.approx(sorted(probe.times_ms)[1], abs=1e-3) and probe._buf is None
    assert monitor.CopyProbe().release() is None  # never probed: no figure, no buffer mapped


def test_a_step_is_probed_for_memory_contention_only_once_it_lived_past_the_probe_interval(
    no_nvml: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(monitor, "PROBE_EVERY_S", 0.2)
    monkeypatch.setattr(monitor, "PROBE_BYTES", 4 << 20)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], start_new_session=True)
    try:
        short = Monitor(child.pid, interval_s=0.05)
        short.sample()  # at once: too young to probe
        assert short.stop().copy_probe_ms is None
        mon = Monitor(child.pid, interval_s=0.05)
        mon._next_probe = 0.2
        mon.start()
        while len(mon.probe.times_ms) < 2:  # bounded by the child's 30 s
            assert child.poll() is None
            mon._stop.wait(0.05)
        res = mon.stop()
        assert res.copy_probes >= 2 and res.copy_probe_ms is not None and res.copy_probe_ms > 0
    finally:
        proc.kill_group(child.pid, reap=child.poll)
        child.wait()
