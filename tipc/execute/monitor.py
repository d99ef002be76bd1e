"""Resource sampling of one step's process tree: peak memory, CPU time, CPU% over time, GPU memory and
utilisation.

Memory is the tree's proportional set size (PSS: each shared page split between the processes that map it),
else its unique set size (USS), from psutil's memory_full_info; plain RSS only where neither is readable.
Summing RSS over a tree counts every shared page (Paddle's libraries, forked DataLoader workers' copy-on-write
heap) once per process: a 4-worker run then "peaks" at several times the machine's memory. The peak is also
capped at the machine's physical memory, which no tree can exceed.

The kernel keeps each process's high-water RSS (VmHWM): it is read with every sample, and its largest value
is a floor for the step's peak, so a peak between two samples, or a step shorter than the first interval,
is not lost (a step of 0.2 s used to report a few MiB: whatever the interpreter had mapped at the first
look). During the first interval the tree is looked at every 50 ms (only its VmHWM and scheduler times,
cheap reads), then sampled at the normal interval. Not `ru_maxrss` of the children: tipc starts steps
with vfork, and the kernel hands the child the parent's high-water mark at exec, so every step would
"peak" at tipc's own size (measured: /bin/true beside a 400 MB parent reported 413 MB). Not the cgroup's
`memory.peak`: the run's group holds tipc itself and every step of the run, not one step.

CPU time is what the kernel charged the step's processes as tipc reaped them (RUSAGE_CHILDREN over the
step), less what tipc's other children reaped meanwhile had used (the version probes that run beside the
first steps: 2 to 3 CPU seconds landed in the tutorial's train step, a 15 % spread between runs), and at
least the sampled CPU of the tree.

The run-queue wait of each process's main thread (/proc/PID/schedstat: time runnable but waiting for a CPU)
is summed with its run time: their ratio says how much the step competed for CPUs with other work, which is
what decides whether its wall-clock timings can be compared with a baseline's (model CI).

Run-queue wait misses what slows a step's CPU time itself: other work streaming through memory (a test
suite's training beside it made the tutorial's train step use 12 % more CPU seconds; a busy-looping
neighbour did not change it). So every PROBE_EVERY_S while a step runs, the sampler times a fixed copy
larger than a last-level cache (the thread's CPU time for it): its median is the step's *memory
contention* figure (4.7 ms on an idle 2-core EPYC VM; slower beside a copy loop or a noisy neighbour, not
beside busy loops; see docs/model-ci.md). Steps shorter than PROBE_EVERY_S are not probed; the buffer is
mapped from the first probe to the end of the step.

GPU utilisation comes from NVML's per-process samples (the driver's own, several a second) for the tree's
processes since the step started; where the driver keeps none, from the device's utilisation at each sample.

psutil and pynvml are imported lazily (never at CLI import). GPU figures are None ("n/a" in JSON) when NVML
or a GPU is missing; sampling never raises into the runner. The interval starts at 0.5 s and grows when a
sample costs more than 1% of it, and again as a long step accumulates samples, so overhead stays under ~1% of
a core.
"""

from __future__ import annotations

import contextlib
import os
import resource
import statistics
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

from tipc.execute.record import Resources, ResourceSample

if TYPE_CHECKING:
    import psutil

BASE_INTERVAL_S = 0.5
MAX_OVERHEAD = 0.01  # fraction of one core the sampler may use
MAX_SAMPLES = 400  # after this many samples the interval doubles (long steps keep a bounded series)
LOOK_S = 0.05  # quick looks at the tree's high-water marks this often during the first interval
PROBE_EVERY_S = 1.0  # the memory-contention probe this often (a ~5 ms copy: about 0.5 % of a core)
PROBE_BYTES = 64 << 20  # half of it is copied onto the other half: larger than common last-level caches

_nvml_state: dict[str, Any] = {}


# On Linux NVML talks to the driver through these; without any of them it cannot work, and importing pynvml
# (~10-25 ms of CPU) to learn that is skipped. /dev/dxg: WSL2's GPU bridge.
_NVIDIA_DEVICE_NODES = ("/dev/nvidiactl", "/proc/driver/nvidia", "/dev/dxg")


def _driver_absent() -> bool:
    return sys.platform.startswith("linux") and not any(os.path.exists(p) for p in _NVIDIA_DEVICE_NODES)


def _nvml() -> Any | None:
    """The initialised pynvml module, or None if there is no NVML or no GPU. Cached for the process."""
    if "module" in _nvml_state:
        return _nvml_state["module"]
    module: Any | None = None
    try:
        if _driver_absent():
            raise OSError("no NVIDIA driver")
        import pynvml

        pynvml.nvmlInit()
        if pynvml.nvmlDeviceGetCount() > 0:
            module = pynvml
    except Exception:  # no library, no driver, no device: all mean "n/a"
        module = None
    _nvml_state["module"] = module
    return module


def gpu_names() -> list[str]:
    nvml = _nvml()
    if nvml is None:
        return []
    names = []
    try:
        for i in range(nvml.nvmlDeviceGetCount()):
            name = nvml.nvmlDeviceGetName(nvml.nvmlDeviceGetHandleByIndex(i))
            names.append(name.decode() if isinstance(name, bytes) else str(name))
    except Exception:
        return names
    return names


def _gpu_usage(pids: set[int]) -> tuple[int | None, float | None]:
    """(GPU memory used by `pids` in bytes, mean utilisation of the devices they use); Nones without NVML."""
    nvml = _nvml()
    if nvml is None:
        return None, None
    used = 0
    utils: list[float] = []
    try:
        for i in range(nvml.nvmlDeviceGetCount()):
            handle = nvml.nvmlDeviceGetHandleByIndex(i)
            procs = list(nvml.nvmlDeviceGetComputeRunningProcesses(handle))
            with contextlib.suppress(Exception):
                procs += list(nvml.nvmlDeviceGetGraphicsRunningProcesses(handle))
            ours = [p for p in procs if p.pid in pids]
            if ours:
                used += sum(int(p.usedGpuMemory or 0) for p in ours)
                utils.append(float(nvml.nvmlDeviceGetUtilizationRates(handle).gpu))
    except Exception:
        return None, None
    return used, (sum(utils) / len(utils) if utils else None)


def _proc_gpu_util(nvml: Any, handle: Any, since_us: int, pids: set[int]) -> tuple[list[float], int]:
    """Our processes' SM utilisation samples on one device since `since_us` (summed per timestamp), and the
    newest timestamp seen; ([], since_us) where the driver has none."""
    try:
        samples = nvml.nvmlDeviceGetProcessUtilization(handle, since_us)
    except Exception:  # NVML_ERROR_NOT_FOUND: no sample since then; older drivers lack the call
        return [], since_us
    by_time: dict[int, float] = {}
    newest = since_us
    for sample in samples or ():
        stamp = int(getattr(sample, "timeStamp", 0) or 0)
        newest = max(newest, stamp)
        if getattr(sample, "pid", None) in pids and stamp > since_us:
            by_time[stamp] = by_time.get(stamp, 0.0) + float(getattr(sample, "smUtil", 0) or 0)
    return [min(100.0, v) for v in by_time.values()], newest


def _children(pid: int) -> list[int]:
    """The direct children of `pid` from /proc (every thread's list); [] where the kernel does not say."""
    out: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as fh:
                out.extend(int(c) for c in fh.read().split())
        except (OSError, ValueError):
            continue
    return out


_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu(pid: int) -> float | None:
    """CPU seconds of a process and of the children it has reaped (utime + stime + cutime + cstime of
    /proc/PID/stat); None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return sum(int(v) for v in fields[11:15]) / _TICK
    except (OSError, ValueError, IndexError):
        return None


def high_water_rss(pid: int) -> int | None:
    """The kernel's high-water RSS of a process (VmHWM, bytes), None where it cannot be read."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"VmHWM:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def sched_times(pid: int) -> tuple[int, int] | None:
    """(time on a CPU, time runnable but waiting for one) of a process's main thread in ns, from
    /proc/PID/schedstat; None where the kernel does not keep them."""
    try:
        with open(f"/proc/{pid}/schedstat", "rb") as fh:
            fields = fh.read().split()
        return int(fields[0]), int(fields[1])
    except (OSError, ValueError, IndexError):
        return None


def process_memory(p: psutil.Process) -> int:
    """A process's own share of memory: PSS, else USS, else RSS (bytes). Raises psutil errors as they come."""
    import psutil

    try:
        full = p.memory_full_info()
    except (psutil.AccessDenied, NotImplementedError, OSError):
        return int(p.memory_info().rss)
    pss = getattr(full, "pss", None)
    if pss is not None:
        return int(pss)
    uss = getattr(full, "uss", None)
    return int(uss) if uss is not None else int(full.rss)


class CopyProbe:
    """A fixed memory copy whose CPU time grows when other work competes for memory bandwidth."""

    def __init__(self, size: int | None = None) -> None:
        self.size = size or PROBE_BYTES
        self._buf: memoryview | None = None
        self.times_ms: list[float] = []

    def measure(self) -> None:
        if self._buf is None:
            self._buf = memoryview(bytearray(self.size))
            self._buf[1::4096] = b"\1" * len(range(1, self.size, 4096))  # fault every page in now, not timed
        half = self.size // 2
        t0 = time.thread_time_ns()
        self._buf[half:] = self._buf[:half]  # a memoryview: one memcpy, no temporary copy
        self.times_ms.append((time.thread_time_ns() - t0) / 1e6)

    def release(self) -> float | None:
        """The median time, and the buffer given back."""
        self._buf = None
        if not self.times_ms:
            return None
        return round(statistics.median(self.times_ms), 3)


def _physical_memory() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().total)
    except Exception:
        return None


class Monitor:
    """Samples the tree rooted at `pid` in a daemon thread from start() until stop()."""

    def __init__(self, pid: int, *, interval_s: float = BASE_INTERVAL_S, gpu: bool = True) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.gpu = gpu
        self.samples: list[ResourceSample] = []
        self.peak_rss = 0
        self.peak_gpu: int | None = None
        self.gpu_utils: list[float] = []
        self._cpu_by_pid: dict[int, float] = {}
        self._procs: dict[int, psutil.Process] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = time.monotonic()
        self._rusage0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        self.sampler_cpu_s = 0.0  # CPU time of the samples themselves
        self.thread_cpu_s = 0.0  # CPU time of the sampling thread, wake-ups included
        self._lock = threading.Lock()
        self._base_interval = interval_s
        self._cost_ema: float | None = None
        self._memory_total: int | None = None
        self._hwm_by_pid: dict[int, int] = {}  # the kernel's high-water RSS of each member seen
        self._sched_by_pid: dict[int, tuple[int, int]] = {}  # (run ns, wait ns) of each member's main thread
        self._gpu_since_us: int | None = None  # NVML per-process samples taken up to here
        self._proc_gpu_utils: list[float] = []
        # tipc's other children (version probes beside the first step, a server stopped meanwhile): their
        # CPU lands in RUSAGE_CHILDREN when they are reaped, and is not this step's
        self._others: dict[int, float] = {}
        self.probe = CopyProbe()
        self._next_probe = PROBE_EVERY_S

    def start(self) -> Monitor:
        self._t0 = time.monotonic()
        self._thread = threading.Thread(target=self._loop, name=f"tipc-monitor-{self.pid}", daemon=True)
        self._thread.start()
        return self

    def _tree(self) -> list[psutil.Process]:
        import psutil

        procs: list[psutil.Process] = []
        root = self._procs.get(self.pid)
        if root is None:
            root = psutil.Process(self.pid)
            root.cpu_percent(None)
            self._procs[self.pid] = root
        members = [root, *root.children(recursive=True)]
        for p in members:
            # keep one Process object per pid so cpu_percent() measures since our last look
            known = self._procs.get(p.pid)
            if known is None:
                p.cpu_percent(None)
                self._procs[p.pid] = p
                known = p
            procs.append(known)
        return procs

    def processes(self) -> list[psutil.Process]:
        """Every member of the tree the sampler has seen, as psutil.Process objects (safe against pid reuse):
        what a caller checks for processes left alive once the root has exited."""
        with self._lock:
            return list(self._procs.values())

    def sample(self) -> None:
        import psutil

        cost0 = time.thread_time()
        try:
            tree = self._tree()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return
        rss = 0
        cpu_pct = 0.0
        pids: set[int] = set()
        for p in tree:
            try:
                with p.oneshot():
                    rss += process_memory(p)
                    cpu_pct += p.cpu_percent(None)
                    times = p.cpu_times()
                    self._cpu_by_pid[p.pid] = times.user + times.system
                pids.add(p.pid)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                continue
        for pid in pids:
            self._kernel_figures(pid)
        self._watch_others()
        if self._memory_total is None:
            self._memory_total = _physical_memory() or 0
        if self._memory_total:
            rss = min(rss, self._memory_total)  # a tree cannot hold more than the machine has
        gpu_mem, gpu_util = _gpu_usage(pids) if self.gpu else (None, None)
        if gpu_mem is not None:
            self._process_gpu_util(pids)
            self.peak_gpu = max(self.peak_gpu or 0, gpu_mem)
        if gpu_util is not None:
            self.gpu_utils.append(gpu_util)
        self.peak_rss = max(self.peak_rss, rss)
        self.samples.append(
            ResourceSample(round(time.monotonic() - self._t0, 3), rss, round(cpu_pct, 1), gpu_mem, gpu_util)
        )
        cost = time.thread_time() - cost0
        self.sampler_cpu_s += cost
        # Adapt: a sample may cost at most MAX_OVERHEAD of the interval (smoothed; the first sample, which
        # pays for importing psutil, is ignored); long steps thin out their series.
        if len(self.samples) > 1:
            self._cost_ema = cost if self._cost_ema is None else 0.7 * self._cost_ema + 0.3 * cost
        if len(self.samples) % MAX_SAMPLES == 0:
            self._base_interval *= 2
        self.interval_s = max(self._base_interval, (self._cost_ema or 0.0) / MAX_OVERHEAD)
        # the probe is not part of a sample's cost: it would stretch the interval of every long step
        if time.monotonic() - self._t0 >= self._next_probe:
            self.probe.measure()
            self._next_probe = time.monotonic() - self._t0 + PROBE_EVERY_S

    def _watch_others(self) -> None:
        """The CPU so far of each of tipc's own children other than this step's leader."""
        for pid in _children(os.getpid()):
            if pid != self.pid:
                cpu = process_cpu(pid)
                if cpu is not None:
                    self._others[pid] = max(cpu, self._others.get(pid, 0.0))

    def _kernel_figures(self, pid: int) -> None:
        """Keep the kernel's high-water RSS and scheduler times of one member (monotonic per process)."""
        hwm = high_water_rss(pid)
        if hwm is not None and hwm > self._hwm_by_pid.get(pid, 0):
            self._hwm_by_pid[pid] = hwm
        times = sched_times(pid)
        if times is not None:
            self._sched_by_pid[pid] = times

    def look(self) -> None:
        """A quick look between samples: only the tree's high-water marks and scheduler times (a few small
        /proc reads), so a short step's peak is not lost before the first full sample."""
        seen: set[int] = set()
        todo = [self.pid]
        while todo and len(seen) < 4096:
            pid = todo.pop()
            if pid in seen:
                continue
            seen.add(pid)
            self._kernel_figures(pid)
            todo.extend(_children(pid))
        self._watch_others()

    def _process_gpu_util(self, pids: set[int]) -> None:
        """NVML's per-process SM utilisation samples of our processes since the last look."""
        nvml = _nvml()
        if nvml is None:
            return
        if self._gpu_since_us is None:
            self._gpu_since_us = int((time.time() - (time.monotonic() - self._t0)) * 1e6)
        newest = self._gpu_since_us
        with contextlib.suppress(Exception):
            for i in range(nvml.nvmlDeviceGetCount()):
                utils, stamp = _proc_gpu_util(
                    nvml, nvml.nvmlDeviceGetHandleByIndex(i), self._gpu_since_us, pids
                )
                self._proc_gpu_utils.extend(utils)
                newest = max(newest, stamp)
        self._gpu_since_us = newest

    def _loop(self) -> None:
        cpu0 = time.thread_time()
        first = True
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                with contextlib.suppress(Exception):  # sampling must never take the run down
                    self.sample()
                # all of this thread's CPU, wake-ups included; read by stop()
                self.thread_cpu_s = time.thread_time() - cpu0
            # quick looks every LOOK_S until the second sample is due (later, a step that lived that long
            # has been sampled at least once)
            waited = 0.0
            while first and waited + LOOK_S < self.interval_s:
                if self._stop.wait(LOOK_S):
                    return
                waited += LOOK_S
                with self._lock:
                    if self._stop.is_set():
                        return
                    with contextlib.suppress(Exception):
                        self.look()
            first = False
            if self._stop.wait(max(0.0, self.interval_s - waited)):
                return

    def stop(self) -> Resources:
        """The step's resources. Does not wait for the sampler to notice: it only waits for a sample that is
        being taken right now (the lock), so no sample lands after the figures are read."""
        self._stop.set()
        with self._lock:
            monitor_cpu = max(self.thread_cpu_s, self.sampler_cpu_s)
        rusage = resource.getrusage(resource.RUSAGE_CHILDREN)
        # Children reaped since start() (the step leader and whatever it waited for): exact CPU time.
        reaped_cpu = (rusage.ru_utime - self._rusage0.ru_utime) + (rusage.ru_stime - self._rusage0.ru_stime)
        # minus what tipc's other children reaped meanwhile had used (seen at the last look; still alive:
        # not in RUSAGE_CHILDREN yet)
        with self._lock:
            others = dict(self._others)
        reaped_cpu -= sum(cpu for pid, cpu in others.items() if not os.path.exists(f"/proc/{pid}"))
        sampled_cpu = sum(self._cpu_by_pid.values())
        # Not ru_maxrss: tipc starts steps with vfork, so it counts tipc's own peak (see the docstring).
        # The kernel's high-water RSS of the largest member is a floor: peaks between samples count.
        with self._lock:
            hwm = max(self._hwm_by_pid.values(), default=0)
            sched = list(self._sched_by_pid.values())
            proc_utils = list(self._proc_gpu_utils)
            copy_ms = self.probe.release()
            probes = len(self.probe.times_ms)
        if self._memory_total:
            hwm = min(hwm, self._memory_total)
        peak_rss = max(self.peak_rss, hwm)
        utils = proc_utils or self.gpu_utils
        mean_util = sum(utils) / len(utils) if utils else None
        return Resources(
            peak_rss_bytes=peak_rss or None,
            cpu_time_s=round(max(reaped_cpu, sampled_cpu), 3),
            peak_gpu_mem_bytes=self.peak_gpu,
            mean_gpu_util_percent=None if mean_util is None else round(mean_util, 1),
            samples=tuple(self.samples),
            monitor_cpu_s=round(monitor_cpu, 6),
            sched_run_s=round(sum(r for r, _ in sched) / 1e9, 3) if sched else None,
            sched_wait_s=round(sum(w for _, w in sched) / 1e9, 3) if sched else None,
            peak_process_rss_bytes=hwm or None,
            copy_probe_ms=copy_ms,
            copy_probes=probes,
        )


def host_info() -> dict[str, Any]:
    from tipc.execute import clock
    from tipc.execute.probes.envprobe import platform_string, python_version

    uname = os.uname()
    info: dict[str, Any] = {
        "hostname": uname.nodename,
        "platform": platform_string(),
        "machine": uname.machine,
        "cpu_count": os.cpu_count(),
        "tipc_python": python_version(),
        "clock": clock.state(),  # held at full speed or free to slow down when idle (None: unknown)
    }
    try:
        import psutil

        info["memory_bytes"] = psutil.virtual_memory().total
    except Exception:
        info["memory_bytes"] = None
    info["gpus"] = gpu_names() or "n/a"
    return info
