#!/usr/bin/env bash
# Model CI on a GPU (issue 25), with what a GPU machine without Paddle has: PyTorch, nvidia-ml-py, and tipc
# from this checkout (`pip install -e . --no-deps` plus pyyaml, jinja2, rich, psutil; without an install the
# checkout is put on PYTHONPATH). It builds a tiny PyTorch repo in TIPC form (template config and script,
# train / eval / export / infer on the GPU), records a 3-run baseline, then checks that:
#   1. GPU memory and mean GPU utilisation were sampled (the baseline has both, utilisation above 0 %);
#   2. an unchanged run gives no FAIL row;
#   3. a run holding about 900 MiB more on the GPU FAILs resources.peak_gpu_mem_mb (a metric that did not
#      vary over the 3 runs gets a tight margin, not a 30 % floor), with no other FAIL row.
# Prints PASS/FAIL per point and the rows, writes them under OUT (default $OUT, else /tmp/tipc-gpu-check),
# exits 0 when all three hold. About 3 minutes on an H100 (five chains of a few seconds each, plus start-up).
#
#   bash bench/gpu_modelci_check.sh            # on the GPU machine, in the checkout's root
#   SANDBOX="--sandbox copy" bash bench/gpu_modelci_check.sh   # if the overlay sandbox cannot start there
#   ALLOW_CPU=1 TORCHNET_HIDDEN=256 TORCHNET_INNER=1 bash bench/gpu_modelci_check.sh
#       # a dry run of the flow without a GPU (points 1 and 3 FAIL there: nothing to sample)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
OUT=${OUT:-/tmp/tipc-gpu-check}
SANDBOX=${SANDBOX:-}
WORK=$(mktemp -d /tmp/tipc-gpu-modelci-XXXXXX)
mkdir -p "$OUT"
export TIPC_HISTORY="$WORK/history.sqlite3"
export PIP_NO_INDEX=1

# from / : the checkout's root (the usual working folder here) would make tipc importable to this test only
if ! (cd / && "$PY" -c "import tipc") 2>/dev/null; then
  "$PY" -m pip install -q --no-deps --no-build-isolation -e "$ROOT" >/dev/null 2>&1 || export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
fi
"$PY" - <<'PY'
import importlib.util, os, sys
missing = [m for m in ("tipc", "yaml", "jinja2", "rich", "psutil", "pynvml", "torch") if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"missing on this machine: {', '.join(missing)}")
import torch, pynvml
try:
    pynvml.nvmlInit()
    gpu = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(0))
except pynvml.NVMLError as exc:
    gpu = f"none ({exc})"
print(f"torch {torch.__version__}, CUDA {torch.cuda.is_available()}, GPU {gpu}")
if not torch.cuda.is_available() and os.environ.get("ALLOW_CPU") != "1":
    sys.exit("no CUDA device for torch")
PY

# ---- the tiny repo: an MLP on synthetic data, seeded, on the GPU
REPO="$WORK/torchnet"
mkdir -p "$REPO/test_tipc/configs/torchnet" "$REPO/data"
cp "$ROOT/examples/lenet_digits/test_tipc/test_train_inference_python.sh" "$ROOT/examples/lenet_digits/test_tipc/common_func.sh" "$REPO/test_tipc/"
cat > "$REPO/common.py" <<'PY'
import argparse
import os
import torch

HIDDEN = int(os.environ.get("TORCHNET_HIDDEN", "4096"))  # the dry run without a GPU shrinks the work
INNER = int(os.environ.get("TORCHNET_INNER", "60"))  # optimiser steps per logged iteration


def args(extra=()):
    p = argparse.ArgumentParser()
    for name, default in (("--device", "gpu"), ("--data_dir", "./data"), ("--output_dir", "./output/"),
                          ("--model_dir", "./output/"), ("--save_inference_dir", "./output/"),
                          ("--pretrained", ""), ("--img_path", ""), ("--precision", "fp32")):
        p.add_argument(name, default=default)
    for name, default in (("--epochs", 3), ("--batch_size", 256), ("--seed", 2024), ("--cpu_threads", 1)):
        p.add_argument(name, type=int, default=default)
    for name in ("--use_gpu", "--enable_mkldnn", "--use_tensorrt", "--benchmark"):
        p.add_argument(name, default="False")
    return p.parse_args()


def device(a):
    wanted = str(a.device).lower() in ("gpu", "cuda") or str(a.use_gpu) == "True"
    return torch.device("cuda" if wanted and torch.cuda.is_available() else "cpu")  # cpu: ALLOW_CPU dry runs


def model():
    return torch.nn.Sequential(torch.nn.Linear(1024, HIDDEN), torch.nn.ReLU(), torch.nn.Linear(HIDDEN, HIDDEN),
                               torch.nn.ReLU(), torch.nn.Linear(HIDDEN, 10))


def data(seed, n=8192):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 1024, generator=g)
    y = (x[:, :10].argmax(dim=1))
    return x, y
PY
cat > "$REPO/train.py" <<'PY'
import os, time
import torch
from common import INNER, args, data, device, model

a = args()
dev = device(a)
torch.manual_seed(a.seed)
x, y = data(a.seed)
net = model().to(dev)
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
print(f"Namespace(lr=0.05, opt='sgd', batch_size={a.batch_size}, epochs={a.epochs}, seed={a.seed})")
steps = len(x) // a.batch_size
for epoch in range(a.epochs):
    for it in range(steps):
        t0 = time.time()
        xb, yb = x[it * a.batch_size:(it + 1) * a.batch_size].to(dev), y[it * a.batch_size:(it + 1) * a.batch_size].to(dev)
        for _ in range(INNER):  # a few seconds of GPU work in all: NVML samples utilisation several times a second
            loss = torch.nn.functional.cross_entropy(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        cost = time.time() - t0
        print(f"[Epoch {epoch + 1}/{a.epochs}][Iter {it + 1}/{steps}] loss: {loss.item():.5f}, "
              f"avg_reader_cost: 0.00010 sec, avg_batch_cost: {cost:.5f} sec, avg_ips: {a.batch_size / cost:.2f} samples/sec", flush=True)
os.makedirs(a.output_dir, exist_ok=True)
torch.save(net.state_dict(), os.path.join(a.output_dir, "latest.pt"))
PY
cat > "$REPO/eval.py" <<'PY'
import os
import torch
from common import args, data, device, model

a = args()
dev = device(a)
net = model().to(dev)
weights = a.pretrained if a.pretrained and os.path.isfile(a.pretrained) else os.path.join(a.output_dir, "latest.pt")
net.load_state_dict(torch.load(weights, map_location=dev))
x, y = data(a.seed + 1, 2048)
with torch.no_grad():
    out = net(x.to(dev))
    loss = torch.nn.functional.cross_entropy(out, y.to(dev)).item()
    acc = (out.argmax(dim=1).cpu() == y).float().mean().item()
print(f"[Eval] acc: {acc:.4f}, loss: {loss:.5f}")
PY
cat > "$REPO/export_model.py" <<'PY'
import os
import torch
from common import args, model

a = args()
net = model()
weights = a.pretrained if a.pretrained and os.path.isfile(a.pretrained) else os.path.join(a.output_dir, "latest.pt")
net.load_state_dict(torch.load(weights, map_location="cpu"))
net.eval()
os.makedirs(a.save_inference_dir, exist_ok=True)
torch.jit.save(torch.jit.trace(net, torch.randn(1, 1024)), os.path.join(a.save_inference_dir, "inference.pt"))
print("exported", os.path.join(a.save_inference_dir, "inference.pt"))
PY
cat > "$REPO/infer.py" <<'PY'
import os, time
import torch
from common import args, data, device

a = args()
dev = device(a)
net = torch.jit.load(os.path.join(a.model_dir or "./output/", "inference.pt"), map_location=dev)
x, _ = data(7, 256)
times = []
with torch.no_grad():
    for i in range(50):
        t0 = time.time()
        net(x.to(dev))
        if dev.type == "cuda":
            torch.cuda.synchronize()
        times.append((time.time() - t0) * 1000)
times.sort()
print(f"preprocess_time(ms): 0.0100, inference_time(ms): {times[len(times) // 2]:.4f}, postprocess_time(ms): 0.0100")
PY
sed -e 's/^model_name:lenet_digits/model_name:torchnet/' -e 's/^gpu_list:-1/gpu_list:0/' -e 's/^--device:cpu/--device:gpu/' \
    -e 's/^--epochs:.*/--epochs:lite_train_lite_infer=3|lite_train_whole_infer=3|whole_train_whole_infer=3/' \
    -e 's/^--batch_size:lite_train_lite_infer=16.*/--batch_size:lite_train_lite_infer=256|lite_train_whole_infer=256|whole_train_whole_infer=256/' \
    -e 's/^norm_train:.*/norm_train:train.py --data_dir=.\/data --seed=2024/' -e 's/^eval:.*/eval:eval.py --data_dir=.\/data/' \
    -e 's/^train_model_name:.*/train_model_name:latest.pt/' -e 's/^--use_gpu:False/--use_gpu:True/' \
    -e 's/^infer_model:.*/infer_model:null/' -e 's/^--img_path:.*/--img_path:.\/data/' \
    "$ROOT/examples/lenet_digits/test_tipc/configs/lenet_digits/train_infer_python.txt" > "$REPO/test_tipc/configs/torchnet/train_infer_python.txt"
cat > "$WORK/chain-only.yaml" <<'YAML'
schema: tipc.ruleset/1
name: chain-only
title: the chain runs
description: one rule, so a check costs the chain and the baseline judgement only
rules:
  - id: chain.train_passed
    source: bench
    severity: error
    description: the train step passed
    check:
      step_passed: {stage: train}
YAML
(cd "$REPO" && git init -q && git -c user.name=t -c user.email=t@t add -A && git -c user.name=t -c user.email=t@t commit -qm torchnet) || true

# ---- the +900 MiB variant: the same repo, its training holding 900 MiB more on the GPU
BIG="$WORK/torchnet-big"
cp -r "$REPO" "$BIG"
sed -i 's/^net = model().to(dev)$/net = model().to(dev)\nheld = torch.ones(900 * 2**20, dtype=torch.uint8, device=dev)  # +900 MiB, held while training/' "$BIG/train.py"
grep -q "^held = torch.ones" "$BIG/train.py"

RUNFLAGS=(--python "$PY" $SANDBOX)
echo "== baseline: 1 warm-up + 3 runs"
"$PY" -m tipc baseline record "$REPO" "${RUNFLAGS[@]}" --repeat 3 --baseline-dir "$WORK/baselines" > "$OUT/record.out" 2> "$OUT/record.err" || { tail -40 "$OUT/record.err"; exit 1; }
cp "$(find "$WORK/baselines" -name '*.yaml' | head -1)" "$OUT/baseline.yaml"
for variant in unchanged big; do
  repo=$REPO; [ $variant = big ] && repo=$BIG
  echo "== check: $variant"
  "$PY" -m tipc check "$repo" "${RUNFLAGS[@]}" --ruleset "$WORK/chain-only.yaml" --baseline "$WORK/baselines" --format json --no-color > "$OUT/check_$variant.json" 2> "$OUT/check_$variant.err" || true
done

"$PY" - "$OUT" <<'PY'
import json, sys
from pathlib import Path
import yaml

out = Path(sys.argv[1])
base = yaml.safe_load((out / "baseline.yaml").read_text())
m = base["metrics"]
results = {}

def rule(name):
    report = json.loads((out / f"check_{name}.json").read_text())
    r = next(r for r in report["rules"] if r["id"] == "model-ci.baseline")
    return r["data"]["baseline"]

mem, util = m.get("resources.peak_gpu_mem_mb"), m.get("resources.mean_gpu_util_percent")
print(f"machine class {base['machine_class']}; GPU memory {mem and mem['samples']} MiB, margin {mem and mem['margin']} "
      f"({mem and mem['margin_from']}); GPU utilisation {util and util['samples']} %")
results["sampled"] = bool(mem and util and mem["median"] > 0 and util["median"] > 0)
unchanged, big = rule("unchanged"), rule("big")
for name, j in (("unchanged", unchanged), ("big", big)):
    print(f"-- {name}: {j['counts']}; {j.get('load')}")
    for row in j["rows"]:
        if row["verdict"] != "PASS":
            print(f"   {row['verdict']:<12} {row['metric']}: {row['why'][:220]}")
results["unchanged_no_fail"] = bool(unchanged["rows"]) and not [r for r in unchanged["rows"] if r["verdict"] == "FAIL"]
fails = {r["metric"] for r in big["rows"] if r["verdict"] == "FAIL"}
results["big_fails_gpu_mem"] = "resources.peak_gpu_mem_mb" in fails
results["big_no_other_fail"] = fails <= {"resources.peak_gpu_mem_mb"}
for k, v in results.items():
    print(f"{'PASS' if v else 'FAIL'}: {k}")
(out / "gpu_modelci_check.json").write_text(json.dumps({"results": results, "baseline_metrics": m, "unchanged": unchanged, "big": big}, indent=1))
sys.exit(0 if all(results.values()) else 1)
PY
