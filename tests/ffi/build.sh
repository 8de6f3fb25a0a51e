#!/bin/sh
# Builds the shared libraries the foreign-operator and plugin tests load:
#   build/ffi/libffitest.so            tests/ffi/ffitest.c (functions for --ffi)
#   build/ffi/libtestplugin*.so        tests/ffi/test_plugin.c (good and broken plugins)
#   build/samples/libsample_plugin.so  samples/plugin/sample_plugin.c
# Usage: sh tests/ffi/build.sh [OUTDIR]   (OUTDIR defaults to build; run from the repo root)
set -e
cd "$(dirname "$0")/../.."
out=${1:-build}
cc=${CC:-cc}
flags="-std=c17 -O2 -Wall -Wextra -fPIC -shared"
mkdir -p "$out/ffi" "$out/samples"
$cc $flags -o "$out/ffi/libffitest.so" tests/ffi/ffitest.c
$cc $flags -Iinclude -o "$out/samples/libsample_plugin.so" samples/plugin/sample_plugin.c -lm
$cc $flags -Iinclude -o "$out/ffi/libtestplugin.so" tests/ffi/test_plugin.c
for v in BAD_ABI NO_ABI NO_INIT INIT_FAIL DUP_NAME BAD_DEFAULT; do
  lower=$(echo "$v" | tr 'A-Z_' 'a-z_')
  $cc $flags -Wno-unused-function -Iinclude -DVARIANT_$v -o "$out/ffi/libtestplugin_$lower.so" tests/ffi/test_plugin.c
done
