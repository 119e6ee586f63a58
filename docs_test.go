package pitcrew

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pitcrew/pitcrew/work/follow"
)

func TestTheSetupGuideNamesEveryEventTheAppAsksFor(t *testing.T) {
	var manifest struct {
		Events []string `yaml:"default_events"`
	}
	if err := yaml.Unmarshal(AppManifest, &manifest); err != nil || len(manifest.Events) == 0 {
		t.Fatalf("app.yml: %v", err)
	}
	guide, err := os.ReadFile("docs/setup.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range manifest.Events {
		if !strings.Contains(string(guide), "`"+event+"`") {
			t.Errorf("docs/setup.md does not name the event %s that app.yml asks for", event)
		}
	}
}

// markdownLink is a Markdown link's target.
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

func TestTheDocsLinkOnlyToFilesACloneHas(t *testing.T) {
	pages, _ := filepath.Glob("docs/*.md")
	pages = append(pages, "README.md")
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range markdownLink.FindAllStringSubmatch(string(text), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path := filepath.Join(filepath.Dir(page), target)
			if rel, err := filepath.Rel(".", path); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links to %s, outside the repository", page, m[1])
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s links to %s, which a clone does not have", page, m[1])
			}
		}
		if strings.Contains(string(text), "../shared/LAYOUT.md") {
			t.Errorf("%s cites ../shared/LAYOUT.md, which a clone does not have", page)
		}
	}
}

// The docs show the verification workflow exactly as `pitcrew ci-workflow`
// prints it.
func TestTheDocsShowTheVerificationWorkflow(t *testing.T) {
	jobs, err := os.ReadFile("docs/jobs.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(jobs), "```yaml\n"+follow.CIWorkflow+"```") {
		t.Fatal("docs/jobs.md does not show work/follow/pitcrew-verify.yml as it is")
	}
}
