"""The environment a chain ran in: Paddle version, commit, build, PIR and export format, Python and package
versions, CPU and GPU. Found by running the standalone probe `tipc/execute/probes/envprobe.py` under the run's
interpreter (the CLI never imports paddle), and shown as a short header in every report.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from tipc.core.units import human_bytes
from tipc.execute import proc

PROBE = Path(__file__).resolve().parent / "probes" / "envprobe.py"
MARKER = "TIPC_ENVPROBE "  # the probe's result line starts with it (see envprobe.py)
PACKAGE_LABELS = (
    ("numpy", "numpy"),
    ("pillow", "Pillow"),
    ("opencv", "opencv"),
    ("scikit-learn", "scikit-learn"),
)


@dataclass(frozen=True)
class EnvInfo:
    python: str = ""  # the interpreter asked
    python_version: str | None = None
    python_executable: str | None = None
    platform: str | None = None
    paddle_version: str | None = None
    paddle_commit: str | None = None
    paddle_build: str | None = None  # "cpu" or "gpu"
    cuda_version: str | None = None
    pir: bool | None = None
    export_format: str | None = None  # "json+pdiparams" or "pdmodel+pdiparams"
    paddle_error: str | None = None  # why paddle did not import
    packages: dict[str, str | None] = field(default_factory=dict)
    cpu_model: str | None = None
    cpu_count: int | None = None
    memory_total_bytes: int | None = None
    gpus: tuple[str, ...] | None = None  # () when there is no NVIDIA GPU; None when unknown
    error: str | None = None  # why the probe gave nothing

    def to_json(self) -> dict[str, object]:
        out: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        out["packages"] = dict(self.packages)
        out["gpus"] = None if self.gpus is None else list(self.gpus)
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EnvInfo:
        """Lenient: unknown keys are ignored and a value of the wrong type reads as unknown."""

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value else None

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        raw_packages = data.get("packages")
        packages: dict[str, str | None] = {}
        if isinstance(raw_packages, Mapping):
            for k, v in raw_packages.items():
                packages[str(k)] = v if isinstance(v, str) and v else None
        raw_gpus = data.get("gpus")
        gpus = tuple(str(g) for g in raw_gpus) if isinstance(raw_gpus, list) else None
        pir = data.get("pir")
        return cls(
            python=text("python") or "",
            python_version=text("python_version"),
            python_executable=text("python_executable"),
            platform=text("platform"),
            paddle_version=text("paddle_version"),
            paddle_commit=text("paddle_commit"),
            paddle_build=text("paddle_build"),
            cuda_version=text("cuda_version"),
            pir=pir if isinstance(pir, bool) else None,
            export_format=text("export_format"),
            paddle_error=text("paddle_error"),
            packages=packages,
            cpu_model=text("cpu_model"),
            cpu_count=number("cpu_count"),
            memory_total_bytes=number("memory_total_bytes"),
            gpus=gpus,
            error=text("error"),
        )

    def header_lines(self) -> list[str]:
        """Three short lines: Paddle, Python and packages, hardware."""
        if self.error and self.python_version is None:
            return [f"Environment unknown: {self.error}"]
        return [self._paddle_line(), self._python_line(), self._hardware_line()]

    def _paddle_line(self) -> str:
        if self.paddle_version is None:
            why = f": {self.paddle_error}" if self.paddle_error else ""
            return f"Paddle: not importable by {self.python_executable or self.python or 'this python'}{why}"
        details = []
        if self.paddle_build == "gpu":
            details.append("gpu build" + (f", CUDA {self.cuda_version}" if self.cuda_version else ""))
        elif self.paddle_build:
            details.append(f"{self.paddle_build} build")
        if self.paddle_commit:
            details.append(f"commit {self.paddle_commit[:7]}")
        parts = [f"Paddle {self.paddle_version}" + (f" ({', '.join(details)})" if details else "")]
        # what the interpreter does in the run's environment unless the code says otherwise; what the run's
        # export steps really wrote is stated apart (tipc.report.did)
        pir = {True: "PIR on", False: "PIR off", None: "PIR unknown"}[self.pir]
        export = f"export {self.export_format}" if self.export_format else "export format unknown"
        parts.append(f"by default: {pir}, {export}")
        return " · ".join(parts)

    def _python_line(self) -> str:
        parts = [f"Python {self.python_version or '?'}"]
        for key, label in PACKAGE_LABELS:
            parts.append(f"{label} {self.packages.get(key) or '-'}")
        return " · ".join(parts)

    def _hardware_line(self) -> str:
        cpu = self.cpu_model or "unknown"
        if self.cpu_count is not None:
            cpu += f" ({self.cpu_count} cores)"
        parts = [f"CPU: {cpu}"]
        if self.memory_total_bytes is not None:
            parts.append(f"{human_bytes(self.memory_total_bytes)} RAM")
        if self.gpus is None:
            parts.append("GPU: unknown")
        elif not self.gpus:
            parts.append("GPU: none")
        else:
            names: dict[str, int] = {}
            for name in self.gpus:
                names[name] = names.get(name, 0) + 1
            parts.append("GPU: " + ", ".join(f"{n} x {name}" if n > 1 else name for name, n in names.items()))
        return " · ".join(parts)


def parse_probe_output(python: str, output: str) -> EnvInfo:
    """The EnvInfo in the probe's output (its last MARKER line); an EnvInfo with `error` if there is none."""
    for line in reversed(output.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER) :])
            except json.JSONDecodeError as exc:
                return EnvInfo(python=python, error=f"unreadable probe output: {exc.msg}")
            if not isinstance(data, dict):
                return EnvInfo(python=python, error="unreadable probe output: not an object")
            return EnvInfo.from_json({**data, "python": python})
    tail = " ".join(output.strip().splitlines()[-2:])[-300:]
    return EnvInfo(
        python=python, error=f"the environment probe printed no result{': ' + tail if tail else ''}"
    )


def collect(
    python: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 120,
    on_start: Callable[[int], None] | None = None,
) -> EnvInfo:
    """Run the probe under `python` (in `cwd`, with the chain's `env`) and read what it found. Never raises
    for a broken interpreter: the EnvInfo says what went wrong instead."""
    return collect_with_dist_version(python, cwd=cwd, env=env, timeout_s=timeout_s, on_start=on_start)[0]


def collect_with_dist_version(
    python: str,
    *,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    timeout_s: float = 120,
    on_start: Callable[[int], None] | None = None,
) -> tuple[EnvInfo, str | None]:
    """`collect`, and paddle's version from its installed metadata as probes/paddleversion.py would print it
    (None where the probe gave none: that probe then has to be asked, and may import paddle)."""
    code, output = proc.capture(
        [python, str(PROBE)], cwd=cwd, env=env, timeout_s=timeout_s, on_start=on_start
    )  # on_start: the caller can stop the probe (a run interrupted while it runs)
    info = parse_probe_output(python, output)
    if info.error and code is None:
        return EnvInfo(
            python=python, error=f"could not run {python} (or it timed out): {output.strip()[-300:]}"
        ), None
    return info, _dist_version(output) if info.error is None else None


def _dist_version(output: str) -> str | None:
    for line in reversed(output.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER) :])
            except json.JSONDecodeError:
                return None
            value = data.get("paddle_dist_version") if isinstance(data, dict) else None
            return value if isinstance(value, str) else None
    return None
