package evidence

import (
	"regexp"
	"slices"
)

// The global state a fix's cause and its siblings share: each kind's
// writes and reads, read from lines with their strings kept.

// stateShape reads one kind of global state: its writes and its reads,
// each capturing the key.
type stateShape struct {
	kind        string
	write, read *regexp.Regexp // nil write: written by the module's mode (Mox's global mode)
}

var stateShapes = []stateShape{
	{kind: "app-env",
		write: regexp.MustCompile(`\bApplication\.(?:put_env|delete_env)\(\s*(:\w+\s*,\s*:\w+)`),
		read:  regexp.MustCompile(`\bApplication\.(?:get_env|fetch_env!?|compile_env!?)\(\s*(:\w+\s*,\s*:\w+)`)},
	{kind: "ets",
		write: regexp.MustCompile(`:ets\.(?:new|insert|delete|delete_all_objects)\(\s*(:\w+)`),
		read:  regexp.MustCompile(`:ets\.(?:lookup|match|select|tab2list|member)\(\s*(:\w+)`)},
	{kind: "persistent-term",
		write: regexp.MustCompile(`:persistent_term\.(?:put|erase)\(\s*([^,)]+)`),
		read:  regexp.MustCompile(`:persistent_term\.get\(\s*([^,)]+)`)},
	{kind: "mox-global",
		read: regexp.MustCompile(`\b(?:expect|stub|stub_with|allow)\(\s*([A-Z][\w.]*)`)},
	{kind: "pubsub-topic",
		write: regexp.MustCompile(`\bPubSub\.(?:broadcast|broadcast_from|local_broadcast)!?\([^,]+,\s*(?:[^,]+,\s*)?("[^"#]*")`),
		read:  regexp.MustCompile(`\bPubSub\.subscribe\([^,]+,\s*("[^"#]*")`)},
	{kind: "named-process",
		write: regexp.MustCompile(`\b(?:start_supervised!?|start_link|Process\.register)\(.*\bname:\s*([A-Z][\w.]*|:\w+)|\bProcess\.register\([^,]+,\s*([A-Z][\w.]*|:\w+)`),
		read:  regexp.MustCompile(`\b(?:GenServer\.(?:call|cast)|:sys\.(?:get_state|replace_state)|Process\.whereis)\(\s*([A-Z][\w.]*|:\w+)`)},
	{kind: "compiler-option",
		write: regexp.MustCompile(`\bCode\.(?:put_compiler_option|compiler_options)\(\s*\[?\s*(:?\w+)`),
		read:  regexp.MustCompile(`\bCode\.get_compiler_option\(\s*(:\w+)`)},
}

// stateIn lists the global state lines write (a module in Mox's global
// mode: each mock it uses).
func stateIn(lines []string) []StateKey {
	var out []StateKey
	global := false
	for _, l := range lines {
		global = global || moxGlobal.MatchString(l)
	}
	for _, l := range lines {
		for _, s := range stateShapes {
			re := s.write
			if s.kind == "mox-global" {
				if !global {
					continue
				}
				re = s.read
			}
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				k := StateKey{Kind: s.kind, Key: squashSpace(firstGroup(m))}
				if !slices.Contains(out, k) {
					out = append(out, k)
				}
			}
		}
	}
	return out
}

// writes reports whether a line writes state k.
func writes(line string, k StateKey) bool {
	for _, s := range stateShapes {
		if s.kind != k.Kind || s.write == nil {
			continue
		}
		for _, m := range s.write.FindAllStringSubmatch(line, -1) {
			if squashSpace(firstGroup(m)) == k.Key {
				return true
			}
		}
	}
	return k.Kind == "mox-global" && moxGlobal.MatchString(line)
}

// reads reports whether a line reads state k.
func reads(line string, k StateKey) bool {
	for _, s := range stateShapes {
		if s.kind != k.Kind {
			continue
		}
		for _, m := range s.read.FindAllStringSubmatch(line, -1) {
			if squashSpace(firstGroup(m)) == k.Key {
				return true
			}
		}
	}
	return false
}

// firstGroup is the first group of a match that matched.
func firstGroup(m []string) string {
	for _, g := range m[1:] {
		if g != "" {
			return g
		}
	}
	return ""
}
