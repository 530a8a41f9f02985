#!/bin/bash
# The README's "Write an integration in a minute", timed: its four commands against a running
# platform, from a fresh home (no login) to the handler's print in dev's output.
#
#   API=http://127.0.0.1:8000/api/v1 TOKEN=dpt_... [ORG=acme] [NAME=hello-$$] \
#     benchmarks/author_minute.sh
#
# ORG needs a space (the demo's acme has some): the event happens in its first one.
set -euo pipefail
: "${API:?the REST API}" "${TOKEN:?a personal token of an admin of ORG}"
ORG=${ORG:-acme}
NAME=${NAME:-hello-$$}
BIN=$(cd "$(dirname "$0")/.." && pwd)/.venv/bin
export HOME=$(mktemp -d) PATH="$BIN:/usr/bin:/bin"
unset XDG_CONFIG_HOME DJANGO_SETTINGS_MODULE DATABASE_URL DOCPLATFORM_API DOCPLATFORM_TOKEN
cd "$HOME"
now() { date +%s.%N; }
waitfor() { until grep -q "$1" "$HOME/dev.out"; do sleep 0.05; done; }

start=$(now)
docplatform-integration login --api "$API" --token "$TOKEN" >/dev/null                 # 1
docplatform-integration new "$NAME" --organization "$ORG" >/dev/null                    # 2
docplatform-integration dev "$NAME" >"$HOME/dev.out" 2>&1 &                             # 3
dev=$!
trap 'kill $dev 2>/dev/null || true' EXIT
waitfor "^watching"
installed=$(now)
docplatform-integration trigger space_content_updated "$NAME" >/dev/null              # 4
waitfor "content updated, revision"
handled=$(now)
kill "$dev"; wait "$dev" || true
python3 -c "print(f'{\"$NAME\"}: installed after {$installed - $start:.1f} s, event handled after {$handled - $start:.1f} s')"
