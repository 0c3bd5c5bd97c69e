# What tests/mpi_runs.sh and tests/mpi_runs_cuda.sh share (sourced): their arguments, a scratch
# folder removed on exit, what Open MPI needs to start ranks here, and the failure count.
# Usage: source tests/mpi_common.sh STRATA EXAMPLES_DIR
set -uo pipefail
strata=$1
examples=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Open MPI refuses root without these (CI runs as root); oversubscribe: more ranks than cores.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# NVLink multicast stays off on every machine of several GPUs (it can take the host's GPUs out of service).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
nvls=(-x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS)  # every mpirun passes them on
# NCCL kept off NVLink and shared memory (../shared/peers/as-another-node.sh: its socket transport,
# the code paths of GPUs on different nodes) where the caller set it: the ranks get it too.
for v in NCCL_P2P_DISABLE NCCL_SHM_DISABLE NCCL_NET NCCL_SOCKET_IFNAME; do
  [ -n "${!v:-}" ] && nvls+=(-x "$v")
done
failures=0
# holds PATTERN CMD...: whether CMD's output holds PATTERN. (Not `CMD | grep -q`: under pipefail,
# grep's exit at the first match may leave CMD writing into a closed pipe, and the pipeline then
# fails at random: the ASan build's `ldd | grep -q libasan` did, and ran a check meant to be skipped.)
holds() { local text; text=$("${@:2}" 2>/dev/null); grep -q "$1" <<< "$text"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ranks() { echo $(( $(echo "$1" | tr x '*') )); }  # 2x3 -> 6
