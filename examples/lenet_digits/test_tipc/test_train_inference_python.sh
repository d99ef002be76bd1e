#!/usr/bin/env bash
# Linux GPU/CPU basic train -> eval -> export -> inference test, driven by a 51-line train_infer_python.txt.
#
#   bash test_tipc/prepare.sh CONFIG MODE
#   bash test_tipc/test_train_inference_python.sh CONFIG MODE [GPUID]
#
# MODE: lite_train_lite_infer | lite_train_whole_infer | whole_train_whole_infer | whole_infer
# Run from the repo root. Status lines go to ./test_tipc/output/results_python.log (appended), eval/export
# logs to ./test_tipc/output/<trainer>_gpus_*_{eval,export}.log, inference logs to
# ./test_tipc/output/python_infer_*.log, training outputs to ./test_tipc/output/<trainer>_gpus_*.
#
# Our own implementation of the behaviour of PaddlePaddle's TIPC template script (same config slots, same
# commands, same status lines). Deliberate differences: values are not glob-expanded while parsing, and the
# exit status is 1 when any command failed.
# Every value is read by its position (line) in the config, never by its key.

# shellcheck source=test_tipc/common_func.sh
source test_tipc/common_func.sh

FILENAME=$1
MODE=$2
GPUID=$3

if [ ! -f "${FILENAME}" ] || [ -z "${MODE}" ]; then
    echo "usage: bash test_tipc/test_train_inference_python.sh CONFIG MODE [GPUID]" >&2
    exit 2
fi

# The first 51 lines; blank lines vanish, so every later parameter moves up one slot (as in the template).
lines=()
while IFS= read -r config_line; do
    [ -n "${config_line}" ] && lines+=("${config_line}")
done < <(head -n 51 "${FILENAME}")

# train params
model_name=$(func_parser_value "${lines[1]}")
python=$(func_parser_value "${lines[2]}")
gpu_list=$(func_parser_value "${lines[3]}")
train_use_gpu_key=$(func_parser_key "${lines[4]}")
train_use_gpu_value=$(func_parser_value "${lines[4]}")
autocast_list=$(func_parser_value "${lines[5]}")
autocast_key=$(func_parser_key "${lines[5]}")
epoch_key=$(func_parser_key "${lines[6]}")
epoch_num=$(func_parser_params "${lines[6]}" "${MODE}")
save_model_key=$(func_parser_key "${lines[7]}")
train_batch_key=$(func_parser_key "${lines[8]}")
train_batch_value=$(func_parser_params "${lines[8]}" "${MODE}")
pretrain_model_key=$(func_parser_key "${lines[9]}")
pretrain_model_value=$(func_parser_value "${lines[9]}")
train_model_name=$(func_parser_value "${lines[10]}")
train_infer_img_dir=$(func_parser_value "${lines[11]}")
train_param_key1=$(func_parser_key "${lines[12]}")
train_param_value1=$(func_parser_value "${lines[12]}")

trainer_list=$(func_parser_value "${lines[14]}")
trainer_norm=$(func_parser_key "${lines[15]}")
norm_trainer=$(func_parser_value "${lines[15]}")
pact_key=$(func_parser_key "${lines[16]}")
pact_trainer=$(func_parser_value "${lines[16]}")
fpgm_key=$(func_parser_key "${lines[17]}")
fpgm_trainer=$(func_parser_value "${lines[17]}")
distill_key=$(func_parser_key "${lines[18]}")
distill_trainer=$(func_parser_value "${lines[18]}")
trainer_key1=$(func_parser_key "${lines[19]}")
trainer_value1=$(func_parser_value "${lines[19]}")
trainer_key2=$(func_parser_key "${lines[20]}")
trainer_value2=$(func_parser_value "${lines[20]}")

# eval params
eval_py=$(func_parser_value "${lines[23]}")
eval_key1=$(func_parser_key "${lines[24]}")
eval_value1=$(func_parser_value "${lines[24]}")

# export params
save_infer_key=$(func_parser_key "${lines[27]}")
export_weight=$(func_parser_key "${lines[28]}")
norm_export=$(func_parser_value "${lines[29]}")
pact_export=$(func_parser_value "${lines[30]}")
fpgm_export=$(func_parser_value "${lines[31]}")
distill_export=$(func_parser_value "${lines[32]}")
export_value1=$(func_parser_value "${lines[33]}")
export_value2=$(func_parser_value "${lines[34]}")
inference_dir=$(func_parser_value "${lines[35]}")

# inference params
infer_model_dir_list=$(func_parser_value "${lines[36]}")
infer_export_list=$(func_parser_value "${lines[37]}")
infer_is_quant=$(func_parser_value "${lines[38]}")
inference_py=$(func_parser_value "${lines[39]}")
use_gpu_key=$(func_parser_key "${lines[40]}")
use_gpu_list=$(func_parser_value "${lines[40]}")
use_mkldnn_key=$(func_parser_key "${lines[41]}")
use_mkldnn_list=$(func_parser_value "${lines[41]}")
cpu_threads_key=$(func_parser_key "${lines[42]}")
cpu_threads_list=$(func_parser_value "${lines[42]}")
batch_size_key=$(func_parser_key "${lines[43]}")
batch_size_list=$(func_parser_value "${lines[43]}")
use_trt_key=$(func_parser_key "${lines[44]}")
use_trt_list=$(func_parser_value "${lines[44]}")
precision_key=$(func_parser_key "${lines[45]}")
precision_list=$(func_parser_value "${lines[45]}")
infer_model_key=$(func_parser_key "${lines[46]}")
image_dir_key=$(func_parser_key "${lines[47]}")
infer_img_dir=$(func_parser_value "${lines[47]}")
save_log_key=$(func_parser_key "${lines[48]}")
save_log_value=""  # the template only fills this in its legacy klquant mode
benchmark_key=$(func_parser_key "${lines[49]}")
benchmark_value=$(func_parser_value "${lines[49]}")
infer_key1=$(func_parser_key "${lines[50]}")
infer_value1=$(func_parser_value "${lines[50]}")

LOG_PATH="./test_tipc/output"
mkdir -p "${LOG_PATH}"
status_log="${LOG_PATH}/results_python.log"
echo "TIPC basic train/infer test: model ${model_name}, mode ${MODE}, status log ${status_log}"

# Split a `|` list into the named array.
split_list() {
    local -n target=$1
    # shellcheck disable=SC2034  # target is a nameref to the caller's array
    IFS='|' read -r -a target <<< "$2"
}

contains() {
    case "$1" in
        *"$2"*) return 0 ;;
        *) return 1 ;;
    esac
}

# func_inference PYTHON SCRIPT MODEL_DIR LOG_DIR IMAGE QUANT GPU: every inference combination of the config.
func_inference() {
    local _python=$1
    local _script=$2
    local _model_dir=$3
    local _log_path=$4
    local _img_dir=$5
    local _flag_quant=$6
    local -a use_gpus mkldnns threads_list batch_sizes trts precisions
    split_list use_gpus "${use_gpu_list}"
    split_list mkldnns "${use_mkldnn_list}"
    split_list threads_list "${cpu_threads_list}"
    split_list batch_sizes "${batch_size_list}"
    split_list trts "${use_trt_list}"
    split_list precisions "${precision_list}"
    local use_gpu use_mkldnn threads batch_size use_trt precision _save_log_path command last_status
    local set_infer_data set_benchmark set_batchsize set_cpu_threads set_model_dir set_infer_params1
    local set_precision set_tensorrt set_save_log set_mkldnn
    for use_gpu in "${use_gpus[@]}"; do
        if [ "${use_gpu}" = "False" ] || [ "${use_gpu}" = "cpu" ]; then
            for use_mkldnn in "${mkldnns[@]}"; do
                if [ "${use_mkldnn}" = "False" ] && [ "${_flag_quant}" = "True" ]; then
                    continue
                fi
                for threads in "${threads_list[@]}"; do
                    for batch_size in "${batch_sizes[@]}"; do
                        for precision in "${precisions[@]}"; do
                            if [ "${use_mkldnn}" = "False" ] && [ "${precision}" = "fp16" ]; then
                                continue  # fp16 on CPU needs MKLDNN
                            fi
                            if [ "${_flag_quant}" = "True" ] && [ "${precision}" != "int8" ]; then
                                continue  # a quantized model runs int8 only
                            fi
                            _save_log_path="${_log_path}/python_infer_cpu_usemkldnn_${use_mkldnn}_threads_${threads}_precision_${precision}_batchsize_${batch_size}.log"
                            set_infer_data=$(func_set_params "${image_dir_key}" "${_img_dir}")
                            set_benchmark=$(func_set_params "${benchmark_key}" "${benchmark_value}")
                            set_batchsize=$(func_set_params "${batch_size_key}" "${batch_size}")
                            set_cpu_threads=$(func_set_params "${cpu_threads_key}" "${threads}")
                            set_model_dir=$(func_set_params "${infer_model_key}" "${_model_dir}")
                            set_infer_params1=$(func_set_params "${infer_key1}" "${infer_value1}")
                            set_precision=$(func_set_params "${precision_key}" "${precision}")
                            set_save_log=$(func_set_params "${save_log_key}" "${save_log_value}")
                            set_mkldnn="${use_mkldnn_key}=${use_mkldnn}"
                            command="${_python} ${_script} ${use_gpu_key}=${use_gpu} ${set_mkldnn} ${set_cpu_threads} ${set_model_dir} ${set_batchsize} ${set_save_log} ${set_infer_data} ${set_benchmark} ${set_precision} ${set_infer_params1} > ${_save_log_path} 2>&1 "
                            eval "${command}"
                            last_status=$?
                            cat "${_save_log_path}"
                            status_check "${last_status}" "${command}" "${status_log}"
                        done
                    done
                done
            done
        elif [ "${use_gpu}" = "True" ] || [ "${use_gpu}" = "gpu" ]; then
            for use_trt in "${trts[@]}"; do
                for precision in "${precisions[@]}"; do
                    if [ "${_flag_quant}" = "False" ] && contains "${precision}" "int8"; then
                        continue  # int8 needs a quantized model
                    fi
                    if { contains "${precision}" "fp16" || contains "${precision}" "int8"; } && [ "${use_trt}" = "False" ]; then
                        continue  # reduced precision needs TensorRT
                    fi
                    if { [ "${use_trt}" = "False" ] || contains "${precision}" "int8"; } && [ "${_flag_quant}" = "True" ]; then
                        continue
                    fi
                    for batch_size in "${batch_sizes[@]}"; do
                        _save_log_path="${_log_path}/python_infer_gpu_usetrt_${use_trt}_precision_${precision}_batchsize_${batch_size}.log"
                        set_infer_data=$(func_set_params "${image_dir_key}" "${_img_dir}")
                        set_benchmark=$(func_set_params "${benchmark_key}" "${benchmark_value}")
                        set_batchsize=$(func_set_params "${batch_size_key}" "${batch_size}")
                        set_tensorrt=$(func_set_params "${use_trt_key}" "${use_trt}")
                        set_precision=$(func_set_params "${precision_key}" "${precision}")
                        set_model_dir=$(func_set_params "${infer_model_key}" "${_model_dir}")
                        set_infer_params1=$(func_set_params "${infer_key1}" "${infer_value1}")
                        set_save_log=$(func_set_params "${save_log_key}" "${save_log_value}")
                        command="${_python} ${_script} ${use_gpu_key}=${use_gpu} ${set_tensorrt} ${set_precision} ${set_model_dir} ${set_batchsize} ${set_infer_data} ${set_benchmark} ${set_infer_params1} ${set_save_log} > ${_save_log_path} 2>&1 "
                        eval "${command}"
                        last_status=$?
                        cat "${_save_log_path}"
                        status_check "${last_status}" "${command}" "${status_log}"
                    done
                done
            done
        else
            echo "Does not support hardware other than CPU and GPU Currently!"
        fi
    done
}

if [ "${MODE}" = "whole_infer" ]; then
    if [ -n "${GPUID}" ]; then
        export CUDA_VISIBLE_DEVICES=${GPUID}
    fi
    declare -a infer_models infer_exports infer_quants
    split_list infer_models "${infer_model_dir_list}"
    split_list infer_exports "${infer_export_list}"
    split_list infer_quants "${infer_is_quant}"
    Count=0
    for infer_model in "${infer_models[@]}"; do
        if [ "${infer_exports[Count]}" != "null" ]; then
            # the template exports next to the weights: the parent folder of infer_model
            save_infer_dir=$(dirname "${infer_model}")
            set_export_weight=$(func_set_params "${export_weight}" "${infer_model}")
            set_save_infer_key=$(func_set_params "${save_infer_key}" "${save_infer_dir}")
            export_cmd="${python} ${infer_exports[Count]} ${set_export_weight} ${set_save_infer_key}"
            echo "${infer_exports[Count]}"
            echo "${export_cmd}"
            eval "${export_cmd}"
            status_export=$?
            status_check "${status_export}" "${export_cmd}" "${status_log}"
        else
            save_infer_dir=${infer_model}
        fi
        func_inference "${python}" "${inference_py}" "${save_infer_dir}" "${LOG_PATH}" "${infer_img_dir}" "${infer_quants[Count]}"
        Count=$((Count + 1))
    done
else
    declare -a gpus train_use_gpus autocasts trainers
    split_list gpus "${gpu_list}"
    split_list train_use_gpus "${train_use_gpu_value}"
    split_list autocasts "${autocast_list}"
    split_list trainers "${trainer_list}"
    Count=0
    for gpu in "${gpus[@]}"; do
        train_use_gpu=${train_use_gpus[Count]}
        Count=$((Count + 1))
        ips=""
        if [ "${gpu}" = "-1" ]; then
            env=""
        elif [ ${#gpu} -le 1 ]; then
            env="export CUDA_VISIBLE_DEVICES=${gpu}"
            eval "${env}"
        elif [ ${#gpu} -le 15 ]; then
            env="export CUDA_VISIBLE_DEVICES=${gpu%%,*}"
        else
            ips=${gpu%%;*}
            gpu=${gpu#*;}
            env=" "
        fi
        for autocast in "${autocasts[@]}"; do
            if [ "${autocast}" = "amp" ]; then
                set_amp_config="Global.use_amp=True Global.scale_loss=1024.0 Global.use_dynamic_loss_scaling=True"
            else
                set_amp_config=" "
            fi
            for trainer in "${trainers[@]}"; do
                flag_quant=False
                if [ "${trainer}" = "${pact_key}" ]; then
                    run_train=${pact_trainer}
                    run_export=${pact_export}
                    flag_quant=True
                elif [ "${trainer}" = "${fpgm_key}" ]; then
                    run_train=${fpgm_trainer}
                    run_export=${fpgm_export}
                elif [ "${trainer}" = "${distill_key}" ]; then
                    run_train=${distill_trainer}
                    run_export=${distill_export}
                elif [ "${trainer}" = "${trainer_key1}" ]; then
                    run_train=${trainer_value1}
                    run_export=${export_value1}
                elif [ "${trainer}" = "${trainer_key2}" ]; then
                    run_train=${trainer_value2}
                    run_export=${export_value2}
                else
                    run_train=${norm_trainer}
                    run_export=${norm_export}
                fi
                if [ "${run_train}" = "null" ]; then
                    continue
                fi

                set_autocast=$(func_set_params "${autocast_key}" "${autocast}")
                set_epoch=$(func_set_params "${epoch_key}" "${epoch_num}")
                set_pretrain=$(func_set_params "${pretrain_model_key}" "${pretrain_model_value}")
                set_batchsize=$(func_set_params "${train_batch_key}" "${train_batch_value}")
                set_train_params1=$(func_set_params "${train_param_key1}" "${train_param_value1}")
                set_use_gpu=$(func_set_params "${train_use_gpu_key}" "${train_use_gpu}")
                if [ ${#ips} -le 26 ]; then
                    save_log="${LOG_PATH}/${trainer}_gpus_${gpu}_autocast_${autocast}"
                    nodes=1
                else
                    IFS=',' read -r -a ip_array <<< "${ips}"
                    nodes=${#ip_array[@]}
                    save_log="${LOG_PATH}/${trainer}_gpus_${gpu}_autocast_${autocast}_nodes_${nodes}"
                fi
                # quantization / pruning start from the weights the norm trainer just wrote
                if [ "${trainer}" = "${pact_key}" ] || [ "${trainer}" = "${fpgm_key}" ]; then
                    set_pretrain=$(func_set_params "${pretrain_model_key}" "${norm_save_log:-}/${train_model_name}")
                fi
                set_save_model=$(func_set_params "${save_model_key}" "${save_log}")
                if [ ${#gpu} -le 2 ]; then
                    cmd="${python} ${run_train} ${set_use_gpu}  ${set_save_model} ${set_epoch} ${set_pretrain} ${set_autocast} ${set_batchsize} ${set_train_params1} ${set_amp_config} "
                elif [ ${#ips} -le 26 ]; then
                    cmd="${python} -m paddle.distributed.launch --gpus=${gpu} ${run_train} ${set_use_gpu} ${set_save_model} ${set_epoch} ${set_pretrain} ${set_autocast} ${set_batchsize} ${set_train_params1} ${set_amp_config}"
                else
                    cmd="${python} -m paddle.distributed.launch --ips=${ips} --gpus=${gpu} ${run_train} ${set_use_gpu} ${set_save_model} ${set_pretrain} ${set_epoch} ${set_autocast} ${set_batchsize} ${set_train_params1} ${set_amp_config}"
                fi
                # training sees every card; eval, export and inference run on the first one
                unset CUDA_VISIBLE_DEVICES
                eval "${cmd}"
                status_check $? "${cmd}" "${status_log}"
                if [ "${trainer}" = "${trainer_norm}" ] && [ "${nodes}" -le 1 ]; then
                    norm_save_log=${save_log}
                fi

                set_eval_pretrain=$(func_set_params "${pretrain_model_key}" "${save_log}/${train_model_name}")
                set_eval_params1=$(func_set_params "${eval_key1}" "${eval_value1}")
                eval "${env}"
                if [ "${eval_py}" != "null" ]; then
                    eval_log_path="${LOG_PATH}/${trainer}_gpus_${gpu}_autocast_${autocast}_nodes_${nodes}_eval.log"
                    eval_cmd="${python} ${eval_py} ${set_eval_pretrain} ${set_use_gpu} ${set_eval_params1} > ${eval_log_path} 2>&1 "
                    eval "${eval_cmd}"
                    status_check $? "${eval_cmd}" "${status_log}"
                fi
                if [ "${run_export}" != "null" ]; then
                    save_infer_path=${save_log}
                    set_export_weight=$(func_set_params "${export_weight}" "${save_log}/${train_model_name}")
                    set_save_infer_key=$(func_set_params "${save_infer_key}" "${save_infer_path}")
                    export_log_path="${LOG_PATH}/${trainer}_gpus_${gpu}_autocast_${autocast}_nodes_${nodes}_export.log"
                    export_cmd="${python} ${run_export} ${set_export_weight} ${set_save_infer_key} > ${export_log_path} 2>&1 "
                    eval "${export_cmd}"
                    status_check $? "${export_cmd}" "${status_log}"

                    eval "${env}"
                    if [ "${inference_dir}" != "null" ] && [ "${inference_dir}" != "##" ]; then
                        infer_model_dir="${save_infer_path}/${inference_dir}"
                    else
                        infer_model_dir=${save_infer_path}
                    fi
                    func_inference "${python}" "${inference_py}" "${infer_model_dir}" "${LOG_PATH}" "${train_infer_img_dir}" "${flag_quant}"
                    unset CUDA_VISIBLE_DEVICES
                fi
            done
        done
    done
fi

# Unlike the template (whose exit status says nothing about the commands), report failures in the exit status.
if [ "${TIPC_FAILED_COUNT:-0}" -gt 0 ]; then
    echo "${TIPC_FAILED_COUNT} command(s) failed; see ${status_log}"
    exit 1
fi
exit 0
