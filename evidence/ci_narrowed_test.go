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
