package evidence

import (
	"strings"
	"testing"
)

// A CI that stops running the tests on pull requests, or for a
// combination its matrix ran, without touching the test command.
func TestCIRunsNarrowed(t *testing.T) {
	actions := "name: CI\non:\n  push:\n    branches: [main]\n  pull_request:\n\njobs:\n  test:\n    runs-on: ubuntu-latest\n    strategy:\n      matrix:\n        elixir: [\"1.16\", \"1.17\"]\n        otp: [\"26\", \"27\"]\n    steps:\n      - uses: actions/checkout@v4\n      - name: Lint\n        run: mix format --check-formatted\n      - name: Test\n        run: mix test\n"
	gitlab := "stages: [test]\n\ntest:\n  image: elixir:1.17\n  script:\n    - mix test\n"
	circle := "version: 2.1\njobs:\n  test:\n    docker:\n      - image: cimg/elixir:1.17\n    steps:\n      - checkout\n      - run: mix test\n  lint:\n    docker:\n      - image: cimg/elixir:1.17\n    steps:\n      - run: mix credo\nworkflows:\n  ci:\n    jobs:\n      - lint\n      - test\n"
	wf := ".github/workflows/ci.yml"
	runWholeCases(t, []wholeCase{
		{"the test step run only on the main branch", map[string]sides{wf: {actions, strings.Replace(actions, "        run: mix test\n", "        if: github.ref == 'refs/heads/main'\n        run: mix test\n", 1)}}, "test-skipped"},
		{"the test job run only on a schedule", map[string]sides{wf: {actions, strings.Replace(actions, "    runs-on: ubuntu-latest\n", "    if: github.event_name == 'schedule'\n    runs-on: ubuntu-latest\n", 1)}}, "test-skipped"},
		{"the lint step run only on pushes", map[string]sides{wf: {actions, strings.Replace(actions, "        run: mix format --check-formatted\n", "        if: github.event_name == 'push'\n        run: mix format --check-formatted\n", 1)}}, ""},
		{"a push and its pull request not run twice", map[string]sides{wf: {actions, strings.Replace(actions, "    runs-on: ubuntu-latest\n", "    if: github.event_name == 'push' || github.event.pull_request.head.repo.full_name != github.repository\n    runs-on: ubuntu-latest\n", 1)}}, ""},
		{"one test step for pushes, one for pull requests", map[string]sides{wf: {actions, strings.Replace(actions, "        run: mix test\n", "        if: github.event_name == 'push'\n        run: mix coveralls.github\n      - name: Test\n        if: github.event_name != 'push'\n        run: mix test\n", 1)}}, ""},
		{"a GitLab test job run only on the default branch", map[string]sides{".gitlab-ci.yml": {gitlab, strings.Replace(gitlab, "  script:", "  rules:\n    - if: $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH\n  script:", 1)}}, "test-skipped"},
		{"a CircleCI test job filtered to main", map[string]sides{".circleci/config.yml": {circle, strings.Replace(circle, "      - test\n", "      - test:\n          filters:\n            branches:\n              only: main\n", 1)}}, "test-skipped"},
		{"a CircleCI lint job filtered to main", map[string]sides{".circleci/config.yml": {circle, strings.Replace(circle, "      - lint\n", "      - lint:\n          filters:\n            branches:\n              only: main\n", 1)}}, ""},
		{"the workflow no longer runs on pull requests", map[string]sides{wf: {actions, strings.Replace(actions, "  pull_request:\n", "  schedule:\n    - cron: \"0 3 * * *\"\n", 1)}}, "test-skipped"},
		{"the pull request trigger narrowed to a branch", map[string]sides{wf: {actions, strings.Replace(actions, "  pull_request:\n", "  pull_request:\n    branches: [main]\n", 1)}}, ""},
		{"a release job that tests on tags", map[string]sides{wf: {actions, actions + "  release:\n    if: startsWith(github.ref, 'refs/tags/')\n    runs-on: ubuntu-latest\n    steps:\n      - run: mix test\n      - run: mix hex.publish --yes\n"}}, ""},
		{"a combination the matrix ran excluded", map[string]sides{wf: {actions, strings.Replace(actions, "        otp: [\"26\", \"27\"]\n", "        otp: [\"26\", \"27\"]\n        exclude:\n          - elixir: \"1.16\"\n            otp: \"27\"\n", 1)}}, "test-skipped"},
		{"a new Elixir excluded on an old OTP", map[string]sides{wf: {actions, strings.Replace(actions, "        elixir: [\"1.16\", \"1.17\"]\n        otp: [\"26\", \"27\"]\n", "        elixir: [\"1.16\", \"1.17\", \"1.18\"]\n        otp: [\"26\", \"27\"]\n        exclude:\n          - elixir: \"1.18\"\n            otp: \"26\"\n", 1)}}, ""},
	})
}

// A test command that included a tag the suite excludes stops including
// it: those tests no longer run, unless the suite stops excluding them.
func TestIncludedTagsDropped(t *testing.T) {
	actions := "jobs:\n  test:\n    steps:\n      - name: Run tests\n        run: mix test --include integration --include proxy\n"
	helper := "ExUnit.start(exclude: [:integration, :proxy])\n"
	mix := "  defp aliases do\n    [test: [\"ecto.create --quiet\", \"test --include integration\"]]\n  end\n"
	wf := ".github/workflows/ci.yml"
	dropped := strings.Replace(actions, "--include integration ", "", 1)
	runWholeCases(t, []wholeCase{
		{"an included tag dropped from the test command", map[string]sides{wf: {actions, dropped}}, "tag-excluded"},
		{"an included tag dropped from a mix alias", map[string]sides{"mix.exs": {mix, strings.Replace(mix, " --include integration", "", 1)}}, "tag-excluded"},
		{"an included tag dropped where the suite no longer excludes it", map[string]sides{wf: {actions, dropped}, "test/test_helper.exs": {helper, "ExUnit.start(exclude: [:proxy])\n"}}, ""},
		{"an included tag moved to a job of its own", map[string]sides{wf: {actions, dropped + "  integration:\n    steps:\n      - run: mix test --only integration\n"}}, ""},
		{"a tag added to the test command", map[string]sides{wf: {actions, strings.Replace(actions, "--include proxy", "--include proxy --include slow", 1)}}, ""},
	})
}

// CI shapes of other systems and of build files: Buildkite's soft_fail on
// the tests' exit status, partitions dropped from a matrix, a --timeout on
// a continued line, a mix alias that reruns failures, a Travis exclusion,
// and a Travis allow_failures that names a lint job.
func TestCIShapesOfOtherSystems(t *testing.T) {
	buildkite := "steps:\n  - label: \":elixir: test\"\n    command: mix test\n  - label: \"credo\"\n    command: mix credo --strict\n"
	partitions := "jobs:\n  test:\n    strategy:\n      matrix:\n        partition: [1, 2, 3, 4]\n    steps:\n      - run: MIX_TEST_PARTITION=${{ matrix.partition }} mix test --partitions 4\n"
	makefile := "test-ci:\n\tMIX_ENV=test mix test \\\n\t\t--timeout 60000 \\\n\t\t--warnings-as-errors\n"
	mix := "  defp aliases do\n    [\n      \"test.ci\": [\n        \"coveralls.github --warnings-as-errors\"\n      ]\n    ]\n  end\n"
	travis := "language: elixir\nelixir:\n  - 1.14.5\n  - 1.15.7\notp_release:\n  - '25.3'\n  - '26.2'\nscript:\n  - mix test\n"
	lint := travis + "jobs:\n  include:\n    - stage: lint\n      name: dialyzer\n      script: mix dialyzer\n"
	runWholeCases(t, []wholeCase{
		{"Buildkite lets the tests' exit status pass", map[string]sides{".buildkite/pipeline.yml": {buildkite, strings.Replace(buildkite, "    command: mix test\n", "    command: mix test\n    soft_fail:\n      - exit_status: 2\n", 1)}}, "failure-ignored"},
		{"Buildkite lets credo's exit status pass", map[string]sides{".buildkite/pipeline.yml": {buildkite, buildkite + "    soft_fail:\n      - exit_status: 2\n"}}, ""},
		{"a partition dropped from the matrix", map[string]sides{".github/workflows/ci.yml": {partitions, strings.Replace(partitions, "[1, 2, 3, 4]", "[1, 2, 3]", 1)}}, "test-skipped"},
		{"the suite split into fewer partitions", map[string]sides{".github/workflows/ci.yml": {partitions, strings.Replace(strings.Replace(partitions, "[1, 2, 3, 4]", "[1, 2, 3]", 1), "--partitions 4", "--partitions 3", 1)}}, ""},
		{"a timeout raised on a continued line", map[string]sides{"Makefile": {makefile, strings.Replace(makefile, "60000", "300000", 1)}}, "test-timeout-raised"},
		{"a timeout lowered on a continued line", map[string]sides{"Makefile": {makefile, strings.Replace(makefile, "60000", "30000", 1)}}, ""},
		{"a mix alias that reruns failures", map[string]sides{"mix.exs": {mix, strings.Replace(mix, "\"coveralls.github --warnings-as-errors\"", "\"cmd mix coveralls.github --warnings-as-errors || mix test --failed\"", 1)}}, "ci-retry"},
		{"a Travis combination it ran excluded", map[string]sides{".travis.yml": {travis, travis + "jobs:\n  exclude:\n    - elixir: 1.14.5\n      otp_release: '26.2'\n"}}, "test-skipped"},
		{"a new Travis Elixir excluded on an old OTP", map[string]sides{".travis.yml": {travis, strings.Replace(travis, "  - 1.15.7\n", "  - 1.15.7\n  - 1.17.3\n", 1) + "jobs:\n  exclude:\n    - elixir: 1.17.3\n      otp_release: '25.3'\n"}}, ""},
		{"a Travis lint job allowed to fail", map[string]sides{".travis.yml": {lint, lint + "  allow_failures:\n    - name: dialyzer\n  fast_finish: true\n"}}, ""},
		{"a Travis matrix entry allowed to fail", map[string]sides{".travis.yml": {lint, lint + "  allow_failures:\n    - otp_release: '26.2'\n"}}, "failure-ignored"},
	})
}

// A pipeline kept where no CI is looked for is read as one when its lines
// run the tests; a composite action is a workflow's step.
func TestCIFilesFoundByWhatTheyRun(t *testing.T) {
	pipeline := "test:\n  image: elixir:1.17\n  script:\n    - mix deps.get\n    - mix test\n"
	action := "name: Test\nruns:\n  using: composite\n  steps:\n    - name: Run tests\n      shell: bash\n      run: mix test\n"
	locale := "en:\n  greeting: Hello\n"
	runWholeCases(t, []wholeCase{
		{"a pipeline under deploy/ forgives the tests' failure", map[string]sides{"deploy/ci/pipeline.yml": {pipeline, strings.Replace(pipeline, "    - mix test\n", "    - mix test || true\n", 1)}}, "failure-ignored"},
		{"a pipeline under deploy/ given a new step", map[string]sides{"deploy/ci/pipeline.yml": {pipeline, strings.Replace(pipeline, "    - mix test\n", "    - mix format --check-formatted\n    - mix test\n", 1)}}, ""},
		{"a composite action retries the tests", map[string]sides{".github/actions/test/action.yml": {action, strings.Replace(action, "    - name: Run tests\n      shell: bash\n      run: mix test\n", "    - name: Run tests\n      uses: nick-fields/retry@v3\n      with:\n        max_attempts: 3\n        command: mix test\n", 1)}}, "ci-retry"},
		{"a composite action's test step switched off", map[string]sides{".github/actions/test/action.yml": {action, strings.Replace(action, "      shell: bash\n", "      if: false\n      shell: bash\n", 1)}}, "test-skipped"},
		{"a YAML file that runs nothing", map[string]sides{"priv/locales/en.yml": {locale, "en:\n  greeting: Hello || true\n"}}, ""},
	})
}
