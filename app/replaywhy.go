package app

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/pitcrew/pitcrew/publish"
)

// delivery is what refusal reads of a body: the values the handlers'
// parsers decide by, in every event's shape.
type delivery struct {
	Action       string              `json:"action"`
	Installation *struct{ ID int64 } `json:"installation"`
	Sender       struct {
		Login, Type string
	} `json:"sender"`
	Issue *struct {
		Number      int             `json:"number"`
		PullRequest json.RawMessage `json:"pull_request"`
		Labels      []struct{ Name string }
	} `json:"issue"`
	Changes struct {
		Body json.RawMessage `json:"body"`
	} `json:"changes"`
	PullRequest *struct {
		Merged bool `json:"merged"`
	} `json:"pull_request"`
	WorkflowRun *struct {
		Conclusion string `json:"conclusion"`
	} `json:"workflow_run"`
	CheckRun *struct {
		Conclusion string `json:"conclusion"`
		App        struct{ Slug string }
	} `json:"check_run"`
	CheckSuite *struct {
		PullRequests []json.RawMessage `json:"pull_requests"`
	} `json:"check_suite"`
	Review *struct {
		User              struct{ Type string }
		AuthorAssociation string `json:"author_association"`
	} `json:"review"`
	Comment *struct {
		Body              string `json:"body"`
		AuthorAssociation string `json:"author_association"`
		User              struct{ Login, Type string }
	} `json:"comment"`
	Ref        string `json:"ref"`
	Repository struct {
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
}

// actedOn are the actions each event's handlers read, as they say it.
var actedOn = map[string]struct {
	actions []string
	what    string
}{
	"issues":              {[]string{"labeled", "edited"}, "labeled (the flaky label starts a fix) and edited (a dashboard's ticked boxes)"},
	"workflow_run":        {[]string{"completed"}, "completed (a run that passed, after a failed attempt or a retry in a job)"},
	"check_run":           {[]string{"completed"}, "completed (another CI's check run that passed after one that failed)"},
	"check_suite":         {[]string{"completed"}, "completed (the CI's verdict on a pull request an agent opened)"},
	"pull_request":        {[]string{"closed", "synchronize", "reopened"}, "closed by a merge (its migrations), and synchronize, closed and reopened of a pull request an agent opened"},
	"pull_request_review": {[]string{"submitted", "dismissed"}, "submitted and dismissed (reviews of a pull request an agent opened)"},
	"issue_comment":       {[]string{"created"}, "created (a /pitcrew command; an edited comment is not a new command)"},
}

// maintainers are the author associations whose commands and reviews count.
var maintainers = map[string]bool{"OWNER": true, "MEMBER": true, "COLLABORATOR": true}

// refusal says, from a delivery's body, why the handlers of event did
// nothing, for the refusals they do not log: the rule the body fails, in
// the order their parsers check.
func refusal(event string, payload []byte) string {
	var d delivery
	if err := json.Unmarshal(payload, &d); err != nil {
		return "the body is not the JSON of a " + event + " event: " + err.Error()
	}
	if acts, ok := actedOn[event]; ok && !slices.Contains(acts.actions, d.Action) {
		return fmt.Sprintf("pitcrew reads %s events whose action is %s; this one's is %q", event, acts.what, d.Action)
	}
	if d.Installation == nil || d.Installation.ID <= 0 {
		return "the delivery names no installation (installation.id): pitcrew acts only on repositories the app is installed on"
	}
	switch event {
	case "issues":
		switch {
		case d.Issue == nil || d.Issue.Number <= 0:
			return "the delivery names no issue"
		case len(d.Issue.PullRequest) > 0 && string(d.Issue.PullRequest) != "null":
			return "the issue is a pull request: the flaky label starts a fix on an issue only"
		case d.Action == "edited" && !hasLabel(d.Issue.Labels, publish.DashboardLabel):
			return "an edited issue is read only when it is a flaky-tests dashboard (label pitcrew:dashboard); this one is not"
		case d.Action == "edited" && (len(d.Changes.Body) == 0 || string(d.Changes.Body) == "null"):
			return "the edit changed the dashboard's title or labels, not its body: only ticked boxes in the body start fixes"
		case d.Action == "edited" && (d.Sender.Type == "Bot" || strings.HasSuffix(d.Sender.Login, "[bot]")):
			return fmt.Sprintf("the dashboard was edited by a bot (%s): only a person's ticks start fixes", d.Sender.Login)
		}
	case "workflow_run":
		if d.WorkflowRun != nil && d.WorkflowRun.Conclusion != "success" {
			return fmt.Sprintf("the run's conclusion is %q: pitcrew reads a run that passed, for the failures of the attempts before it", d.WorkflowRun.Conclusion)
		}
	case "check_run":
		switch {
		case d.CheckRun != nil && d.CheckRun.Conclusion != "success":
			return fmt.Sprintf("the check run's conclusion is %q: pitcrew reads one that passed, for the failures of the one before it", d.CheckRun.Conclusion)
		case d.CheckRun != nil && d.CheckRun.App.Slug == "github-actions":
			return "the check run is GitHub Actions': its reruns are read from the workflow_run event"
		}
	case "check_suite":
		if d.CheckSuite != nil && len(d.CheckSuite.PullRequests) == 0 {
			return "the suite ran on no pull request's commit: pitcrew follows the CI of the pull requests its agent opened"
		}
	case "pull_request":
		if d.Action == "closed" && (d.PullRequest == nil || !d.PullRequest.Merged) {
			return "the pull request was closed without a merge, and no run of pitcrew opened it"
		}
	case "pull_request_review":
		switch {
		case d.Review != nil && d.Review.User.Type == "Bot":
			return "the review is a bot's: only people's reviews count"
		case d.Review != nil && !maintainers[d.Review.AuthorAssociation]:
			return fmt.Sprintf("the reviewer's association with the repository is %q: only an owner's, member's or collaborator's review counts", d.Review.AuthorAssociation)
		}
	case "issue_comment":
		switch {
		case d.Comment == nil:
			return "the delivery holds no comment"
		case d.Comment.User.Type == "Bot" || strings.HasSuffix(d.Comment.User.Login, "[bot]"):
			return fmt.Sprintf("the comment is by a bot (%s): only people give pitcrew commands", d.Comment.User.Login)
		case !strings.Contains(d.Comment.Body, "/pitcrew"):
			return "the comment holds no /pitcrew command"
		case !maintainers[d.Comment.AuthorAssociation]:
			return fmt.Sprintf("the commenter's association with the repository is %q: pitcrew answers commands of owners, members and collaborators only", d.Comment.AuthorAssociation)
		}
	case "push":
		if d.Repository.DefaultBranch != "" && d.Ref != "refs/heads/"+d.Repository.DefaultBranch {
			return fmt.Sprintf("the push is to %s, not to the default branch %s: pitcrew reads migrations pushed to the default branch", d.Ref, d.Repository.DefaultBranch)
		}
	}
	return "the " + event + " handlers read this delivery and found nothing to act on, and said nothing more"
}

func hasLabel(labels []struct{ Name string }, name string) bool {
	for _, l := range labels {
		if l.Name == name {
			return true
		}
	}
	return false
}
