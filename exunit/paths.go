package exunit

import (
	"bytes"
	"path"
	"regexp"
	"strings"
)

// pathContext makes the locations ExUnit prints relative to the
// repository's root: absolute ones in a CI checkout, ones relative to an
// umbrella app that was tested from its own directory.
type pathContext struct {
	checkout string // the job's checkout, from actions/checkout's log
	stepDir  string // the directory the current step's command cd-ed into
	lost     string // why the current step's relative locations cannot be placed
	section  string // the umbrella app of the current "==> app" section
}

// step starts a new GitHub Actions step whose command line is cmd.
func (c *pathContext) step(cmd []byte) {
	c.stepDir, c.lost, c.section = "", "", ""
	m := cdCommand.FindSubmatch(cmd)
	if m == nil {
		return
	}
	dir := path.Clean(string(m[1]))
	if path.IsAbs(dir) {
		if rel, unusable := c.absolute(dir + "/"); unusable == "" {
			dir = path.Clean(rel)
		} else {
			c.lost = "the step's command changed to a directory outside the checkout"
			return
		}
	}
	switch {
	case dir == "..", strings.HasPrefix(dir, "../"):
		c.lost = "the step's command changed to a directory outside the checkout"
	case dir != ".":
		c.stepDir = dir
	}
}

var cdCommand = regexp.MustCompile(`^cd\s+([\w./-]+)\s*(?:&&|;)`)

// enterApp starts an umbrella project's "==> app" section.
func (c *pathContext) enterApp(name []byte) {
	c.section = ""
	if appName.Match(name) {
		c.section = string(name)
	}
}

var appName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// checkoutLine reads actions/checkout's "Working directory is '<dir>'".
func (c *pathContext) checkoutLine(b []byte) {
	if rest, ok := bytes.CutPrefix(b, []byte("Working directory is '")); ok {
		if dir, ok := bytes.CutSuffix(rest, []byte("'")); ok && len(dir) > 1 && dir[0] == '/' {
			c.checkout = path.Clean(string(dir))
		}
	}
}

// The work directories of CI services, whose next path segments are the
// checkout; a location under one is taken relative to it.
var ciCheckouts = regexp.MustCompile(`^(?:` +
	`/home/runner/work/[^/]+/[^/]+` + // GitHub Actions runners
	`|/Users/runner/work/[^/]+/[^/]+` + // GitHub Actions macOS runners
	`|[A-Za-z]:/a/[^/]+/[^/]+` + // GitHub Actions Windows runners (D:\a\repo\repo, as Elixir prints it)
	`|(?:/home/[^/]+)?/actions-runner/_work/[^/]+/[^/]+` + // self-hosted runners' default work folder
	`|/__w/[^/]+/[^/]+` + // GitHub Actions container jobs
	`|/github/workspace` + // GitHub Actions Docker actions
	`|/home/circleci/(?:project|repo)` + // CircleCI
	`|/var/lib/buildkite-agent/builds/[^/]+/[^/]+/[^/]+` + // Buildkite
	`|/builds/[^/]+/[^/]+` + // GitLab CI (one namespace level)
	`|/home/travis/build/[^/]+/[^/]+` + // Travis CI
	`|/drone/src` + // Drone
	`)/`)

var windowsDrive = regexp.MustCompile(`^[A-Za-z]:/`)

// resolve makes a printed location relative to the repository's root, or
// says why it cannot be; app is the umbrella app to prefix it with if the
// log turns out to be an umbrella's.
func (c *pathContext) resolve(file string) (rel, unusable, app string) {
	if path.IsAbs(file) || windowsDrive.MatchString(file) {
		rel, unusable = c.absolute(file)
		return rel, unusable, ""
	}
	switch file = path.Clean(file); {
	case c.lost != "":
		return file, c.lost, ""
	case c.stepDir != "":
		return path.Join(c.stepDir, file), "", ""
	}
	return file, "", c.section
}

// absolute makes an absolute path relative to the checkout it is in.
func (c *pathContext) absolute(file string) (rel, unusable string) {
	switch {
	case c.checkout != "" && strings.HasPrefix(file, c.checkout+"/"):
		return path.Clean(file[len(c.checkout)+1:]), ""
	case ciCheckouts.MatchString(file):
		return path.Clean(file[len(ciCheckouts.FindString(file)):]), ""
	}
	return file, "an absolute location outside any CI checkout pitcrew recognises"
}

// finish places the failures of an umbrella's apps, printed relative to
// each app, under apps/<app>/. A log is an umbrella's when runs of at least
// two "==> app" sections printed results: a single project prints
// "==> name" too, after compiling its dependencies.
func (c *pathContext) finish(rep *Report, runApps, failureApps []string) {
	apps := map[string]bool{}
	for i, r := range rep.Runs {
		if r.Summary && runApps[i] != "" {
			apps[runApps[i]] = true
		}
	}
	if len(apps) < 2 {
		return
	}
	for i := range rep.Runs {
		rep.Runs[i].App = runApps[i]
	}
	for i, f := range rep.Failures {
		if app := failureApps[i]; app != "" && strings.HasPrefix(f.File, "test/") {
			rep.Failures[i].File = "apps/" + app + "/" + f.File
		}
	}
}
