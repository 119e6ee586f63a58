package prompts

import (
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pitcrew/pitcrew/internal/weburl"
)

// MaxAnswerLen bounds the part of an agent's answer pitcrew keeps, in
// runes: the end of the answer, where agents sum up.
const MaxAnswerLen = 6000

// maxAnswerPRs bounds the pull request links read from an answer.
const maxAnswerPRs = 5

// pullLink finds pull request links of the GitHub served (weburl) in
// free text: a repository path, then /pull/N, not followed by more digits.
func pullLink() *regexp.Regexp {
	host := strings.TrimPrefix(weburl.HostPath(), "www.")
	return regexp.MustCompile(`(?i)https?://(?:www\.)?` + regexp.QuoteMeta(host) + `/([A-Za-z0-9_.-]{1,100})/([A-Za-z0-9_.-]{1,100})/pull/([0-9]{1,9})(?:[^0-9]|$)`)
}

// PullRequestLinks reads the pull requests of repo (owner/name) an answer
// links to, in the order they first appear, each once, as canonical URLs
// (<GITHUB_WEB_URL>/owner/name/pull/N, repo as given). Links to other
// repositories are left out: a run only ever opens pull requests in its
// own.
func PullRequestLinks(answer, repo string) []string {
	var out []string
	seen := map[int]bool{}
	for _, m := range pullLink().FindAllStringSubmatch(answer, -1) {
		if !strings.EqualFold(m[1]+"/"+m[2], repo) {
			continue
		}
		n, err := strconv.Atoi(m[3])
		if err != nil || n <= 0 || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, weburl.Pull(repo, n))
		if len(out) == maxAnswerPRs {
			break
		}
	}
	return out
}

// KeepAnswer is the part of an answer pitcrew stores: valid UTF-8, CRs
// dropped, the last MaxAnswerLen runes (cut at a line start when one is
// near). It is not made safe for Markdown: it is shown only as a code
// block (publish.CodeBlock).
func KeepAnswer(answer string) string {
	s := strings.TrimSpace(strings.ReplaceAll(strings.ToValidUTF8(answer, ""), "\r", ""))
	if utf8.RuneCountInString(s) <= MaxAnswerLen {
		return s
	}
	r := []rune(s)
	s = string(r[len(r)-MaxAnswerLen:])
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < 200 {
		s = s[i+1:]
	}
	return "… (the start is cut)\n" + s
}
