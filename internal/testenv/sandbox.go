package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/pitcrew/pitcrew/sandbox"
)

// Sandbox is an httptest fake of the sandbox sessions API as its contract
// describes it: bearer auth, Idempotency-Key honoured on start, sessions
// read back by id.
type Sandbox struct {
	*httptest.Server
	Org, APIKey string

	mu          sync.Mutex
	sessions    map[string]*sandbox.Session
	starts      []sandbox.StartRequest // every start request received, retries included
	startKeys   []string
	byKey       map[string]string
	failStarts  int
	limited     int                 // next start requests answered 429 with Retry-After: 1
	artifacts   map[string]string   // URL path → content
	messages    map[string][]string // session id → the follow-up messages it got, once per idempotency key
	messageKeys map[string]bool
	AfterCreate func() // called after a session is created, before the answer
}

// NewSandbox starts the fake; it stops with the test.
func NewSandbox(t T) *Sandbox {
	s := &Sandbox{Org: "acme", APIKey: "rush-test-key", sessions: map[string]*sandbox.Session{}, byKey: map[string]string{}, artifacts: map[string]string{}, messages: map[string][]string{}, messageKeys: map[string]bool{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// FailNextStarts makes the next n start requests answer 500.
func (s *Sandbox) FailNextStarts(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failStarts = n
}

// Slow429 makes the next n start requests answer 429 with Retry-After: 1.
func (s *Sandbox) Slow429(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited = n
}

// StartRequests returns the start requests received, retries included.
func (s *Sandbox) StartRequests() ([]sandbox.StartRequest, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sandbox.StartRequest(nil), s.starts...), append([]string(nil), s.startKeys...)
}

// SessionCount is how many distinct sessions were created.
func (s *Sandbox) SessionCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sessions)
}

// SessionIDs lists the sessions created, in no particular order.
func (s *Sandbox) SessionIDs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for id := range s.sessions {
		ids = append(ids, id)
	}
	return ids
}

// Finish sets a session's final status and result, as the agent would.
func (s *Sandbox) Finish(id, status, result string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ses := s.sessions[id]; ses != nil {
		ses.Status, ses.Result = status, result
	}
}

// AddArtifact attaches a file to a session, downloadable with the API key.
func (s *Sandbox) AddArtifact(id, name, content string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := "/o/" + s.Org + "/sessions/" + id + "/artifacts/" + name
	s.artifacts[path] = content
	if ses := s.sessions[id]; ses != nil {
		ses.Artifacts = append(ses.Artifacts, sandbox.Artifact{Name: name, URL: s.URL + path})
	}
}

// Callback posts a signed callback for a session to url, as the sandbox
// does when a session ends, and returns the answer's status code.
func (s *Sandbox) Callback(t T, url, secret, event, sessionID string) int {
	t.Helper()
	return s.CallbackAnswer(t, url, secret, event, sessionID).StatusCode
}

// CallbackAnswer is Callback with the whole answer (its headers: a
// Retry-After), its body read and closed.
func (s *Sandbox) CallbackAnswer(t T, url, secret, event, sessionID string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(sandbox.Callback{Event: event, SessionID: sessionID, SessionURL: s.URL + "/s/" + sessionID})
	v, err := sandbox.NewVerifier(secret)
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Unix()
	id := fmt.Sprintf("msg_%s_%d", sessionID, time.Now().UnixNano())
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", v.Sign(id, ts, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func (s *Sandbox) serve(w http.ResponseWriter, r *http.Request) {
	if auth := r.Header.Get("Authorization"); auth != "Bearer "+s.APIKey {
		// Like many APIs, echo what was sent: a client that puts the answer
		// in its errors would then leak its key.
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "unauthorized", "message": "invalid credentials: " + auth})
		return
	}
	prefix := "/o/" + s.Org + "/sessions"
	switch {
	case r.Method == http.MethodPost && r.URL.Path == prefix:
		s.start(w, r)
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, prefix+"/") && strings.HasSuffix(r.URL.Path, "/messages"):
		s.message(w, r, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, prefix+"/"), "/messages"))
	case r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/artifacts/"):
		s.mu.Lock()
		content, ok := s.artifacts[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/markdown")
		w.Write([]byte(content))
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, prefix+"/"):
		s.mu.Lock()
		ses, ok := s.sessions[strings.TrimPrefix(r.URL.Path, prefix+"/")]
		var copy sandbox.Session
		if ok {
			copy = *ses
			copy.Artifacts = append([]sandbox.Artifact(nil), ses.Artifacts...)
		}
		s.mu.Unlock()
		if !ok {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		writeJSON(w, http.StatusOK, copy)
	default:
		http.Error(w, `{"error":"no such route"}`, http.StatusNotFound)
	}
}

// message takes a follow-up for a session that ended: the session runs
// again. A key already seen answers as before without a second message.
func (s *Sandbox) message(w http.ResponseWriter, r *http.Request, id string) {
	var req sandbox.MessageRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Input == "" {
		http.Error(w, `{"error":"input is required"}`, http.StatusUnprocessableEntity)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	defer s.mu.Unlock()
	ses, ok := s.sessions[id]
	if !ok {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	if key == "" || !s.messageKeys[id+"\x00"+key] {
		if ses.Status == sandbox.StatusRunning {
			http.Error(w, `{"error":"the session is running"}`, http.StatusConflict)
			return
		}
		s.messageKeys[id+"\x00"+key] = true
		s.messages[id] = append(s.messages[id], req.Input)
		ses.Status, ses.Result = sandbox.StatusRunning, ""
	}
	writeJSON(w, http.StatusOK, *ses)
}

// Messages are the follow-up messages session id got.
func (s *Sandbox) Messages(id string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.messages[id]...)
}

func (s *Sandbox) start(w http.ResponseWriter, r *http.Request) {
	var req sandbox.StartRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Agent == "" || req.Input == "" || len(req.Resources) == 0 {
		http.Error(w, `{"error":"agent, input and resources are required"}`, http.StatusUnprocessableEntity)
		return
	}
	key := r.Header.Get("Idempotency-Key")
	s.mu.Lock()
	s.starts = append(s.starts, req)
	s.startKeys = append(s.startKeys, key)
	if s.limited > 0 {
		s.limited--
		s.mu.Unlock()
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return
	}
	if s.failStarts > 0 {
		s.failStarts--
		s.mu.Unlock()
		http.Error(w, `{"error":"temporarily unavailable"}`, http.StatusInternalServerError)
		return
	}
	id, seen := s.byKey[key]
	if !seen || key == "" {
		id = fmt.Sprintf("ses_%d", len(s.sessions)+1)
		s.sessions[id] = &sandbox.Session{ID: id, ExecutionID: "exe_" + id, Status: sandbox.StatusRunning, SessionURL: s.URL + "/s/" + id}
		if key != "" {
			s.byKey[key] = id
		}
	}
	ses := *s.sessions[id]
	after := s.AfterCreate
	s.mu.Unlock()
	if after != nil {
		after()
	}
	writeJSON(w, http.StatusCreated, ses)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
