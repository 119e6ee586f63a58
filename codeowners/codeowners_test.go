package codeowners

import (
	"slices"
	"testing"
)

// The examples of GitHub's documentation ("About code owners"), each path
// resolved as GitHub resolves it: the last matching line wins.
const githubExample = `# This is a comment.
# Each line is a file pattern followed by one or more owners.

# These owners will be the default owners for everything in
# the repo. Unless a later match takes precedence,
# @global-owner1 and @global-owner2 will be requested for
# review when someone opens a pull request.
*       @global-owner1 @global-owner2

# Order is important; the last matching pattern takes the most
# precedence. When someone opens a pull request that only
# modifies JS files, only @js-owner and not the global
# owner(s) will be requested for a review.
*.js    @js-owner #This is an inline comment.

# You can also use email addresses if you prefer. They'll be
# used to look up users just like we do for commit author
# emails.
*.go docs@example.com

# Teams can be specified as code owners as well. Teams should
# be identified in the format @org/team-name. Teams must have
# explicit write access to the repository. In this example,
# the octocats team in the octo-org organization owns all .txt files.
*.txt @octo-org/octocats

# In this example, @doctocat owns any files in the build/logs
# directory at the root of the repository and any of its
# subdirectories.
/build/logs/ @doctocat

# The ` + "`docs/*`" + ` pattern will match files like
# ` + "`docs/getting-started.md`" + ` but not further nested files like
# ` + "`docs/build-app/troubleshooting.md`" + `.
docs/*  docs@example.com

# In this example, @octocat owns any file in an apps directory
# anywhere in your repository.
apps/ @octocat

# In this example, @doctocat owns any file in the ` + "`/docs`" + `
# directory in the root of your repository and any of its
# subdirectories.
/docs/ @doctocat

# In this example, any change inside the ` + "`/scripts`" + ` directory
# will require approval from @doctocat or @octocat.
/scripts/ @doctocat @octocat

# In this example, @octocat owns any file in a ` + "`/logs`" + ` directory such as
# ` + "`/build/logs`" + `, ` + "`/scripts/logs`" + `, and ` + "`/deeply/nested/logs`" + `. Any changes
# in a ` + "`/logs`" + ` directory will require approval from @octocat.
**/logs @octocat

# In this example, @octocat owns any file in the ` + "`/apps`" + `
# directory in the root of your repository except for the ` + "`/apps/github`" + `
# subdirectory, as its owners are left empty. Without an owner, changes
# to ` + "`apps/github`" + ` can be made with the approval of any user who has
# write access to the repository.
/apps/ @octocat
/apps/github

# In this example, @octocat owns any file in the ` + "`/apps`" + `
# directory in the root of your repository except for the ` + "`/apps/github`" + `
# subdirectory, as this subdirectory has its own owner @doctocat
/apps/ @octocat
/apps/github @doctocat
`

func TestOwnersResolveAsGitHubResolvesThem(t *testing.T) {
	f := Parse(githubExample)
	for path, want := range map[string][]string{
		"README.md":                         {"@global-owner1", "@global-owner2"},
		"lib/app.js":                        {"@js-owner"},
		"main.go":                           {"docs@example.com"},
		"notes/a.txt":                       {"@octo-org/octocats"},
		"build/logs/today/out.log":          {"@octocat"},  // **/logs, a later line, wins over /build/logs/
		"docs/getting-started.md":           {"@doctocat"}, // /docs/ comes after docs/*
		"docs/build-app/troubleshooting.md": {"@doctocat"},
		"web/apps/index.html":               {"@octocat"},
		"scripts/deploy.sh":                 {"@doctocat", "@octocat"},
		"deeply/nested/logs/x":              {"@octocat"},
		"apps/github/x.ex":                  {"@doctocat"},
		"apps/other/x.ex":                   {"@octocat"},
	} {
		if got := f.Owners(path); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", path, got, want)
		}
	}
}

func TestPatternsAsGitHubReadsThem(t *testing.T) {
	for _, c := range []struct {
		file, path string
		want       []string
	}{
		{"docs/*  @a", "docs/getting-started.md", []string{"@a"}},
		{"docs/*  @a", "docs/build-app/troubleshooting.md", nil},
		{"/apps/ @a\n/apps/github", "apps/github/x.ex", nil}, // a line with no owners leaves the path unowned
		{"test/ @a", "apps/web/test/x_test.exs", []string{"@a"}},
		{"/test/ @a", "apps/web/test/x_test.exs", nil},
		{"*_test.exs @a", "test/deep/x_test.exs", []string{"@a"}},
		{"test/payments/** @acme/payments", "test/payments/a/b_test.exs", []string{"@acme/payments"}},
		{"\\#odd @a", "#odd", []string{"@a"}},
		{"!test/ @a", "test/x_test.exs", nil},                                  // negation: GitHub skips the line
		{"test/[ab]_test.exs @a", "test/a_test.exs", nil},                      // ranges: skipped
		{"* @all\ntest/ @a not-an-owner", "test/x_test.exs", []string{"@all"}}, // a line GitHub cannot read is skipped whole
		{"/test/ @qa\n/* @admins", "test/x_test.exs", []string{"@qa"}},         // "/*" owns the root's own files only
		{"/test/ @qa\n/* @admins", "mix.exs", []string{"@admins"}},
		{"Test/ @a", "test/x_test.exs", nil}, // case-sensitive
		{"*.ex? @a", "lib/x.exs", []string{"@a"}},
	} {
		if got := Parse(c.file).Owners(c.path); !slices.Equal(got, c.want) {
			t.Errorf("%q on %s: %v, want %v", c.file, c.path, got, c.want)
		}
	}
}

func TestTeam(t *testing.T) {
	if org, slug, ok := Team("@acme/payments"); !ok || org != "acme" || slug != "payments" {
		t.Fatal(org, slug, ok)
	}
	for _, o := range []string{"@alice", "docs@example.com"} {
		if _, _, ok := Team(o); ok {
			t.Errorf("%s read as a team", o)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add(githubExample, "apps/github/x.ex")
	f.Add("**/x/**/*.ex? @a\n/ @b", "x/y/z.exs")
	f.Fuzz(func(t *testing.T, text, path string) {
		for _, o := range Parse(text).Owners(path) {
			if !owner.MatchString(o) {
				t.Fatalf("owner %q", o)
			}
		}
	})
}
