#!/usr/bin/env bash
# The API's contract, checked by Schemathesis against a live `remit run`:
# once on a SQLite file and once on a fresh PostgreSQL database, with
# Schemathesis' default checks and a bounded number of examples per
# operation. Checks left out, and why, are listed in docs/testing.md.
#
#   tests/contract/run.sh               # both stores
#   tests/contract/run.sh sqlite        # one
#
# Needs `st` (pip install schemathesis) and, for PostgreSQL, createdb and
# dropdb reaching $DATABASE_URL's server (default
# postgres://postgres@127.0.0.1:5432/postgres). CONTRACT_EXAMPLES
# sets the examples per operation (default 30).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ $# -gt 0 ]; then stores=("$@"); else stores=(sqlite postgres); fi
examples="${CONTRACT_EXAMPLES:-30}"
admin_url="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
st="${ST:-st}"
token="contract-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"

cargo build --quiet -p remit-actors --bin remit
remit="${CARGO_TARGET_DIR:-$PWD/target}/debug/remit"
config="$PWD/tests/contract/schemathesis.toml"

work="$(mktemp -d)"
pid=""
database=""
cleanup() {
    if [ -n "$pid" ]; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    if [ -n "$database" ]; then
        dropdb --if-exists --force --maintenance-db="$admin_url" "$database" || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

check() {
    local store="$1" url
    case "$store" in
        sqlite) url="sqlite://$work/remit.db" ;;
        postgres)
            database="remit_contract_$$"
            createdb --maintenance-db="$admin_url" "$database"
            url="${admin_url%/*}/$database"
            ;;
        *) echo "unknown store $store (sqlite or postgres)" >&2; return 2 ;;
    esac
    local port
    port="$(free_port)"
    export DATABASE_URL="$url"
    export REMIT_PAYLOAD_KEY="$("$remit" keygen)"
    export REMIT_API_TOKEN="$token"
    export REMIT_API__BIND="127.0.0.1:$port"
    export REMIT_SEND__ALLOW_HOSTS='["127.0.0.0/8","localhost"]'
    export REMIT_LOG__FORMAT=json REMIT_LOG__LEVEL=warning
    "$remit" migrate >/dev/null
    "$remit" run --region us 2>"$work/remit-$store.log" &
    pid=$!
    local base="http://127.0.0.1:$port"
    for _ in $(seq 100); do
        curl -fsS "$base/healthz" >/dev/null 2>&1 && break
        sleep 0.2
    done
    # A destination the generated tasks may name.
    curl -fsS -o /dev/null -H "Authorization: Bearer $token" -H 'content-type: application/json' \
        -d '{"id": "crm", "region": "us", "url": "http://127.0.0.1:9/hook"}' \
        "$base/v1/destinations"

    echo "== schemathesis on $store ($examples examples per operation)"
    local status=0
    # From the temporary directory: Schemathesis keeps a cache in its
    # working directory.
    (cd "$work" && "$st" --config-file "$config" run "$base/openapi.json" \
        -H "Authorization: Bearer $token" \
        --max-examples "$examples" \
        --seed "${CONTRACT_SEED:-1}" \
        --request-timeout 10 \
        --report-dir "$work/report") \
        || status=$?

    kill -TERM "$pid"
    wait "$pid" || true
    pid=""
    if grep -q '"level":"CRIT\|panicked' "$work/remit-$store.log"; then
        echo "remit logged a panic or a critical error:" >&2
        cat "$work/remit-$store.log" >&2
        status=1
    fi
    if [ -n "$database" ]; then
        dropdb --force --maintenance-db="$admin_url" "$database"
        database=""
    fi
    return "$status"
}

failed=0
for store in "${stores[@]}"; do
    check "$store" || failed=1
done
exit "$failed"
