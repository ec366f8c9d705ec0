#!/usr/bin/env bash
# Repeat the chaos suite N times (default 10) on SQLite and PostgreSQL Engine DBs and count
# the repetitions that passed. Each repetition's pytest output goes to a log under $LOGS.
# Usage: tests/chaos/repeat.sh [N [TEST ...]]   (PostgreSQL from ETL_CRAFT_TEST_DATABASE_URL)
# TEST: test files or node ids to repeat instead of the whole chaos suite.
set -u
N="${1:-10}"
shift $(($# > 0 ? 1 : 0))
TESTS=("${@:-tests/chaos}")
LOGS="${LOGS:-$(mktemp -d -t etl-craft-chaos.XXXXXX)}"
# Absolute before the cd below: a relative LOGS names a folder under the caller's.
mkdir -p "$LOGS" && LOGS="$(cd "$LOGS" && pwd)"
cd "$(dirname "$0")/../.."
passed=0
failed=0
for i in $(seq 1 "$N"); do
    log="$LOGS/repetition-$i.log"
    if uv run pytest "${TESTS[@]}" -m chaos -q >"$log" 2>&1; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "repetition $i failed; see $log"
    fi
    echo "repetition $i: $(tail -n 1 "$log")"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
