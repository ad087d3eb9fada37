#!/usr/bin/env bash
# The tests behind PgBouncer (tests/store/behind_pgbouncer.rs,
# actors/tests/process/pgbouncer.rs) start Debian's pgbouncer (1.18 on
# bookworm) themselves. Installs it where it is missing. Not root and
# missing: says so and goes on, so the other tests still run; the
# PgBouncer tests then fail, naming what is missing, unless
# REMIT_SKIP_PGBOUNCER=1 says to skip them.
set -euo pipefail
if command -v pgbouncer >/dev/null || [ -x /usr/sbin/pgbouncer ] || [ -n "${PGBOUNCER:-}" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "The tests behind PgBouncer need Debian's pgbouncer:" >&2
  echo "  sudo apt-get install pgbouncer" >&2
  echo "Without it those tests fail (REMIT_SKIP_PGBOUNCER=1 skips them); the others run." >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null
