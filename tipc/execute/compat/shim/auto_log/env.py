"""What the report's "Env info" section shows, found without importing anything heavy."""

from __future__ import annotations

import platform
import sys


def _paddle() -> object | None:
    return sys.modules.get("paddle")  # only when the script imported it: never import paddle here


def paddle_info() -> tuple[str | None, str | None]:
    """(version, commit) of the paddle the script imported; from the package metadata otherwise."""
    paddle = _paddle()
    if paddle is not None:
        version = getattr(paddle, "__version__", None)
        commit = getattr(paddle, "__git_commit__", None)
        commit = commit or getattr(getattr(paddle, "version", None), "commit", None)
        return (str(version) if version else None, str(commit) if commit else None)
    try:
        from importlib import metadata  # Python >= 3.8

        for dist in ("paddlepaddle", "paddlepaddle-gpu"):
            try:
                return metadata.version(dist), None
            except Exception:
                continue
    except ImportError:
        pass
    return None, None


def _cuda() -> tuple[str | None, str | None]:
    version = getattr(getattr(_paddle(), "version", None), "cuda", None)
    cudnn = getattr(getattr(_paddle(), "version", None), "cudnn", None)
    try:
        cuda_v = str(version()) if callable(version) else None
        cudnn_v = str(cudnn()) if callable(cudnn) else None
    except Exception:
        return None, None
    return (None if cuda_v in (None, "False") else cuda_v, None if cudnn_v in (None, "False") else cudnn_v)


def get_env_info() -> dict[str, str | None]:
    cuda, cudnn = _cuda()
    return {
        "os_info": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": sys.version.split()[0],
        "cuda_version": cuda,
        "cudnn_version": cudnn,
        "nvidia_driver_version": None,
    }
