"""AutoLogger: times the stages of an inference run and prints AutoLog's benchmark report."""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from .env import get_env_info, paddle_info
from .utils import Times

LOG_API_VERSION = 1.0
_FORMAT = "[%(asctime)s] %(name)s %(levelname)s: %(message)s"


class RunConfig:
    def __init__(
        self,
        run_devices: str = "cpu",
        ir_optim: bool = False,
        enable_tensorrt: bool = False,
        enable_mkldnn: bool = False,
        cpu_threads: int = 0,
        enable_mem_optim: bool = True,
    ) -> None:
        self.run_devices = run_devices
        self.ir_optim = ir_optim
        self.enable_tensorrt = enable_tensorrt
        self.enable_mkldnn = enable_mkldnn
        self.cpu_math_library_num_threads = cpu_threads
        self.enable_mem_optim = enable_mem_optim


def _ask(config: Any, method: str) -> Any:
    """One setting of a paddle.inference.Config, or None when this build has no such method."""
    try:
        return getattr(config, method)()
    except Exception:
        return None


def _rss_mb(pid: int | None) -> float | None:
    """Peak resident memory of `pid` (this process by default) in MB."""
    try:
        import psutil  # optional

        info = psutil.Process(pid).memory_info()
        return round(info.rss / 2**20, 4)
    except Exception:
        pass
    path = f"/proc/{pid if pid else 'self'}/status"
    try:
        with open(path) as fh:
            fields = dict(line.split(":", 1) for line in fh if ":" in line)
        value = fields.get("VmHWM") or fields.get("VmRSS")
        return round(int(value.split()[0]) / 1024, 4) if value else None
    except (OSError, ValueError):
        return None


class AutoLogger(RunConfig):
    def __init__(
        self,
        model_name: str = "model",
        model_precision: str = "fp32",
        batch_size: int = 1,
        data_shape: Any = "dynamic",
        save_path: str | None = None,
        inference_config: Any = None,
        pids: int | None = None,
        process_name: str | None = None,
        gpu_ids: Any = None,
        time_keys: Sequence[str] | None = None,
        warmup: int = 0,
        logger: logging.Logger | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.autolog_version = LOG_API_VERSION
        self.model_name = model_name
        self.precision = model_precision
        self.batch_size = batch_size
        self.data_shape = data_shape
        self.save_path = save_path
        self.paddle_infer_config = inference_config
        self.pids = pids if pids is not None else os.getpid()
        self.process_name = process_name
        self.gpu_ids = gpu_ids
        self.time_keys = list(time_keys) if time_keys is not None else None
        self.times = Times(keys=self.time_keys, warmup=warmup)
        self.config_status = self.parse_config(inference_config)
        self.paddle_version, self.paddle_commit = paddle_info()
        self.logger = logger if logger is not None else self.init_logger()

    def init_logger(self, name: str = "root", log_level: int = logging.DEBUG) -> logging.Logger:
        # A logger of its own, outside logging's tree: AutoLog's lines keep the name "root" but are not
        # printed twice when the script (or paddle) configured the real root logger.
        logger = logging.Logger(name, log_level)
        formatter = logging.Formatter(_FORMAT, datefmt="%Y/%m/%d %H:%M:%S")
        stream = logging.StreamHandler(stream=sys.stdout)
        stream.setFormatter(formatter)
        logger.addHandler(stream)
        if self.save_path:
            folder = os.path.dirname(self.save_path)
            if folder:
                os.makedirs(folder, exist_ok=True)
            handler = logging.FileHandler(self.save_path, "w")
            handler.setFormatter(formatter)
            logger.addHandler(handler)
        return logger

    def parse_config(self, config: Any) -> dict[str, Any]:
        if isinstance(config, dict):
            keys = ("runtime_device", "ir_optim", "enable_tensorrt", "precision", "enable_mkldnn")
            status = {k: config.get(k) for k in keys}
            status["cpu_math_library_num_threads"] = config.get("cpu_math_library_num_threads")
            return status
        if config is None:
            return {
                "runtime_device": "None",
                "ir_optim": "None",
                "enable_tensorrt": "None",
                "precision": self.precision,
                "enable_mkldnn": "None",
                "cpu_math_library_num_threads": "None",
            }
        use_gpu = _ask(config, "use_gpu")
        return {
            "runtime_device": None if use_gpu is None else ("gpu" if use_gpu else "cpu"),
            "ir_optim": _ask(config, "ir_optim"),
            "enable_tensorrt": _ask(config, "tensorrt_engine_enabled"),
            "precision": self.precision,
            "enable_mkldnn": _ask(config, "mkldnn_enabled"),
            "cpu_math_library_num_threads": _ask(config, "cpu_math_library_num_threads"),
        }

    def get_paddle_info(self) -> None:
        self.paddle_version, self.paddle_commit = paddle_info()

    def report(self, identifier: str | None = None) -> None:
        tag = f"[{identifier}]" if identifier else ""
        means = self.times.value(mode="mean")
        stage_ms = {k: round(float(v) * 1000, 4) for k, v in means.items() if isinstance(v, (int, float))}
        total_s = self.times._report_total_time(mode="sum")
        total = round(float(total_s), 4) if isinstance(total_s, (int, float)) else total_s
        cpu_rss = _rss_mb(self.pids if isinstance(self.pids, int) else None)
        envs = get_env_info()
        status = self.config_status
        pre, inf, post = (
            stage_ms.get(k, 0.0) for k in ("preprocess_time", "inference_time", "postprocess_time")
        )
        lines = [
            "\n",
            "---------------------- Env info ----------------------",
            f"{tag} OS_version: {envs['os_info']}",
            f"{tag} CUDA_version: {envs['cuda_version']}",
            f"{tag} CUDNN_version: {envs['cudnn_version']}",
            f"{tag} drivier_version: {envs['nvidia_driver_version']}",  # sic: the key parsers read
            "---------------------- Paddle info ----------------------",
            f"{tag} paddle_version: {self.paddle_version}",
            f"{tag} paddle_commit: {self.paddle_commit}",
            f"{tag} log_api_version: {self.autolog_version}",
            "----------------------- Conf info -----------------------",
            f"{tag} runtime_device: {status.get('runtime_device')}",
            f"{tag} ir_optim: {status.get('ir_optim')}",
            f"{tag} enable_memory_optim: {True}",
            f"{tag} enable_tensorrt: {status.get('enable_tensorrt')}",
            f"{tag} enable_mkldnn: {status.get('enable_mkldnn')}",
            f"{tag} cpu_math_library_num_threads: {status.get('cpu_math_library_num_threads')}",
            "----------------------- Model info ----------------------",
            f"{tag} model_name: {self.model_name}",
            f"{tag} precision: {self.precision}",
            "----------------------- Data info -----------------------",
            f"{tag} batch_size: {self.batch_size}",
            f"{tag} input_shape: {self.data_shape}",
            f"{tag} data_num: {self.times._num_counts()}",
            "----------------------- Perf info -----------------------",
            # no GPU sampling in this stand-in: GPU figures are None, as AutoLog prints them without gpu_ids
            f"{tag} cpu_rss(MB): {cpu_rss}, gpu_rss(MB): {None}, gpu_util: {None}%",
            f"{tag} total time spent(s): {total}",
            f"{tag} preprocess_time(ms): {pre}, inference_time(ms): {inf}, postprocess_time(ms): {post}",
        ]
        extra = [k for k in stage_ms if k not in ("preprocess_time", "inference_time", "postprocess_time")]
        if extra and self.time_keys is not None:  # custom keys the caller asked for
            lines.append(f"{tag} " + ", ".join(f"{k}(ms): {stage_ms[k]}" for k in extra))
        for line in lines:
            self.logger.info(line)
