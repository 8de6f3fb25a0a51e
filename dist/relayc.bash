# dist/relayc.bash — bash completion for relayc.
#
# Installed by `make install` as $PREFIX/share/bash-completion/completions/relayc, where
# bash-completion loads it the first time `relayc` is completed; without bash-completion,
# `source` it from ~/.bashrc. It needs nothing but bash >= 4 (no bash-completion helpers).
#
# Nothing is listed here: at TAB time it asks the relayc being completed (the command word
# as typed, so ./build/relayc completes from that build):
#   -... / --...          flags parsed from `relayc --help` (`--repeat=` and the like
#                         without a trailing space, ready for the value)
#   --pass=A,B(k=v),...   pass names from `relayc --list-passes` (first word of each line;
#                         nothing when that flag fails), and operator names from
#                         `relayc --list-ops` inside a pass's option values (`k=nn.co<TAB>`)
#   after --input NAME=   file names; after --output, --params, --inputs, --save-params,
#                         --ffi, --plugin: file names
#   --emit=K, --diagnostics-format=F, --check-grad=M, --stop-after=P: the values the
#                         option takes, from the list below (relayc's usage error for a bad
#                         value names the same; tests/run_install.sh checks each is accepted)
#   anything else         file names
#
# bash splits words at '=', ':' and '(' (COMP_WORDBREAKS), so the word under the cursor is
# taken from COMP_LINE up to the cursor, completed whole, and each candidate is trimmed to
# the part bash will replace.

_relayc_flags() {
  "$1" --help 2>/dev/null |
    grep -oE -- '(^|[ ,])--?[A-Za-z0-9][-A-Za-z0-9]*=?' |
    sed -e 's/^[ ,]*//' | sort -u
}

_relayc_passes() {
  "$1" --list-passes 2>/dev/null | awk '/^[^[:space:]]/ { print $1 }'
}

_relayc_ops() {
  "$1" --list-ops 2>/dev/null
}

# The values of the options that take one of a fixed set.
_relayc_values() {
  case $1 in
    --emit) printf '%s\n' tokens ast types dot ;;
    --diagnostics-format) printf '%s\n' text json sarif ;;
    --check-grad) printf '%s\n' higher_order first_order ;;
    --stop-after) printf '%s\n' parse resolve ;;
  esac
}

# Sets COMPREPLY to the words of $2 (one per line) that start with $3, each prefixed with $1.
_relayc_reply() {
  local prefix=$1 words=$2 part=$3 w
  COMPREPLY=()
  while IFS= read -r w; do
    [[ -n $w && $w == "$part"* ]] && COMPREPLY+=("$prefix$w")
  done <<<"$words"
}

_relayc() {
  local line=${COMP_LINE:0:COMP_POINT}
  local cmd=${COMP_WORDS[0]}
  [[ $cmd == "~"* ]] && cmd=$HOME${cmd:1}
  # the whole word under the cursor and the one before it, split at blanks only
  local cur=${line##*[[:space:]]}
  local before=${line%"$cur"}
  before=${before%"${before##*[![:space:]]}"}
  local prev=${before##*[[:space:]]}
  COMPREPLY=()

  case $prev in
    -i | --input)
      if [[ $cur == *=* ]]; then
        local name=${cur%%=*}
        local f
        while IFS= read -r f; do [[ -n $f ]] && COMPREPLY+=("$name=$f"); done \
          < <(compgen -f -- "${cur#*=}")
      fi
      ;;
    -o | --output | --params | --inputs | --save-params | --ffi | --plugin)
      compopt -o filenames 2>/dev/null
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0
      ;;
    --ffi-decl | --repeat | --max-errors)
      return 0
      ;;
  esac
  if [[ ${#COMPREPLY[@]} -eq 0 && $prev != -i && $prev != --input ]]; then
    case $cur in
      --pass=*)
        local specs=${cur#--pass=}
        local last=${specs##*,}
        local head=${cur%"$last"}
        if [[ $last == *"("* ]]; then
          local opt=${last##*[(=,]}
          _relayc_reply "${cur%"$opt"}" "$(_relayc_ops "$cmd")" "$opt"
        else
          _relayc_reply "$head" "$(_relayc_passes "$cmd")" "$last"
        fi
        ;;
      --emit=* | --diagnostics-format=* | --check-grad=* | --stop-after=*)
        _relayc_reply "${cur%%=*}=" "$(_relayc_values "${cur%%=*}")" "${cur#*=}"
        ;;
      -*)
        _relayc_reply "" "$(_relayc_flags "$cmd")" "$cur"
        ;;
      *)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        return 0
        ;;
    esac
  fi
  # no space after a flag waiting for its value
  if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *[=,\(] ]]; then
    compopt -o nospace 2>/dev/null
  fi
  # keep only what follows the last word-break character: that is what bash replaces
  local breaks=${COMP_WORDBREAKS// /}
  breaks=${breaks//$'\t'/}
  breaks=${breaks//$'\n'/}
  local keep=${cur%[$breaks]*}
  if [[ $keep != "$cur" ]]; then
    local n=$((${#keep} + 1)) i
    for i in "${!COMPREPLY[@]}"; do COMPREPLY[i]=${COMPREPLY[i]:n}; done
  fi
  return 0
}

complete -F _relayc relayc
