package evidence

import "strings"

// diffWide is what the rules read of the whole diff, across its files,
// computed once per review: a rule about one file asks it in constant or
// per-line time, never by reading the other files again.
type diffWide struct {
	// gates are the application settings the diff's code newly reads in
	// a condition (switchGates).
	gates map[string]bool
	// sleepsGone says the diff's tests lose sleeps and gain none (a clock
	// injected in their place): a longer setting is not waited out.
	sleepsGone bool
	// added is every line the diff adds, in every file, strings kept;
	// words are the names and atoms in them; addedBy counts each file's
	// added lines, and lines counts them all.
	added   string
	words   map[string]bool
	addedBy map[string]int
	lines   int
	// runsTests says an added line somewhere runs the tests (mix test).
	runsTests bool
	// runTags are the tags a test command the diff adds runs (--only t,
	// --include t).
	runTags map[string]bool
	// suiteTags are the tags each test_helper.exs read at head excludes;
	// unexcluded, the tags a test_helper.exs's removed lines name that it
	// no longer excludes (they run without --include).
	suiteTags  map[string]map[string]bool
	unexcluded map[string]bool
	// supportTouched is the global state the diff's test support code
	// (test/support, not a test module) newly uses: a case template's
	// shared sandbox, for each module that uses it.
	supportTouched []string
	// sharedModules are the support and library modules the diff changes
	// that touch global state, by name, read whole (sharedModules).
	sharedModules map[string][]string
	// controllerGuards are what guards each route the diff's routers give
	// a controller, by the controller's last name (controllerGuards).
	controllerGuards map[string][]routeTo
	// supportAsserts counts the assertions each function or macro of the
	// diff's test support files makes, read whole at head: a test that
	// calls one asserts what it does.
	supportAsserts map[string]int
}

// readDiffWide reads the changes (and the files read whole at head) once.
func readDiffWide(changes []*change, head map[string]string) *diffWide {
	w := &diffWide{gates: switchGates(changes), sleepsGone: sleepsOnlyRemoved(changes), words: map[string]bool{}, addedBy: map[string]int{},
		runTags: map[string]bool{}, suiteTags: suiteExcludes(head), supportTouched: supportTouches(changes), sharedModules: sharedModules(changes),
		controllerGuards: controllerGuards(changes), supportAsserts: supportAsserts(changes)}
	w.unexcluded = unexcluded(changes, w.suiteTags)
	var added strings.Builder
	for _, c := range changes {
		for _, l := range c.added() {
			text := withStrings(l.Text)
			added.WriteString(text + "\n")
			w.addedBy[c.path]++
			w.lines++
			eachAtom(text, func(n string) { w.words[n] = true })
			eachWord(text, func(n string) { w.words[n] = true })
			for _, m := range tagRun.FindAllStringSubmatch(text, -1) {
				w.runTags[m[1]] = true
			}
		}
	}
	w.added = added.String()
	w.runsTests = testCommand.MatchString(w.added)
	return w
}

// unexcluded are the names the removed lines of the diff's test_helper.exs
// files name, less the tags a helper read at head still excludes.
func unexcluded(changes []*change, suiteTags map[string]map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, c := range changes {
		if !strings.HasSuffix(c.path, "test_helper.exs") {
			continue
		}
		for _, l := range c.removed() {
			eachWord(l.code, func(t string) {
				if !suiteTags[c.path][t] {
					out[t] = true
				}
			})
		}
	}
	return out
}

// supportAsserts counts the checks of each function the diff's test
// support files (not test modules) define, read whole at head: each
// assertion, and each value its pattern pins (assert_receive {:email,
// %{to: ^address, subject: ^subject}} checks the recipient and the
// subject, as the equalities a test wrote before it called the helper).
func supportAsserts(changes []*change) map[string]int {
	out := map[string]int{}
	for _, c := range changes {
		if !c.test || strings.HasSuffix(c.path, "_test.exs") || c.after == nil || c.after.fragment {
			continue
		}
		checks := c.after.assertsInDefs(func(call callSite) int {
			return 1 + strings.Count(strings.Join(call.args, " "), "^")
		})
		for name, n := range checks {
			out[name] += n
		}
	}
	return out
}
