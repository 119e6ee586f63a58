// Package testenv holds what the tests of several packages share: a Redis
// database of their own, httptest fakes of GitHub and of the sandbox API,
// and the check of every GitHub call against the OpenAPI description
// extracted from @octokit/openapi (see testdata/regenerate.sh).
package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Operation describes one GitHub REST API operation from the OpenAPI subset
// in testdata/openapi/github-subset.json.
type Operation struct {
	// Method is the upper-case HTTP method, e.g. "GET".
	Method string `json:"method"`
	// Path is the OpenAPI path template, e.g.
	// "/repos/{owner}/{repo}/issues/{issue_number}/comments".
	Path string `json:"path"`
	// OperationID is GitHub's operationId, e.g. "issues/create-comment".
	OperationID string `json:"operation_id"`
	// RequiredBody lists the top-level JSON body fields that every request
	// must contain. It is empty when the operation takes no body or has no
	// required fields.
	RequiredBody []string `json:"required_body"`
	// BodyProperties lists every top-level JSON body field the operation
	// accepts. It is empty when the operation takes no JSON body.
	BodyProperties []string `json:"body_properties"`
}

// String returns "METHOD /path (operation-id)", for use in messages.
func (op *Operation) String() string {
	if op == nil {
		return "<nil operation>"
	}
	return fmt.Sprintf("%s %s (%s)", op.Method, op.Path, op.OperationID)
}

// LoadOpenAPISubset reads an OpenAPI subset file as written by
// testdata/extract.mjs and returns its operations in file order.
func LoadOpenAPISubset(path string) ([]Operation, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load OpenAPI subset: %w", err)
	}
	var file struct {
		Source     string      `json:"source"`
		Operations []Operation `json:"operations"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("load OpenAPI subset %s: %w", path, err)
	}
	if len(file.Operations) == 0 {
		return nil, fmt.Errorf("load OpenAPI subset %s: no operations", path)
	}
	for i := range file.Operations {
		op := &file.Operations[i]
		if op.Method == "" || !strings.HasPrefix(op.Path, "/") {
			return nil, fmt.Errorf("load OpenAPI subset %s: operation %d has invalid method %q or path %q", path, i, op.Method, op.Path)
		}
		op.Method = strings.ToUpper(op.Method)
	}
	return file.Operations, nil
}

// greedyParam is the one path parameter allowed to span several segments,
// as in GET /repos/{owner}/{repo}/contents/{path}.
const greedyParam = "{path}"

// MatchOperation finds the operation in ops whose method equals method
// (case-insensitively) and whose path template matches the concrete urlPath,
// such as "/repos/hexpm/hexpm/issues/12/comments".
//
// A leading "/api/v3" (GitHub Enterprise Server prefix) and any query string
// are removed from urlPath first. Literal template segments must match
// exactly; each {param} matches exactly one non-empty segment, except
// {path}, which matches one or more non-empty segments. When several
// templates match, the one with the most literal segments wins (ties go to
// the template whose first differing segment is literal, then to the earlier
// entry in ops). The returned pointer refers into ops.
func MatchOperation(ops []Operation, method, urlPath string) (*Operation, bool) {
	urlPath, _, _ = strings.Cut(urlPath, "?")
	if rest, ok := strings.CutPrefix(urlPath, "/api/v3"); ok && (rest == "" || rest[0] == '/') {
		urlPath = rest
	}
	if !strings.HasPrefix(urlPath, "/") {
		return nil, false
	}
	segs := strings.Split(urlPath[1:], "/")

	var best *Operation
	var bestTmpl []string
	for i := range ops {
		op := &ops[i]
		if !strings.EqualFold(op.Method, method) {
			continue
		}
		tmpl := strings.Split(strings.TrimPrefix(op.Path, "/"), "/")
		if !matchSegments(tmpl, segs) {
			continue
		}
		if best == nil || moreSpecific(tmpl, bestTmpl) {
			best, bestTmpl = op, tmpl
		}
	}
	return best, best != nil
}

func isParam(seg string) bool {
	return len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}'
}

// matchSegments reports whether the template segments match the concrete
// path segments.
func matchSegments(tmpl, segs []string) bool {
	for i, t := range tmpl {
		if t == greedyParam {
			// Try the longest span first; the rest of the template must
			// still match what is left.
			for n := len(segs) - i; n >= 1; n-- {
				if slices.Contains(segs[i:i+n], "") {
					continue
				}
				if matchSegments(tmpl[i+1:], segs[i+n:]) {
					return true
				}
			}
			return false
		}
		if i >= len(segs) {
			return false
		}
		if isParam(t) {
			if segs[i] == "" {
				return false
			}
		} else if t != segs[i] {
			return false
		}
	}
	return len(tmpl) == len(segs)
}

// moreSpecific reports whether template a should be preferred over b.
func moreSpecific(a, b []string) bool {
	la, lb := literalCount(a), literalCount(b)
	if la != lb {
		return la > lb
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		pa, pb := isParam(a[i]), isParam(b[i])
		if pa != pb {
			return !pa
		}
	}
	return false
}

func literalCount(tmpl []string) int {
	n := 0
	for _, s := range tmpl {
		if !isParam(s) {
			n++
		}
	}
	return n
}

// CheckBody validates a request body against op's body field lists.
//
// When op has RequiredBody or BodyProperties, body must be a JSON object;
// it must contain every RequiredBody key, and (when BodyProperties is
// non-empty) every key it contains must be listed in BodyProperties.
// When op has neither, any empty body or valid JSON body is accepted.
// Errors name the operation and list all offending fields.
func CheckBody(op *Operation, body []byte) error {
	if op == nil {
		return fmt.Errorf("check body: nil operation")
	}
	trimmed := bytes.TrimSpace(body)
	hasSchema := len(op.RequiredBody) > 0 || len(op.BodyProperties) > 0
	if len(trimmed) == 0 || string(trimmed) == "null" { // go-github encodes a nil body as null
		if len(op.RequiredBody) > 0 {
			return fmt.Errorf("%s: empty request body; required field(s): %s", op, quoteList(op.RequiredBody))
		}
		return nil
	}
	if !json.Valid(trimmed) {
		return fmt.Errorf("%s: request body is not valid JSON", op)
	}
	if !hasSchema {
		return nil
	}
	var obj map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &obj) != nil {
		return fmt.Errorf("%s: request body must be a JSON object", op)
	}

	var missing []string
	for _, k := range op.RequiredBody {
		if _, ok := obj[k]; !ok {
			missing = append(missing, k)
		}
	}
	var unknown []string
	if len(op.BodyProperties) > 0 {
		for k := range obj {
			if !slices.Contains(op.BodyProperties, k) {
				unknown = append(unknown, k)
			}
		}
		slices.Sort(unknown)
	}

	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "missing required field(s) "+quoteList(missing))
	}
	if len(unknown) > 0 {
		problems = append(problems, fmt.Sprintf("unknown field(s) %s (allowed: %s)", quoteList(unknown), quoteList(op.BodyProperties)))
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: request body: %s", op, strings.Join(problems, "; "))
	}
	return nil
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}
