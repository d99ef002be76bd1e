"""Predict with Paddle Inference (the deployment engine) from an exported model: one line per image.

    python infer.py --model_dir=./inference --img_path=./lite_data/infer/ --use_gpu=False
    image_name: ./lite_data/infer/digit_0.png, class_id: 0, prob: 0.998512

Accepts both export formats: inference.json (PIR) and inference.pdmodel (classic program).
"""

from __future__ import annotations

import argparse
import logging
import os
import platform
import sys
import time

import numpy as np
import paddle
from lenet_digits.transforms import format_result, list_images, load_image, postprocess
from lenet_digits.utils import str2bool
from paddle import inference

MODEL_NAME = "lenet_digits"


def get_args(add_help: bool = True) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="LeNet digits inference (Paddle Inference)", add_help=add_help
    )
    parser.add_argument(
        "--model_dir", default="./inference", help="folder with inference.json|.pdmodel + .pdiparams"
    )
    parser.add_argument(
        "--img_path", default="./lite_data/infer/", help="an image file or a folder of images"
    )
    parser.add_argument("--use_gpu", type=str2bool, default=False)
    parser.add_argument("--gpu_id", type=int, default=0)
    parser.add_argument("--gpu_mem", type=int, default=200, help="initial GPU memory pool (MB)")
    parser.add_argument("--enable_mkldnn", type=str2bool, default=False)
    parser.add_argument("--cpu_threads", type=int, default=1)
    parser.add_argument("--batch_size", type=int, default=1)
    parser.add_argument("--use_tensorrt", type=str2bool, default=False)
    parser.add_argument("--precision", default="fp32", choices=["fp32", "fp16", "int8"])
    parser.add_argument("--ir_optim", type=str2bool, default=True)
    parser.add_argument("--benchmark", type=str2bool, default=False, help="print the AutoLog timing block")
    parser.add_argument(
        "--warmup", type=int, default=0, help="untimed warm-up runs before timing (benchmark)"
    )
    return parser.parse_args()


def model_files(model_dir: str) -> tuple[str, str]:
    params = os.path.join(model_dir, "inference.pdiparams")
    for name in ("inference.json", "inference.pdmodel"):
        program = os.path.join(model_dir, name)
        if os.path.isfile(program) and os.path.isfile(params):
            return program, params
    raise FileNotFoundError(
        f"no exported model in {model_dir}: "
        "expected inference.json or inference.pdmodel with inference.pdiparams"
    )


def create_config(args: argparse.Namespace) -> inference.Config:
    program, params = model_files(args.model_dir)
    config = inference.Config(program, params)
    use_gpu = args.use_gpu
    if use_gpu and not paddle.device.is_compiled_with_cuda():
        print(
            # the first sentence is what Paddle Inference itself logs (analysis_config.cc) in this case
            "W: Please use PaddlePaddle with GPU version. This PaddlePaddle is not compiled with CUDA, "
            "but --use_gpu=True was given; the inference runs on CPU.",
            file=sys.stderr,
            flush=True,
        )
        use_gpu = False
    if use_gpu:
        config.enable_use_gpu(args.gpu_mem, args.gpu_id)
        if args.use_tensorrt:
            precision = {
                "fp32": inference.PrecisionType.Float32,
                "fp16": inference.PrecisionType.Half,
                "int8": inference.PrecisionType.Int8,
            }[args.precision]
            config.enable_tensorrt_engine(
                workspace_size=1 << 28,
                max_batch_size=args.batch_size,
                min_subgraph_size=3,
                precision_mode=precision,
                use_static=False,
                use_calib_mode=args.precision == "int8",
            )
    else:
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(args.cpu_threads)
        if args.enable_mkldnn:
            config.enable_mkldnn()
            if args.precision == "fp16":
                config.enable_mkldnn_bfloat16()
        else:
            # Paddle 3 turns oneDNN on by default for CPU; --enable_mkldnn=False must really mean off.
            config.disable_mkldnn()
            if args.precision != "fp32":
                print(
                    f"W: --precision={args.precision} needs MKLDNN or TensorRT; running fp32.",
                    file=sys.stderr,
                )
    config.switch_ir_optim(args.ir_optim)
    # Paddle 3.3 fails with "Not find ... memory_optimize_pass" for PIR (.json) programs.
    args.memory_optim = program.endswith(".pdmodel")
    if args.memory_optim:
        config.enable_memory_optim()
    config.disable_glog_info()
    config.switch_use_feed_fetch_ops(False)
    args.effective_device = "gpu" if use_gpu else "cpu"
    return config


class Timer:
    """Collects preprocess / inference / postprocess times per batch after warm-up."""

    KEYS = ("preprocess_time", "inference_time", "postprocess_time")

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {k: [] for k in self.KEYS}
        self.started = time.perf_counter()

    def add(self, key: str, seconds: float) -> None:
        self.times[key].append(seconds)

    def mean_ms(self, key: str) -> float:
        values = self.times[key]
        return round(1000.0 * sum(values) / len(values), 4) if values else 0.0


def report(args: argparse.Namespace, config: inference.Config, timer: Timer, data_num: int) -> None:
    """The AutoLog report block (auto_log is not on PyPI; same lines, printed with logging)."""
    try:
        import auto_log  # noqa: F401

        have_autolog = True
    except ImportError:
        have_autolog = False
    # A private logger: paddle configures the root logger with its own format on import.
    logger = logging.getLogger("lenet_digits.autolog")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stdout)
        handler.setFormatter(
            logging.Formatter("[%(asctime)s] root %(levelname)s: %(message)s", "%Y/%m/%d %H:%M:%S")
        )
        logger.addHandler(handler)
    rss_mb = "None"
    try:
        import resource

        rss_mb = f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0:.2f}"
    except ImportError:
        pass
    lines = [
        "",
        "---------------------- Env info ----------------------",
        f" OS_version: {platform.platform()}",
        f" CUDA_version: {paddle.version.cuda()}",
        f" CUDNN_version: {paddle.version.cudnn()}",
        " drivier_version: None",
        "---------------------- Paddle info ----------------------",
        f" paddle_version: {paddle.version.full_version}",
        f" paddle_commit: {paddle.version.commit}",
        f" log_api_version: {'1.0' if have_autolog else '1.0 (built-in, auto_log not installed)'}",
        "----------------------- Conf info -----------------------",
        f" runtime_device: {args.effective_device}",
        f" ir_optim: {config.ir_optim()}",
        f" enable_memory_optim: {args.memory_optim}",
        f" enable_tensorrt: {config.tensorrt_engine_enabled()}",
        f" enable_mkldnn: {config.mkldnn_enabled()}",
        f" cpu_math_library_num_threads: {config.cpu_math_library_num_threads()}",
        "----------------------- Model info ----------------------",
        f" model_name: {MODEL_NAME}",
        f" precision: {args.precision}",
        "----------------------- Data info -----------------------",
        f" batch_size: {args.batch_size}",
        " input_shape: dynamic_shape",
        f" data_num: {data_num}",
        "----------------------- Perf info -----------------------",
        f" cpu_rss(MB): {rss_mb}, gpu_rss(MB): None, gpu_util: None%",
        f" total time spent(s): {round(sum(sum(v) for v in timer.times.values()), 4)}",
        f" preprocess_time(ms): {timer.mean_ms('preprocess_time')}, "
        f"inference_time(ms): {timer.mean_ms('inference_time')}, "
        f"postprocess_time(ms): {timer.mean_ms('postprocess_time')}",
    ]
    for line in lines:
        logger.info(line)


def main(args: argparse.Namespace) -> None:
    config = create_config(args)
    predictor = inference.create_predictor(config)
    input_handle = predictor.get_input_handle(predictor.get_input_names()[0])
    output_handle = predictor.get_output_handle(predictor.get_output_names()[0])

    paths = list_images(args.img_path)
    timer = Timer()
    if args.benchmark and args.warmup > 0 and paths:
        warm = np.stack([load_image(paths[0])] * args.batch_size)
        for _ in range(args.warmup):
            input_handle.reshape(list(warm.shape))
            input_handle.copy_from_cpu(warm)
            predictor.run()

    for start in range(0, len(paths), args.batch_size):
        batch_paths = paths[start : start + args.batch_size]
        t0 = time.perf_counter()
        batch = np.stack([load_image(p) for p in batch_paths]).astype(np.float32)
        t1 = time.perf_counter()
        input_handle.reshape(list(batch.shape))
        input_handle.copy_from_cpu(batch)
        predictor.run()
        probs = output_handle.copy_to_cpu()
        t2 = time.perf_counter()
        results = list(postprocess(probs))
        t3 = time.perf_counter()
        timer.add("preprocess_time", t1 - t0)
        timer.add("inference_time", t2 - t1)
        timer.add("postprocess_time", t3 - t2)
        if len(results) != len(batch_paths):  # zip(strict=True) needs Python 3.10; the demo runs on 3.9 too
            raise RuntimeError(f"{len(results)} results for {len(batch_paths)} images")
        for path, (class_id, prob) in zip(batch_paths, results):
            print(format_result(path, class_id, prob), flush=True)

    if args.benchmark:
        report(args, config, timer, len(paths))


if __name__ == "__main__":
    main(get_args())
