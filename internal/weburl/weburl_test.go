package weburl

import "testing"

func TestLinksFollowTheGitHubServed(t *testing.T) {
	defer Set("")
	for _, c := range []struct{ base, pull, issue string }{
		{"", "https://github.com/hexpm/hexpm/pull/77", "https://github.com/hexpm/hexpm/issues/3"},
		{"https://ghe.example.com/", "https://ghe.example.com/hexpm/hexpm/pull/77", "https://ghe.example.com/hexpm/hexpm/issues/3"},
	} {
		Set(c.base)
		if got := Pull("hexpm/hexpm", 77); got != c.pull {
			t.Errorf("Pull = %s, want %s", got, c.pull)
		}
		if got := Issue("hexpm/hexpm", 3); got != c.issue {
			t.Errorf("Issue = %s, want %s", got, c.issue)
		}
		if PullNumber(c.pull, "HexPM/hexpm") != 77 || PullNumber(c.pull+"/files", "hexpm/hexpm") != 0 || PullNumber(c.pull, "hexpm/other") != 0 {
			t.Errorf("PullNumber of %s", c.pull)
		}
	}
	Set("https://ghe.example.com")
	if PullNumber("https://github.com/hexpm/hexpm/pull/77", "hexpm/hexpm") != 0 {
		t.Error("a github.com link read as a pull request of the Enterprise server")
	}
}

func TestPullNumberReadsOnlyTheRepositorysPullRequests(t *testing.T) {
	for url, want := range map[string]int{
		"https://github.com/hexpm/hexpm/pull/77": 77, "https://github.com/HexPM/Hexpm/pull/77": 77,
		"https://github.com/hexpm/hexpm-mirror/pull/77": 0, "https://github.com/hexpm/hexpm/pull/077": 0, "https://github.com/hexpm/hexpm/pull/0": 0,
		"https://github.com/hexpm/hexpm/pull/77/files": 0, "https://github.com/other/hexpm/pull/77": 0, "": 0,
	} {
		if got := PullNumber(url, "hexpm/hexpm"); got != want {
			t.Errorf("%q: %d, want %d", url, got, want)
		}
	}
}

func TestAPullRequestPageIsReadInAnyCaseOfItsSchemeAndHost(t *testing.T) {
	for u, want := range map[string]string{
		"https://github.com/hexpm/hexpm/pull/77":       "https://github.com/hexpm/hexpm/pull/77",
		"HTTPS://GitHub.com/HexPM/hexpm/pull/77":       "https://github.com/HexPM/hexpm/pull/77",
		"httPs://github.com/hexpm/hexpm/pull/1234":     "https://github.com/hexpm/hexpm/pull/1234",
		"https://github.com/hexpm/hexpm/pull/77/files": "", "https://github.com/hexpm/pull/77": "",
		"http://github.com/hexpm/hexpm/pull/77": "", "https://github.com.evil.io/hexpm/hexpm/pull/77": "",
		// Unicode case folds of ASCII letters (long s, Kelvin sign) are not a name.
		"https://github.com/he\u017fpm/hexpm/pull/77": "", "https://github.com/hexpm/\u212aexpm/pull/77": "",
	} {
		got, ok := PullPage(u)
		if got != want || ok != (want != "") || IsPull(u) != ok {
			t.Errorf("%q: %q %v, want %q", u, got, ok, want)
		}
	}
}
