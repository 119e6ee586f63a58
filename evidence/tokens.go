package evidence

import (
	"regexp"
	"strings"
)

// Names and atoms are read from every added line of a review; the
// regexps that say what they are (word, atom) cost a backtracking run per
// match at the bound, so these scanners find the same matches by hand.

// asciiWord is \w in a Go regexp: ASCII letters, digits and _.
func asciiWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// eachWord calls fn with each match of word (`[A-Za-z_][\w?!]*`) in s, in
// order, as FindAllString finds them.
func eachWord(s string, fn func(string)) {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '_' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			i++
			continue
		}
		j := i + 1
		for j < len(s) && (asciiWord(s[j]) || s[j] == '?' || s[j] == '!') {
			j++
		}
		fn(s[i:j])
		i = j
	}
}

// eachAtom calls fn with each match of atom (`:\w+|[A-Z][\w.]*`) in s, in
// order, as FindAllString finds them.
func eachAtom(s string, fn func(string)) {
	for i := 0; i < len(s); {
		j := i
		switch c := s[i]; {
		case c == ':' && i+1 < len(s) && asciiWord(s[i+1]):
			for j = i + 1; j < len(s) && asciiWord(s[j]); j++ {
			}
		case c >= 'A' && c <= 'Z':
			for j = i + 1; j < len(s) && (asciiWord(s[j]) || s[j] == '.'); j++ {
			}
		default:
			i++
			continue
		}
		fn(s[i:j])
		i = j
	}
}

// hinted is a regexp with the substrings one of which every match holds:
// a line with none is passed over without running the regexp, which on a
// diff at the bounds is most of the rules' time.
type hinted struct {
	*regexp.Regexp
	hints []string
}

// MatchString reports whether s matches, looking for a hint first.
func (h hinted) MatchString(s string) bool { return h.hinted(s) && h.Regexp.MatchString(s) }

// FindStringSubmatch is the regexp's, looking for a hint first.
func (h hinted) FindStringSubmatch(s string) []string {
	if !h.hinted(s) {
		return nil
	}
	return h.Regexp.FindStringSubmatch(s)
}

// FindAllStringSubmatch is the regexp's, looking for a hint first.
func (h hinted) FindAllStringSubmatch(s string, n int) [][]string {
	if !h.hinted(s) {
		return nil
	}
	return h.Regexp.FindAllStringSubmatch(s, n)
}

func (h hinted) hinted(s string) bool {
	for _, x := range h.hints {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}
