package evidence

import (
	"sort"
	"strings"
)

// finish places what call collected: each test under its describe, each
// call in its test, in a stub, or piped; and indexes the calls.
func (w *walker) finish(stubs [][2]int) {
	describes := make([][2]int, len(w.describes))
	for i, d := range w.describes {
		describes[i] = [2]int{d.start, d.end}
	}
	inDescribe := newSpanIndex(describes)
	for i := range w.s.tests {
		t := &w.s.tests[i]
		t.own, t.full = t.name, t.name
		first := -1 // describes do not nest; if they did, the first holds it
		inDescribe.holding(t.start, t.end, func(j int) bool {
			if first < 0 || j < first {
				first = j
			}
			return true
		})
		if first >= 0 {
			d := w.describes[first]
			t.name = d.name + "/" + t.name
			t.full = d.name + " " + t.own
			t.describe = [2]int{d.start, d.end}
		}
		if !strings.Contains(t.name, "/") {
			t.name = "/" + t.name
		}
	}
	tests := make([][2]int, len(w.s.tests))
	for j, t := range w.s.tests {
		tests[j] = [2]int{t.start, t.end}
	}
	inTest, inStub := newSpanIndex(tests), newSpanIndex(stubs)
	piped := map[int]bool{}
	for _, p := range w.piped {
		piped[p] = true
	}
	for i := range w.s.calls {
		c := &w.s.calls[i]
		// The latest test that holds the call, other than the test itself.
		inTest.holding(c.start, c.end, func(j int) bool {
			if tests[j] == [2]int{c.start, c.end} {
				return true
			}
			c.test = j
			return false
		})
		c.inFn = inStub.any(c.start, c.end)
		c.piped = piped[c.at]
		w.s.named[c.name] = append(w.s.named[c.name], i)
		if c.name == "setup" && c.end > c.start {
			in := [2]int{}
			inDescribe.holding(c.start, c.end, func(j int) bool { in = describes[j]; return false })
			w.s.setups = append(w.s.setups, [4]int{c.start, c.end, in[0], in[1]})
		}
	}
	w.s.pollers, w.s.defined = w.s.localPollers()
	for i, c := range w.s.calls {
		if w.s.pollsByName(c.name, w.poll(c.name)) {
			w.s.polls = append(w.s.polls, i)
		}
	}
}

// spanIndex finds the spans of lines (tests, describes, stubs) that hold
// a call, without reading every span for every call: a diff at the bounds
// holds thousands of each.
type spanIndex struct {
	spans  [][2]int
	order  []int // spans' indexes by start, in their order for equal starts
	maxEnd []int // the latest end of order[:k+1]
}

func newSpanIndex(spans [][2]int) spanIndex {
	x := spanIndex{spans: spans, order: make([]int, len(spans)), maxEnd: make([]int, len(spans))}
	for i := range spans {
		x.order[i] = i
	}
	sort.SliceStable(x.order, func(a, b int) bool { return spans[x.order[a]][0] < spans[x.order[b]][0] })
	for k, i := range x.order {
		x.maxEnd[k] = spans[i][1]
		if k > 0 && x.maxEnd[k-1] > x.maxEnd[k] {
			x.maxEnd[k] = x.maxEnd[k-1]
		}
	}
	return x
}

// holding calls fn with each span that holds [start, end], the latest
// starting first, until fn returns false. It reads back only as far as a
// span could still hold it.
func (x spanIndex) holding(start, end int, fn func(i int) bool) {
	k := sort.Search(len(x.order), func(k int) bool { return x.spans[x.order[k]][0] > start }) - 1
	for passed := 0; k >= 0 && x.maxEnd[k] >= end && passed <= maxPassed; k-- {
		if i := x.order[k]; x.spans[i][1] < end {
			passed++
		} else if !fn(i) {
			return
		}
	}
}

// maxPassed bounds the spans holding reads back over that do not hold
// what it asks for: only spans nested in one another (a test wrapping
// thousands of tests, which ExUnit refuses) put any there, and past it
// the rest are taken as holding nothing.
const maxPassed = 256

// any reports whether a span holds [start, end].
func (x spanIndex) any(start, end int) bool {
	k := sort.Search(len(x.order), func(k int) bool { return x.spans[x.order[k]][0] > start }) - 1
	return k >= 0 && x.maxEnd[k] >= end
}
