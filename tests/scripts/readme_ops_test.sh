#!/usr/bin/env bash
# README.md's operator table must equal `tosac ops --markdown` (the table the code is built from).
set -euo pipefail
tosac=$1
readme="${TOSAC_SOURCE_DIR:-$(dirname "$0")/../..}/README.md"
expected=$("$tosac" ops --markdown)
actual=$(sed -n '/<!-- ops-table-begin -->/,/<!-- ops-table-end -->/p' "$readme" | sed '1d;$d')
if [ "$expected" == "$actual" ]; then
  echo "1 passed, 0 failed"
else
  diff <(echo "$expected") <(echo "$actual") | head -20 >&2 || true
  echo "README.md operator table differs from 'tosac ops --markdown': regenerate it" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
