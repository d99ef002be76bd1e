"""The Ray implementation of the review executor: each submission's check is one Ray task, with its CPU, GPU
and memory needs declared, so Ray places it on a node with room for it. Imported only for
`tipc review --executor ray` (Ray is an optional extra: `pip install tipc[ray]`).

The task is `tipc.review.executor.run_job`, the same function the local pool runs; the work areas must be
reachable at the same paths on every node (one machine, or a shared file system). `--address` names an
existing cluster (`auto`, `HOST:PORT`, `ray://HOST:PORT`); without it a private local cluster is started on
loopback for the review and stopped after it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

from tipc.core.errors import InfraError, UserError
from tipc.review.executor import Event, Job, Outcome, run_job

POLL_S = 0.5


def _ray() -> ModuleType:
    try:
        import ray
    except ImportError:
        raise UserError(
            "--executor ray needs Ray, which is not installed: pip install 'tipc[ray]' (or pip install ray)"
        ) from None
    return ray


def _pythonpath() -> str:
    """PYTHONPATH for Ray's workers: this tipc's folder first unless tipc is an installed package (a
    site-packages folder on PYTHONPATH would shadow the repos' own packages)."""
    from tipc.core.resources import package_parent

    here = str(package_parent())
    current = os.environ.get("PYTHONPATH", "")
    if Path(here).name in ("site-packages", "dist-packages") or here in current.split(os.pathsep):
        return current
    return os.pathsep.join(p for p in (here, current) if p)


def _remote_run(job: Job) -> Outcome:
    return run_job(job)


class RayExecutor:
    name = "ray"

    def __init__(self, slots: int, *, address: str | None = None) -> None:
        self.slots = max(1, slots)
        self.address = address
        self._refs: list[object] = []  # Ray's ObjectRefs, handed back to ray.cancel
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    def _connect(self) -> ModuleType:
        ray = _ray()
        runtime_env = {"env_vars": {"PYTHONPATH": _pythonpath()}}
        kwargs: dict[str, object] = {
            "runtime_env": runtime_env,
            "log_to_driver": False,
            "include_dashboard": False,
            "logging_level": "ERROR",
            "configure_logging": True,
        }
        try:
            if self.address:
                ray.init(address=self.address, **kwargs)
            else:
                # a private cluster on loopback, sized for the review
                ray.init(
                    num_cpus=max(self.slots, os.cpu_count() or 1), _node_ip_address="127.0.0.1", **kwargs
                )
        except ConnectionError as exc:
            raise UserError(
                f"--address {self.address}: cannot connect to a Ray cluster: {exc} (a cluster started with "
                "token authentication, Ray's default for `ray start`, also needs RAY_AUTH_MODE=token and its "
                "token in RAY_AUTH_TOKEN or ~/.ray/auth_token here)"
            ) from None
        except Exception as exc:  # Ray raises many kinds when it cannot start
            raise InfraError(f"Ray could not start: {type(exc).__name__}: {exc}") from None
        return ray

    def run(self, jobs: Iterable[Job], events: Event) -> Iterator[Outcome]:
        ray = self._connect()
        remote = ray.remote(max_retries=0)(_remote_run)
        by_ref: dict[object, Job] = {}
        queue = iter(jobs)
        try:
            # at most `slots` tasks in flight: --jobs bounds the review on a cluster too; the next job is
            # taken (its work area laid out) only when one of them has room
            while True:
                while len(by_ref) < self.slots and not self._stopping.is_set():
                    job = next(queue, None)
                    if job is None:
                        break
                    options: dict[str, object] = {"num_cpus": job.cpus, "num_gpus": job.gpus}
                    if job.memory_bytes:
                        options["memory"] = job.memory_bytes
                    ref = remote.options(**options).remote(job)
                    by_ref[ref] = job
                    with self._lock:
                        self._refs.append(ref)
                    events("started", job.key, {"executor": "ray"})
                if not by_ref:
                    break
                done, _ = ray.wait(list(by_ref), num_returns=1, timeout=POLL_S)
                for ref in done:
                    job = by_ref.pop(ref)
                    try:
                        yield ray.get(ref)
                    except Exception as exc:  # the task died (node lost, cancelled): the job has no verdict
                        yield Outcome(
                            job.key,
                            None,
                            False,
                            self._stopping.is_set(),
                            0.0,
                            None,
                            None,
                            error=f"the Ray task failed: {type(exc).__name__}: {exc}",
                        )
        finally:
            if by_ref:
                self.stop()
                with contextlib.suppress(Exception):
                    ray.wait(list(by_ref), num_returns=len(by_ref), timeout=30)
            self._shutdown(ray)

    def _shutdown(self, ray: ModuleType) -> None:
        with contextlib.suppress(Exception):
            ray.shutdown()

    def stop(self) -> None:
        """Cancel the tasks: a running one gets KeyboardInterrupt, which stops its check's process group."""
        self._stopping.set()
        ray = sys.modules.get("ray")
        if ray is None:
            return
        with self._lock:
            refs = list(self._refs)
        for ref in refs:
            with contextlib.suppress(Exception):
                ray.cancel(ref, force=False)
