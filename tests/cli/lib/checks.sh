# Shared by the CLI tests that count named checks (sourced, not run).
fails=0 passes=0
ok() { echo "ok   $*"; passes=$((passes + 1)); }
check() {  # check "what" CMD...: passes when CMD succeeds
  local what=$1
  shift
  if "$@"; then ok "$what"; else fails=$((fails + 1)); echo "FAIL $what"; fi
}
# checks_done: the count line; its status is 0 when nothing failed (the script's last command).
checks_done() {
  echo "$passes passed, $fails failed"
  [ $fails -eq 0 ]
}
# wait_stored DB N [TABLE]: until TABLE (default results) of DB holds N rows; fails after 60 s.
wait_stored() {
  local n
  for _ in $(seq 300); do
    n=$(timeout 10 sqlite3 "$1" "select count(*) from ${3:-results}" 2>/dev/null || echo 0)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.2
  done
  return 1
}
