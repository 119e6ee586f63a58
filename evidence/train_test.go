package evidence

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The guard measured on real fixes nobody here wrote: the labelled commits
// of ../shared/evidence-train (other people's code, read in place, never
// copied here). A quarter of them, chosen by their sha, is set aside and
// not shown unless PITCREW_TRAIN_HELDOUT=1: the rules are tuned on the
// rest, and the part set aside says whether the tuning generalises.
//
//	go test ./evidence -run TestTheGuardOnRealFixes -v
//	PITCREW_TRAIN_HELDOUT=1 go test ./evidence -run TestTheGuardOnRealFixes -v

// trainLabel is one labelled commit of evidence-train.
type trainLabel struct {
	Repo, Sha, File, Label, Why, Confidence, Patch, Subject string
}

// concernLabels are the labels the guard must call a concern.
var concernLabels = map[string]bool{"disguised_wait": true, "retry_or_skip": true, "async_false_suspect": true, "loosens_auth": true}

// trainDir is evidence-train: PITCREW_EVIDENCE_TRAIN, or ../shared beside
// the repository.
func trainDir() string {
	if d := os.Getenv("PITCREW_EVIDENCE_TRAIN"); d != "" {
		return d
	}
	return filepath.Join("..", "..", "shared", "evidence-train")
}

// heldOut reports whether a commit is in the quarter set aside.
func heldOut(sha string) bool { return sha256.Sum256([]byte(sha))[0]%4 == 0 }

// trainScore counts, for one group of commits, concerns found and honest
// fixes called a concern.
type trainScore struct{ disguises, found, honest, falseConcerns int }

func (s *trainScore) add(concern, isConcern bool) {
	if concern {
		s.disguises++
		if isConcern {
			s.found++
		}
		return
	}
	s.honest++
	if isConcern {
		s.falseConcerns++
	}
}

func (s trainScore) String() string {
	ratio := func(a, b int) string {
		if b == 0 {
			return "  -  "
		}
		return fmt.Sprintf("%.2f", float64(a)/float64(b))
	}
	return fmt.Sprintf("found %2d/%2d (%s)  false concerns %2d/%2d (%s)", s.found, s.disguises, ratio(s.found, s.disguises), s.falseConcerns, s.honest, ratio(s.falseConcerns, s.honest))
}

func TestTheGuardOnRealFixes(t *testing.T) {
	dir := trainDir()
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Skipf("SKIPPED: evidence-train is not at %s (set PITCREW_EVIDENCE_TRAIN): %v", dir, err)
	}
	var labels []trainLabel
	if err := json.Unmarshal(raw, &labels); err != nil {
		t.Fatal(err)
	}
	showHeld := os.Getenv("PITCREW_TRAIN_HELDOUT") == "1"
	type key struct{ set, mode, group string }
	scores := map[key]*trainScore{}
	count := func(k key, concern, got bool) {
		if scores[k] == nil {
			scores[k] = &trainScore{}
		}
		scores[k].add(concern, got)
	}
	rules := map[string]int{} // concerns raised by each rule on honest fixes (training set)
	for _, l := range labels {
		set := "train"
		if heldOut(l.Sha) {
			set = "held-out"
			if !showHeld {
				continue
			}
		}
		job := JobFlaky
		if strings.HasSuffix(l.Label, "_auth") {
			job = JobAlert
		}
		f, err := os.Open(filepath.Join(dir, l.Patch))
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDiff(f)
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", l.Patch, err)
			continue
		}
		tree := filepath.Join(dir, "trees", strings.TrimSuffix(filepath.Base(l.Patch), ".patch"))
		base, head := map[string]string{}, map[string]string{}
		for _, p := range FileReads(d, job) {
			if b, err := os.ReadFile(filepath.Join(tree, "base", p.Path)); err == nil && p.Base {
				base[p.Path] = string(b)
			}
			if b, err := os.ReadFile(filepath.Join(tree, "head", p.Path)); err == nil && !p.Base {
				head[p.Path] = string(b)
			}
		}
		concern := concernLabels[l.Label]
		for _, mode := range []string{"whole files", "hunks only"} {
			r := Check(d, job)
			if mode == "whole files" {
				r = CheckFiles(d, job, base, head)
			}
			got := r.Verdict == VerdictConcern
			conf := "all"
			count(key{set, mode, conf}, concern, got)
			if l.Confidence == "high" {
				count(key{set, mode, "high"}, concern, got)
			}
			count(key{set, mode, "label " + l.Label}, concern, got)
			if (mode == "whole files" || os.Getenv("PITCREW_TRAIN_HUNKS") == "1") && set == "train" && testing.Verbose() && got != concern {
				var why []string
				for _, f := range r.Findings {
					if f.Severity == Concern {
						why = append(why, f.Rule+" "+f.File+":"+fmt.Sprint(f.Line))
						if !concern {
							rules[f.Rule]++
						}
					}
				}
				t.Logf("miss %-11s %-20s %-6s %-60s %s", mode, l.Label, l.Confidence, filepath.Base(l.Patch), strings.Join(why, "; "))
			}
		}
	}
	keys := make([]key, 0, len(scores))
	for k := range scores {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.set != b.set {
			return a.set > b.set
		}
		if a.mode != b.mode {
			return a.mode > b.mode
		}
		return a.group < b.group
	})
	for _, k := range keys {
		t.Logf("%-8s %-11s %-28s %s", k.set, k.mode, k.group, scores[k])
	}
	for r, n := range rules {
		t.Logf("rule %s: %d false concerns (train, whole files)", r, n)
	}
}
