#!/usr/bin/env bash
# Helpers for test_tipc/test_train_inference_python.sh: parse `key:value` config lines, build `key=value`
# parameters and append status lines to the results log.
# Written for this repo from the documented behaviour of PaddlePaddle's TIPC template; the config format and
# the status-line format are the template's, so tools that read either keep working.

# Field 0 of the line split at every ':' (the key).
func_parser_key() {
    local -a fields
    IFS=':' read -r -a fields <<< "$1"
    echo "${fields[0]}"
}

# Field 1 of the line split at every ':' (the value; anything after a second ':' is dropped, as in the template).
func_parser_value() {
    local -a fields
    IFS=':' read -r -a fields <<< "$1"
    echo "${fields[1]}"
}

# `key=value`, or a single space when the key is null or the value is null, blank or empty.
func_set_params() {
    local key=$1
    local value=$2
    if [ "${key}" = "null" ]; then
        echo " "
    elif [ "${value}" = "null" ] || [ "${value}" = " " ] || [ ${#value} -le 0 ]; then
        echo " "
    else
        echo "${key}=${value}"
    fi
}

# The value for MODE from a mode-keyed line `key:mode_a=1|mode_b=2`; empty if MODE is not listed.
func_parser_params() {
    local line=$1
    local mode=$2
    local value
    value=$(func_parser_value "${line}")
    local -a alternatives parts
    IFS='|' read -r -a alternatives <<< "${value}"
    local alternative
    for alternative in "${alternatives[@]}"; do
        IFS='=' read -r -a parts <<< "${alternative}"
        if [ "${parts[0]}" = "${mode}" ]; then
            echo "${parts[1]}"
            return 0
        fi
    done
    echo ""
}

# Append `ESC[33m Run successfully|failed with command - <command>!  ESC[0m` to the status log (and stdout);
# count failures in TIPC_FAILED_COUNT.
status_check() {
    local last_status=$1
    local run_command=$2
    local run_log=$3
    if [ "${last_status}" -eq 0 ]; then
        echo -e "\033[33m Run successfully with command - ${run_command}!  \033[0m" | tee -a "${run_log}"
    else
        echo -e "\033[33m Run failed with command - ${run_command}!  \033[0m" | tee -a "${run_log}"
        TIPC_FAILED_COUNT=$((${TIPC_FAILED_COUNT:-0} + 1))
    fi
}
