#!/usr/bin/env bash
# Creates the Python environment of the export checks in .venv-cluster/ (ignored by git) and
# installs cluster/requirements.txt into it. pip's retries and timeouts are low, so a package the
# index lacks fails in seconds with its name. Idempotent: a venv whose pins are installed is kept.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${CLUSTER_VENV:-$root/.venv-cluster}"
req="$root/cluster/requirements.txt"

if ! command -v python3 >/dev/null 2>&1; then
  echo "cluster/setup.sh: python3 is not installed; the export checks need Python 3.10 or newer." >&2
  echo "  Debian/Ubuntu: apt-get install -y python3 python3-venv python3-pip" >&2
  echo "  macOS: brew install python@3.11" >&2
  exit 1
fi
if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "cluster/setup.sh: $(python3 --version) is too old; the export checks need Python 3.10 or newer." >&2
  exit 1
fi

stamp="$venv/.requirements"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && cmp -s "$req" "$stamp"; then
  exit 0
fi
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || {
    echo "cluster/setup.sh: python3 -m venv failed; on Debian/Ubuntu: apt-get install -y python3-venv" >&2
    exit 1
  }
fi
"$venv/bin/python" -m pip install --disable-pip-version-check --no-input --retries 0 --timeout 5 \
  -r "$req"
cp "$req" "$stamp"
