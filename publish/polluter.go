package publish

import (
	"fmt"

	"github.com/pitcrew/pitcrew/evidence"
	"github.com/pitcrew/pitcrew/runs"
)

// polluterLine says which test the fix's answer says pollutes the flaky
// one, and whether the verification proved it: "Polluted by
// `test/x_test.exs:12` (shares ...): proven: 5 of 5 red on base, 0 of 5
// alone, 0 of 50 on head", or claimed; "" when the answer names none.
func polluterLine(r runs.Run) string {
	if r.Result == nil || r.Result.Polluter == nil {
		return ""
	}
	p := r.Result.Polluter
	line := "Polluted by " + Code(p.Test, 300)
	if p.Shares != "" {
		line += " (shares " + Text(p.Shares, 200) + ")"
	}
	var check *evidence.PolluterCheck
	if pr := r.PR; pr != nil && pr.Verify != nil && pr.Verify.Head == pr.Checked && pr.Verify.Result != nil {
		check = pr.Verify.Result.Polluter
	}
	return line + ": " + polluterWords(check)
}

// polluterWords is what the verification showed of the pair.
func polluterWords(c *evidence.PolluterCheck) string {
	switch {
	case c == nil:
		return "claimed by the fix; the independent verification checks the pair"
	case c.Proven:
		return fmt.Sprintf("proven: %d of %d red on base, %d of %d alone, %d of %d on head", c.BaseFailed, c.BaseRuns, c.AloneFailed, c.AloneRuns, c.HeadFailed, c.HeadRuns)
	}
	return "claimed, not proven: " + c.Why
}
