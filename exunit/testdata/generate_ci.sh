#!/usr/bin/env bash
# Regenerate the CI-shaped fixture logs under logs/ (the ones README.md lists
# under "CI shapes"): real `mix test` output from fixture_ci/, fixture/ and
# fixture_umbrella/, and their GitHub Actions versions with setup-beam's
# problem matchers applied (gha_wrap.sh). Needs Elixir (Debian: apt-get
# install -y elixir). Runs as root: it makes the symlinks
# /home/runner/work/ci/ci, /__w/ci/ci and /opt/elsewhere to the fixture, so
# ExUnit prints absolute locations as CI machines and containers show them.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
LOGS=$HERE/logs
export MIX_ENV=test
unset RACY_DOCTEST_FAIL RACY_SETUP_ALL_FAIL CI_TEST_PATH || true
codes=$LOGS/EXIT_CODES_CI
: >"$codes"

capture() { # capture NAME CMD...: stdout+stderr into logs/NAME.txt, byte for byte
  local name=$1 rc=0
  shift
  "$@" >"$LOGS/$name.txt" 2>&1 || rc=$?
  echo "$name.txt $rc" >>"$codes"
}
wrap() { # wrap RAW OUT CMD [GHA_MATCHERS]
  local rc
  rc=$(awk -v f="$(basename "$1")" '$1 == f { print $2 }' "$LOGS/EXIT_CODES" "$codes" | head -1)
  GHA_CMD=$3 GHA_MATCHERS=${4:-1} "$HERE/gha_wrap.sh" "$LOGS/$1" "$rc" >"$LOGS/$2"
}

# --- fixture_ci: properties, a test name with a newline, a header-shaped
# line inside an assertion message
cd "$HERE/fixture_ci"
rm -rf _build
mix compile >/dev/null 2>&1
capture properties_fail mix test --seed 0 test/prop_test.exs

# --- the same failures at absolute locations: ExUnit prints a location
# relative to the working directory, or whole when it is outside it
for link in /home/runner/work/ci/ci /__w/ci/ci /opt/elsewhere/ci; do
  mkdir -p "$(dirname "$link")"
  ln -sfn "$HERE/fixture_ci" "$link"
done
CI_TEST_PATH=/home/runner/work/ci/ci/test capture absolute_runner_fail mix test --seed 0 /home/runner/work/ci/ci/test/prop_test.exs
CI_TEST_PATH=/__w/ci/ci/test capture absolute_container_fail mix test --seed 0 /__w/ci/ci/test/prop_test.exs
CI_TEST_PATH=/opt/elsewhere/ci/test capture absolute_unknown_fail mix test --seed 0 /opt/elsewhere/ci/test/prop_test.exs

# --- 150 failing tests: counters of three digits
d=/tmp/ci_many
rm -rf "$d"; mkdir -p "$d/test"
cp -r mix.exs lib "$d"/; cp test/test_helper.exs "$d/test/"
{
  echo "defmodule ManyTest do"
  echo "  use ExUnit.Case, async: true"
  for i in $(seq 1 150); do
    echo ""
    echo "  test \"number $i\" do"
    echo "    assert Ci.add($i, 0) == 0"
    echo "  end"
  done
  echo "end"
} >"$d/test/many_test.exs"
(cd "$d" && capture many_failures mix test --seed 0)
rm -rf "$d"

# --- an umbrella app tested from its own directory
cd "$HERE/fixture_umbrella"
rm -rf _build
(cd apps/beta && capture umbrella_cd_fail mix test --seed 42)

# --- a retry in the job: `mix test || mix test --failed`, the first run
# failing and the rerun passing (the racy tests: search for such a seed)
cd "$HERE/fixture"
rm -rf _build
mix compile >/dev/null 2>&1
for seed in $(seq 1 300); do
  rc=0
  { mix test --seed "$seed" || mix test --failed; } >"$LOGS/in_job_retry.txt" 2>&1 || rc=$?
  if [[ $rc == 0 ]] && grep -qE '^ +[0-9]+\) test ' "$LOGS/in_job_retry.txt"; then
    echo "in_job_retry.txt 0 (seed $seed, then --failed)" >>"$codes"
    break
  fi
done

# --- GitHub Actions job logs, setup-beam's problem matchers on
wrap fail_seed_1.txt gha_pm_fail_seed_1.txt "mix test"
wrap color_fail_seed_1.txt gha_pm_color_fail_seed_1.txt "mix test --color"
wrap fail_seed_33.txt gha_nopm_fail_seed_33.txt "mix test" 0
wrap many_failures.txt gha_pm_many_failures.txt "mix test"
wrap properties_fail.txt gha_pm_properties_fail.txt "mix test"
wrap absolute_runner_fail.txt gha_pm_absolute_runner_fail.txt "mix test"
wrap umbrella_fail.txt gha_pm_umbrella_fail.txt "mix test"
wrap umbrella_cd_fail.txt gha_pm_umbrella_cd_fail.txt "cd apps/beta && mix test"
wrap compile_error.txt gha_pm_compile_error.txt "mix test"
wrap in_job_retry.txt gha_pm_in_job_retry.txt "mix test || mix test --failed"

echo "done:"
cat "$codes"
