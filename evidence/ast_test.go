package evidence

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// The grammar reads an ExUnit module as code: tests by describe and name,
// calls over several lines with their arguments, pipes, anonymous
// functions.
func TestASourceReadsTestsAndCallsAsCode(t *testing.T) {
	s := parseSource([]byte(`defmodule A.BTest do
  use A.Case, async: true
  @timeout 500

  describe "index" do
    test "lists", %{conn: conn} do
      assert_receive {:done,
                      ^ref},
                     1_000
      stub(Mod, :f, fn -> Process.sleep(100) end)
      capture_log(fn -> Process.sleep(100) end)
      :timer.seconds(2) |> Process.sleep()
    end
  end

  test "alone" do
    refute_receive :x
  end
end
`))
	if s.broken {
		t.Fatal("broken")
	}
	if want := []testUnit{{"index/lists", 6, 13, "lists", "index lists", [2]int{5, 14}}, {"/alone", 16, 18, "alone", "alone", [2]int{}}}; !reflect.DeepEqual(s.tests, want) {
		t.Fatalf("tests %+v", s.tests)
	}
	got := map[string]callSite{}
	for _, c := range s.calls {
		got[c.name] = c
	}
	if c := got["assert_receive"]; c.start != 7 || c.end != 9 || len(c.args) != 2 || c.args[1] != "1_000" || c.test != 0 {
		t.Fatalf("assert_receive %+v", c)
	}
	if c := got["Process.sleep"]; !c.piped || c.inFn {
		t.Fatalf("the piped sleep %+v", c)
	}
	if cs := s.callsAt(10, "Process.sleep"); len(cs) != 1 || !cs[0].inFn {
		t.Fatalf("the sleep in a stub %+v", cs)
	}
	if cs := s.callsAt(11, "Process.sleep"); len(cs) != 1 || cs[0].inFn {
		t.Fatalf("the sleep in a function the test runs %+v", cs)
	}
	if s.testAt(17).name != "/alone" || s.testAt(3) != nil {
		t.Fatal("testAt")
	}
}

// One side of a file as its hunks show it keeps the file's line numbers.
func TestSideTextKeepsLineNumbers(t *testing.T) {
	d, err := ParseDiff(strings.NewReader("--- a/t.exs\n+++ b/t.exs\n@@ -3,2 +3,3 @@\n a\n-b\n+c\n+d\n"))
	if err != nil {
		t.Fatal(err)
	}
	if old, new := string(sideText(d.Files[0], '-')), string(sideText(d.Files[0], '+')); old != "\n\na\nb\n" || new != "\n\na\nc\nd\n" {
		t.Fatalf("old %q new %q", old, new)
	}
}

func TestPatternOfIgnoresTheNamesItBinds(t *testing.T) {
	for in, want := range map[string]string{
		"publish(actor, podcast)":                      "publish(_, _)",
		"publish(actor, _)":                            "publish(_, _)",
		`authorize(:publish, %User{role: "admin"}, _)`: `authorize(:publish, %User{role: "admin"}, _)`,
		"verify(mod, \"exp\", %{\"exp\" => exp} = claims, _opts) when not is_number(exp)": "verify(_, \"exp\", %{\"exp\" => _} = _, _) when not is_number(_)",
		// A name right after a word that binds nothing binds all the same.
		"show(conn, role) when role in [:admin]":   "show(_, _) when _ in [:admin]",
		"call(%{params: %{\"k\" => 1}} = conn, _)": "call(%{params: %{\"k\" => 1}} = _, _)",
	} {
		if got := patternOf(in); got != want {
			t.Errorf("patternOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every finding names the construct its rule read.
func TestEveryFindingNamesItsConstruct(t *testing.T) {
	for name := range corpus {
		for _, f := range reviewSample(t, name).Findings {
			if f.Construct == "" {
				t.Errorf("%s: %s names no construct", name, f.Rule)
			}
		}
	}
}

// A file read whole that does not parse is read as lines, and the review
// says so.
func TestAFileThatDoesNotParseIsReadAsLinesAndSaysSo(t *testing.T) {
	d, err := ParseDiff(strings.NewReader(hunkOf("test/a_test.exs", "+    Process.sleep(100)")))
	if err != nil {
		t.Fatal(err)
	}
	r := CheckFiles(d, JobFlaky, map[string]string{"test/a_test.exs": "defmodule A do\n  test \"x\" do\n"}, map[string]string{"test/a_test.exs": "defmodule A do\n  test \"x\" do\n    Process.sleep(100)\n  end\nend\n"})
	rules := map[string]bool{}
	for _, f := range r.Findings {
		rules[f.Rule] = true
	}
	if !rules["not-parsed"] || !rules["sleep-added"] || r.Verdict != VerdictConcern {
		t.Fatalf("%s %+v", r.Verdict, r.Findings)
	}
}

// movedKeyOf drops module qualifiers as the regexp it replaces did.
func TestMovedKeyDropsModuleQualifiers(t *testing.T) {
	qualifier := regexp.MustCompile(`\b(?:[A-Z]\w*\.)+`)
	for _, line := range []string{
		"  assert Hexpm.Repo.get(Package, id).name == \"ecto\"", "Repo.get(x)", "x.Y.z", "a_B.c", "use A.Case, async: false",
		"%Hexpm.Accounts.User{}", "Foo.", ".Bar.baz", "É.x", "IO.inspect(Foo.Bar)", "no dots here", "1.5 + X1.y",
	} {
		if got, want := movedKeyOf(line), qualifier.ReplaceAllString(strings.TrimSpace(line), ""); got != want {
			t.Errorf("movedKeyOf(%q) = %q, want %q", line, got, want)
		}
	}
}

// A test that checks less is found per test when the files are read
// whole, even when another test of the file gains as many assertions.
func TestATestThatChecksLessIsFoundPerTest(t *testing.T) {
	base := "defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"b counts\" do\n    Foo.go()\n    assert_receive {:done, 3}\n    assert Foo.count() == 3\n  end\n\n  test \"c\" do\n    assert Foo.x() == 1\n  end\nend\n"
	for name, c := range map[string]struct {
		head string
		want bool
	}{
		"the check moved to another test": {"defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"b counts\" do\n    Foo.go()\n    assert Foo.count() == 3\n  end\n\n  test \"c\" do\n    assert Foo.x() == 1\n    assert Foo.y() == 2\n  end\nend\n", true},
		// ExUnit names a test "describe test": "counts" under describe
		// "b" is the test "b counts".
		"tests regrouped, one check lost": {"defmodule XTest do\n  use ExUnit.Case, async: true\n\n  describe \"b\" do\n    test \"counts\" do\n      Foo.go()\n      assert Foo.count() == 3\n    end\n  end\n\n  test \"c\" do\n    assert Foo.x() == 1\n    assert Foo.y() == 2\n  end\nend\n", true},
		"the check rewritten in the test": {"defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"b counts\" do\n    Foo.go()\n    assert_receive {:done, count}\n    assert count == 3\n    assert Foo.count() == 3\n  end\n\n  test \"c\" do\n    assert Foo.x() == 1\n  end\nend\n", false},
	} {
		t.Run(name, func(t *testing.T) {
			var diff strings.Builder
			diff.WriteString("--- a/test/x_test.exs\n+++ b/test/x_test.exs\n")
			diff.WriteString(unifiedWhole(base, c.head))
			d, err := ParseDiff(strings.NewReader(diff.String()))
			if err != nil {
				t.Fatal(err)
			}
			r := CheckFiles(d, JobFlaky, map[string]string{"test/x_test.exs": base}, map[string]string{"test/x_test.exs": c.head})
			found := false
			for _, f := range r.Findings {
				found = found || f.Rule == "assertion-deleted"
			}
			if found != c.want {
				t.Fatalf("assertion-deleted found %v, want %v: %+v", found, c.want, r.Findings)
			}
		})
	}
}

// What a describe's setup checks, it checks for each of its tests: two
// tests' same check merged into their setup is not a check lost.
func TestASetupChecksForEachTestOfItsDescribe(t *testing.T) {
	base := "defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"room joins\" do\n    :ok = Room.join(\"cy\")\n    assert_receive {:joined, \"cy\"}\n    assert \"cy\" in Room.members()\n  end\n\n  test \"room leaves\" do\n    :ok = Room.join(\"cy\")\n    assert_receive {:joined, \"cy\"}\n    :ok = Room.leave(\"cy\")\n    assert_receive {:left, \"cy\"}\n  end\nend\n"
	head := "defmodule XTest do\n  use ExUnit.Case, async: true\n\n  describe \"room\" do\n    setup do\n      :ok = Room.join(\"cy\")\n      assert_receive {:joined, \"cy\"}\n      :ok\n    end\n\n    test \"joins\" do\n      assert \"cy\" in Room.members()\n    end\n\n    test \"leaves\" do\n      :ok = Room.leave(\"cy\")\n      assert_receive {:left, \"cy\"}\n    end\n  end\nend\n"
	d, err := ParseDiff(strings.NewReader("--- a/test/x_test.exs\n+++ b/test/x_test.exs\n" + unifiedWhole(base, head)))
	if err != nil {
		t.Fatal(err)
	}
	r := CheckFiles(d, JobFlaky, map[string]string{"test/x_test.exs": base}, map[string]string{"test/x_test.exs": head})
	if r.Verdict == VerdictConcern {
		t.Fatalf("called a concern: %+v", r.Findings)
	}
}

// unifiedMinimal is the one-hunk diff of a and b without context: the
// lines between their common start and their common end, as git shows a
// single change.
func unifiedMinimal(a, b string) string {
	al, bl := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	p := 0
	for p < len(al) && p < len(bl) && al[p] == bl[p] {
		p++
	}
	e := 0
	for e < len(al)-p && e < len(bl)-p && al[len(al)-1-e] == bl[len(bl)-1-e] {
		e++
	}
	var s strings.Builder
	fmt.Fprintf(&s, "@@ -%d,%d +%d,%d @@\n", p+1, len(al)-p-e, p+1, len(bl)-p-e)
	for _, l := range al[p : len(al)-e] {
		s.WriteString("-" + l + "\n")
	}
	for _, l := range bl[p : len(bl)-e] {
		s.WriteString("+" + l + "\n")
	}
	return s.String()
}

// unifiedWhole is a diff of one hunk that removes every line of a and
// adds every line of b: crude, but what the rules read of a rewrite.
func unifiedWhole(a, b string) string {
	al, bl := strings.Split(strings.TrimSuffix(a, "\n"), "\n"), strings.Split(strings.TrimSuffix(b, "\n"), "\n")
	var s strings.Builder
	fmt.Fprintf(&s, "@@ -1,%d +1,%d @@\n", len(al), len(bl))
	for _, l := range al {
		s.WriteString("-" + l + "\n")
	}
	for _, l := range bl {
		s.WriteString("+" + l + "\n")
	}
	return s.String()
}

// A helper is a poll by what it does when its file is read whole: named
// like one but only sleeping, its sleep is a sleep; named otherwise but
// sleeping in a loop, it polls.
func TestAPollIsKnownByWhatItDoes(t *testing.T) {
	base := "defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"x\" do\n    Foo.index(1)\n    assert Foo.indexed?(1)\n  end\nend\n"
	for name, c := range map[string]struct{ head, rule string }{
		"named like a poll, it only sleeps": {"defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"x\" do\n    Foo.index(1)\n    wait_for_index()\n    assert Foo.indexed?(1)\n  end\n\n  defp wait_for_index do\n    Process.sleep(500)\n  end\nend\n", "sleep-added"},
		"named otherwise, it polls":         {"defmodule XTest do\n  use ExUnit.Case, async: true\n\n  test \"x\" do\n    Foo.index(1)\n    check(fn -> Foo.indexed?(1) end)\n  end\n\n  defp check(f, n \\\\ 10) do\n    if f.(), do: :ok, else: (Process.sleep(10); check(f, n - 1))\n  end\nend\n", "retry-loop"},
	} {
		t.Run(name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader("--- a/test/x_test.exs\n+++ b/test/x_test.exs\n" + unifiedWhole(base, c.head)))
			if err != nil {
				t.Fatal(err)
			}
			r := CheckFiles(d, JobFlaky, map[string]string{"test/x_test.exs": base}, map[string]string{"test/x_test.exs": c.head})
			for _, f := range r.Findings {
				if f.Rule == c.rule && f.Severity == Concern {
					return
				}
			}
			t.Fatalf("no %s concern: %+v", c.rule, r.Findings)
		})
	}
}

// Disguises that only the files read whole show: a wait bound carried by a
// module attribute read far from the hunk, tests generated from a list
// that shrank (inline over lines, or a module attribute), a setting the
// code newly reads in a condition set off in the test configuration.
func TestDisguisesTheWholeFilesShow(t *testing.T) {
	for name, c := range map[string]struct {
		files     map[string][2]string // path: base, head
		rule      string
		wholeOnly bool // the hunks alone do not show it
	}{
		"an attribute a receive reads, raised": {map[string][2]string{"test/a_test.exs": {
			"defmodule ATest do\n  use ExUnit.Case, async: true\n  @ack_within 100\n\n  test \"acks\" do\n    id = Hexpm.Queue.push(:job)\n    assert_receive {:ack, ^id}, @ack_within\n  end\nend\n",
			"defmodule ATest do\n  use ExUnit.Case, async: true\n  @ack_within 3_000\n\n  test \"acks\" do\n    id = Hexpm.Queue.push(:job)\n    assert_receive {:ack, ^id}, @ack_within\n  end\nend\n"}}, "timeout-attribute-raised", true},
		"tests generated from an attribute that lost values": {map[string][2]string{"test/a_test.exs": {
			"defmodule ATest do\n  use ExUnit.Case, async: true\n  @cases [\n    {\"USD\", 2},\n    {\"JPY\", 0},\n    {\"EUR\", 2}\n  ]\n\n  for {currency, units} <- @cases do\n    test \"formats #{currency}\" do\n      assert Money.units(unquote(currency)) == unquote(units)\n    end\n  end\nend\n",
			"defmodule ATest do\n  use ExUnit.Case, async: true\n  @cases [\n    {\"USD\", 2},\n    {\"EUR\", 2}\n  ]\n\n  for {currency, units} <- @cases do\n    test \"formats #{currency}\" do\n      assert Money.units(unquote(currency)) == unquote(units)\n    end\n  end\nend\n"}}, "test-deleted", true},
		"a loop over an inline list over lines that lost values": {map[string][2]string{"test/a_test.exs": {
			"defmodule ATest do\n  use ExUnit.Case, async: true\n\n  test \"moves\" do\n    for {from, to} <- [\n          active: :past_due,\n          past_due: :active,\n          past_due: :canceled\n        ] do\n      assert Sub.move(from, to) == :ok\n    end\n  end\nend\n",
			"defmodule ATest do\n  use ExUnit.Case, async: true\n\n  test \"moves\" do\n    for {from, to} <- [\n          active: :past_due\n        ] do\n      assert Sub.move(from, to) == :ok\n    end\n  end\nend\n"}}, "test-deleted", true},
		"a setting the code newly reads, set off for the tests": {map[string][2]string{
			"lib/shop/accounts.ex": {"defmodule Shop.Accounts do\n  def register(attrs) do\n    {:ok, user} = insert(attrs)\n    Shop.Mailer.welcome(user)\n    {:ok, user}\n  end\nend\n",
				"defmodule Shop.Accounts do\n  def register(attrs) do\n    {:ok, user} = insert(attrs)\n    if Application.get_env(:shop, :welcome_emails, true) do\n      Shop.Mailer.welcome(user)\n    end\n    {:ok, user}\n  end\nend\n"},
			"config/test.exs": {"import Config\nconfig :shop, Shop.Repo, pool: Ecto.Adapters.SQL.Sandbox\n", "import Config\nconfig :shop, Shop.Repo, pool: Ecto.Adapters.SQL.Sandbox\nconfig :shop, welcome_emails: false\n"}}, "switched-off-in-tests", false},
		"a setting read from the module's configuration, set off for the tests": {map[string][2]string{
			"lib/signal/dispatcher.ex": {"defmodule Signal.Dispatcher do\n  defp classify({:error, :timeout}), do: {:retry, :timeout}\nend\n",
				"defmodule Signal.Dispatcher do\n  defp classify({:error, :timeout}, config) do\n    if Keyword.get(config, :retry_on_timeout, true), do: {:retry, :timeout}, else: {:give_up, :timeout}\n  end\nend\n"},
			"config/test.exs": {"import Config\nconfig :signal, Signal.Dispatcher,\n  max_attempts: 3\n", "import Config\nconfig :signal, Signal.Dispatcher,\n  max_attempts: 3,\n  retry_on_timeout: false\n"}}, "switched-off-in-tests", false},
	} {
		t.Run(name, func(t *testing.T) {
			var diff strings.Builder
			base, head := map[string]string{}, map[string]string{}
			for path, sides := range c.files {
				diff.WriteString("--- a/" + path + "\n+++ b/" + path + "\n" + unifiedMinimal(sides[0], sides[1]))
				base[path], head[path] = sides[0], sides[1]
			}
			d, err := ParseDiff(strings.NewReader(diff.String()))
			if err != nil {
				t.Fatal(err)
			}
			found := func(r Review) bool {
				for _, f := range r.Findings {
					if f.Rule == c.rule && f.Severity == Concern {
						return true
					}
				}
				return false
			}
			if r := CheckFiles(d, JobFlaky, base, head); !found(r) {
				t.Fatalf("no %s concern: %+v", c.rule, r.Findings)
			}
			if r := Check(d, JobFlaky); c.wholeOnly && found(r) {
				t.Fatalf("the hunks alone show it, so the case does not test the files read whole: %+v", r.Findings)
			}
		})
	}
}

// countValues counts a list's top-level values however they are written.
func TestCountValues(t *testing.T) {
	for in, want := range map[string]int{
		`[:csv, :json, :xml]`: 3,
		"[\n  active: :past_due, # a comment, with a comma\n  past_due: :active\n]": 2,
		`[{"USD", 2}, {"JPY", 0}]`:              2,
		`[%{a: 1, b: 2}, %{a: 3}]`:              2,
		`[~r/a,b/, ~r/c/]`:                      2,
		`[~r/\[/, ~r/#\d+/]`:                    2,
		`[~s(a#b), "c"]`:                        2,
		`[<<1, 2>>, <<3>>]`:                     2,
		`[~c"a,b", ~S|a,b|]`:                    2,
		`[?[, ?]]`:                              2,
		`[?", 1]`:                               2,
		"[\"\"\"\nsay \"hi\"\n\"\"\", 'it''s']": 2,
		`~w(a b c)`:                             3,
		`[]`:                                    0,
		`[:never, :closed`:                      -1,
	} {
		if got := countValues(in); got != want {
			t.Errorf("countValues(%q) = %d, want %d", in, got, want)
		}
	}
}
