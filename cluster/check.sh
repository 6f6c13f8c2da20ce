#!/usr/bin/env bash
# The export check end to end: the Python env (cluster/setup.sh), an export of the built-in base
# policy by the page's code (e2e/bench/export-node.ts), then cluster/check_export.py on it.
#   bash cluster/check.sh [OUT_DIR] [export-node flags...]   (OUT_DIR default bench-results/export;
#   a --from among the flags replaces easy-half)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${1:-$root/bench-results/export}"
shift || true
bash "$root/cluster/setup.sh"
(cd "$root" && npx tsx e2e/bench/export-node.ts --out "$out" "$@" --from easy-half)
"${CLUSTER_VENV:-$root/.venv-cluster}/bin/python" "$root/cluster/check_export.py" "$out"
