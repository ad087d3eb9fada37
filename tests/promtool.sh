#!/usr/bin/env bash
# The tests that run Prometheus's own tools on remit
# (actors/tests/process/prometheus.rs: `promtool check metrics` on a live
# /metrics, `promtool check rules` and `promtool test rules` on
# deploy/remit-alerts.yml) need Debian's promtool, from the `prometheus`
# package. Installs it where it is missing. Not root and missing: says so
# and goes on, so the other tests still run; those tests then fail, naming
# what is missing.
set -euo pipefail
if command -v promtool >/dev/null || [ -n "${PROMTOOL:-}" ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "The alert-rule and exposition tests need Debian's promtool:" >&2
  echo "  sudo apt-get install --no-install-recommends prometheus" >&2
  echo "Without it those tests fail; the others run." >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# The package's service is not started: only its promtool is used.
apt-get install -y -qq --no-install-recommends prometheus >/dev/null
