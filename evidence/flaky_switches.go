package evidence

import (
	"regexp"
	"strings"
)

// The flaky rules about switching the flaky part off rather than fixing
// it: the code under test told it runs in tests, a feature turned off in
// the test configuration, the test tagged as flaky, an assertion made
// conditional.

// testEnvCheck compares the running environment with one of Mix's in the
// code: Mix.env(), config_env(), an :env read from the application's
// configuration, or a module attribute holding either.
var testEnvCheck = hinted{regexp.MustCompile(`(Mix\.env\(?\)?|config_env\(\)|(?:get_env|fetch_env!?|compile_env!?)\(\s*:\w+\s*,\s*:(?:env|environment|mix_env)\s*\)|@(?:env|mix_env|environment))\s*(==|!=|===|!==|in)\s*(\[[^\]]*)?:(test|dev|prod)\b|:(test|dev|prod)\s*(==|!=)\s*Mix\.env`), []string{":test", ":dev", ":prod"}}

// onKey and offKey name a configuration key that turns something on or
// off, with the value that turns it off.
var (
	onKey  = regexp.MustCompile(`(?:^|[\s,(\[{:])(enabled?\??|\w+_enabled\??|enable_\w+|start\w*|run_\w+|autostart|auto_start|schedul\w*|poll\w*)[:,]?\s*(?:=>\s*)?,?\s*false\b`)
	offKey = regexp.MustCompile(`(?:^|[\s,(\[{:])(disabled?\??|\w+_disabled\??|disable_\w+|skip_\w+|no_\w+|bypass_\w+)[:,]?\s*(?:=>\s*)?,?\s*true\b`)
)

// switchedOff: code that takes another path in tests (a branch on the
// environment outside the tests), or a feature turned off in the tests'
// configuration or by a test's put_env: the flaky path no longer runs in
// tests, so the test can no longer show it. mix.exs and config/ are left
// out of the branch rule: they are where an environment is meant to be
// chosen.
func switchedOff(c change) []Finding {
	if !elixirFile(c.path) || strings.HasSuffix(c.path, "mix.exs") {
		return nil
	}
	var out []Finding
	testConfig := strings.HasSuffix(c.path, "config/test.exs")
	for _, l := range c.added() {
		switch {
		case c.test:
			// A restore in on_exit, or a new test of the feature off, is not
			// a switch-off of what flaked.
			if strings.Contains(l.code, "put_env(") && !strings.Contains(l.code, "on_exit") && (onKey.MatchString(l.code) || offKey.MatchString(l.code)) && !c.removedSame(l) && !c.newTest(l) {
				out = append(out, c.finding("switched-off-in-tests", Concern, l, "the test turns something off in the application's environment: the code path that flaked no longer runs"))
			}
		case !configDir(c.path) && testEnvCheck.MatchString(l.code):
			out = append(out, c.finding("switched-off-in-tests", Concern, l, "the code under test checks whether it runs in tests: in tests it takes another path, so the flaky one is no longer tested"))
		case (testConfig || c.testEnvConfig()) && (onKey.MatchString(l.code) || offKey.MatchString(l.code) || c.setsGateOff(l.code)) && !c.removedSame(l):
			out = append(out, c.finding("switched-off-in-tests", Concern, l, "the test configuration turns something off: the code path that flaked no longer runs in tests"))
		}
	}
	return out
}

var (
	// gateRead is a condition on an application setting in the code, read
	// from the environment or from the keyword list or map it gave
	// (Keyword.get(config, :retry_on_timeout, true), config[:retry]).
	gateRead = hinted{regexp.MustCompile(`\b(if|unless|cond|case|and|&&|when)\b.*(?:\b(?:get_env|fetch_env!?|compile_env!?|Keyword\.(?:get|fetch!?)|Map\.(?:get|fetch!?))\(\s*:?\w+\s*,\s*:(\w+)|\w\[:(\w+)\])`), []string{"_env", "Keyword.", "Map.", "[:"}}
	// gateOff sets a setting to false or nil: `key: false` or `:key, false`.
	gateOff = regexp.MustCompile(`(?:\b(\w+):\s*|:(\w+)\s*,\s*)(false|nil)\b`)
	// gateAttr is a module attribute holding an application setting
	// (@lock Application.compile_env(:app, :lock, true)); gateAttrRead a
	// condition on a module attribute.
	gateAttr     = hinted{regexp.MustCompile(`^\s*@(\w+)\s+(?:Application\.)?(?:get_env|fetch_env!?|compile_env!?)\(\s*:\w+\s*,\s*:(\w+)`), []string{"_env"}}
	gateAttrRead = hinted{regexp.MustCompile(`\b(if|unless|cond|case|and|&&|when)\b.*@(\w+)`), []string{"@"}}
)

// switchGates are the settings the code outside the tests and config/
// newly reads in a condition (if Application.get_env(:app, :welcome_emails,
// true) do), directly or through a module attribute that holds it: the
// test configuration setting one of them off switches that code off,
// whatever the setting is called.
func switchGates(changes []*change) map[string]bool {
	out := map[string]bool{}
	for _, c := range changes {
		if c.test || !strings.HasSuffix(c.path, ".ex") || configDir(c.path) {
			continue
		}
		held, read := map[string]string{}, map[string]bool{} // attribute to setting; attributes read in a condition
		for _, l := range c.added() {
			if m := gateRead.FindStringSubmatch(l.code); m != nil {
				out[m[2]+m[3]] = true
			}
			if m := gateAttr.FindStringSubmatch(l.code); m != nil {
				held[m[1]] = m[2]
			}
			if m := gateAttrRead.FindStringSubmatch(l.code); m != nil {
				read[m[2]] = true
			}
		}
		for attr, setting := range held {
			if read[attr] {
				out[setting] = true
			}
		}
	}
	return out
}

// setsGateOff reports whether a configuration line sets one of the diff's
// gates to false or nil.
func (c change) setsGateOff(code string) bool {
	for _, m := range gateOff.FindAllStringSubmatch(code, -1) {
		if c.diff.gates[m[1]+m[2]] {
			return true
		}
	}
	return false
}

// configDir reports whether a path is in a project's config/ folder (an
// umbrella app's included), where an environment is meant to be chosen.
func configDir(p string) bool {
	return strings.HasPrefix(p, "config/") || strings.HasPrefix(p, "apps/") && strings.Contains(p, "/config/") && strings.Count(p, "/") == 3
}

// removedSame reports whether the line was there before (moved in the
// file, or reformatted): only what a change turns off is reported.
func (c change) removedSame(l Line) bool { return c.removedCode[squashSpace(l.code)] }

// flakyTag is a tag that marks a test as flaky or broken: projects
// exclude such tags from their runs (test_helper.exs, mix test
// --exclude), so the test stops running where the flake shows.
var flakyTag = regexp.MustCompile(`^\s*@(tag|moduletag|describetag)\s+(\[\s*)?((:\w+|\w+:\s*[^,\]]+)\s*,\s*)*(:(` + flakyTagNames + `)\b|(` + flakyTagNames + `):\s*true\b)`)

// flakyTagNames: a tag that sets a test aside by name, alone or said of
// where it flakes (:flaky_on_ci, :unstable_in_ci); a longer name that only
// mentions the word names something else.
const flakyTagNames = `(?:skip_|ci_|known_)?(?:flaky|flakey|unstable|quarantined?|intermittent|racy)(?:_(?:on|in)_\w+|_ci|_tests?)?|known_failure|skip_ci|ci_skip|skip_on_ci|broken|disabled`

// flakyTags: a test, describe block or module newly tagged as flaky.
func flakyTags(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, l := range c.added() {
		if strings.Contains(l.code, "tag") && flakyTag.MatchString(l.code) && !c.removedSame(l) {
			out = append(out, c.finding("test-tagged-flaky", Concern, l, "the test is tagged as flaky: such tags are excluded from runs, so the flake is set aside, not fixed"))
		}
	}
	return out
}

var (
	inlineIf = regexp.MustCompile(`^\s*(if|unless)\b.*\bdo:\s*(assert|refute)\w*\b`)
	// opener starts a block that runs its body only sometimes: an if, a
	// with (its body only when every clause matches), a case or cond.
	opener     = regexp.MustCompile(`^\s*(?:\w+\s*=\s*)?(if|unless|with|case|cond)\b.*\bdo\s*$`)
	skipBranch = regexp.MustCompile(`->\s*(:ok|nil|true|:ignore|:skip|:noop)\s*$`)
	fails      = regexp.MustCompile(`\b(flunk|raise)\b`)
	versionish = regexp.MustCompile(`Version\.|System\.(version|otp_release)|otp_release|Code\.ensure_loaded|function_exported\?|:os\.type`)
)

// conditionalAssertions: an assertion the test made every time now made
// only when a condition holds: an if added around it (or if ..., do:
// assert), a with whose else does not fail, a case or cond with a branch
// that does nothing. On the runs where the flake shows, the check may be
// skipped. A condition on the Elixir or OTP version, or on the OS, is left
// out: it says where a check applies, not when it passes.
func conditionalAssertions(c change) []Finding {
	if !c.test {
		return nil
	}
	var out []Finding
	for _, b := range c.blocks {
		was := map[string]bool{}
		for _, l := range b.removed {
			if anyAssertion.MatchString(l.code) {
				for _, k := range assertKeys(l.code) {
					was[k] = true
				}
			}
		}
		for i, l := range b.added {
			if !strings.Contains(l.code, "do") || versionish.MatchString(l.code) {
				continue // every opener and inline if holds "do"
			}
			if inlineIf.MatchString(l.code) {
				out = append(out, c.finding("assertion-conditional", Concern, l, "the assertion is made only when a condition holds: on the runs where it would fail, it may not be checked"))
				continue
			}
			m := opener.FindStringSubmatch(l.code)
			if m == nil || len(was) == 0 {
				continue
			}
			if c.guardedAssertion(m[1], was, b.added[i+1:min(len(b.added), i+1+maxJoined)], indent(l.Text)) {
				out = append(out, c.finding("assertion-conditional", Concern, l, "an assertion the test made every time is now inside a "+m[1]+": on the runs where it would fail, it may not be checked"))
			}
		}
	}
	return out
}

// guardedAssertion reads the body of a block opened by kind (up to its
// end at the opener's indentation): whether it holds one of the
// assertions the block removed, and whether some way through it checks
// nothing (always for if and unless; for with, unless the body fails
// otherwise; for case and cond, a branch that returns :ok, nil or true).
func (c change) guardedAssertion(kind string, was map[string]bool, body []Line, at int) bool {
	held, skips, failsElse := false, kind == "if" || kind == "unless", false
	for _, n := range body {
		if strings.TrimSpace(n.code) == "end" && indent(n.Text) <= at {
			break
		}
		code := n.code
		if i := strings.Index(code, "->"); i >= 0 {
			code = code[i+2:] // a branch's body on the clause's line
		}
		for _, k := range assertKeys(code) {
			held = held || was[k]
		}
		skips = skips || skipBranch.MatchString(n.code)
		failsElse = failsElse || fails.MatchString(n.code)
	}
	if kind == "with" {
		skips = !failsElse
	}
	return held && skips
}

// assertKeys are what makes two assertions the same check: their code,
// or for a match, its pattern (the value matched may be named otherwise:
// presences[to_string(user.id)] made presences[user_key]).
func assertKeys(code string) []string {
	keys := []string{squashSpace(code)}
	if m := matchPattern.FindStringSubmatch(code); m != nil {
		keys = append(keys, "match "+squashSpace(m[1]))
	}
	return keys
}

// matchPattern is an assertion's match pattern: assert %{a: 1} = x.
var matchPattern = regexp.MustCompile(`^\s*assert\s*\(?\s*([%{\[].*?)\s+=\s+\S`)

// indent is a line's leading spaces.
func indent(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
