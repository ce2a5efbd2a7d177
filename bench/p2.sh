#!/usr/bin/env bash
# P2 (SPEC §11): `clawpit task start`, process start to exit, against a bare
# sqlite3 UPDATE on the same database, interleaved. Target: median < 15 ms
# and ≤ 2× sqlite3. Usage: bench/p2.sh [-n 200] [-tasks 5000] [-strict] [-before OLD]
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v sqlite3 >/dev/null; then
  echo "p2: the sqlite3 CLI is needed for the baseline: apt-get install -y sqlite3" >&2
  exit 1
fi
exec go run -tags sqlite_fts5 ./bench/p2 "$@"
