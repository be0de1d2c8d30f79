# Shared by the CLI test scripts (sourced, not run): failure counting and exit-code checks.
# The caller sets $tmp (a scratch directory) first.
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# expect CODE CMD...: runs CMD, keeps stdout in $out and stderr in $err, checks the exit code.
expect() {
  local code=$1
  shift
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  out=$(cat "$tmp/out")
  err=$(cat "$tmp/err")
  [ "$rc" -eq "$code" ] || fail "'$*' exited $rc, expected $code; stdout: $out; stderr: $err"
}
has() { grep -qF -- "$2" <<<"$1" || fail "expected '$2' in: $1"; }
# one_line_error TEXT: stderr ($err) is one "collbench: ..." line containing TEXT.
one_line_error() {
  [ "$(wc -l <<<"$err")" -eq 1 ] && [[ "$err" == "collbench: "* ]] ||
    fail "expected one 'collbench: ...' line on stderr, got: $err"
  has "$err" "$1"
}
