"""Running one foreground step (`_Steps`): its environment (lineage recorder, forced variables, interpreter
shims), tipc's own parts run where they can, its timeout, the process in its own group with its log, and
the StepResult it ends in (never an exception).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

from tipc.core.steps import Stage, Status, Step
from tipc.execute import lineage, proc
from tipc.execute.monitor import Monitor
from tipc.execute.record import Resources, StepResult
from tipc.execute.runner.bookkeeping import _Bookkeeping
from tipc.execute.runner.interpreters import _substituted
from tipc.execute.runner.options import _describe_exit, _rel
from tipc.execute.runner.sandboxed import _DiskWatch, _limits_hit, _sandbox_causes


class _Steps(_Bookkeeping):
    """Running one foreground step: its environment, interpreter shims, tipc's own parts, its timeout."""

    # ---- environment

    def _env(self, step: Step) -> tuple[dict[str, str], tuple[tuple[str, str | None], ...]]:
        base = proc.base_env()
        extra = {k: v for k, v in self.options.extra_env if k not in base and k not in step.unset_env}
        wanted = {**extra, **self._forced_env(), **step.env_dict}
        # Every step's Python processes record the files they read and write (tipc.execute.lineage); the
        # recorder
        # goes first on PYTHONPATH, after it whatever the step would have had.
        inherited = None if "PYTHONPATH" in step.unset_env else base.get("PYTHONPATH")
        wanted.update(lineage.start_step(self.lineage_dir, step.id, wanted.get("PYTHONPATH", inherited)))
        if step.stage is not Stage.PREPARE:
            from tipc.execute.compat import pythonpath_with_shim

            # AutoLog is not on PyPI: a compatible module, last on the path, so an installed one wins.
            wanted["PYTHONPATH"] = pythonpath_with_shim(wanted.get("PYTHONPATH"))
        if step.stage is Stage.PREPARE:
            shims = self._interpreter_shims()
            if shims is not None:
                wanted["PATH"] = f"{shims}{os.pathsep}{base.get('PATH', '')}"
        env = proc.build_env(base, wanted, step.unset_env)
        delta: list[tuple[str, str | None]] = [(k, v) for k, v in sorted(wanted.items()) if base.get(k) != v]
        delta += [(k, None) for k in step.unset_env if k in base and k not in wanted]
        return env, tuple(delta)

    def _timeout(self, step: Step) -> tuple[float, str]:
        limit = step.timeout_s if step.timeout_s is not None else self.options.step_timeout_s
        why = f"the step limit of {limit:g} s"
        if self.deadline is not None:
            remaining = self.deadline - time.monotonic()
            if remaining < limit:
                return max(0.0, remaining), f"the run limit of {self.options.run_timeout_s:g} s"
        return limit, why

    def _own_part(self, argv: tuple[str, ...], env: dict[str, str]) -> tuple[tuple[str, ...], dict[str, str]]:
        """A step that runs tipc itself (`python -m tipc serve ...`: a repo serving with tipc's server) runs
        it where it can run (tipc.execute.own_parts); where nowhere, as written, and the reason is noted."""
        from tipc.execute import own_parts

        try:
            placed = own_parts.for_command(argv)
        except own_parts.PartsMissing as exc:
            self._note(str(exc))
            return argv, env
        if placed is None:
            return argv, env
        if placed.note:
            self._note(placed.note)
        module_at = list(argv).index("-m") + 1
        return tuple(placed.argv(*argv[module_at:])), own_parts.step_env(env, placed)

    def _forced_env(self) -> dict[str, str]:
        """--paddle-compat switches: set for every step, whatever the environment says."""
        return dict(self.options.forced_env)

    def _interpreter_shims(self) -> Path | None:
        """A folder putting the config's python (e.g. python3.7) on PATH as the interpreter the chain runs,
        for prepare.sh, which calls it from bash where argv substitution cannot reach."""
        if not self.mapping:
            return None
        folder = self.out_dir / "tipc_bin"
        with contextlib.suppress(OSError):
            folder.mkdir(parents=True, exist_ok=True)
            for written, new in self.mapping.items():
                link = folder / os.path.basename(written)
                target = shutil.which(new) or new
                if link.is_symlink() or link.exists():
                    link.unlink()
                link.symlink_to(target)
            return folder
        return None

    # ---- running one step

    def _run_step(self, index: int, step: Step) -> StepResult:
        argv, _ = _substituted(step, self.mapping)
        log = self._log_path(step)
        log_rel = _rel(self.repo, log)
        env, delta = self._env(step)
        argv, env = self._own_part(argv, env)
        cwd = self.repo / step.cwd
        if not cwd.is_dir():
            return StepResult(
                step.id,
                Status.FAILED,
                log=log_rel,
                argv=argv,
                env_delta=delta,
                reason=f"working directory {step.cwd} does not exist",
            )
        timeout_s, limit_why = self._timeout(step)
        monitors: list[Monitor] = []
        pids: list[int] = []

        def started(pid: int) -> None:
            pids.append(pid)
            if self.options.monitor:
                with contextlib.suppress(Exception):  # no sampling is better than a step left running
                    monitors.append(Monitor(pid).start())

        def output(line: str) -> None:
            self.observer.step_output(step, line)

        watch = _DiskWatch()

        def begun(pid: int) -> None:
            started(pid)
            watch.start(pid)

        try:
            res = proc.run(
                argv,
                cwd=cwd,
                env=env,
                timeout_s=timeout_s,
                log_path=log,
                on_line=output,
                on_start=begun,
                label=step.id,
                log_limit=self.options.log_limit_bytes,
            )
        except OSError as exc:
            with contextlib.suppress(OSError):  # the log path itself may be what failed (a planted link)
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text(f"tipc: cannot start {argv[0]!r}: {exc}\n", encoding="utf-8")
            return StepResult(
                step.id,
                Status.FAILED,
                started=time.time(),
                ended=time.time(),
                log=log_rel,
                argv=argv,
                env_delta=delta,
                reason=f"cannot start {argv[0]!r}: {exc.strerror or exc}",
            )
        finally:
            watch.stop()
        resources = Resources()
        if monitors:
            resources = monitors[0].stop()
        limits_hit = (*_limits_hit(), *_sandbox_causes(res.denied, watch.hit()))
        if res.interrupted:
            status, reason = Status.INTERRUPTED, "interrupted (Ctrl-C); its process group was stopped"
        elif res.timed_out:
            status, reason = (
                Status.TIMEOUT,
                f"timed out after {timeout_s:g} s ({limit_why}); its process group was stopped",
            )
        elif watch.hit() is not None:
            status, reason = Status.FAILED, f"stopped at the disk limit: {watch.hit()}"
        elif res.exit_code == 0:
            status, reason = Status.PASSED, ""
        else:
            status, reason = Status.FAILED, _describe_exit(res.exit_code if res.exit_code is not None else -1)
        return StepResult(
            step.id,
            status,
            exit_code=res.exit_code,
            started=res.started,
            ended=res.ended,
            log=log_rel,
            reason=reason,
            argv=argv,
            env_delta=delta,
            resources=resources,
            pid=res.pid,
            causes=limits_hit,
            log_dropped=res.log_dropped,
        )
