#!/usr/bin/env bash
# Release builds: coding-agent for linux, darwin and windows × amd64, arm64,
# as archives (tar.gz; zip for windows) with the binary at the archive's
# root, SHA256SUMS over them, and the npm packages (one per platform plus
# the launcher `coding-agent`, whose optionalDependencies pick the right one).
#
#   scripts/release.sh [VERSION]     VERSION defaults to the tag on HEAD
#                                    (v1.2.3 → 1.2.3), else 0.0.0-dev.
#   OUT=dir scripts/release.sh       output directory (default dist/)
#   TARGETS="linux/amd64" ...        build only some targets
#   NPM_PACK=0 ...                   skip `npm pack`
#
# Nothing is published.
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-}"
if [ -z "$version" ]; then
  version="$(git describe --tags --exact-match 2>/dev/null || true)"
fi
version="${version#v}"
[ -n "$version" ] || version="0.0.0-dev"
if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  echo "release: version $version is not semantic (x.y.z)" >&2
  exit 2
fi
out="${OUT:-dist}"
targets="${TARGETS:-linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64}"
rm -rf "$out"
mkdir -p "$out/npm"

# npm's names for the platforms.
npm_os() { case "$1" in windows) echo win32 ;; *) echo "$1" ;; esac; }
npm_cpu() { case "$1" in amd64) echo x64 ;; *) echo "$1" ;; esac; }

for target in $targets; do
  goos="${target%/*}" goarch="${target#*/}"
  exe=coding-agent
  [ "$goos" = windows ] && exe=coding-agent.exe
  name="coding-agent-$version-$goos-$goarch"
  stage="$out/stage/$name"
  mkdir -p "$stage"
  echo "== $target"
  GOOS="$goos" GOARCH="$goarch" CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X main.ldflagsVersion=$version" -o "$stage/$exe" ./cmd/coding-agent
  cp README.md "$stage/"
  if [ "$goos" = windows ]; then
    (cd "$stage" && python3 -m zipfile -c "../../$name.zip" "$exe" README.md)
  else
    tar -C "$stage" -czf "$out/$name.tar.gz" "$exe" README.md
  fi

  # The platform's npm package: the binary and nothing else.
  os="$(npm_os "$goos")" cpu="$(npm_cpu "$goarch")"
  pkg="$out/npm/coding-agent-$os-$cpu"
  mkdir -p "$pkg/bin"
  cp "$stage/$exe" "$pkg/bin/$exe"
  cat >"$pkg/package.json" <<JSON
{
  "name": "@coding-agent/coding-agent-$os-$cpu",
  "version": "$version",
  "description": "The coding-agent binary for $os-$cpu (installed by the coding-agent package)",
  "license": "MIT",
  "repository": {"type": "git", "url": "git+https://github.com/coding-agent/coding-agent.git"},
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin"],
  "preferUnplugged": true
}
JSON
done
rm -rf "$out/stage"

# The launcher package.
launcher="$out/npm/coding-agent"
cp -R packaging/npm/coding-agent "$launcher"
node -e '
const fs = require("fs");
const [file, version, targets] = [process.argv[1], process.argv[2], process.argv[3].split(" ")];
const p = JSON.parse(fs.readFileSync(file, "utf8"));
p.version = version;
p.optionalDependencies = {};
for (const t of targets) {
  const [os, arch] = t.split("/");
  const n = "@coding-agent/coding-agent-" + (os === "windows" ? "win32" : os) + "-" + (arch === "amd64" ? "x64" : arch);
  p.optionalDependencies[n] = version;
}
fs.writeFileSync(file, JSON.stringify(p, null, 2) + "\n");
' "$launcher/package.json" "$version" "$targets"

(cd "$out" && sha256sum -- *.tar.gz *.zip 2>/dev/null >SHA256SUMS || sha256sum -- *.tar.gz >SHA256SUMS)

if [ "${NPM_PACK:-1}" != 0 ]; then
  for d in "$out"/npm/*/; do
    (cd "$d" && npm pack --silent --pack-destination .. >/dev/null)
  done
fi
echo "release $version in $out:"
(cd "$out" && ls -1 *.tar.gz *.zip SHA256SUMS npm/*.tgz 2>/dev/null)
