#!/usr/bin/env bash
# Prepare data for a TIPC mode:  bash test_tipc/prepare.sh CONFIG MODE
# The lite data is committed as lite_data.tar; it is unpacked only if lite_data/ is missing (idempotent).
# This demo has no bigger data set: every mode trains on lite_data (whole_train_whole_infer just trains longer),
# and whole_infer uses the committed weights in pretrained/. Nothing is downloaded.

# shellcheck source=test_tipc/common_func.sh
source test_tipc/common_func.sh

FILENAME=$1
MODE=$2
if [ ! -f "${FILENAME}" ] || [ -z "${MODE}" ]; then
    echo "usage: bash test_tipc/prepare.sh CONFIG MODE" >&2
    exit 2
fi

model_name=$(sed -n 2p "${FILENAME}")
model_name=$(func_parser_value "${model_name}")

case "${MODE}" in
    lite_train_lite_infer | lite_train_whole_infer | whole_train_whole_infer | whole_infer) ;;
    *)
        echo "prepare.sh: unknown mode ${MODE} for ${model_name}" >&2
        exit 2
        ;;
esac

if [ ! -d lite_data ]; then
    if [ ! -f lite_data.tar ]; then
        echo "prepare.sh: neither lite_data/ nor lite_data.tar found; run from the repo root" >&2
        exit 1
    fi
    tar -xf lite_data.tar || exit 1
    echo "prepare.sh: unpacked lite_data.tar"
else
    echo "prepare.sh: lite_data/ already present"
fi

if [ "${MODE}" = "whole_infer" ] && [ ! -f pretrained/lenet_digits_pretrained.pdparams ]; then
    echo "prepare.sh: pretrained/lenet_digits_pretrained.pdparams is missing" >&2
    exit 1
fi
