#!/usr/bin/env bash
# Installs everything toolwarden's tests need on a fresh Debian machine:
# the WASM toolchains (clang, lld, wasi-libc, wabt, binaryen, Debian's rustc
# with the wasm32 standard library) and the npm packages pinned in
# scripts/npm (real MCP servers, the MCP TypeScript SDK, the real agents
# Claude Code, Codex and Gemini CLI, AssemblyScript), Debian's postgresql
# (the store's Postgres tests run a throwaway cluster of it),
# the linters scripts/lint.sh runs (staticcheck, gocyclo), and the
# OpenTelemetry Collector the telemetry tests export to (scripts/otelcol/bin/toolwarden-otelcol).
# Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

apt_pkgs=(clang lld wasi-libc libclang-rt-14-dev-wasm32 wabt binaryen rustc libstd-rust-dev-wasm32)
# Debian's Chromium, driven headless by the inbox's browser tests (internal/inbox/web).
apt_pkgs+=(chromium)
# Debian's PostgreSQL server: internal/store/pgtest runs a throwaway cluster
# of it (initdb + postgres as the unprivileged postgres user the package
# creates) for the store's Postgres tests; a system cluster the package may
# start is never used by them.
apt_pkgs+=(postgresql)
missing=()
for p in "${apt_pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ ! -x scripts/npm/node_modules/.bin/mcp-server-filesystem ] || [ ! -x scripts/npm/node_modules/.bin/codex ] || [ scripts/npm/package-lock.json -nt scripts/npm/node_modules ]; then
  echo "setup: installing npm packages (scripts/npm)"
  # npm install from the lock, not npm ci: the lock cannot list vite's optional
  # napi-windows-process-start-time (a dependency of the Inspector's tree that
  # the registry here does not serve), and npm ci refuses a lock without it.
  # --no-save keeps package.json and the lock as committed.
  (cd scripts/npm && npm install --no-save --no-audit --no-fund --loglevel=error)
  touch scripts/npm/node_modules
fi

go mod download

# staticcheck, pinned; installed into the Go bin dir (test.sh runs it).
staticcheck_version=v0.8.2
gobin="$(go env GOBIN)"
[ -n "$gobin" ] || gobin="$(go env GOPATH)/bin"
if ! "$gobin/staticcheck" -version 2>/dev/null | grep -q "${staticcheck_version#v}"; then
  echo "setup: installing staticcheck $staticcheck_version"
  (cd "$(mktemp -d)" && GOFLAGS= go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version")
fi
# gocyclo, pinned: the complexity limit in scripts/lint.sh.
gocyclo_version=v0.6.0
if ! go version -m "$gobin/gocyclo" 2>/dev/null | grep -q "github.com/fzipp/gocyclo[[:space:]]*$gocyclo_version"; then
  echo "setup: installing gocyclo $gocyclo_version"
  (cd "$(mktemp -d)" && GOFLAGS= go install "github.com/fzipp/gocyclo/cmd/gocyclo@$gocyclo_version")
fi
# The OpenTelemetry Collector the telemetry tests export to: assembled from
# the collector's modules in scripts/otelcol (a module of its own, so
# toolwarden never links it) into scripts/otelcol/bin/, where
# internal/telemetry/otlptest finds it. Rebuilt only when its sources
# change; the Go caches stay warm.
otelcol=scripts/otelcol/bin/toolwarden-otelcol
if [ ! -x "$otelcol" ] || [ -n "$(find scripts/otelcol -path scripts/otelcol/bin -prune -o -type f -newer "$otelcol" -print 2>/dev/null)" ]; then
  echo "setup: building the OpenTelemetry Collector (scripts/otelcol)"
  (cd scripts/otelcol && go build -o bin/toolwarden-otelcol .)
fi
echo "setup: ok"
