#!/usr/bin/env bash
# Linux GPU/CPU Python serving test, driven by a serving_infer_python.txt in the models-tutorial layout.
#
#   bash test_tipc/test_serving_infer_python.sh test_tipc/configs/lenet_digits/serving_infer_python.txt serving_infer
#
# Run from the repo root. Steps: convert (this repo: export the shipped weights), start the web service in the
# background, wait until it accepts connections (polled, at most 120 s), run the pipeline client, stop the
# service by its own PID. Logs go to ./log/<model>/<MODE>/, status lines to ./log/<model>/<MODE>/results_serving.log.
#
# Our own implementation of the behaviour of the tutorial's test_serving_infer_python.sh (same config slots,
# same commands). Deliberate differences: readiness is polled instead of a fixed `sleep 2s`, the server is
# stopped by its PID (never `ps | grep | kill -9` by name), and the exit status is 1 when any step failed.
# Every value is read by its position (line) in the config, never by its key.

# shellcheck source=test_tipc/common_func.sh
source test_tipc/common_func.sh

FILENAME=$1
MODE=${2:-serving_infer}

if [ ! -f "${FILENAME}" ]; then
    echo "usage: bash test_tipc/test_serving_infer_python.sh CONFIG [MODE]" >&2
    exit 2
fi

# The first 18 lines; blank lines vanish, so every later parameter moves up one slot (as in the template).
lines=()
while IFS= read -r config_line; do
    [ -n "${config_line}" ] && lines+=("${config_line}")
done < <(head -n 18 "${FILENAME}")

model_name=$(func_parser_value "${lines[1]}")
python=$(func_parser_value "${lines[2]}")
trans_model_py=$(func_parser_value "${lines[3]}")
set_trans_args=""
for index in 4 5 6 7 8; do
    set_trans_args="${set_trans_args} $(func_set_params "$(func_parser_key "${lines[${index}]}")" "$(func_parser_value "${lines[${index}]}")")"
done
serving_dir_value=$(func_parser_value "${lines[9]}")
web_service_py=$(func_parser_value "${lines[10]}")
pipeline_py=$(func_parser_value "${lines[11]}")
image_dir_key=$(func_parser_key "${lines[12]}")
image_dir_value=$(func_parser_value "${lines[12]}")

ROOT=$(pwd)
LOG_PATH="${ROOT}/log/${model_name}/${MODE}"
mkdir -p "${LOG_PATH}"
status_log="${LOG_PATH}/results_serving.log"

# 1. Convert the model for serving (here: export the inference model the server loads).
if [ "${trans_model_py}" != "null" ] && [ -n "${trans_model_py}" ]; then
    trans_log="${LOG_PATH}/python_trans_model_${model_name}.log"
    trans_model_cmd="${python} ${trans_model_py} ${set_trans_args} > ${trans_log} 2>&1 "
    eval "${trans_model_cmd}"
    status_check $? "${trans_model_cmd}" "${status_log}"
fi

# 2. Start the web service in the background and wait until its port accepts connections.
cd "${serving_dir_value}" || exit 2
unset https_proxy http_proxy
port=$(echo "${web_service_py}" | sed -n 's/.*--port[ =]\([0-9][0-9]*\).*/\1/p')
if [ -z "${port}" ] && [ -f config.yml ]; then
    port=$(sed -n 's/^http_port:[ ]*\([0-9][0-9]*\).*/\1/p' config.yml)
fi
port=${port:-9998}
server_log="${LOG_PATH}/python_server.log"
web_service_cmd="${python} ${web_service_py}"
eval "${web_service_cmd} > ${server_log} 2>&1 &"
server_pid=$!
ready=1
for _ in $(seq 1 1200); do
    if ! kill -0 "${server_pid}" 2>/dev/null; then
        break
    fi
    if (exec 3<>"/dev/tcp/127.0.0.1/${port}") 2>/dev/null; then
        ready=0
        break
    fi
    sleep 0.1
done
status_check ${ready} "${web_service_cmd} &" "${status_log}"
if [ ${ready} -ne 0 ]; then
    echo "the web service did not accept connections on port ${port}; its log:" >&2
    tail -n 20 "${server_log}" >&2
fi

# 3. Send the lite-data images with the pipeline client.
if [ ${ready} -eq 0 ]; then
    set_image_dir=$(func_set_params "${image_dir_key}" "${image_dir_value}")
    client_log="${LOG_PATH}/server_infer_gpu_batchsize_1.log"
    pipeline_cmd="${python} ${pipeline_py} ${set_image_dir} > ${client_log} 2>&1 "
    eval "${pipeline_cmd}"
    last_status=$?
    cat "${client_log}"
    status_check ${last_status} "${pipeline_cmd}" "${status_log}"
fi

# 4. Stop the web service we started (SIGTERM: it finishes in-flight requests and exits).
if kill -0 "${server_pid}" 2>/dev/null; then
    kill -TERM "${server_pid}"
    wait "${server_pid}" 2>/dev/null
fi
cd "${ROOT}" || exit 2

if [ "${TIPC_FAILED_COUNT:-0}" -gt 0 ]; then
    exit 1
fi
exit 0
