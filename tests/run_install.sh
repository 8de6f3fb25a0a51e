#!/bin/sh
# tests/run_install.sh — `make install-check` (part of `make check`): install relayc into a
# temporary DESTDIR under an unusual PREFIX, then use only what was installed:
#   - every file is where the README says, with the right mode;
#   - the installed binary runs samples (and prints --version / --list-ops);
#   - the installed man page renders and mentions the new flags;
#   - the sample plugin is compiled against the INSTALLED header, found through
#     `pkg-config --cflags relayc-plugin` (PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR pointing
#     into the DESTDIR, the way a staged install is used), and loaded by the installed binary;
#   - the installed bash completion completes flags (issue 13's among them), the values of
#     --emit=, --diagnostics-format=, --check-grad= and --stop-after= (each accepted by the
#     binary, the same list its usage error gives), operator names and pass names;
#   - the installed --help and man page document the same flags (tests/help_man.py);
#   - `make uninstall` removes every file again.
# Environment: MAKE (default make), BIN (default build/relayc), CC (default cc).
# Prints `install-check: N passed, N failed` and exits 1 on any failure.
set -u
MAKE=${MAKE:-make}
BIN=${BIN:-build/relayc}
CC=${CC:-cc}
PREFIX=/opt/relayc-install-check
tmp=$(mktemp -d /tmp/relayc_install.XXXXXX) || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
dest=$tmp/root
root=$dest$PREFIX
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "install-check: FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
  what=$1
  shift
  if "$@" >"$tmp/out" 2>&1; then ok; else bad "$what"; sed 's/^/    /' "$tmp/out" | head -20; fi
}

if ! $MAKE --no-print-directory -s install DESTDIR="$dest" PREFIX="$PREFIX" BIN="$BIN" \
    >"$tmp/install.log" 2>&1; then
  bad "make install DESTDIR=$dest PREFIX=$PREFIX"
  cat "$tmp/install.log"
  echo "install-check: $pass passed, $fail failed"
  exit 1
fi

# --- the files and their modes
for spec in "755 bin/relayc" "644 share/man/man1/relayc.1" "644 include/relayc/plugin.h" \
            "644 share/pkgconfig/relayc-plugin.pc" "644 share/bash-completion/completions/relayc"; do
  mode=${spec%% *}
  f=$root/${spec#* }
  if [ -f "$f" ] && [ "$(stat -c %a "$f")" = "$mode" ]; then ok; else bad "missing or mode != $mode: $f"; fi
done
check "installed header differs from include/relayc/plugin.h" \
  cmp "$root/include/relayc/plugin.h" include/relayc/plugin.h

# --- the installed binary, from a directory where nothing of the checkout is at hand
relayc=$root/bin/relayc
built=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
cp samples/list.relay samples/plugin/softplus.relay samples/plugin/sample_plugin.c "$tmp/"
check "installed relayc --version" sh -c "'$relayc' --version | grep -q '^relayc '"
check "installed relayc --list-ops lists nn.conv2d" sh -c "'$relayc' --list-ops | grep -qx 'nn.conv2d'"
check "installed relayc runs samples/list.relay like the build" \
  sh -c "cd '$tmp' && '$relayc' --run list.relay > got.txt && '$built' --run list.relay > want.txt && cmp got.txt want.txt"
printf '#[version = "0.0.5"]\ndef @main() { @length(@map(fn (%%x: int32) { add(%%x, 1) }, Cons(1, Cons(2, Nil)))) }\n' >"$tmp/prelude.relay"
check "installed relayc runs a program using the compiled-in --prelude" \
  sh -c "test \"\$('$relayc' --prelude --run '$tmp/prelude.relay')\" = 2"

# --- the man page
check "installed man page renders with the --list-ops entry" \
  sh -c "mandoc -Tascii '$root/share/man/man1/relayc.1' | sed 's/.\x08//g' | grep -q -- '--list-ops'"

check "installed --help and man page document the same flags (tests/help_man.py)" \
  python3 tests/help_man.py "$relayc" "$root/share/man/man1/relayc.1"

# --- pkg-config, the installed header and the sample plugin
pc() { PKG_CONFIG_PATH=$root/share/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_LIBDIR=/nonexistent pkg-config "$@"; }
cflags=$(pc --cflags relayc-plugin 2>"$tmp/pc.err")
cflags=$(echo $cflags) # pkg-config ends the line with a blank
if [ "$cflags" = "-I$root/include" ]; then ok; else bad "pkg-config --cflags relayc-plugin gave '$cflags' (want -I$root/include)"; cat "$tmp/pc.err"; fi
check "pkg-config --modversion relayc-plugin" sh -c "test \"\$(PKG_CONFIG_PATH='$root/share/pkgconfig' pkg-config --modversion relayc-plugin)\" = \"\$('$relayc' --version | awk '{print \$2}')\""
check "pkg-config prefix variable" sh -c "test \"\$(PKG_CONFIG_PATH='$root/share/pkgconfig' pkg-config --variable=prefix relayc-plugin)\" = '$PREFIX'"
# shellcheck disable=SC2086
check "compile samples/plugin/sample_plugin.c against the installed header" \
  $CC -std=c17 -O2 -Wall -Wextra -Werror -fPIC -shared $cflags -MD -MF "$tmp/plugin.d" \
      -o "$tmp/libsample_plugin.so" "$tmp/sample_plugin.c" -lm
check "the plugin was built with the installed plugin.h (not the checkout's)" \
  grep -q "$root/include/relayc/plugin.h" "$tmp/plugin.d"
want=$(sed -n 's|^// OUT: ||p' samples/plugin/softplus.relay)
check "installed relayc loads the plugin and runs samples/plugin/softplus.relay" \
  sh -c "cd '$tmp' && test \"\$('$relayc' --plugin ./libsample_plugin.so --run softplus.relay)\" = '$want'"
check "installed relayc --list-ops with the plugin lists sample.softplus" \
  sh -c "'$relayc' --plugin '$tmp/libsample_plugin.so' --list-ops | grep -qx sample.softplus"

# --- bash completion (sourced by itself: it needs no bash-completion helpers)
if command -v bash >/dev/null 2>&1; then
  cat >"$tmp/complete.bash" <<'EOF'
source "$1"
relayc=$2
# complete LINE: prints the candidates bash would show, one per line
complete_line() {
  COMP_LINE="$relayc $1"
  COMP_POINT=${#COMP_LINE}
  read -ra COMP_WORDS <<<"$COMP_LINE"
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  case $COMP_LINE in *" ") COMP_WORDS+=(""); COMP_CWORD=$((COMP_CWORD + 1)) ;; esac
  COMPREPLY=()
  _relayc
  printf '%s\n' "${COMPREPLY[@]}"
}
case $3 in
  newflags) # issue 13's flags
         complete_line "--par" | grep -qx -- --params && complete_line "--inp" | grep -qx -- --inputs &&
         complete_line "--save" | grep -qx -- --save-params && complete_line "--sta" | grep -qx -- --stats &&
         complete_line "--emi" | grep -qx -- --emit= && complete_line "--diag" | grep -qx -- --diagnostics-format= &&
         complete_line "--list-" | grep -qx -- --list-ops && complete_line "--list-" | grep -qx -- --list-passes &&
         cd "$4" && complete_line "--inputs lis" | grep -qx list.relay &&
         complete_line "--save-params lis" | grep -qx list.relay ;;
  values) # --emit=d<TAB> -> dot (bash replaces the part after '='); every value is one relayc
          # takes, and the values are the ones its usage error lists for a bad value
         complete_line "--emit=d" | grep -qx dot && complete_line "--diagnostics-format=s" | grep -qx sarif ||
           exit 1
         printf '#[version = "0.0.5"]\ndef @main(%%x: float32) { multiply(%%x, %%x) }\n' >"$4/sq.relay"
         for flag in --emit --diagnostics-format --check-grad --stop-after; do
           vals=$(complete_line "$flag=" | sort)
           [ -n "$vals" ] || { echo "no values for $flag="; exit 1; }
           for v in $vals; do
             "$relayc" "$flag=$v" "$4/sq.relay" >/dev/null 2>&1 || { echo "$flag=$v: rejected"; exit 1; }
           done
           listed=$("$relayc" "$flag=bogus" "$4/sq.relay" 2>&1 >/dev/null | head -1 |
             sed -e "s/.*expects //; s/, got.*//; s/.*(//; s/).*//; s/,/ /g; s/ or / /g" | tr ' ' '\n' | grep . | sort)
           [ "$vals" = "$listed" ] || { echo "$flag: completion [$vals] vs usage error [$listed]"; exit 1; }
         done ;;
  flags) complete_line "--pri" | grep -qx -- --print && complete_line "--list-o" | grep -qx -- --list-ops &&
         complete_line "--rep" | grep -qx -- --repeat= && complete_line "-" | grep -qx -- --help ;;
  ops) # inside a pass's option values bash replaces the part after the last '=' only
       complete_line "--pass=X(k=nn.conv2" | grep -qx -- nn.conv2d &&
       complete_line "--pass=X(k=nn.conv2" | grep -qx -- nn.conv2d_transpose ;;
  passes) # whatever --list-passes prints (nothing if the flag does not exist yet)
       first=$("$relayc" --list-passes 2>/dev/null | awk 'NF { print $1; exit }')
       if [ -z "$first" ]; then complete_line "--pass=" >/dev/null; exit 0; fi
       complete_line "--pass=" | grep -qx -- "$first" &&
       complete_line "--pass=$first," | grep -qx -- "$first,$first" &&
       ! complete_line "--pass=" | grep -qx -- bind ;;
  files) cd "$4" && complete_line "--params lis" | grep -qx list.relay &&
         complete_line "--input x=lis" | grep -qx list.relay && complete_line "softp" | grep -qx softplus.relay ;;
esac
EOF
  comp=$root/share/bash-completion/completions/relayc
  for what in flags newflags values ops passes files; do
    check "bash completion: $what" bash "$tmp/complete.bash" "$comp" "$relayc" "$what" "$tmp"
  done
fi

# --- uninstall leaves no file behind
check "make uninstall" $MAKE --no-print-directory -s uninstall DESTDIR="$dest" PREFIX="$PREFIX"
left=$(find "$dest" ! -type d | head -5)
if [ -z "$left" ]; then ok; else bad "files left after make uninstall: $left"; fi
if [ ! -e "$root/include/relayc" ]; then ok; else bad "make uninstall left $root/include/relayc"; fi

echo "install-check: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
