#!/usr/bin/env bash
# tools/qemu_insn on insn_count.elf: exact region counts (the movs before the loop is 1 more).
# usage: insn_count.sh PLUGIN.so APP.elf WORKDIR
set -eu
plugin=$1 elf=$2 work=$3
mkdir -p "$work"
rm -f "$work/counts.txt"
bash "$(dirname "$0")/platform/run.sh" --plugin "$plugin,out=$work/counts.txt,top=5" "$elf"
cat "$work/counts.txt"
want=$'region 0: 0\nregion 1: 1000\nregion 2: 301'
got=$(grep '^region' "$work/counts.txt")
if [ "$got" != "$want" ]; then
  echo "insn_count: expected:"; echo "$want"; exit 1
fi
grep -q '^total: [1-9]' "$work/counts.txt" || { echo "insn_count: no total"; exit 1; }
grep -q '^function main: ' "$work/counts.txt" || { echo "insn_count: no per-function count of main"; exit 1; }
echo "insn_count: ok"
