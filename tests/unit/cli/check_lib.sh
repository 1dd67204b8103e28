# Sourced by the CLI tests (tests/unit/cli/test_*.sh): `check NAME CONDITION...` runs the
# condition, prints "ok   NAME" or "FAIL NAME", and counts failures in $fails (a test ends
# with `exit $((fails > 0))` or its own summary).
fails=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails+1)); fi
}
