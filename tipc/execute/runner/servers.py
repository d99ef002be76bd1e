"""Background steps (`_Servers`): a server started in its own process group, awaited on its ready_url
within its limit, kept running while a later step needs it, stopped after its last dependent (its result
then written like any step's).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from tipc.core.poll import poll
from tipc.core.steps import Status, Step
from tipc.execute import proc
from tipc.execute.monitor import Monitor
from tipc.execute.record import Resources, StepResult
from tipc.execute.runner.interpreters import _substituted
from tipc.execute.runner.launch import _Launched, _not_ready, _port_taken, _Server, _server_refused
from tipc.execute.runner.options import _describe_exit, _rel
from tipc.execute.runner.steps import _Steps
from tipc.execute.serving.ready import probe


class _Servers(_Steps):
    """Background steps (servers): started, awaited on their ready_url, stopped after their last dependent."""

    # ---- background steps

    def _start_server(self, index: int, step: Step) -> StepResult:
        argv, _ = _substituted(step, self.mapping)
        log = self._log_path(step)
        log_rel = _rel(self.repo, log)
        env, delta = self._env(step)
        argv, env = self._own_part(argv, env)
        cwd = self.repo / step.cwd
        base = StepResult(step.id, Status.FAILED, log=log_rel, argv=argv, env_delta=delta)
        refused = _server_refused(step, cwd, base)
        if refused is not None:
            return refused
        from tipc.execute.sandbox import ports

        port = ports.local_port(step.ready_url) if step.ready_url else None
        taken = _port_taken(port, base)
        if taken is not None:
            return taken
        started = time.time()
        try:
            handle = proc.Background(
                argv, cwd=cwd, env=env, log_path=log, log_limit=self.options.log_limit_bytes, label=step.id
            )
        except OSError as exc:
            return replace(
                base,
                started=started,
                ended=time.time(),
                reason=f"cannot start {argv[0]!r}: {exc.strerror or exc}",
            )
        launched = _Launched(
            handle, self._server_monitor(handle.pid), replace(base, started=started, pid=handle.pid), port
        )
        limit = self._ready_limit(step)
        t0 = time.monotonic()
        ready = self._await_ready(step, launched, limit)
        return self._server_outcome(index, step, log, launched, ready, limit, t0)

    def _server_monitor(self, pid: int) -> Callable[[], Resources]:
        """Stops the server's resource sampling and gives its numbers (nothing is sampled without monitor)."""
        if not self.options.monitor:
            return Resources
        return Monitor(pid).start().stop

    def _ready_limit(self, step: Step) -> float:
        """How long a background step may take to answer (its timeout_s, else ready_timeout_s), within the
        run limit."""
        limit = step.timeout_s if step.timeout_s is not None else self.options.ready_timeout_s
        if self.deadline is not None:
            limit = min(limit, max(0.0, self.deadline - time.monotonic()))
        return limit

    def _await_ready(self, step: Step, launched: _Launched, limit: float) -> bool:
        """Poll the step's ready_url until it answers, the server exits, or the limit passes (no ready_url:
        ready at once). Interrupted, the server and its sampling are stopped before the interrupt goes on."""
        url = step.ready_url
        ready = url is None
        if url is None:
            self.notes.append(f"{step.id}: background step without ready_url; not polled for readiness")
        handle = launched.handle
        try:
            if not ready:  # until it answers, exits, or the limit passes
                ready = bool(
                    poll(
                        lambda left: probe(url or "", min(2.0, left)) or None,
                        limit,
                        stop=lambda: handle.poll() is not None,
                        interval_s=0.05,
                    ).value
                )
        except BaseException:
            with proc.shielded():
                handle.stop()
                launched.stop_monitor()
            raise
        return ready

    def _server_outcome(
        self,
        index: int,
        step: Step,
        log: Path,
        launched: _Launched,
        ready: bool,
        limit: float,
        t0: float,
    ) -> StepResult:
        """PASSED (and kept running until its last dependent is done) if it answered and holds its port;
        else stopped, with why."""
        from tipc.execute.sandbox import ports

        handle, url = launched.handle, step.ready_url
        foreign = None
        if ready and handle.poll() is None and launched.port is not None:
            foreign = ports.held_by_others(launched.port, handle.tree())
        if foreign is not None:
            with proc.shielded():
                stopped = handle.stop()
            return replace(
                launched.base,
                ended=time.time(),
                exit_code=stopped,
                resources=launched.stop_monitor(),
                reason=f"something answered at {url}, but the port is not held by the server tipc started "
                f"(held by {foreign}); the server is not ready",
            )
        if ready and handle.poll() is None:
            waited = time.monotonic() - t0
            result = replace(
                launched.base,
                status=Status.PASSED,
                reason=f"running; ready after {waited:.1f} s" + (f" at {url}" if url else ""),
            )
            self.servers[step.id] = _Server(step, index, handle, launched.stop_monitor, result, log)
            return result
        return _not_ready(launched, url, limit)

    def _stop_server(self, step_id: str, *, interrupted: bool = False) -> None:
        server = self.servers.pop(step_id, None)
        if server is None:
            return
        died = server.handle.poll()
        with proc.shielded():
            code = server.handle.stop()
        resources = server.monitor()
        if died is not None:
            result = replace(
                server.result,
                log_dropped=server.handle.log_dropped,
                status=Status.FAILED,
                exit_code=died,
                ended=time.time(),
                resources=resources,
                reason=f"server {_describe_exit(died)} while its dependents ran",
            )
        else:
            why = "the run was interrupted" if interrupted else "its last dependent finished"
            result = replace(
                server.result,
                log_dropped=server.handle.log_dropped,
                status=Status.PASSED,
                exit_code=code,
                ended=time.time(),
                resources=resources,
                reason=f"{server.result.reason.replace('running; ', '')}; stopped by tipc after {why}",
            )
        _, status_command = _substituted(server.step, self.mapping)
        self._finish(server.index, server.step, result, status_command)

    def _stop_servers_done_with(self, index: int) -> None:
        for sid in list(self.servers):
            if self.last_dependent.get(sid, -1) <= index:
                self._stop_server(sid)
