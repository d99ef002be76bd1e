"""A stand-in for seed 003's BERT demo: same flags and log lines, one iteration per epoch.

The losses follow a fixed table (the seed's example manifest values at steps 0-2 and 5-7). Knobs for tests
(environment): FAKE_LOSS_SCALE multiplies the losses, FAKE_CRASH_FROM=S exits 3 when resumed at start step S,
FAKE_DROP_STEP=N never logs step N, FAKE_SLEEP_FROM=S sleeps long when resumed at S (a hang),
FAKE_WRITE=NAME writes that file in the working directory, FAKE_PAUSE_S=S works S seconds without a word
before its first line (a silent start-up).
"""

import argparse
import os
import sys
import time

TABLE = {
    0: (9.742, 0.718),
    1: (7.984, 0.704),
    2: (7.336, 0.666),
    3: (6.61, 0.66),
    4: (6.2, 0.65),
    5: (5.840, 0.625),
    6: (5.477, 0.640),
    7: (5.344, 0.650),
    8: (5.1, 0.63),
    9: (4.9, 0.62),
}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--steps-per-log", type=int, default=1)
    p.add_argument("--config")
    p.add_argument("--checkpoint-dir")
    p.add_argument("--epochs-per-save", type=int, default=5)
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--onnx-checkpoint")
    p.add_argument("--continue-training-from-epoch", type=int, default=0)
    p.add_argument("--engine-cache")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if os.environ.get("FAKE_WRITE"):
        with open(os.environ["FAKE_WRITE"], "w") as fh:
            fh.write("written into the application's folder")
    time.sleep(float(os.environ.get("FAKE_PAUSE_S", "0")))
    scale = float(os.environ.get("FAKE_LOSS_SCALE", "1"))
    drop = int(os.environ.get("FAKE_DROP_STEP", "-1"))
    first = 0
    if a.onnx_checkpoint:
        with open(a.onnx_checkpoint) as fh:
            first = int(fh.read().strip())
        start = a.continue_training_from_epoch
        if str(start) == os.environ.get("FAKE_CRASH_FROM"):
            print("Traceback: simulated crash", file=sys.stderr)
            return 3
        if str(start) == os.environ.get("FAKE_SLEEP_FROM"):
            time.sleep(60)
    last = a.epochs if a.onnx_checkpoint else a.epochs - 1
    for i in range(first, last + 1):
        if a.checkpoint_dir and i % a.epochs_per_save == 0:
            os.makedirs(a.checkpoint_dir, exist_ok=True)
            path = os.path.join(a.checkpoint_dir, f"model_{i}.onnx")
            with open(path, "w") as fh:
                fh.write(str(i))
            print(f"Saving model to: {path}", file=sys.stderr)
        mlm, nsp = TABLE[i]
        noise = 0.001 * (a.seed % 3)
        if i != drop and i % a.steps_per_log == 0:
            print(
                f"Iteration: {i:6d} Epoch: {i:6.2f} "
                f"Loss (MLM NSP): {mlm * scale + noise:.3f} {nsp * scale:.3f} "
                f"Accuracy (MLM NSP): 0.{40 + i} 0.{60 + i}",
                file=sys.stderr,
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
