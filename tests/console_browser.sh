#!/usr/bin/env bash
# The console's browser tests (actors/tests/console) drive Debian's
# Chromium through its ChromeDriver. Installs both where they are missing,
# with fonts for the screenshots' text (only recommended by chromium). Not
# root and missing: says so and goes on, so the other tests still run; the
# browser tests then fail, naming what is missing, and never pass silently.
set -euo pipefail
if [ -x /usr/bin/chromedriver ] && [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "The console's browser tests need Debian's chromium and chromium-driver:" >&2
  echo "  sudo apt-get install chromium chromium-driver fonts-liberation fonts-dejavu-core" >&2
  echo "Without them those tests fail; the others run." >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends \
  chromium chromium-driver fonts-liberation fonts-dejavu-core >/dev/null
