package testenv

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

const subsetPath = "../../testdata/openapi/github-subset.json"

func loadSubset(t *testing.T) []Operation {
	t.Helper()
	ops, err := LoadOpenAPISubset(subsetPath)
	if err != nil {
		t.Fatal(err)
	}
	return ops
}

func TestLoadOpenAPISubset(t *testing.T) {
	ops := loadSubset(t)
	// Every operation testdata/extract.mjs asks for is in the subset.
	script, err := os.ReadFile("../../testdata/extract.mjs")
	if err != nil {
		t.Fatal(err)
	}
	wanted := regexp.MustCompile(`(?m)^(GET|POST|PATCH|PUT|DELETE) (/\S*)$`).FindAllStringSubmatch(string(script), -1)
	if len(wanted) < 27 || len(ops) != len(wanted) {
		t.Errorf("subset has %d operations, extract.mjs asks for %d", len(ops), len(wanted))
	}
	for _, w := range wanted {
		found := false
		for _, op := range ops {
			found = found || (op.Method == w[1] && op.Path == w[2])
		}
		if !found {
			t.Errorf("%s %s missing from the subset", w[1], w[2])
		}
	}
	for _, op := range ops {
		if op.OperationID == "" {
			t.Errorf("%s %s: empty operation_id", op.Method, op.Path)
		}
	}
	if _, err := LoadOpenAPISubset("does-not-exist.json"); err == nil {
		t.Error("LoadOpenAPISubset on missing file: want error")
	}
}

func TestMatchOperation(t *testing.T) {
	ops := loadSubset(t)
	tests := []struct {
		method, path string
		want         string // template path; "" means no match
	}{
		{"GET", "/app", "/app"},
		{"GET", "/repos/hexpm/hexpm/issues/12/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},
		{"POST", "/repos/hexpm/hexpm/issues/12/comments", "/repos/{owner}/{repo}/issues/{issue_number}/comments"},
		{"get", "/repos/hexpm/hexpm/issues/comments/99", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},
		{"PATCH", "/repos/hexpm/hexpm/issues/comments/99", "/repos/{owner}/{repo}/issues/comments/{comment_id}"},
		{"GET", "/repos/hexpm/hexpm/issues/12", "/repos/{owner}/{repo}/issues/{issue_number}"},
		{"POST", "/app/installations/42/access_tokens", "/app/installations/{installation_id}/access_tokens"},
		{"POST", "/api/v3/repos/hexpm/hexpm/check-runs", "/repos/{owner}/{repo}/check-runs"},
		{"GET", "/repos/hexpm/hexpm/commits/abc123/check-runs?per_page=100", "/repos/{owner}/{repo}/commits/{ref}/check-runs"},
		{"GET", "/repos/hexpm/hexpm/actions/runs/7/attempts/2/jobs", "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs"},
		{"GET", "/repos/hexpm/hexpm/contents/README.md", "/repos/{owner}/{repo}/contents/{path}"},
		{"GET", "/repos/hexpm/hexpm/contents/.github/pitcrew.yml", "/repos/{owner}/{repo}/contents/{path}"},
		{"GET", "/api/v3/repos/hexpm/hexpm/contents/a/b/c/d.txt", "/repos/{owner}/{repo}/contents/{path}"},
		{"GET", "/repos/hexpm/hexpm", "/repos/{owner}/{repo}"},

		// Non-matches.
		{"DELETE", "/repos/hexpm/hexpm/issues/12/comments", ""},
		{"GET", "/repos/hexpm/hexpm/issues/12/events", ""},
		{"GET", "/repos/hexpm/hexpm/issues//comments", ""},
		{"GET", "/repos/hexpm/hexpm/contents/", ""},
		{"GET", "/repos/hexpm", ""},
		{"GET", "/api/v3x/app", ""},
		{"GET", "app", ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			op, ok := MatchOperation(ops, tt.method, tt.path)
			if tt.want == "" {
				if ok {
					t.Fatalf("matched %s, want no match", op)
				}
				return
			}
			if !ok {
				t.Fatalf("no match, want %s", tt.want)
			}
			if op.Path != tt.want || !strings.EqualFold(op.Method, tt.method) {
				t.Fatalf("matched %s, want %s %s", op, strings.ToUpper(tt.method), tt.want)
			}
		})
	}
}

func TestMatchOperationPrefersLiterals(t *testing.T) {
	ops := []Operation{
		{Method: "GET", Path: "/repos/{owner}/{repo}/issues/{issue_number}", OperationID: "param"},
		{Method: "GET", Path: "/repos/{owner}/{repo}/issues/events", OperationID: "literal"},
		{Method: "GET", Path: "/repos/{owner}/{repo}/contents/{path}", OperationID: "greedy"},
		{Method: "GET", Path: "/repos/{owner}/{repo}/contents/{path}/raw", OperationID: "greedy-suffix"},
	}
	for path, want := range map[string]string{
		"/repos/o/r/issues/events":  "literal",
		"/repos/o/r/issues/5":       "param",
		"/repos/o/r/contents/a/b":   "greedy",
		"/repos/o/r/contents/a/raw": "greedy-suffix",
		"/repos/o/r/contents/raw":   "greedy",
	} {
		op, ok := MatchOperation(ops, "GET", path)
		if !ok || op.OperationID != want {
			t.Errorf("%s: got %v (ok=%v), want %s", path, op, ok, want)
		}
	}
}

func TestCheckBody(t *testing.T) {
	ops := loadSubset(t)
	find := func(method, path string) *Operation {
		t.Helper()
		op, ok := MatchOperation(ops, method, path)
		if !ok {
			t.Fatalf("no operation for %s %s", method, path)
		}
		return op
	}
	createComment := find("POST", "/repos/o/r/issues/1/comments")
	createIssue := find("POST", "/repos/o/r/issues")
	createCheck := find("POST", "/repos/o/r/check-runs")
	updateCheck := find("PATCH", "/repos/o/r/check-runs/5")
	getRepo := find("GET", "/repos/o/r")

	tests := []struct {
		name    string
		op      *Operation
		body    string
		wantErr string // substring; "" means no error
	}{
		{"comment ok", createComment, `{"body":"hello"}`, ""},
		{"comment missing body", createComment, `{}`, `missing required field(s) "body"`},
		{"comment empty", createComment, ``, `empty request body`},
		{"comment unknown field", createComment, `{"body":"x","bogus":1}`, `unknown field(s) "bogus"`},
		{"comment not object", createComment, `["body"]`, `must be a JSON object`},
		{"comment invalid json", createComment, `{"body":`, `not valid JSON`},
		{"issue ok", createIssue, `{"title":"t","body":"b","labels":["bug"]}`, ""},
		{"issue missing title", createIssue, `{"body":"b"}`, `"title"`},
		{"check run ok", createCheck, `{"name":"pitcrew","head_sha":"abc","status":"in_progress"}`, ""},
		{"check run missing head_sha", createCheck, `{"name":"pitcrew"}`, `"head_sha"`},
		{"check run update ok", updateCheck, `{"status":"completed","conclusion":"success"}`, ""},
		{"check run update unknown", updateCheck, `{"head_sha":"abc"}`, `unknown field(s) "head_sha"`},
		{"no body schema, empty", getRepo, ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBody(tt.op, []byte(tt.body))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want error containing %q, got nil", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q does not contain %q", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.op.OperationID) {
				t.Errorf("error %q does not name operation %s", err, tt.op.OperationID)
			}
		})
	}
}
