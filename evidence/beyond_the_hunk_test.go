package evidence

import (
	"slices"
	"strings"
	"testing"
)

// Rules that read past the hunk: the file at head, another file of the
// project.

// TestCISystemsRetryingTheTests: the retries and forgiveness of CI systems
// other than GitHub Actions, read from the hunk or, where the job the
// line belongs to is far above it, from the file at head.
func TestCISystemsRetryingTheTests(t *testing.T) {
	hunk := hunkOf
	gitlab := "test:\n  stage: test\n  script:\n    - mix test\n  retry:\n    max: 2\n    when:\n      - runner_system_failure\n      - script_failure\n"
	deps := "deps:\n  script:\n    - mix deps.get\n  retry:\n    max: 2\n    when:\n      - script_failure\n"
	buildkite := "steps:\n  - label: test\n    command: mix test\n    retry:\n      automatic:\n        - exit_status: -1\n          limit: 2\n        - exit_status: 2\n          limit: 2\n"
	for _, c := range []struct {
		name, rule string
		diff, head string // head: the file at head, read whole ("" when not)
	}{
		{"GitLab told to retry failed scripts", "ci-retry", hunk(".gitlab-ci.yml", "   retry:", "     max: 2", "     when:", "       - runner_system_failure", "+      - script_failure"), ""},
		{"GitLab's test job retried, seen in the whole file", "ci-retry", "--- a/.gitlab-ci.yml\n+++ b/.gitlab-ci.yml\n@@ -8,1 +8,2 @@\n       - runner_system_failure\n+      - script_failure\n", gitlab},
		{"Buildkite retrying ExUnit's exit status", "ci-retry", "--- a/.buildkite/pipeline.yml\n+++ b/.buildkite/pipeline.yml\n@@ -7,1 +7,3 @@\n           limit: 2\n+        - exit_status: 2\n+          limit: 2\n", buildkite},
		{"Jenkins retrying the stage that runs the tests", "ci-retry", hunk("Jenkinsfile", "     stage('Test') {", "       steps {", "+        retry(3) {", "           sh 'mix test --cover'", "+        }", "       }"), ""},
		{"travis_retry on the suite", "ci-retry", hunk(".travis.yml", " script:", "-  - mix coveralls.travis", "+  - travis_retry mix coveralls.travis"), ""},
		{"a Makefile's seed pinned through a variable", "seed-fixed", hunk("Makefile", "+CI_SEED ?= 20240611", " ci:", "-\t$(MIX) test --cover", "+\t$(MIX) test --cover --seed $(CI_SEED)"), ""},
		{"Woodpecker ignoring the test step's failure", "failure-ignored", hunk(".woodpecker/test.yml", "   test:", "     commands:", "       - mix test", "+    failure: ignore"), ""},
		{"the main run narrowed to one tag", "tag-excluded", hunk(".github/workflows/ci.yml", "     steps:", "-      - run: mix test", "+      - run: mix test --only fast"), ""},
		{"travis_retry on a test file whose name says lost", "ci-retry", hunk(".travis.yml", " script:", "-  - mix test test/lost_password_test.exs", "+  - travis_retry mix test test/lost_password_test.exs"), ""},
		{"a script's fixed wait made longer through a default", "sleep-added", hunk("scripts/test.sh", "-sleep 2", "+sleep \"${SERVICE_BOOT_SECONDS:-20}\"", " mix test"), ""},
	} {
		r := checkWithHead(t, c.diff, c.head)
		if !hasConcern(r, c.rule) {
			t.Errorf("%s: want a %s concern, got %+v", c.name, c.rule, r.Findings)
		}
	}
	for _, c := range []struct{ name, diff, head string }{
		{"GitLab retrying only lost runners", hunk(".gitlab-ci.yml", "   test:", "     script:", "       - mix test", "+    retry:", "+      max: 2", "+      when:", "+        - runner_system_failure", "+        - stuck_or_timeout_failure"), ""},
		{"a retry of the job that fetches dependencies", "--- a/.gitlab-ci.yml\n+++ b/.gitlab-ci.yml\n@@ -6,1 +6,2 @@\n     when:\n+      - script_failure\n", deps},
		{"travis_retry on the download of dependencies", hunk(".travis.yml", " install:", "-  - mix deps.get", "+  - travis_retry mix deps.get", " script:", "   - mix test"), ""},
		{"a service's health check retried", hunk("docker-compose.test.yml", "     healthcheck:", "       test: [\"CMD\", \"pg_isready\"]", "+      retries: 30"), ""},
		{"a job allowed to fail when the runner kills it", hunk(".gitlab-ci.yml", " test:", "   script:", "     - mix test", "+  allow_failure:", "+    exit_codes: [137]"), ""},
		{"Buildkite retrying a lost agent", hunk(".buildkite/pipeline.yml", "     command: mix test", "+    retry:", "+      automatic:", "+        - exit_status: -1", "+          limit: 2"), ""},
	} {
		if r := checkWithHead(t, c.diff, c.head); r.Verdict == VerdictConcern {
			t.Errorf("%s: called a concern: %+v", c.name, r.Findings)
		}
	}
}

// A retry count raised in the code under test is read with its file:
// the sleep between tries is far from the attribute.
func TestARetryAttributeRaisedInCodeThatSleeps(t *testing.T) {
	head := "defmodule Bank.HTTP do\n  @max_attempts 8\n\n  def post(req, attempt \\\\ 1) do\n    case Finch.request(req, Bank.Finch) do\n      {:ok, resp} -> {:ok, resp}\n      {:error, _} when attempt < @max_attempts ->\n        Process.sleep(100 * attempt)\n        post(req, attempt + 1)\n      error -> error\n    end\n  end\nend\n"
	diff := "--- a/lib/bank/http.ex\n+++ b/lib/bank/http.ex\n@@ -2,1 +2,1 @@\n-  @max_attempts 3\n+  @max_attempts 8\n"
	if r := checkWithHead(t, diff, head); !hasConcern(r, "timeout-attribute-raised") {
		t.Fatalf("want a timeout-attribute-raised concern: %+v", r.Findings)
	}
	if r := checkWithHead(t, diff, strings.Replace(head, "        Process.sleep(100 * attempt)\n", "", 1)); r.Verdict == VerdictConcern {
		t.Fatalf("no sleep between tries, still a concern: %+v", r.Findings)
	}
}

// A tag is a skip when the suite excludes it: test_helper.exs, read at
// head though the diff leaves it alone, says which tags it excludes.
func TestATagTheSuiteExcludes(t *testing.T) {
	diff := hunkOf("apps/board/test/board_live_test.exs", "   use BoardWeb.ConnCase, async: true", "+  @moduletag :integration", "   test \"moves a card\" do")
	d, err := ParseDiff(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	if reads := HeadReads(d, JobFlaky); !slices.Contains(reads, "apps/board/test/test_helper.exs") {
		t.Fatalf("the suite's helper is not asked for: %v", reads)
	}
	for helper, want := range map[string]bool{
		"ExUnit.start(exclude: [:integration, :slow])\n":                              true,
		"ExUnit.configure(\n  exclude: [\n    :integration\n  ]\n)\nExUnit.start()\n": true,
		"ExUnit.start(exclude: [:slow])\n":                                            false,
	} {
		r := CheckFiles(d, JobFlaky, nil, map[string]string{"apps/board/test/test_helper.exs": helper})
		if hasConcern(r, "test-skipped") != want {
			t.Errorf("%q: test-skipped %v, want %v: %+v", helper, !want, want, r.Findings)
		}
	}
}

// checkWithHead reviews a diff of one file for the flaky job, with the
// file at head when head is not empty.
func checkWithHead(t *testing.T, diff, head string) Review {
	t.Helper()
	d, err := ParseDiff(strings.NewReader(diff))
	if err != nil {
		t.Fatal(err)
	}
	heads := map[string]string{}
	if head != "" {
		heads[d.Files[0].Path()] = head
	}
	return CheckFiles(d, JobFlaky, nil, heads)
}

func hasConcern(r Review, rule string) bool {
	for _, f := range r.Findings {
		if f.Rule == rule && f.Severity == Concern {
			return true
		}
	}
	return false
}

// What a module made to run alone shares, read past its hunk: the test
// support the same diff changes, a state the tests restore on exit; and
// what it does not share, files under each test's own tmp_dir.
// A module made to run alone that uses a library module the diff
// changes: a process started under the library module's own name is one
// every test shares; one the caller names is not.
func TestALibraryModuleAModuleMadeToRunAloneUses(t *testing.T) {
	test := "defmodule App.LimiterTest do\n  use ExUnit.Case, async: true\n\n  alias App.Limiter\n\n  test \"denies past the limit\" do\n    Limiter.reset()\n    assert {:deny, 1} = Limiter.hit(:k, 0)\n  end\nend\n"
	lib := func(start string) string {
		return "defmodule App.Limiter do\n  use GenServer\n\n  def start_link(opts) do\n    " + start + "\n  end\n\n  def hit(key, limit), do: GenServer.call(__MODULE__, {:hit, key, limit})\nend\n"
	}
	named, chosen := lib("GenServer.start_link(__MODULE__, opts, name: __MODULE__)"), lib("GenServer.start_link(__MODULE__, opts, name: Keyword.get(opts, :name))")
	alone := strings.Replace(test, "async: true", "async: false", 1)
	doc := func(lib string) string {
		return strings.Replace(lib, "  def hit", "  @doc \"Counts a hit.\"\n  def hit", 1)
	}
	runWholeCases(t, []wholeCase{
		{"a library module started under its own name", map[string]sides{"test/app/limiter_test.exs": {test, alone}, "lib/app/limiter.ex": {named, doc(named)}}, ""},
		{"a library module started under the caller's name", map[string]sides{"test/app/limiter_test.exs": {test, alone}, "lib/app/limiter.ex": {chosen, doc(chosen)}}, "async-disabled"},
	})
}

func TestWhatAModuleMadeToRunAloneShares(t *testing.T) {
	alone := "--- a/test/a_test.exs\n+++ b/test/a_test.exs\n@@ -2,1 +2,1 @@\n-  use A.Case, async: true\n+  use A.Case, async: false\n"
	module := func(body string) string {
		return "defmodule ATest do\n  use A.Case, async: false\n\n" + body + "end\n"
	}
	for _, c := range []struct {
		name, diff, head string
		concern          bool
	}{
		{"files written under each test's tmp_dir", alone, module("  @moduletag :tmp_dir\n\n  test \"parses\", %{tmp_dir: dir} do\n    path = Path.join(dir, \"a.csv\")\n    File.write!(path, \"a,b\")\n    assert {:ok, _} = CSV.read(path)\n  end\n"), true},
		{"a database type created and dropped by every test", alone, module("  setup do\n    Postgrex.query!(conn, \"DROP TYPE IF EXISTS mood CASCADE\", [])\n    Postgrex.query!(conn, \"CREATE TYPE mood AS ENUM ('sad', 'ok')\", [])\n    :ok\n  end\n\n  test \"decodes\" do\n    assert Mood.all() == [\"sad\", \"ok\"]\n  end\n"), false},
		{"a struct's name field, no process started", alone, module("  test \"acts\" do\n    state = %State{\n      name: :elem,\n      playback: :playing\n    }\n    assert {:ok, _} = Handler.handle(:demand, state)\n  end\n"), true},
		{"a process started under a fixed name", alone, module("  test \"serves\" do\n    start_supervised!(\n      {Cache,\n       name: Cache})\n    assert Cache.get(:a) == nil\n  end\n"), false},
		{"a private table made with a name", alone, module("  test \"counts\" do\n    table = :ets.new(:counts, [:set])\n    :ets.insert(table, {:a, 1})\n    assert Counter.total(table) == 1\n  end\n"), true},
		{"a process named by the test's own choice", alone, module("  test \"serves\" do\n    name = :\"cache_#{System.unique_integer()}\"\n    start_supervised!({Cache, name: Keyword.get(opts(), :name, name)})\n    assert Cache.get(name, :a) == nil\n  end\n"), true},
		{"tests run inside a fixture project's directory", alone, module("  test \"reads the project\" do\n    File.cd!(\"fixtures/app\", fn ->\n      assert Project.name() == :app\n    end)\n  end\n"), false},
		{"a flag store the tests restore on exit", alone, module("  setup do\n    previous = Flags.all()\n    on_exit(fn -> Flags.load(previous) end)\n  end\n\n  test \"on\" do\n    Flags.enable(:x)\n    assert Flags.on?(:x)\n  end\n"), false},
		{"the case template made to share its sandbox in the same diff",
			alone + hunkOf("test/support/subscription_case.ex", "-    :ok = Ecto.Adapters.SQL.Sandbox.checkout(A.Repo)", "+    pid = Ecto.Adapters.SQL.Sandbox.start_owner!(A.Repo, shared: not tags[:async])"),
			module("  test \"x\" do\n    assert A.run() == :ok\n  end\n"), false},
	} {
		r := checkWithHead(t, c.diff, c.head)
		if (r.Verdict == VerdictConcern) != c.concern {
			t.Errorf("%s: concern %v, want %v: %+v", c.name, !c.concern, c.concern, r.Findings)
		}
	}
}

// A receive pattern written over several lines takes its timeout on the
// last: a diff that changes that line alone raises the call's wait. A new
// wait for a message where the file's sleeps and polls are gone is the
// handshake that replaces them, written once in a helper.
func TestReceiveWaitsAcrossLinesAndHelpers(t *testing.T) {
	telemetry := "defmodule TelemetryTest do\n  use ExUnit.Case, async: true\n\n  test \"queue stop\", %{ref: ref} do\n    request()\n\n    assert_receive {^ref, :telemetry_event, [:finch, :queue, :stop],\n                    %{duration: duration}},\n                   500\n\n    assert is_integer(duration)\n  end\nend\n"
	refuted := strings.Replace(telemetry, "assert_receive", "refute_receive", 1)
	slept := "defmodule BuildTest do\n  use ExUnit.Case, async: true\n\n  test \"publishes diagnostics\", %{build: build} do\n    Build.schedule(build)\n    Process.sleep(2_000)\n    assert diagnostics(build) != []\n  end\n\n  test \"clears diagnostics\", %{build: build} do\n    Build.schedule(build)\n    Process.sleep(2_000)\n    assert diagnostics(build) == []\n  end\nend\n"
	handshake := "defmodule BuildTest do\n  use ExUnit.Case, async: true\n\n  defp build!(build) do\n    Build.schedule(build)\n    assert_receive {:progress, :end, _}, 10_000\n  end\n\n  test \"publishes diagnostics\", %{build: build} do\n    build!(build)\n    assert diagnostics(build) != []\n  end\n\n  test \"clears diagnostics\", %{build: build} do\n    build!(build)\n    assert diagnostics(build) == []\n  end\nend\n"
	runWholeCases(t, []wholeCase{
		{"the timeout on a receive's last line raised", map[string]sides{"test/telemetry_test.exs": {telemetry, strings.Replace(telemetry, "   500\n", "   5_000\n", 1)}}, "receive-timeout-raised"},
		{"the timeout on a receive's last line lowered", map[string]sides{"test/telemetry_test.exs": {telemetry, strings.Replace(telemetry, "   500\n", "   200\n", 1)}}, ""},
		{"a refute's wait on its last line raised", map[string]sides{"test/telemetry_test.exs": {refuted, strings.Replace(refuted, "   500\n", "   5_000\n", 1)}}, ""},
		{"sleeps replaced by a handshake in a helper", map[string]sides{"test/build_test.exs": {slept, handshake}}, ""},
		{"a helper's wait raised", map[string]sides{"test/build_test.exs": {strings.Replace(handshake, "10_000", "1_000", 1), handshake}}, "receive-timeout-raised"},
	})
}

// Sleeps replaced by a handshake written once, in a helper the diff adds
// apart from them: the new wait ends when the message comes.
func TestSleepsReplacedByAHelpersHandshake(t *testing.T) {
	base := "defmodule BuildTest do\n  use ExUnit.Case, async: true\n\n  test \"publishes diagnostics\", %{build: build} do\n    Build.schedule(build)\n    Process.sleep(2_000)\n    assert diagnostics(build) != []\n  end\n\n  test \"clears diagnostics\", %{build: build} do\n    Build.schedule(build)\n    Process.sleep(2_000)\n    assert diagnostics(build) == []\n  end\nend\n"
	head := "defmodule BuildTest do\n  use ExUnit.Case, async: true\n\n  test \"publishes diagnostics\", %{build: build} do\n    build!(build)\n    assert diagnostics(build) != []\n  end\n\n  test \"clears diagnostics\", %{build: build} do\n    build!(build)\n    assert diagnostics(build) == []\n  end\n\n  defp build!(build) do\n    Build.schedule(build)\n    assert_receive {:progress, :end, _}, 10_000\n  end\nend\n"
	diff := "--- a/test/build_test.exs\n+++ b/test/build_test.exs\n@@ -4,4 +4,3 @@ defmodule BuildTest do\n   test \"publishes diagnostics\", %{build: build} do\n-    Build.schedule(build)\n-    Process.sleep(2_000)\n+    build!(build)\n     assert diagnostics(build) != []\n@@ -10,6 +9,10 @@ defmodule BuildTest do\n   test \"clears diagnostics\", %{build: build} do\n-    Build.schedule(build)\n-    Process.sleep(2_000)\n+    build!(build)\n     assert diagnostics(build) == []\n   end\n+\n+  defp build!(build) do\n+    Build.schedule(build)\n+    assert_receive {:progress, :end, _}, 10_000\n+  end\n end\n"
	slept := strings.NewReplacer("@@ -4,4 +4,3 @@", "@@ -4,4 +4,4 @@", "@@ -10,6 +9,10 @@", "@@ -10,6 +10,10 @@",
		"+    build!(build)\n     assert diagnostics(build) != []", "+    build!(build)\n+    Process.sleep(500)\n     assert diagnostics(build) != []").Replace(diff)
	for _, c := range []struct {
		name, diff, head string
		concern          bool
	}{
		{"every sleep replaced", diff, head, false},
		{"a sleep added beside the handshake", slept, strings.Replace(head, "    build!(build)\n", "    build!(build)\n    Process.sleep(500)\n", 1), true},
	} {
		d, err := ParseDiff(strings.NewReader(c.diff))
		if err != nil {
			t.Fatal(err)
		}
		r := CheckFiles(d, JobFlaky, map[string]string{"test/build_test.exs": base}, map[string]string{"test/build_test.exs": c.head})
		if got := hasConcern(r, "receive-timeout-raised"); got != c.concern {
			t.Errorf("%s: receive-timeout-raised %v, want %v: %+v", c.name, got, c.concern, r.Findings)
		}
	}
}
