#!/bin/sh
# SPEC P3: job output pump throughput (redaction on) beside cat into a file.
# Usage: bench/p3.sh [-mb 100] [-runs 3]
set -eu
cd "$(dirname "$0")/.."
exec go run -tags sqlite_fts5 ./bench/p3 "$@"
