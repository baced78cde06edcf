# lib.sh: what the shell tests share, sourced first (. "$(dirname "$0")/lib.sh"; ctest runs
# them by their path in the source tree, so the helper lies beside them). Sets nothing by
# itself; each function is one step the tests' preambles spelled out alike.
#   need_fmnist      skip (exit 77) where Fashion-MNIST is not installed ($DSE_DATA_ROOT)
#   make_tmp         $tmp: a fresh directory, removed when the test exits
#   fail MSG         print "FAIL: MSG" and exit 1
#   wait_for GLOB    wait up to 30 s (3000 x 0.01 s) for a file matching GLOB, written
#                    quoted as for the shell: wait_for '"$tmp"/s/leases/*.1'
need_fmnist() {
    [ -d "${DSE_DATA_ROOT:-/usr/share/datasets}/fashion-mnist" ] || { echo "skipped: Fashion-MNIST is not installed"; exit 77; }
}
make_tmp() {
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
}
fail() { echo "FAIL: $*"; exit 1; }
wait_for() {
    i=0
    while [ $i -lt 3000 ] && ! eval "ls $1" >/dev/null 2>&1; do sleep 0.01; i=$((i + 1)); done
}
