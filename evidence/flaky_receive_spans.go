package evidence

import (
	"fmt"
	"sort"
	"strings"
)

// A receive macro whose pattern spans lines takes its timeout on the
// last one: a diff that changes only that line shows a number, not a
// call. The call is found on both sides read as code and read whole.

// spannedReceiveTimeouts: a receive macro that starts before the lines a
// block changes and ends among them, given a longer timeout than the
// same call at base. A call that starts in the block is receiveTimeouts'.
func spannedReceiveTimeouts(c change) []Finding {
	if c.before == nil || c.after == nil {
		return nil
	}
	blocks := make([]block, 0, len(c.blocks))
	for _, b := range c.blocks {
		if len(b.removed) > 0 && len(b.added) > 0 {
			blocks = append(blocks, b)
		}
	}
	var out []Finding
	for _, m := range receiveMacroList {
		if m.pos < 0 || strings.HasPrefix(m.name, "refute_") {
			continue // no timeout, or a longer wait for what must not come: stricter
		}
		for _, i := range c.after.named[m.name] {
			now := c.after.calls[i]
			k := sort.Search(len(blocks), func(k int) bool { return blocks[k].added[0].New > now.start })
			if k == len(blocks) || blocks[k].added[0].New > now.end {
				continue
			}
			b := blocks[k]
			was := c.before.callsAt(b.removed[0].Old, m.name)
			if len(was) != 1 || was[0].start >= b.removed[0].Old {
				continue
			}
			_, v, ok := c.receiveTimeout(callText(c.after.textLines(), now))
			_, old, okOld := c.receiveTimeout(callText(c.before.textLines(), was[0]))
			if ok && okOld && v > old {
				out = append(out, c.finding("receive-timeout-raised", Concern, b.added[0],
					fmt.Sprintf("the %s timeout went from %s to %s, on the last line of its call: waiting longer for the message hides why it is late", m.name, ms(old), ms(v))))
			}
		}
	}
	return out
}

// callText is a call's lines as code, joined: what a rule reads of a
// call written over several lines.
func callText(lines []string, cs callSite) string {
	var b strings.Builder
	for n := cs.start; n <= cs.end && n <= len(lines); n++ {
		b.WriteString(strings.TrimSpace(code(lines[n-1])) + " ")
	}
	return b.String()
}
