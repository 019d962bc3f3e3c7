# Session 44, 4-GPU call D (nvidia-h200-x4, issue 21): tasks prepare through the device gate (DeviceGate). The same
# runs as call C (the Dask GPU tests, weak and strong scaling, each checked against a single-process run).
LABEL=gate exec bash "$(dirname "$0")/x4c.sh"
