#!/usr/bin/env bash
# GNU parallel over one manifest: N shards, as many at once as parallel runs (--sshlogin spreads them over
# machines that share the files). --retries reruns a failed shard; with --skip-existing it redoes only the
# missing outputs. Usage: parallel.sh MANIFEST [SHARDS]
set -euo pipefail
manifest=${1:?usage: parallel.sh MANIFEST [SHARDS]}
shards=${2:-4}
dmlgrad=${DMLGRAD:-dmlgrad}
seq 0 $((shards - 1)) | parallel --retries 2 --halt never --joblog dmlgrad-parallel.log \
    "$dmlgrad" batch "$manifest" --shard "{}/$shards" --skip-existing -q
