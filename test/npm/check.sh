#!/usr/bin/env bash
# Installs the npm packages that scripts/release.sh packed (from the local
# tarballs, offline: nothing is fetched or published) and checks that
# `npx coding-agent` runs this platform's binary: --version, and a real ACP
# exchange (the notebook example of the README) through the launcher.
#   test/npm/check.sh DIST_DIR VERSION
set -euo pipefail
dist="$(cd "$1" && pwd)" version="$2"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
os="$(node -p process.platform)" cpu="$(node -p process.arch)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cd "$work"
echo '{"name":"npx-check","private":true}' >package.json
npm install --offline --no-audit --no-fund --loglevel=error \
  "$dist/npm/coding-agent-$version.tgz" "$dist/npm/coding-agent-coding-agent-$os-$cpu-$version.tgz" >/dev/null
got="$(npx --no-install coding-agent --version)"
[ "$got" = "coding-agent $version" ] || fail "npx coding-agent --version: $got"
echo "ok: npx coding-agent --version: $got"

# The notebook example through npx, in a directory with a README.md; no
# model: the prompt must answer auth_required.
mkdir proj && echo "# hello from the npm check" >proj/README.md
out="$(cd proj && HOME="$work" CODING_AGENT_DATA_DIR="$work/data" ANTHROPIC_API_KEY= OPENAI_API_KEY= OPENAI_BASE_URL= CODING_AGENT_MODEL= \
  CODING_AGENT="npx --prefix $work --no-install coding-agent" python3 "$repo/docs/examples/notebook_client.py")"
echo "$out"
grep -q "agent: coding-agent $version" <<<"$out" || fail "initialize through npx"
grep -q "read README.md: .*hello from the npm check" <<<"$out" || fail "tools/call through npx"
grep -q "no prompt: .*(-32000)" <<<"$out" || fail "prompt without a model is not auth_required"
echo "ok: ACP through npx coding-agent"

# Without the platform package, the launcher says what is missing.
rm -rf "node_modules/@coding-agent"
if msg="$(npx --no-install coding-agent --version 2>&1)"; then fail "ran without the platform package"; fi
grep -q "coding-agent-$os-$cpu is not installed" <<<"$msg" || fail "unclear error without the platform package: $msg"
echo "ok: a missing platform package is named"
