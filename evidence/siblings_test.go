package evidence

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// module is a test module of hexpm's shape: its use line, then the body.
func module(async bool, body string) string {
	use := "  use Hexpm.DataCase"
	if async {
		use += ", async: true"
	}
	return "defmodule Hexpm.SomeTest do\n" + use + "\n\n" + body + "\nend\n"
}

// What a fix shows it addressed, read from its diff.
func TestTheCauseOfAFixIsReadFromItsDiff(t *testing.T) {
	for _, c := range []struct {
		name string
		diff string
		want Cause
	}{
		{"an Application env written by an async module", hunkOf("test/hexpm/web/cdn_test.exs",
			"   setup do", "-    Application.put_env(:hexpm, :cdn_url, \"http://cdn\")", "+    start_supervised!({Hexpm.CDN, url: \"http://cdn\"})", "   end"),
			Cause{State: []StateKey{{"app-env", ":hexpm, :cdn_url"}}}},
		{"Mox's global mode dropped", hunkOf("test/hexpm/billing_test.exs",
			"-  setup :set_mox_global", "+  setup :verify_on_exit!", "   test \"charges\" do", "     expect(Hexpm.BillingMock, :charge, fn _ -> :ok end)"),
			Cause{State: []StateKey{{"mox-global", "Hexpm.BillingMock"}}}},
		{"a sleep replaced by a message", hunkOf("test/hexpm/indexer_test.exs",
			"     Indexer.index(package)", "-    Process.sleep(100)", "+    assert_receive {:indexed, ^id}", "     assert Search.find(\"ecto\")"),
			Cause{Wait: true}},
		{"the wall clock injected", hunkOf("test/hexpm/expiry_test.exs",
			"-    now = DateTime.utc_now()", "+    now = ~U[2026-01-01 00:00:00Z]", "     assert Keys.expired?(key, now)"),
			Cause{Clock: true}},
		{"a fix in the code under test only", hunkOf("lib/hexpm/indexer.ex", "-    x = 1", "+    x = 2"), Cause{}},
		{"a fixed PubSub topic made per test", hunkOf("test/hexpm/web/live_test.exs",
			"-    Phoenix.PubSub.broadcast(Hexpm.PubSub, \"packages\", {:new, pkg})", "+    Phoenix.PubSub.broadcast(Hexpm.PubSub, topic, {:new, pkg})"),
			Cause{State: []StateKey{{"pubsub-topic", `"packages"`}}}},
		{"a named process made unique", hunkOf("test/hexpm/cache_test.exs",
			"-    start_supervised!({Hexpm.Cache, name: Hexpm.Cache})", "+    start_supervised!({Hexpm.Cache, name: context.test})"),
			Cause{State: []StateKey{{"named-process", "Hexpm.Cache"}}}},
		{"a raised receive timeout replaced by a handshake", hunkOf("test/hexpm/indexer_test.exs",
			"-    assert_receive {:indexed, ^id}, 5_000", "+    :ok = Indexer.sync(pid)", "+    assert_received {:indexed, ^id}"),
			Cause{Receive: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseDiff(strings.NewReader(c.diff))
			if err != nil {
				t.Fatal(err)
			}
			if got := CauseOf(d, nil); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%+v, want %+v", got, c.want)
			}
		})
	}
}

// The suite's tests that share the cause, ranked; the look-alikes left
// alone.
func TestSiblingsShareTheCause(t *testing.T) {
	files := map[string]string{
		"test/a_test.exs": module(true, `  test "a" do
    Application.put_env(:hexpm, :cdn_url, "http://other")
    assert CDN.url() =~ "other"
  end`),
		"test/b_test.exs": module(true, `  test "b" do
    assert Application.get_env(:hexpm, :cdn_url) != nil
  end`),
		// A sync module restoring what it wrote runs alone: no sibling.
		"test/c_test.exs": module(false, `  setup do
    Application.put_env(:hexpm, :cdn_url, "x")
    on_exit(fn -> Application.delete_env(:hexpm, :cdn_url) end)
  end`),
		"test/d_test.exs": module(true, `  test "d" do
    Application.put_env(:hexpm, :other_key, 1)
  end`),
		"test/e_test.exs": module(false, `  test "e" do
    send(pid, :go)
    Process.sleep(50)
    assert State.get(pid) == :done
  end`),
		// A sleep in a test that asserts nothing asynchronous is no wait shape.
		"test/f_test.exs": module(false, `  test "f" do
    Process.sleep(10)
    assert 1 + 1 == 2
  end`),
		// A sleep in a stub is the stub's, not the test's.
		"test/g_test.exs": module(false, `  test "g" do
    Task.start(fn -> :ok end)
    expect(Hexpm.HTTPMock, :get, fn _ -> Process.sleep(10_000) end)
    assert Client.get() == :timeout
  end`),
		"test/h_test.exs": module(false, `  test "h" do
    now = DateTime.utc_now()
    assert Keys.expired?(key, now)
  end`),
		"test/i_test.exs": module(true, `  setup :set_mox_global

  test "i" do
    expect(Hexpm.BillingMock, :charge, fn _ -> :ok end)
  end`),
		"test/j_test.exs": module(true, `  test "j" do
    stub(Hexpm.BillingMock, :charge, fn _ -> :ok end)
  end`),
		"test/k_test.exs": module(false, `  setup :set_mox_global

  test "k" do
    expect(Hexpm.BillingMock, :charge, fn _ -> :ok end)
  end`),
		"lib/hexpm/cdn.ex": `Application.put_env(:hexpm, :cdn_url, "x")`,
		"test/p_test.exs": module(true, `  test "p" do
    Phoenix.PubSub.subscribe(Hexpm.PubSub, "packages")
    assert_receive {:new, _}
  end`),
		// Another topic, and a topic built per test, are no siblings.
		"test/q_test.exs": module(true, `  test "q" do
    Phoenix.PubSub.subscribe(Hexpm.PubSub, "users")
    Phoenix.PubSub.subscribe(Hexpm.PubSub, "packages:#{id}")
  end`),
		"test/r_test.exs": module(true, `  test "r" do
    start_supervised!({Hexpm.Cache, name: Hexpm.Cache})
  end`),
		"test/s_test.exs": module(false, `  test "s" do
    assert_receive {:indexed, _}, 3_000
  end`),
		"test/u_test.exs": module(false, `  test "u" do
    assert_receive {:indexed, _}, 500
  end`),
	}
	cause := Cause{State: []StateKey{{"app-env", ":hexpm, :cdn_url"}, {"mox-global", "Hexpm.BillingMock"}, {"pubsub-topic", `"packages"`}, {"named-process", "Hexpm.Cache"}},
		Wait: true, Receive: true, Clock: true}
	found, more := FindSiblings(cause, files, []string{"test/cdn_test.exs"})
	var got []string
	for _, s := range found {
		got = append(got, s.File+":"+strconv.Itoa(s.Line)+" "+strconv.Itoa(s.Rank)+" "+s.Test)
	}
	want := []string{
		"test/a_test.exs:5 1 a", "test/i_test.exs:4 1 ", "test/r_test.exs:5 1 r", "test/b_test.exs:5 2 b", "test/j_test.exs:5 2 j", "test/p_test.exs:5 2 p",
		"test/e_test.exs:6 3 e", "test/h_test.exs:5 3 h", "test/s_test.exs:5 3 s",
	}
	if !reflect.DeepEqual(got, want) || more != 0 {
		t.Fatalf("siblings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if none, _ := FindSiblings(Cause{}, files, nil); none != nil {
		t.Fatalf("no cause, siblings %+v", none)
	}
}

// At most MaxSiblings are listed; the rest are counted.
func TestSiblingsPastTheBoundAreCounted(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < MaxSiblings+5; i++ {
		files["test/m"+strconv.Itoa(i)+"_test.exs"] = module(true, `  test "t" do
    Application.put_env(:hexpm, :cdn_url, "x")
  end`)
	}
	found, more := FindSiblings(Cause{State: []StateKey{{"app-env", ":hexpm, :cdn_url"}}}, files, nil)
	if len(found) != MaxSiblings || more != 5 {
		t.Fatalf("%d found, %d more", len(found), more)
	}
}

// A test module is the repository's own text: whatever it holds, the scan
// ends, within its bounds.
func FuzzFindSiblings(f *testing.F) {
	f.Add(module(true, "  test \"a\" do\n    Application.put_env(:hexpm, :cdn_url, 1)\n    Process.sleep(10)\n    send(self(), :x)\n    assert_receive :x, 2_000\n  end"))
	f.Add("defmodule A do\n  use B, async: true\n  test \"")
	cause := Cause{State: []StateKey{{"app-env", ":hexpm, :cdn_url"}, {"pubsub-topic", `"t"`}}, Wait: true, Receive: true, Clock: true}
	f.Fuzz(func(t *testing.T, content string) {
		found, more := FindSiblings(cause, map[string]string{"test/a_test.exs": content}, nil)
		if len(found) > MaxSiblings || more < 0 {
			t.Fatalf("%d found, %d more", len(found), more)
		}
		for _, s := range found {
			if s.File != "test/a_test.exs" || s.Line < 1 || s.Rank < 1 || s.Rank > 3 || s.Why == "" {
				t.Fatalf("sibling %+v", s)
			}
		}
	})
}
