#!/usr/bin/env bash
# See your detector's robustness curve offline, as the leaderboard measures it (docs/robustness.md).
#
#   ./robustness_curve.sh COPIES IMAGE [WORK]
#
# COPIES: the unzipped dev copies (the benchmark's robustness page: "copies (zip)"), or a folder
#         built with `python -m leaderboard degrade --pack PACK --split dev --out DIR`;
# IMAGE:  your detector image (docker build -t detector .);
# WORK:   where inputs and predictions go (default ./robustness-work).
# Runs the image once per condition with the leaderboard's restrictions (no network, read-only
# root, non-root user), then prints the headline per degradation and level (0 = clean).
set -euo pipefail
copies=$1 image=$2 work=${3:-./robustness-work}
python -m leaderboard robustness-inputs --copies "$copies" --out "$work/inputs" >/dev/null
for input in "$work"/inputs/*/; do
  name=$(basename "$input")
  mkdir -p "$work/predictions/$name" && chmod 777 "$work/predictions/$name"
  docker run --rm --network none --read-only --tmpfs /tmp:rw,size=2g --cap-drop ALL \
    --security-opt no-new-privileges --user 65534:65534 \
    -e LB_INPUT=/input -e LB_OUTPUT=/output -e HOME=/tmp -e LB_SPLIT=dev \
    -v "$(realpath "$input")":/input:ro -v "$(realpath "$work/predictions/$name")":/output \
    "$image"
done
python -m leaderboard robustness-score --copies "$copies" --predictions "$work/predictions"
