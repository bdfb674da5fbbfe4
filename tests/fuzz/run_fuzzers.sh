#!/usr/bin/env bash
# Runs each libFuzzer target built in BUILD_DIR for SECONDS on its committed corpus (read only) and
# a scratch corpus in BUILD_DIR/corpus/<target> (new inputs go there), then prints each target's
# executions, coverage (cov: edges, ft: features) and corpus size (inputs). Findings (crash, leak,
# timeout, out-of-memory) are written to BUILD_DIR/findings/<target>/; any finding fails the run.
# To keep an input in the committed corpus, minimise it (-minimize_crash=1 for a crash,
# -merge=1 for coverage) and copy it into tests/fuzz/corpus/<target>/ on purpose.
#   tests/fuzz/run_fuzzers.sh BUILD_DIR SECONDS TARGET...
set -uo pipefail

build_dir=$1 seconds=$2
shift 2
corpus_root=$(dirname "$0")/corpus
failed=()
summary=()
# A field of libFuzzer's status line ("#N ... cov: 123 ft: 456 corp: 78/9Kb ...").
field() { grep -o "$1: [0-9]*" <<<"$2" | cut -d' ' -f2; }
for target in "$@"; do
  scratch=$build_dir/corpus/$target findings=$build_dir/findings/$target log=$build_dir/logs/$target.log
  mkdir -p "$scratch" "$findings" "$(dirname "$log")"
  echo "fuzz: $target for ${seconds}s (log: $log)"
  "$build_dir/tests/fuzz/$target" "$scratch" "$corpus_root/$target" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=4096 -detect_leaks=1 -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1
  status=$?
  last=$(grep -E '^#[0-9]+' "$log" | tail -1)
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$')
  summary+=("$(printf '%-26s execs %-9s cov %-6s ft %-6s corpus %s inputs' "$target" "${execs:-?}" "$(field cov "$last")" \
    "$(field ft "$last")" "$(field corp "$last")")")
  if [ $status -ne 0 ]; then
    failed+=("$target")
    grep -E '^==[0-9]+==ERROR|^SUMMARY|runtime error|Test unit written' "$log" | head -5
  fi
done
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: findings in ${failed[*]} (see $build_dir/findings/)"
  exit 1
fi
echo "fuzz: no findings"
