# remit's everyday commands. `make help` lists them.
#
# `make test` is the test command: it brings what the tests need where it
# is missing (Debian's Chromium and its driver for the console's browser
# tests, Debian's pgbouncer for the tests behind it, Debian's promtool for
# the alert rules' unit tests and the exposition check, installed when run
# as root) and runs every test binary to the end,
# so one failing binary never hides the others' results.

.DEFAULT_GOAL := help
.PHONY: help demo test browser pgbouncer promtool lint contract ci

help: ## List the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-9s %s\n", $$1, $$2}'

demo: ## remit's whole job on a temporary SQLite file (about 20 s)
	cargo run -p remit-actors --bin remit -- demo

test: browser pgbouncer promtool ## Every test, against DATABASE_URL (else PostgreSQL on 127.0.0.1:5432)
	cargo test --workspace --all-features --no-fail-fast

browser: ## Debian's chromium and chromium-driver, where missing (as root)
	@bash tests/console_browser.sh

pgbouncer: ## Debian's pgbouncer, where missing (as root)
	@bash tests/pgbouncer.sh

promtool: ## Debian's promtool (package prometheus), where missing (as root)
	@bash tests/promtool.sh

lint: ## Formatting and clippy, with and without the failpoints
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	cargo clippy --workspace --all-targets --all-features -- -D warnings

contract: ## Schemathesis against a live remit on both stores
	tests/contract/run.sh

ci: ## What CI runs, a throwaway PostgreSQL included when none is running
	bash .ci/run
