package publish

import (
	"strings"

	"github.com/pitcrew/pitcrew/runs"
)

// answerDetails folds a run's answer (runs.Run.Answer) in a <details>
// block titled title (plain text): a code block, so nothing the agent
// wrote renders, mentions or links. "" when the run kept no answer.
func answerDetails(title string, r runs.Run) string {
	if r.Answer == "" || !r.State.Terminal() {
		return ""
	}
	return "\n<details><summary>" + Text(title, 200) + "</summary>\n\n" + CodeBlock(strings.Split(r.Answer, "\n")) + "\n</details>\n"
}

// unreadResult describes a run that ended without a readable result
// block: the pull requests its answer links, or why nothing was read.
func unreadResult(r runs.Run, link string) string {
	if len(r.AnswerPRs) > 0 {
		return "🔗 the agent ended without its result block; its answer links " + strings.Join(r.AnswerPRs, ", ") + link
	}
	why := orDefault(r.Error, "its answer did not say what it found")
	if r.Answer != "" {
		why += "; its answer is below"
	}
	return "⚠️ the run ended but " + why + link
}
