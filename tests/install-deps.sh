#!/bin/sh
# Installs the Debian packages relayc needs, only when something is missing.
# Used by `make check` and `make demo`; safe to run repeatedly.
set -e
need="re2c bison pkg-config check libffi-dev libopenblas-dev libjansson-dev zlib1g-dev mandoc python3 python3-numpy graphviz"
missing=""
for p in $need; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "relayc: installing missing packages:$missing"
SUDO=""
[ "$(id -u)" = 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
