#!/bin/bash
# The README's "From nothing in three commands", timed: from an installed Python to an event
# handled by a new integration's code (the scaffold's own test hands main.py the catalogue's
# sample space_content_updated), in a fresh home with nothing cached, each command's wall
# and CPU (user + system) time.
#
#   benchmarks/newcomer_minute.sh pip   # python3 -m venv, pip install ./sdk pytest, new, pytest
#   benchmarks/newcomer_minute.sh uv    # uvx --from ./sdk ... new, uvx --with ./sdk pytest
#
# pip uses its configured index; uv its own (PyPI), both with an empty cache.
set -euo pipefail
WAY=${1:-pip}
SDK=$(cd "$(dirname "$0")/../sdk" && pwd)
export HOME=$(mktemp -d) NO_COLOR=1
unset XDG_CONFIG_HOME DJANGO_SETTINGS_MODULE DATABASE_URL DOCPLATFORM_API DOCPLATFORM_TOKEN
unset PYTHONPATH VIRTUAL_ENV
export UV_CACHE_DIR="$HOME/.cache/uv" PIP_CACHE_DIR="$HOME/.cache/pip"
cd "$HOME"
TIMEFORMAT='%R %U %S'
total_wall=0 total_cpu=0 count=0
step() {  # step COMMAND...: run it (stdin not a terminal), add its times
    local times
    times=$( { time "$@" </dev/null >"$HOME/step.out" 2>&1; } 2>&1 ) || {
        cat "$HOME/step.out"
        exit 1
    }
    read -r wall user sys <<<"$times"
    total_wall=$(python3 -c "print($total_wall + $wall)")
    total_cpu=$(python3 -c "print($total_cpu + $user + $sys)")
    count=$((count + 1))
    printf '%-70s %5.1f s wall %5.1f s cpu\n' "$*" "$wall" "$(python3 -c "print($user + $sys)")"
}
if [ "$WAY" = uv ]; then
    step uvx --from "$SDK" docplatform-integration new hello
    step uvx --with "$SDK" pytest -q -p no:cacheprovider hello
else
    step python3 -m venv venv
    step venv/bin/pip install -q "$SDK" pytest
    step venv/bin/docplatform-integration new hello
    step venv/bin/pytest -q -p no:cacheprovider hello
fi
grep -q "3 passed" "$HOME/step.out"
printf '%s: %d commands, %.1f s wall, %.1f s cpu\n' "$WAY" "$count" "$total_wall" "$total_cpu"
rm -rf "$HOME"
