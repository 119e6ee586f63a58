// Package weburl makes the GitHub links pitcrew writes and reads point at
// the GitHub it serves: github.com, or a GitHub Enterprise Server named by
// GITHUB_WEB_URL. The wiring sets it once at start, before any handler
// runs; until then (and in tests) it is https://github.com.
package weburl

import (
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
)

var base atomic.Value // string, without a trailing slash

// Default is github.com's web address.
const Default = "https://github.com"

// Set makes u (GITHUB_WEB_URL) the base of every link; "" restores Default.
func Set(u string) { base.Store(strings.TrimRight(u, "/")) }

// Base is the web address of the GitHub pitcrew serves.
func Base() string {
	if v, _ := base.Load().(string); v != "" {
		return v
	}
	return Default
}

// Repo is a repository's page (owner/name).
func Repo(repo string) string { return Base() + "/" + repo }

// Pull is a pull request's page.
func Pull(repo string, n int) string { return fmt.Sprintf("%s/%s/pull/%d", Base(), repo, n) }

// Issue is an issue's page.
func Issue(repo string, n int) string { return fmt.Sprintf("%s/%s/issues/%d", Base(), repo, n) }

// Line is the page of one line of a file at a commit.
func Line(repo, sha, path string, line int) string {
	return fmt.Sprintf("%s/%s/blob/%s/%s#L%d", Base(), repo, sha, path, line)
}

// PullNumber reads the number of a pull request page of repo (as Pull
// writes it, any case); 0 when url is not one.
func PullNumber(url, repo string) int {
	rest, ok := strings.CutPrefix(strings.ToLower(url), strings.ToLower(PullPrefix(repo)))
	n, err := strconv.Atoi(rest)
	if !ok || err != nil || n <= 0 || strconv.Itoa(n) != rest {
		return 0
	}
	return n
}

// PullPrefix starts the page of every pull request of repo.
func PullPrefix(repo string) string { return Base() + "/" + repo + "/pull/" }

// IsPull reports whether u is the page of a pull request of any
// repository on the GitHub served.
func IsPull(u string) bool {
	_, ok := PullPage(u)
	return ok
}

// PullPage reads u as the page of a pull request of any repository on the
// GitHub served, its scheme and host in any case, and writes it as Pull
// does ("HTTPS://GitHub.com/o/r/pull/1" is "https://github.com/o/r/pull/1").
func PullPage(u string) (string, bool) {
	m := regexp.MustCompile(`^(?i:` + regexp.QuoteMeta(Base()) + `)/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/([0-9]{1,9})$`).FindStringSubmatch(u)
	if m == nil {
		return "", false
	}
	n, _ := strconv.Atoi(m[2])
	return Pull(m[1], n), true
}

// HostPath is the served GitHub's host and path prefix, lower-cased and
// without a scheme ("github.com", "ghe.example.com/github"), for finding
// its links in text written with either scheme.
func HostPath() string {
	u, err := url.Parse(Base())
	if err != nil || u.Host == "" {
		return "github.com"
	}
	return strings.ToLower(u.Host + strings.TrimRight(u.Path, "/"))
}
