# Shared by the CLI test scripts (sourced, not run): the source tree ($src), a scratch directory,
# failure counting and exit-code checks. The caller calls `scratch NAME` (or sets $tmp itself)
# before `expect`.
src=${src:-${CB_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}}
# scratch NAME: $tmp, a directory removed on exit, and $db, a database path inside it.
scratch() {
  tmp=$(mktemp -d "${TMPDIR:-/tmp}/cb_$1.XXXXXX") || { echo "FAIL: no scratch directory"; exit 1; }
  trap 'rm -rf "$tmp"' EXIT
  db=$tmp/cb.db
}
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CODE CMD...: runs CMD, keeps stdout in $out and stderr in $err, checks the exit code.
expect() {
  local code=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  # A NUL in the output (a binary file shown) is dropped, not warned about by bash.
  out=$(tr -d '\000' <"$tmp/out")
  err=$(tr -d '\000' <"$tmp/err")
  [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code; stdout: $out; stderr: $err"
}
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }
hasnt() { ! grep -qF -- "$2" <<<"$1" || fail "did not expect '$2' in: $1"; }
# one_line_error TEXT: stderr ($err) is one "collbench: ..." line containing TEXT.
one_line_error() {
  [ "$(wc -l <<<"$err")" -eq 1 ] && [[ "$err" == "collbench: "* ]] ||
    fail "expected one 'collbench: ...' line on stderr, got: $err"
  has "$err" "$1"
}
# one_line TEXT: TEXT (a captured stderr) is exactly one line.
one_line() {
  [ "$(grep -c . <<<"$1")" -eq 1 ] || fail "expected one line on stderr, got: $1"
}
