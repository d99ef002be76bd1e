"""The known dialects, one profile each (data only; see `Dialect` for what each field means)."""

from __future__ import annotations

from tipc.config.dialects import (
    SLOTS_32,
    SLOTS_51,
    SLOTS_KLQUANT_SEG,
    SLOTS_KLQUANT_TEMPLATE,
    Dialect,
)

OCR = Dialect(
    name="ocr",
    description="PaddleOCR test_train_inference_python.sh @40c45e2 (newest 51-line script)",
    fingerprints=("9d709bad47",),
)

TEMPLATE = Dialect(
    name="template",
    description="PaddlePaddle/models tutorials/tipc template (51 lines, the spec's canonical script)",
    log_root="./test_tipc/output",
    status_format="template",
    ips_limit=26,
    emit_autocast=True,
    pretrain_from_norm=True,
    mkldnn_raw=True,
    env_at_gpu_loop=True,
    unset_before_train=True,
    train_shape_single=(
        "{python} {run_train} {use_gpu}  {save_model} {epoch} {pretrain} {autocast} {batch} {param1} {amp} "
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain} {autocast} {batch} {param1} {amp}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch} {autocast} {batch} {param1} {amp}"
    ),
    amp="template",
    train_status_log=None,
    cpu_log=(
        "{log_root}/python_infer_cpu_usemkldnn_{mkldnn}_threads_{threads}_precision_{precision}"
        "_batchsize_{batch}.log"
    ),
    gpu_log="{log_root}/python_infer_gpu_usetrt_{trt}_precision_{precision}_batchsize_{batch}.log",
    cpu_skip=("C1", "C2", "C3"),
    gpu_skip=("G1", "G2", "G3or"),
    whole_infer="template",
    whole_infer_export_log=None,
    klquant_branch="whole_infer",
    klquant_slots=SLOTS_KLQUANT_TEMPLATE,
    klquant_forces_quant=True,
)

SEG = Dialect(
    name="seg",
    description="PaddleSeg test_tipc (52 lines: export_params header, infer key2, --devices launcher)",
    read_limit=None,
    slots={**SLOTS_51, "infer_param2": 51},
    status_format="seg_det",
    launcher="--devices",
    ips_limit=26,
    emit_autocast=True,
    pretrain_from_norm=True,
    seg_iter_fallback=True,
    param1_results=True,
    env_at_gpu_loop=True,
    env_before_eval=False,
    train_shape_single=(
        "{python} {run_train} {use_gpu}  {save_model} {epoch} {pretrain} {autocast} {batch} {param1} {amp} "
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain} {autocast} {batch} {param1} {amp}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch} {autocast} {batch} {param1} {amp}"
    ),
    train_log="{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}.log",
    train_status_log="{train_log}",
    eval_shape="{python} {eval_py} {weight} {use_gpu} {param1}",
    export_shape="{python} {run_export} {weight} {save_infer}",
    model_dir_suffix="/deploy.yaml",
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {precision} "
        "{param1} {param2} > {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} {param2} "
        "> {log} 2>&1 "
    ),
    mkldnn_raw=True,
    cpu_log=(
        "{log_root}/python_infer_cpu_usemkldnn_{mkldnn}_threads_{threads}_precision_{precision}"
        "_batchsize_{batch}.log"
    ),
    gpu_log="{log_root}/python_infer_gpu_usetrt_{trt}_precision_{precision}_batchsize_{batch}.log",
    cpu_skip=("C1", "C2", "C3", "C4"),
    gpu_skip=("G1", "G2", "G3or"),
    whole_infer="template",
    whole_infer_export_log=None,
    klquant_branch="whole_infer",
    klquant_slots=SLOTS_KLQUANT_SEG,
    klquant_read_limit=None,
    fingerprints=("8c492e3142",),
)

CLAS = Dialect(
    name="clas",
    description="PaddleClas test_tipc (-o keys, cd deploy for inference, AMP mapping, epochs default 2)",
    engine="t51",
    read_limit=None,
    mode_keyed=("epoch",),
    mode_arg_passed=False,
    epoch_default="2",
    epoch_one_on_device="npu",
    rec_model_names=("GeneralRecognition", "MetaBIN_ResNet50"),
    log_root="{root}/test_tipc/output/{model_name}/{mode}",
    status_format="clas",
    launcher="--devices",
    train_use_gpu_per_item=False,
    amp="clas",
    save_log_nodes_always=True,
    trainer1_is_to_static=True,
    env_at_gpu_loop=True,
    env_before_eval=False,
    unset_after_trainer=True,
    train_shape_single=(
        "{python} {run_train} {use_gpu} {save_model} {epoch} {pretrain} {autocast} {batch} {param1} "
        "-o Global.print_mem_info=True "
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain} {autocast} {batch} {param1} -o Global.print_mem_info=True -o "
        "Global.log_ranks=0,1,2,3,4,5,6,7"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch} {autocast} {batch} {param1} -o Global.print_mem_info=True "
        "-o Global.log_ranks=0,1,2,3,4,5,6,7"
    ),
    eval_weight_path="{save_log}/{model_name}/{train_model_name}",
    export_weight_path="{save_log}/{model_name}/{train_model_name}",
    eval_shape="{python} {eval_py} {weight} {use_gpu} {param1} > {log} 2>&1",
    export_shape="{python} {run_export} {weight} {save_infer} > {log} 2>&1",
    use_inference_dir=False,
    infer_cwd="deploy",
    train_infer_image_slot="infer_image",
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {param1} "
        "> {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} > {log} 2>&1 "
    ),
    mkldnn_raw=True,
    cpu_skip=(),
    gpu_skip=("Clas",),
    whole_infer="clas_klquant",
    fingerprints=("54da8a848c",),
)

DET = Dialect(
    name="det",
    description="PaddleDetection test_tipc (utils_func.sh first-colon parser, infer_mode, --run_mode)",
    engine="t51",
    splitter="first_colon",
    read_limit=None,
    slots={**SLOTS_51, "kl_quant_export": 35, "infer_model": 37, "infer_export": 999, "inference_dir": 999},
    status_format="seg_det",
    train_use_gpu_per_item=False,
    amp="det",
    trainer_fallback="skip",
    to_static_from_section=True,
    env_at_gpu_loop=True,
    env_before_eval=False,
    train_shape_single=(
        "{python} {run_train} LearningRate.base_lr=0.0001 log_iter=1 {use_gpu} {save_model} {epoch} "
        "{pretrain} "
        "{batch} {filename} {shuffle} {amp_level} {enable_ce} {autocast} {to_static} {param1}"
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} log_iter=1 {use_gpu} "
        "{save_model} "
        "{epoch} {pretrain} {batch} {filename} {shuffle} {amp_level} {enable_ce} {autocast} "
        "{to_static} {param1}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} log_iter=1 "
        "{use_gpu} "
        "{save_model} {epoch} {pretrain} {batch} {filename} {shuffle} {amp_level} {enable_ce} {autocast} "
        "{to_static} {param1}"
    ),
    train_log="{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}.log",
    train_status_log="{train_log}",
    eval_weight_slot="export_weight",
    eval_weight_path="{save_log}/{model_name}/{train_model_name}",
    export_weight_path="{save_log}/{model_name}/{train_model_name}",
    eval_shape="{python} {eval_py} {weight} {use_gpu} {param1}",
    export_shape="{python} {run_export} {weight} {filename} {save_infer} ",
    use_inference_dir=False,
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {param1} "
        "> {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {precision} {model_dir} {batch} {image} {benchmark} "
        "{param1} > {log} 2>&1 "
    ),
    mkldnn_raw=True,
    cpu_log=(
        "{log_root}/python_infer_cpu_gpus_{gpu}_usemkldnn_{mkldnn}_threads_{threads}_mode_paddle"
        "_batchsize_{batch}.log"
    ),
    gpu_log="{log_root}/python_infer_gpu_gpus_{gpu}_mode_{precision}_batchsize_{batch}.log",
    cpu_skip=("C3",),
    gpu_skip=("Det",),
    cpu_precision_loop=False,
    whole_infer="det",
    klquant_branch="whole_infer",
    fingerprints=("7539bfa0df",),
)

COMPACT = Dialect(
    name="compact",
    description="PaddlePaddle/models mobilenetv3_prod Step6 (32 lines) and the competition copies",
    engine="compact",
    read_limit=32,
    slots=SLOTS_32,
    status_format="compact",
    train_shape_single="{python} {run_train} {save_model} {epoch} {pretrain} {batch}",
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} "
        "{save_model} {epoch} {pretrain} {batch}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} "
        "{save_model} {epoch} "
        "{pretrain} {batch}"
    ),
    train_status_log=None,
    eval_shape="{python} {eval_py} {weight} > {log} 2>&1 ",
    export_shape="{python} {run_export} {weight} {save_infer} > {log} 2>&1 ",
    eval_log="{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}_eval.log",
    export_log="{log_root}/{trainer}_gpus_{gpu}_autocast_{autocast}_nodes_{nodes}_export.log",
    use_inference_dir=False,
    train_infer_image_slot=None,
    cpu_shape="{python} {script} {use_gpu} {model_dir} {batch} {image} {benchmark} > {log} 2>&1 ",
    gpu_shape="{python} {script} {use_gpu} {model_dir} {batch} {image} {benchmark} > {log} 2>&1 ",
    cpu_log="{log_root}/python_infer_cpu_batchsize_{batch}.log",
    gpu_log="{log_root}/python_infer_gpu_batchsize_{batch}.log",
    cpu_skip=(),
    gpu_skip=(),
    whole_infer="compact",
    whole_infer_export_log="{log_root}/export_0.log",
    fingerprints=("8d76e63f50",),
)

# The older Step6 script most competition repos copied: save_log <trainer>_gpus_<gpu>, no logs for
# eval/export, status lines without the model name.
COMPACT_V1 = COMPACT.with_(
    name="compact_v1",
    description="older Step6 compact script (competition copies, e.g. Lieberk/Paddle-Cutpaste)",
    status_format="template",
    ips_limit=26,
    compact_multinode=False,
    compact_save_log="{log_root}/{trainer}_gpus_{gpu}{nodes_suffix}",
    eval_shape="{python} {eval_py} {weight}",
    export_shape="{python} {run_export} {weight} {save_infer}",
    eval_log=None,
    export_log=None,
    whole_infer_export_log=None,
    fingerprints=("1240f8214f",),
)
# sldyns/DnCNN_paddle, kongdebug/NAFNet-pd: LOG_PATH without the mode; eval and export get no weights.
COMPACT_NOWEIGHTS = COMPACT_V1.with_(
    name="compact_noweights",
    description="competition compact copies whose eval/export pass no trained weights (DnCNN, NAFNet)",
    log_root="./test_tipc/output/{model_name}",
    ips_limit=15,
    compact_multinode=True,
    eval_shape="{python} {eval_py}",
    export_shape="{python} {run_export} {save_infer}",
    fingerprints=("eaaf506052",),
)
COMPACT_NAFNET = COMPACT_NOWEIGHTS.with_(
    name="compact_nafnet",
    description="kongdebug/NAFNet-pd: clean and noisy image dirs on lines 31-32 (33-line config)",
    slots={**SLOTS_32, "infer_image": 30, "infer_param1": 31, "infer_benchmark": 32},
    train_infer_image_slot="infer_image",
    whole_infer_image_slot=None,
    param1_only_in_train=True,
    cpu_shape="{python} {script} {use_gpu} {model_dir} {batch} {image} {param1} {benchmark} > {log} 2>&1 ",
    gpu_shape="{python} {script} {use_gpu} {model_dir} {batch} {image} {param1} {benchmark} > {log} 2>&1 ",
    fingerprints=("177476a617",),
)

# lelexx/fastflow_paddle: mode-keyed --exp_dir (save slot) and --data (data-path slot) replace the save dir.
COMPACT_FASTFLOW = COMPACT_NOWEIGHTS.with_(
    name="compact_fastflow",
    description="lelexx/fastflow_paddle compact copy (mode-keyed exp_dir/data, whole_infer exits early)",
    log_root="./test_tipc/output/{model_name}/{mode}",
    train_shape_single="{python} {run_train} {exp_dir} {epoch} {batch} {data_dir}",
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {exp_dir} {epoch}  {batch} "
        "{data_dir}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {exp_dir} {epoch}  "
        "{batch} {data_dir}"
    ),
    eval_shape="{python} {eval_py}  {data_dir}  {exp_dir} ",
    export_shape="{python} {run_export} {exp_dir} {save_infer}",
    cpu_shape=(
        "{python} {script} {use_gpu} {save_infer_param} {batch} {image} {benchmark} {image_value} "
        "> {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {save_infer_param} {batch} {image} {benchmark} {image_value} "
        "> {log} 2>&1 "
    ),
    whole_infer_exits_before_export=True,
    fingerprints=("890fe90875",),
)

# renmada/RD4AD-paddle: train gets only the save dir and epochs, export only the save dir, eval the save dir
# as `--output_dir <dir>`, inference only device/mkldnn/threads/model dir/benchmark. The script at the corpus
# commit could not be read; these shapes are the ones its recorded commands pin down.
TEMPLATE_RD4AD = TEMPLATE.with_(
    name="template_rd4ad",
    description="renmada/RD4AD-paddle hand-edited template copy",
    log_root="./test_tipc/output/{model_name}/{mode}",
    train_shape_single="{python} {run_train} {save_model} {epoch}",
    eval_shape="{python} {eval_py} {weight} {use_gpu} {param1} --output_dir {save_log}",
    export_shape="{python} {run_export} {save_infer}",
    eval_log=None,
    export_log=None,
    cpu_shape="{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {benchmark} > {log} 2>&1 ",
    gpu_shape="{python} {script} {use_gpu} {model_dir} {benchmark} > {log} 2>&1 ",
    fingerprints=("814d7d0325",),
)

# txyugood/PaddleC3D: the template script with train/export reduced to the bare scripts, the inference model
# path taken from line 47 as written, and no benchmark flag on GPU.
TEMPLATE_C3D = TEMPLATE.with_(
    name="template_c3d",
    description="txyugood/PaddleC3D hand-edited template copy",
    train_shape_single="{python} {run_train}",
    export_shape="{python} {run_export}",
    eval_shape="{python} {eval_py} {weight} {use_gpu} {param1}",
    eval_log=None,
    export_log=None,
    infer_model_dir_from_slot=True,
    train_infer_image_slot="infer_image",
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {precision} "
        "{param1} > {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {param1} > {log} 2>&1 "
    ),
    fingerprints=("2939c3ef1d",),
)

# justld/DMNet_paddle: the template script with line 49 passed as a second extra inference argument.
TEMPLATE_DMNET = TEMPLATE.with_(
    name="template_dmnet",
    description="justld/DMNet_paddle hand-edited template copy (line 49 is an extra inference argument)",
    inference_dir_single_bracket=True,
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {precision} "
        "{param1} {save_log_value} > {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} {param1} "
        "{save_log_value} > {log} 2>&1 "
    ),
    klquant_slots=SLOTS_KLQUANT_SEG,
    klquant_read_limit=None,
    klquant_forces_quant=False,
    fingerprints=("1eaec006f9",),
)


VIDEO = OCR.with_(
    name="video",
    description="PaddleVideo test_tipc (--max_iters, -B launcher, amp_train slot, <dir>/<file> model paths)",
    slots={**SLOTS_51, "train_param1": 12, "train_param2": 11},
    mode_keyed=(),
    launcher="--devices",
    amp="video",
    save_log_nodes_always=True,
    env_at_gpu_loop=True,
    env_before_eval=False,
    unset_before_train=True,
    pretrain_from_norm=True,
    record_norm_weights=False,
    trainer1_export="norm",
    train_script_suffix=" --max_iters=30",
    whole_train_drops_params=True,
    eval_style="video",
    train_shape_single=(
        "{python} {run_train} {amp} {use_gpu}  {save_model} {epoch} {pretrain} {batch} {param1} {param2}  "
    ),
    train_shape_multi=(
        '{python} -B -m paddle.distributed.launch {launcher}="{gpus}" {run_train} {amp} {use_gpu} '
        "{save_model} {epoch} {pretrain} {batch} {param1} {param2} "
    ),
    train_shape_nodes=(
        '{python} -B -m paddle.distributed.launch --ips={ips} {launcher}="{gpus}" {run_train} {amp} '
        "{use_gpu} {save_model} {pretrain} {epoch} {batch} {param1} {param2} "
    ),
    train_status_log="{log_root}/train.log",
    eval_shape="{python} {eval_py} {use_gpu} {weight} {extra} > {log} 2>&1 ",
    use_inference_dir=False,
    infer_dir_joins_value=True,
    train_infer_image_slot="infer_image",
    cpu_shape=(
        "{python} {script} {use_gpu} {mkldnn} {threads} {model_dir} {batch} {image} {benchmark} {precision} "
        "{param1} > {log} 2>&1 "
    ),
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} {param1} "
        "> {log} 2>&1 "
    ),
    mkldnn_raw=True,
    cpu_skip=("C1", "C2", "C3"),
    gpu_skip=("G1", "G2", "G3or"),
    whole_infer="template",
    klquant_branch="whole_infer",
    klquant_slots=SLOTS_KLQUANT_SEG,
    klquant_read_limit=None,
    fingerprints=("a21316a142",),
)
GAN = OCR.with_(
    name="gan",
    description="PaddleGAN test_tipc (no trainer dispatch, positional export weights, minimal CPU command)",
    trainer_dispatch="norm_only",
    amp="gan",
    env_at_gpu_loop=True,
    env_before_eval=False,
    unset_before_train=True,
    ips_limit=26,
    train_shape_single=(
        "{python} {run_train} {use_gpu}  {save_model} {epoch} {pretrain} {batch} {param1} {amp}"
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain} {batch} {param1} {amp}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch} {batch} {param1} {amp}"
    ),
    export_shape="{python} {run_export}  {weight_path} {save_infer_key} {save_log} > {log} 2>&1 ",
    inference_dir_single_bracket=True,
    benchmark_parsed=False,
    cpu_shape="{python} {script} {use_gpu} {model_dir} > {log} 2>&1 ",
    gpu_shape=(
        "{python} {script} {use_gpu} {trt} {precision} {model_dir} {batch} {image} {benchmark} {param1} "
        "> {log} 2>&1 "
    ),
    cpu_log=(
        "{log_root}/python_infer_cpu_usemkldnn_{mkldnn}_threads_{threads}_precision_{precision}"
        "_batchsize_{batch}.log"
    ),
    gpu_log="{log_root}/python_infer_gpu_usetrt_{trt}_precision_{precision}_batchsize_{batch}.log",
    cpu_skip=("C3",),
    gpu_skip=("G1", "G2", "G3or"),
    whole_infer="gan",
    fingerprints=("4978967d0a",),
)
REC = OCR.with_(
    name="rec",
    description="PaddleRec test_tipc (results.log, <save_log>.log model dirs, mode-keyed train_model_name)",
    status_format="rec",
    results_log="results.log",
    mode_keyed=("epoch", "train_batch", "train_model_name"),
    emit_autocast=True,
    save_log_nodes_always=True,
    save_log_suffix=".log",
    infer_log_gpu_is_use_gpu=True,
    train_shape_single=(
        "{python} {run_train} {use_gpu}  {save_model} {epoch} {pretrain} {autocast} {batch} {param1} {amp} "
    ),
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {save_model} {epoch} "
        "{pretrain} {autocast} {batch} {param1} {amp}"
    ),
    train_shape_nodes=(
        "{python} -m paddle.distributed.launch --ips={ips} {launcher}={gpus} {run_train} {use_gpu} "
        "{save_model} "
        "{pretrain} {epoch} {autocast} {batch} {param1} {amp}"
    ),
    cpu_skip=("C1", "C2", "C3"),
    gpu_skip=("G1", "G2", "G3or"),
    fingerprints=("6e2d1ef692",),
)
P3D = TEMPLATE.with_(
    name="3d",
    description="Paddle3D test_tipc (template family; multi-card passes param1 where save_model belongs)",
    log_root="./test_tipc/output/{model_name}/{mode}",
    amp="gan",
    train_shape_multi=(
        "{python} -m paddle.distributed.launch {launcher}={gpus} {run_train} {use_gpu} {param1} {epoch} "
        "{pretrain} {autocast} {batch} {param1} {amp}"
    ),
    fingerprints=("ae7f0007c1",),
)
SPEECH = TEMPLATE.with_(
    name="speech",
    description="PaddleSpeech tests/test_tipc (template family, training/benchmark only)",
    fingerprints=("41b0c794b2",),
)

# Main families first, then the repo-specific copies (recognised by their script fingerprint).
ALL: tuple[Dialect, ...] = (
    TEMPLATE,
    OCR,
    COMPACT,
    CLAS,
    DET,
    SEG,
    VIDEO,
    GAN,
    REC,
    P3D,
    SPEECH,
    COMPACT_V1,
    COMPACT_NOWEIGHTS,
    COMPACT_NAFNET,
    COMPACT_FASTFLOW,
    TEMPLATE_C3D,
    TEMPLATE_DMNET,
    TEMPLATE_RD4AD,
)
