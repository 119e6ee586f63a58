package testenv

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pitcrew/pitcrew/internal/github/githubtest"
)

// Request is one call the GitHub fake received.
type Request struct {
	Method, Path string
	Operation    string // the OpenAPI path template it matched
	Body         []byte
}

// reactionContents are the reactions GitHub knows.
var reactionContents = map[string]bool{"+1": true, "-1": true, "laugh": true, "confused": true, "heart": true, "hooray": true, "rocket": true, "eyes": true}

// Reacted reports whether comment id of repo has the reaction.
func (g *GitHub) Reacted(repo string, id int64, content string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reactions[fmt.Sprintf("%s:%d:%s", repo, id, content)]
}

// Comment is an issue comment held by the fake.
type Comment struct {
	ID    int64
	Repo  string
	Issue int
	Body  string
	Edits int
}

// GitHub is an httptest fake of the REST API parts pitcrew calls. Every
// request is checked against GitHub's OpenAPI description: an operation
// that does not exist there, or a body missing a required field or
// carrying an unknown one, fails the test.
type GitHub struct {
	*httptest.Server
	t   T
	ops []Operation

	mu           sync.Mutex
	requests     []Request
	comments     map[int64]*Comment
	nextID       int64
	files        map[string]string           // "owner/repo:path" → content
	repos        map[string]bool             // repositories that exist beyond those with files
	permissions  map[string]string           // login → permission
	labels       map[string]bool             // "owner/repo:name"
	reactions    map[string]bool             // "owner/repo:comment id:content"
	reviewNotes  map[int64][]map[string]any  // inline comments by review id
	jobs         map[string][]map[string]any // "runID/attempt" → jobs
	suites       map[int64]int64             // check suite id → workflow run id
	annotations  map[int64][]map[string]any  // job (check run) id → annotations
	jobLogs      map[int64]string
	checkRuns    []map[string]any
	issues       map[int]map[string]any
	pullFiles    map[int][]map[string]any    // pull number → files
	pulls        map[int]map[string]any      // pull number → the pull request
	diffs        map[int]string              // pull number → its unified diff
	headSuites   map[string][]map[string]any // commit → check suites
	pullsOf      map[string][]map[string]any // commit → pull requests
	commitNotes  map[int64]*Comment          // commit comments (Repo holds the SHA)
	notInstalled map[string]bool
	branches     map[string][]string // "owner/repo:branch" → its commits, oldest first
	dispatches   []map[string]any    // workflow dispatches: the body, and "workflow"
	committers   map[string]string   // "owner/repo:path" → its last committer
	reviewAsks   []map[string]any    // review requests: the body, and "number"
	reruns       []int64             // workflow runs whose failed jobs were re-run
	workflowRuns []map[string]any    // what listing a workflow's runs answers
	// ManifestCode is the code GitHub's manifest flow hands the user back
	// with; AppKeyPEM is the private key its conversion returns.
	ManifestCode string
	AppKeyPEM    []byte
	manifestUsed bool
	deliveries   []*Delivery
	hookURL      string
	hookSecret   string
	failures     []failure            // answers to give instead of the next calls
	opFailures   map[string][]failure // by operation (FailOn)
}

// NewGitHub starts the fake; it stops with the test.
func NewGitHub(t T) *GitHub {
	_, file, _, _ := runtime.Caller(0)
	ops, err := LoadOpenAPISubset(filepath.Join(filepath.Dir(file), "../../testdata/openapi/github-subset.json"))
	if err != nil {
		t.Fatal(err)
	}
	g := &GitHub{t: t, ops: ops, comments: map[int64]*Comment{}, nextID: 1000, files: map[string]string{},
		repos: map[string]bool{}, permissions: map[string]string{}, labels: map[string]bool{}, reactions: map[string]bool{}, reviewNotes: map[int64][]map[string]any{}, jobs: map[string][]map[string]any{}, suites: map[int64]int64{}, annotations: map[int64][]map[string]any{}, jobLogs: map[int64]string{}, issues: map[int]map[string]any{}, pullFiles: map[int][]map[string]any{}, pulls: map[int]map[string]any{}, diffs: map[int]string{}, opFailures: map[string][]failure{}, headSuites: map[string][]map[string]any{}, pullsOf: map[string][]map[string]any{}, commitNotes: map[int64]*Comment{}, notInstalled: map[string]bool{}, branches: map[string][]string{}}
	g.Server = httptest.NewServer(http.HandlerFunc(g.serve))
	t.Cleanup(g.Close)
	return g
}

// SetBranch makes a branch of repo hold commits (oldest first, the last
// is its head), for comparisons.
func (g *GitHub) SetBranch(repo, branch string, commits ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.branches[repo+":"+branch] = commits
}

// SetFile makes a file exist on a repository's default branch.
func (g *GitHub) SetFile(repo, path, content string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.files[repo+":"+path] = content
	g.repos[repo] = true
}

// AddReviewComment gives review id of pull request number an inline
// comment on path:line.
func (g *GitHub) AddReviewComment(number int, id int64, path string, line int, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reviewNotes[id] = append(g.reviewNotes[id], map[string]any{"id": id*100 + int64(len(g.reviewNotes[id])+1), "pull_request_review_id": id, "path": path, "line": line, "body": body,
		"url": fmt.Sprintf("https://api.github.com/repos/hexpm/hexpm/pulls/comments/%d", id), "user": map[string]any{"login": "alice", "type": "User"}})
}

// SetPermission sets a user's permission (admin, write, read, none).
func (g *GitHub) SetPermission(login, perm string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.permissions[login] = perm
}

// SetJob adds a job to an attempt of a workflow run, with its conclusion
// and the log its download returns.
func (g *GitHub) SetJob(runID int64, attempt int, jobID int64, name, conclusion, log string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := fmt.Sprintf("%d/%d", runID, attempt)
	g.jobs[k] = append(g.jobs[k], map[string]any{"id": jobID, "run_id": runID, "run_attempt": attempt, "name": name, "status": "completed", "conclusion": conclusion})
	g.jobLogs[jobID] = log
}

// Dispatches are the workflow dispatches asked of the fake: each one's
// body (ref, inputs) and its "workflow".
func (g *GitHub) Dispatches() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]map[string]any(nil), g.dispatches...)
}

// SetCommitter makes login the last committer of repo's path.
func (g *GitHub) SetCommitter(repo, path, login string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.committers == nil {
		g.committers = map[string]string{}
	}
	g.committers[repo+":"+path] = login
}

// Reruns are the workflow runs whose failed jobs were re-run.
func (g *GitHub) Reruns() []int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]int64(nil), g.reruns...)
}

// ReviewRequests are the reviews asked of the fake: each body (reviewers,
// team_reviewers) and its pull request's "number".
func (g *GitHub) ReviewRequests() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]map[string]any(nil), g.reviewAsks...)
}

// AddWorkflowRun adds a run to what listing a workflow's runs answers.
func (g *GitHub) AddWorkflowRun(id int64, title, status, conclusion string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.workflowRuns = append(g.workflowRuns, map[string]any{"id": id, "run_attempt": 1, "display_title": title, "status": status, "conclusion": conclusion,
		"html_url": fmt.Sprintf("https://github.com/hexpm/hexpm/actions/runs/%d", id), "path": ".github/workflows/pitcrew-verify.yml",
		"head_branch": "main", "event": "workflow_dispatch"})
}

// SetCheckSuite makes suiteID the check suite of workflow run runID: its
// check runs are the jobs of the run's latest attempt.
func (g *GitHub) SetCheckSuite(suiteID, runID int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.suites[suiteID] = runID
}

// Annotate adds an annotation to a job's check run, as a problem matcher
// does: level is notice, warning or failure.
func (g *GitHub) Annotate(jobID int64, path string, line int, level, message string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.annotations[jobID] = append(g.annotations[jobID], map[string]any{"path": path, "start_line": line, "end_line": line,
		"start_column": nil, "end_column": nil, "annotation_level": level, "title": nil, "message": message, "raw_details": nil, "blob_href": ""})
}

// SetPullFiles sets the files a pull request changed: "status path" or
// "renamed old -> new" each.
func (g *GitHub) SetPullFiles(number int, files ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []map[string]any
	for _, f := range files {
		status, rest, _ := strings.Cut(f, " ")
		file := map[string]any{"sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": rest, "status": status, "additions": 10, "deletions": 0, "changes": 10}
		if old, new, ok := strings.Cut(rest, " -> "); ok {
			file["filename"], file["previous_filename"] = new, old
		}
		out = append(out, file)
	}
	g.pullFiles[number] = out
}

// BaseSHA is the base commit of the pull requests SetPull makes.
const BaseSHA = "9a1f0c3e5b7d2468ace13579bdf02468ace13579"

// SetPull makes pull request number of hexpm/hexpm exist with its head
// commit, state and diff; merged sets merged_at.
func (g *GitHub) SetPull(number int, head, state string, merged bool, diff string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var mergedAt any
	if merged {
		mergedAt = "2026-12-02T10:00:00Z"
	}
	repo := map[string]any{"full_name": "hexpm/hexpm", "name": "hexpm", "owner": map[string]any{"login": "hexpm"}}
	files, additions, deletions := githubtest.DiffSize(diff)
	g.pulls[number] = map[string]any{"number": number, "state": state, "merged": merged, "merged_at": mergedAt,
		"html_url": fmt.Sprintf("https://github.com/hexpm/hexpm/pull/%d", number), "user": map[string]any{"login": "pitcrew-agent[bot]", "type": "Bot"},
		"changed_files": files, "additions": additions, "deletions": deletions,
		"head": map[string]any{"sha": head, "ref": "pitcrew/fix", "repo": repo}, "base": map[string]any{"sha": BaseSHA, "ref": "main", "repo": repo}}
	g.diffs[number] = diff
}

// SetPullHeadRepo moves pull request number's head to repository
// fullName (a fork), or to none ("": its repository was deleted).
func (g *GitHub) SetPullHeadRepo(number int, fullName string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	head := g.pulls[number]["head"].(map[string]any)
	head["repo"] = nil
	if owner, name, ok := strings.Cut(fullName, "/"); ok {
		head["repo"] = map[string]any{"full_name": fullName, "name": name, "owner": map[string]any{"login": owner}, "fork": true}
	}
}

// SetHeadSuite adds a check suite of app on commit sha (conclusion ""
// while it runs) that ran one check run.
func (g *GitHub) SetHeadSuite(sha, app, conclusion string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	status, c := "completed", any(conclusion)
	if conclusion == "" {
		status, c = "in_progress", nil
	}
	g.headSuites[sha] = append(g.headSuites[sha], map[string]any{"id": 700 + len(g.headSuites[sha]), "head_sha": sha, "status": status, "conclusion": c,
		"app": map[string]any{"slug": app}, "latest_check_runs_count": 1})
}

// Delivery is one attempt in the fake's webhook delivery log.
type Delivery struct {
	ID          int64
	GUID, Event string
	StatusCode  int // 0: no answer (connection refused, timeout)
	DeliveredAt time.Time
	Redelivery  bool
	payload     []byte
}

type failure struct {
	status  int
	headers map[string]string
}

// FailNext makes the next API calls answer status with headers (e.g. 502,
// or 403 with retry-after: a secondary rate limit), one call each.
func (g *GitHub) FailNext(status int, headers map[string]string, times int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < times; i++ {
		g.failures = append(g.failures, failure{status, headers})
	}
}

// FailOn makes the next calls of one operation answer status with
// headers, one call each, whatever comes between: op is the method and
// path as GitHub's OpenAPI description names them ("POST
// /repos/{owner}/{repo}/check-runs"), with " (diff)" for a pull request
// read as a diff.
func (g *GitHub) FailOn(op string, status int, headers map[string]string, times int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for i := 0; i < times; i++ {
		g.opFailures[op] = append(g.opFailures[op], failure{status, headers})
	}
}

// SetPullDiff changes only the diff GitHub serves for pull request
// number, not the change it counts (a diff cut, emptied or replaced on
// the way).
func (g *GitHub) SetPullDiff(number int, diff string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.diffs[number] = diff
}

// SetHook is where, and with which secret, the fake delivers webhooks
// (Deliver and redelivery attempts).
func (g *GitHub) SetHook(url, secret string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hookURL, g.hookSecret = url, secret
}

// Deliver sends a webhook as GitHub does (signed, with its guid) and
// records the attempt in the delivery log; it returns the status code, 0
// when nothing answered.
func (g *GitHub) Deliver(event, guid string, payload []byte) int {
	return g.deliver(event, guid, payload, false)
}

func (g *GitHub) deliver(event, guid string, payload []byte, redelivery bool) int {
	g.mu.Lock()
	url, secret := g.hookURL, g.hookSecret
	g.mu.Unlock()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", guid)
	req.Header.Set("X-Hub-Signature-256", "sha256="+HMACHex(secret, payload))
	code := 0
	client := http.Client{Timeout: 10 * time.Second} // GitHub gives up after 10 s
	if resp, err := client.Do(req); err == nil {
		code = resp.StatusCode
		resp.Body.Close()
	}
	g.mu.Lock()
	g.deliveries = append(g.deliveries, &Delivery{ID: int64(len(g.deliveries) + 1), GUID: guid, Event: event, StatusCode: code,
		DeliveredAt: time.Now(), Redelivery: redelivery, payload: payload})
	g.mu.Unlock()
	return code
}

// Deliveries returns the delivery log, oldest first.
func (g *GitHub) Deliveries() []Delivery {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Delivery, len(g.deliveries))
	for i, d := range g.deliveries {
		out[i] = *d
	}
	return out
}

// SetNotInstalled makes the app not installed on repo.
func (g *GitHub) SetNotInstalled(repo string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.notInstalled[repo] = true
}

// SetMergedPullFor records that commit sha belongs to merged pull request n.
func (g *GitHub) SetMergedPullFor(sha string, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.pullsOf[sha] = append(g.pullsOf[sha], map[string]any{"number": n, "state": "closed", "merged_at": "2026-12-01T10:00:00Z"})
}

// CommitComments returns the comments on a commit, oldest first.
func (g *GitHub) CommitComments(sha string) []Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Comment
	for id := int64(1000); id < g.nextID; id++ {
		if c, ok := g.commitNotes[id]; ok && c.Repo == sha {
			out = append(out, *c)
		}
	}
	return out
}

// AddCheckRun adds a check run made by another app (a CI) to a commit.
func (g *GitHub) AddCheckRun(sha, name, conclusion, summary, text string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.checkRuns = append(g.checkRuns, map[string]any{"id": int64(500 + len(g.checkRuns)), "head_sha": sha, "name": name, "status": "completed",
		"conclusion": conclusion, "app": map[string]any{"slug": "circleci-checks"}, "output": map[string]any{"title": name, "summary": summary, "text": text}})
}

// EditIssue changes an issue's body as a person editing it would.
func (g *GitHub) EditIssue(number int, body string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if is, ok := g.issues[number]; ok {
		// a copy: a response may be encoding the old map
		is = maps.Clone(is)
		is["body"] = body
		g.issues[number] = is
	}
}

// Issues returns the issues pitcrew opened, by number (deep copies).
func (g *GitHub) Issues() map[int]map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[int]map[string]any{}
	b, _ := json.Marshal(g.issues)
	_ = json.Unmarshal(b, &out)
	return out
}

// CheckRuns returns the check runs pitcrew created, as GitHub holds them.
func (g *GitHub) CheckRuns() []map[string]any {
	g.mu.Lock()
	defer g.mu.Unlock()
	var mine []map[string]any
	for _, c := range g.checkRuns {
		if c["app"].(map[string]any)["slug"] == "pitcrew" {
			mine = append(mine, c)
		}
	}
	// A deep copy: the server goes on changing its own.
	var out []map[string]any
	b, _ := json.Marshal(mine)
	_ = json.Unmarshal(b, &out)
	return out
}

// Requests returns the calls received so far.
func (g *GitHub) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Request(nil), g.requests...)
}

// Count counts received calls of one operation, e.g.
// "POST /repos/{owner}/{repo}/issues/{issue_number}/comments".
func (g *GitHub) Count(op string) int {
	n := 0
	for _, r := range g.Requests() {
		if r.Method+" "+r.Operation == op {
			n++
		}
	}
	return n
}

// Comments returns the comments on an issue, oldest first.
func (g *GitHub) Comments(repo string, issue int) []Comment {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []Comment
	for id := int64(1000); id < g.nextID; id++ {
		if c, ok := g.comments[id]; ok && c.Repo == repo && c.Issue == issue {
			out = append(out, *c)
		}
	}
	return out
}

// DeleteComment removes a comment, as a user may.
func (g *GitHub) DeleteComment(id int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.comments, id)
}

// Labels reports whether a label exists.
func (g *GitHub) HasLabel(repo, name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.labels[repo+":"+name]
}

func (g *GitHub) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if strings.HasPrefix(r.URL.Path, "/_blob/job-logs/") {
		g.serveBlob(w, r)
		return
	}
	if repo, ok := strings.CutPrefix(r.URL.Path, "/_blob/tarball/"); ok {
		g.serveTarball(w, repo)
		return
	}
	if strings.HasSuffix(r.URL.Path, "/settings/apps/new") {
		g.serveManifestForm(w, r, body)
		return
	}
	// Matched on the escaped path: a parameter may hold an escaped "/"
	// (a branch name in a comparison).
	op, ok := MatchOperation(g.ops, r.Method, r.URL.EscapedPath())
	if !ok {
		g.t.Errorf("GitHub fake: %s %s is not an operation of GitHub's REST API (or not in testdata/openapi)", r.Method, r.URL.Path)
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	if err := CheckBody(op, body); err != nil {
		g.t.Errorf("GitHub fake: %v", err)
		http.Error(w, `{"message":"Invalid request"}`, http.StatusUnprocessableEntity)
		return
	}
	auth := r.Header.Get("Authorization")
	asApp := (strings.HasPrefix(op.Path, "/app/") || op.Path == "/app" || op.Path == "/repos/{owner}/{repo}/installation")
	if strings.HasPrefix(op.Path, "/app-manifests/") {
		// The manifest conversion is unauthenticated: the code is the secret.
	} else if asApp && !strings.HasPrefix(auth, "Bearer ") {
		g.t.Errorf("GitHub fake: %s without an app JWT", op)
	} else if !asApp && auth != "token ghs_fake_installation_token" {
		g.t.Errorf("GitHub fake: %s without the installation token (got %q)", op, auth)
	}
	p := pathParams(op.Path, r.URL.EscapedPath())
	g.mu.Lock()
	g.requests = append(g.requests, Request{Method: r.Method, Path: r.URL.Path, Operation: op.Path, Body: body})
	key := r.Method + " " + op.Path
	if strings.Contains(r.Header.Get("Accept"), "diff") {
		key += " (diff)"
	}
	if fs := g.opFailures[key]; len(fs) > 0 {
		g.failures = append([]failure{fs[0]}, g.failures...)
		g.opFailures[key] = fs[1:]
	}
	if len(g.failures) > 0 && !strings.HasSuffix(op.Path, "/access_tokens") {
		f := g.failures[0]
		g.failures = g.failures[1:]
		g.mu.Unlock()
		for k, v := range f.headers {
			w.Header().Set(k, v)
		}
		http.Error(w, `{"message":"fault injected by the test"}`, f.status)
		return
	}
	status, resp := g.handle(r.Method+" "+op.Path, p, body, r)
	g.mu.Unlock()
	if to, ok := resp.(redirect); ok {
		http.Redirect(w, r, string(to), status)
		return
	}
	if text, ok := resp.(rawText); ok {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, string(text))
		return
	}
	if pg, ok := resp.(paged); ok {
		if pg.next != "" {
			w.Header().Set("Link", `<`+pg.next+`>; rel="next"`)
		}
		resp = pg.items
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

type redirect string

// rawText is an answer sent as it is, not as JSON (a diff).
type rawText string

// serveManifestForm plays github.com's side of the app-manifest flow: it
// takes the posted manifest, "creates" the app, and sends the browser back
// to the manifest's redirect_url with a code and the state.
func (g *GitHub) serveManifestForm(w http.ResponseWriter, r *http.Request, body []byte) {
	form, _ := url.ParseQuery(string(body))
	var m struct {
		RedirectURL string `json:"redirect_url"`
		Name        string `json:"name"`
	}
	if r.Method != http.MethodPost || json.Unmarshal([]byte(form.Get("manifest")), &m) != nil || m.RedirectURL == "" || m.Name == "" {
		http.Error(w, "a manifest with a name and redirect_url is required", http.StatusUnprocessableEntity)
		return
	}
	to := m.RedirectURL + "?code=" + url.QueryEscape(g.ManifestCode) + "&state=" + url.QueryEscape(r.URL.Query().Get("state"))
	http.Redirect(w, r, to, http.StatusFound)
}

// paged is one page of a list, with the URL of the next page if any.
type paged struct {
	items []map[string]any
	next  string
}

// page serves items the way GitHub paginates: per_page (default 30, at
// most 100) and page, with a Link header to the next page.
func (g *GitHub) page(r *http.Request, items []map[string]any) paged {
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	per = min(per, 100)
	n, _ := strconv.Atoi(r.URL.Query().Get("page"))
	n = max(n, 1)
	start, end := min((n-1)*per, len(items)), min(n*per, len(items))
	pg := paged{items: append([]map[string]any{}, items[start:end]...)}
	if end < len(items) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(n+1))
		q.Set("per_page", strconv.Itoa(per))
		pg.next = g.URL + r.URL.Path + "?" + q.Encode()
	}
	return pg
}

// serveBlob serves a job log download. It is outside the API: a client
// that sends its GitHub token there leaks it to the storage host.
// serveTarball serves a repository's files (SetFile) as GitHub's tarball:
// gzipped, every path under a folder named for the commit.
func (g *GitHub) serveTarball(w http.ResponseWriter, repo string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	zw := gzip.NewWriter(w)
	tw := tar.NewWriter(zw)
	for key, content := range g.files {
		name, ok := strings.CutPrefix(key, repo+":")
		if !ok {
			continue
		}
		_ = tw.WriteHeader(&tar.Header{Name: "hexpm-hexpm-abc1234/" + name, Mode: 0o644, Size: int64(len(content)), Typeflag: tar.TypeReg})
		_, _ = io.WriteString(tw, content)
	}
	_ = tw.Close()
	_ = zw.Close()
}

func (g *GitHub) serveBlob(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "" {
		g.t.Errorf("GitHub fake: the log download carried an Authorization header")
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/_blob/job-logs/"), 10, 64)
	g.mu.Lock()
	log, ok := g.jobLogs[id]
	g.mu.Unlock()
	if !ok || r.URL.Query().Get("sig") == "" {
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	io.WriteString(w, log)
}

func notFound() (int, any) { return http.StatusNotFound, map[string]string{"message": "Not Found"} }

// handle answers one call; g.mu is held.
func (g *GitHub) handle(op string, p map[string]string, body []byte, r *http.Request) (int, any) {
	repo := p["owner"] + "/" + p["repo"]
	switch op {
	case "GET /app":
		return 200, map[string]any{"id": 1, "slug": "pitcrew", "name": "pitcrew", "owner": map[string]any{"login": "pitcrew-dev"}}
	case "POST /app/installations/{installation_id}/access_tokens":
		return 201, map[string]any{"token": "ghs_fake_installation_token", "expires_at": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	case "GET /repos/{owner}/{repo}":
		if !g.repos[repo] {
			return notFound()
		}
		return 200, map[string]any{"name": p["repo"], "full_name": repo, "default_branch": "main"}
	case "GET /repos/{owner}/{repo}/contents/{path}":
		content, ok := g.files[repo+":"+p["path"]]
		if !ok {
			return notFound()
		}
		return 200, map[string]any{"type": "file", "encoding": "base64", "name": filepath.Base(p["path"]), "path": p["path"],
			"content": base64.StdEncoding.EncodeToString([]byte(content)), "size": len(content)}
	case "GET /repos/{owner}/{repo}/collaborators/{username}/permission":
		perm, ok := g.permissions[p["username"]]
		if !ok {
			perm = "read"
		}
		return 200, map[string]any{"permission": perm, "role_name": perm, "user": map[string]any{"login": p["username"]}}
	case "POST /repos/{owner}/{repo}/issues/{issue_number}/comments":
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		n, _ := strconv.Atoi(p["issue_number"])
		c := &Comment{ID: g.nextID, Repo: repo, Issue: n, Body: in.Body}
		g.comments[c.ID] = c
		g.nextID++
		return 201, g.commentJSON(c)
	case "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}":
		id, _ := strconv.ParseInt(p["comment_id"], 10, 64)
		c, ok := g.comments[id]
		if !ok || c.Repo != repo {
			return notFound()
		}
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c.Body = in.Body
		c.Edits++
		return 200, g.commentJSON(c)
	case "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions", "POST /repos/{owner}/{repo}/pulls/comments/{comment_id}/reactions":
		var in struct{ Content string }
		_ = json.Unmarshal(body, &in)
		if !reactionContents[in.Content] {
			return 422, map[string]any{"message": "Validation Failed", "errors": []any{map[string]string{"resource": "Reaction", "code": "invalid", "field": "content"}}}
		}
		id, _ := strconv.ParseInt(p["comment_id"], 10, 64)
		key := fmt.Sprintf("%s:%d:%s", repo, id, in.Content)
		if g.reactions[key] {
			return 200, map[string]any{"id": id, "content": in.Content} // GitHub answers 200 for a reaction already there
		}
		g.reactions[key] = true
		return 201, map[string]any{"id": id, "content": in.Content}
	case "GET /repos/{owner}/{repo}/issues/{issue_number}/comments":
		n, _ := strconv.Atoi(p["issue_number"])
		out := []any{}
		for id := int64(1000); id < g.nextID; id++ {
			if c, ok := g.comments[id]; ok && c.Repo == repo && c.Issue == n {
				out = append(out, g.commentJSON(c))
			}
		}
		return 200, out
	case "POST /repos/{owner}/{repo}/labels":
		var in struct{ Name, Color, Description string }
		_ = json.Unmarshal(body, &in)
		if g.labels[repo+":"+in.Name] {
			return 422, map[string]any{"message": "Validation Failed", "errors": []any{map[string]string{"resource": "Label", "code": "already_exists", "field": "name"}}}
		}
		g.labels[repo+":"+in.Name] = true
		return 201, map[string]any{"name": in.Name, "color": in.Color, "description": in.Description}
	case "GET /app/installations":
		return 200, []map[string]any{{"id": 42, "account": map[string]any{"login": "hexpm", "type": "Organization"}, "app_id": 1}}
	case "POST /app-manifests/{code}/conversions":
		if p["code"] != g.ManifestCode || g.manifestUsed {
			return notFound()
		}
		g.manifestUsed = true
		return 201, map[string]any{"id": 1, "slug": "pitcrew-test", "name": "pitcrew-test", "html_url": g.URL + "/apps/pitcrew-test",
			"pem": string(g.AppKeyPEM), "webhook_secret": "secret-from-github", "client_id": "Iv1.test", "client_secret": "client-secret-from-github",
			"owner": map[string]any{"login": "hexpm"}}
	case "GET /app/hook/deliveries":
		// Newest first, paginated by an opaque cursor.
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		if per <= 0 || per > 100 {
			per = 30
		}
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		var items []map[string]any
		for i := len(g.deliveries) - 1 - start; i >= 0 && len(items) < per; i-- {
			d := g.deliveries[i]
			status := "OK"
			if d.StatusCode < 200 || d.StatusCode > 299 {
				status = "failed"
			}
			items = append(items, map[string]any{"id": d.ID, "guid": d.GUID, "delivered_at": d.DeliveredAt.UTC().Format(time.RFC3339),
				"redelivery": d.Redelivery, "duration": 0.1, "status": status, "status_code": d.StatusCode, "event": d.Event, "action": nil,
				"installation_id": 42, "repository_id": 1})
		}
		pg := paged{items: items}
		if start+per < len(g.deliveries) {
			pg.next = fmt.Sprintf("%s/app/hook/deliveries?per_page=%d&cursor=%d", g.URL, per, start+per)
		}
		if pg.items == nil {
			pg.items = []map[string]any{}
		}
		return 200, pg
	case "POST /app/hook/deliveries/{delivery_id}/attempts":
		id, _ := strconv.ParseInt(p["delivery_id"], 10, 64)
		if id < 1 || int(id) > len(g.deliveries) {
			return notFound()
		}
		d := g.deliveries[id-1]
		go g.deliver(d.Event, d.GUID, d.payload, true)
		return 202, map[string]any{}
	case "GET /repos/{owner}/{repo}/installation":
		if g.notInstalled[repo] {
			return notFound()
		}
		return 200, map[string]any{"id": 42, "app_id": 1, "account": map[string]any{"login": p["owner"]}}
	case "GET /repos/{owner}/{repo}/issues":
		label := r.URL.Query().Get("labels")
		out := []map[string]any{}
		for n := 500; n < 500+len(g.issues); n++ {
			is := g.issues[n]
			for _, l := range is["labels"].([]any) {
				if l.(map[string]any)["name"] == label && is["repo"] == repo {
					out = append(out, is)
				}
			}
		}
		return 200, g.page(r, out)
	case "POST /repos/{owner}/{repo}/issues":
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		in["number"] = 500 + len(g.issues)
		in["repo"] = repo
		in["user"] = map[string]any{"login": "pitcrew[bot]", "type": "Bot"}
		var labels []any
		for _, l := range in["labels"].([]any) {
			labels = append(labels, map[string]any{"name": l})
		}
		in["labels"] = labels
		g.issues[in["number"].(int)] = in
		return 201, in
	case "PATCH /repos/{owner}/{repo}/issues/{issue_number}":
		n, _ := strconv.Atoi(p["issue_number"])
		is, ok := g.issues[n]
		if !ok {
			return notFound()
		}
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		is = maps.Clone(is) // a response may be encoding the old map
		for k, v := range in {
			is[k] = v
		}
		g.issues[n] = is
		return 200, is
	case "GET /repos/{owner}/{repo}/commits/{ref}/check-suites":
		var suites []map[string]any
		for _, s := range g.headSuites[p["ref"]] {
			suites = append(suites, s)
		}
		return 200, map[string]any{"total_count": len(suites), "check_suites": suites}
	case "GET /repos/{owner}/{repo}/pulls/{pull_number}":
		n, _ := strconv.Atoi(p["pull_number"])
		pr, ok := g.pulls[n]
		if !ok {
			return notFound()
		}
		if strings.Contains(r.Header.Get("Accept"), "diff") {
			return 200, rawText(g.diffs[n])
		}
		return 200, pr
	case "GET /repos/{owner}/{repo}/pulls/{pull_number}/files":
		n, _ := strconv.Atoi(p["pull_number"])
		return 200, g.page(r, g.pullFiles[n])
	case "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews/{review_id}/comments":
		id, _ := strconv.ParseInt(p["review_id"], 10, 64)
		out := g.reviewNotes[id]
		if out == nil {
			out = []map[string]any{}
		}
		return 200, out
	case "GET /repos/{owner}/{repo}/commits/{commit_sha}/pulls":
		out := g.pullsOf[p["commit_sha"]]
		if out == nil {
			out = []map[string]any{}
		}
		return 200, out
	case "POST /repos/{owner}/{repo}/commits/{commit_sha}/comments":
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c := &Comment{ID: g.nextID, Repo: p["commit_sha"], Body: in.Body}
		g.commitNotes[c.ID] = c
		g.nextID++
		return 201, map[string]any{"id": c.ID, "body": c.Body, "commit_id": c.Repo, "user": map[string]any{"login": "pitcrew[bot]", "type": "Bot"}}
	case "PATCH /repos/{owner}/{repo}/comments/{comment_id}":
		id, _ := strconv.ParseInt(p["comment_id"], 10, 64)
		c, ok := g.commitNotes[id]
		if !ok {
			return notFound()
		}
		var in struct{ Body string }
		_ = json.Unmarshal(body, &in)
		c.Body = in.Body
		c.Edits++
		return 200, map[string]any{"id": c.ID, "body": c.Body, "commit_id": c.Repo}
	case "GET /repos/{owner}/{repo}/commits/{commit_sha}/comments":
		out := []any{}
		for id := int64(1000); id < g.nextID; id++ {
			if c, ok := g.commitNotes[id]; ok && c.Repo == p["commit_sha"] {
				out = append(out, map[string]any{"id": c.ID, "body": c.Body, "user": map[string]any{"login": "pitcrew[bot]", "type": "Bot"}})
			}
		}
		return 200, out
	case "GET /repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt_number}/jobs":
		jobs := g.jobs[p["run_id"]+"/"+p["attempt_number"]]
		if jobs == nil {
			jobs = []map[string]any{}
		}
		return 200, map[string]any{"total_count": len(jobs), "jobs": jobs}
	case "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches":
		// A workflow is there when its file is on the default branch.
		if _, ok := g.files[repo+":.github/workflows/"+p["workflow_id"]]; !ok {
			return notFound()
		}
		var d map[string]any
		_ = json.Unmarshal(body, &d)
		d["workflow"] = p["workflow_id"]
		g.dispatches = append(g.dispatches, d)
		return http.StatusNoContent, nil
	case "POST /repos/{owner}/{repo}/actions/runs/{run_id}/rerun-failed-jobs":
		id, _ := strconv.ParseInt(p["run_id"], 10, 64)
		g.reruns = append(g.reruns, id)
		return 201, map[string]any{}
	case "POST /repos/{owner}/{repo}/pulls/{pull_number}/requested_reviewers":
		var d map[string]any
		_ = json.Unmarshal(body, &d)
		n, _ := strconv.Atoi(p["pull_number"])
		d["number"] = n
		g.reviewAsks = append(g.reviewAsks, d)
		return 201, map[string]any{"number": n}
	case "GET /repos/{owner}/{repo}/commits":
		login, ok := g.committers[repo+":"+r.URL.Query().Get("path")]
		if !ok {
			return 200, []map[string]any{}
		}
		return 200, []map[string]any{{"sha": strings.Repeat("f", 40), "author": map[string]any{"login": login}, "commit": map[string]any{"author": map[string]any{"name": login}}}}
	case "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs":
		return 200, map[string]any{"total_count": len(g.workflowRuns), "workflow_runs": append([]map[string]any{}, g.workflowRuns...)}
	case "GET /repos/{owner}/{repo}/tarball/{ref}":
		// A redirect to codeload's pre-signed URL, as GitHub answers.
		return http.StatusFound, redirect(fmt.Sprintf("%s/_blob/tarball/%s/%s?sig=short-lived", g.URL, p["owner"], p["repo"]))
	case "GET /repos/{owner}/{repo}/actions/jobs/{job_id}/logs":
		id, _ := strconv.ParseInt(p["job_id"], 10, 64)
		if _, ok := g.jobLogs[id]; !ok {
			return notFound()
		}
		// GitHub answers with a redirect to a short-lived, pre-signed URL.
		return http.StatusFound, redirect(fmt.Sprintf("%s/_blob/job-logs/%d?sig=short-lived", g.URL, id))
	case "POST /repos/{owner}/{repo}/check-runs":
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		in["id"] = int64(900 + len(g.checkRuns))
		in["app"] = map[string]any{"slug": "pitcrew"}
		in["updates"] = 0
		g.checkRuns = append(g.checkRuns, in)
		return 201, in
	case "PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}":
		id, _ := strconv.ParseInt(p["check_run_id"], 10, 64)
		for _, c := range g.checkRuns {
			if c["id"] == id {
				var in map[string]any
				_ = json.Unmarshal(body, &in)
				for k, v := range in {
					c[k] = v
				}
				c["updates"] = c["updates"].(int) + 1
				return 200, c
			}
		}
		return notFound()
	case "GET /repos/{owner}/{repo}/compare/{basehead}":
		base, head, ok := strings.Cut(p["basehead"], "...")
		commits, known := g.branches[repo+":"+base]
		if !ok || !known {
			return notFound()
		}
		status := "diverged"
		for i, sha := range commits {
			if sha == head {
				status = map[bool]string{true: "identical", false: "behind"}[i == len(commits)-1]
			}
		}
		return 200, map[string]any{"status": status, "ahead_by": 0, "behind_by": 0, "total_commits": 0, "commits": []any{}, "files": []any{}}
	case "GET /repos/{owner}/{repo}/check-suites/{check_suite_id}/check-runs":
		suite, _ := strconv.ParseInt(p["check_suite_id"], 10, 64)
		out := []map[string]any{}
		if runID, ok := g.suites[suite]; ok {
			latest := 0
			for k := range g.jobs {
				if run, attempt, _ := strings.Cut(k, "/"); run == strconv.FormatInt(runID, 10) {
					n, _ := strconv.Atoi(attempt)
					latest = max(latest, n)
				}
			}
			for _, j := range g.jobs[fmt.Sprintf("%d/%d", runID, latest)] {
				id := j["id"].(int64)
				out = append(out, map[string]any{"id": id, "name": j["name"], "status": "completed", "conclusion": j["conclusion"],
					"app": map[string]any{"slug": "github-actions"}, "check_suite": map[string]any{"id": suite},
					"output": map[string]any{"title": nil, "summary": nil, "annotations_count": len(g.annotations[id]),
						"annotations_url": fmt.Sprintf("%s/repos/%s/check-runs/%d/annotations", g.URL, repo, id)}})
			}
		}
		return 200, map[string]any{"total_count": len(out), "check_runs": out}
	case "GET /repos/{owner}/{repo}/check-runs/{check_run_id}/annotations":
		id, _ := strconv.ParseInt(p["check_run_id"], 10, 64)
		out := g.annotations[id]
		if out == nil {
			out = []map[string]any{}
		}
		return 200, out
	case "GET /repos/{owner}/{repo}/commits/{ref}/check-runs":
		q := r.URL.Query()
		out := []map[string]any{}
		for _, c := range g.checkRuns {
			if (c["head_sha"] == p["ref"]) && (q.Get("check_name") == "" || c["name"] == q.Get("check_name")) {
				out = append(out, c)
			}
		}
		return 200, map[string]any{"total_count": len(out), "check_runs": out}
	}
	g.t.Errorf("GitHub fake: %s is valid but not implemented by the fake", op)
	return 501, map[string]string{"message": "not implemented by the fake"}
}

func (g *GitHub) commentJSON(c *Comment) map[string]any {
	return map[string]any{"id": c.ID, "body": c.Body, "html_url": fmt.Sprintf("https://github.com/%s/issues/%d#issuecomment-%d", c.Repo, c.Issue, c.ID),
		"user": map[string]any{"login": "pitcrew[bot]", "type": "Bot"}}
}

// pathParams reads the values of a template's {params} from a path.
func pathParams(tmpl, path string) map[string]string {
	path = strings.TrimPrefix(path, "/api/v3")
	ts := strings.Split(strings.Trim(tmpl, "/"), "/")
	ps := strings.Split(strings.Trim(path, "/"), "/")
	out := map[string]string{}
	for i, t := range ts {
		if i >= len(ps) {
			break
		}
		if t == "{path}" {
			out["path"], _ = url.PathUnescape(strings.Join(ps[i:], "/"))
			break
		}
		if strings.HasPrefix(t, "{") {
			out[strings.Trim(t, "{}")], _ = url.PathUnescape(ps[i])
		}
	}
	return out
}
