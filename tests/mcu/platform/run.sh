#!/usr/bin/env bash
# Runs a Cortex-M55 ELF in QEMU's mps3-an547 with semihosting; the verdict is QEMU's exit status.
# usage: run.sh [--expect N] [--timeout SECONDS] [--plugin SO[,arg=...]] APP.elf
# --expect N: succeed only when the program exits with exactly N (default 0).
set -u
expect=0 limit=60 plugin=()
while [ $# -gt 1 ]; do
  case "$1" in
    --expect) expect=$2; shift 2 ;;
    --timeout) limit=$2; shift 2 ;;
    --plugin) plugin=(-plugin "$2"); shift 2 ;;
    *) break ;;
  esac
done
elf=$1
qemu=${TOSAC_QEMU_ARM:-qemu-system-arm}
timeout "$limit" "$qemu" -M mps3-an547 -nographic -monitor none -serial none \
  -semihosting-config enable=on,target=native "${plugin[@]}" -kernel "$elf"
status=$?
if [ "$status" -eq 124 ]; then
  echo "run.sh: $elf did not finish within ${limit}s" >&2
  exit 1
fi
if [ "$status" -ne "$expect" ]; then
  echo "run.sh: $elf exited with $status, expected $expect" >&2
  exit 1
fi
exit 0
