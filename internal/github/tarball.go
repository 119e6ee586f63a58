package github

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	gogithub "github.com/google/go-github/v66/github"
)

// Bounds on a repository's tarball as TestModules reads it: what is
// downloaded, and what is kept of it.
const (
	MaxTarball   = 256 << 20 // compressed bytes read
	MaxTestFiles = 5000
	MaxTestBytes = 64 << 20
)

// ErrTarballCut comes with the test modules read before a bound was
// passed: a caller says the scan is partial.
var ErrTarballCut = errors.New("the repository is larger than pitcrew reads: its tests were read in part")

func (g *restGitHub) TestModules(ctx context.Context, repo Repo, ref string) (map[string]string, error) {
	u, resp, err := g.c.Repositories.GetArchiveLink(ctx, repo.Owner, repo.Name, gogithub.Tarball, &gogithub.RepositoryContentGetOptions{Ref: ref}, 0)
	var answered *gogithub.ErrorResponse
	if err != nil && !errors.As(err, &answered) && resp != nil && resp.Response != nil {
		// An answer other than the redirect: say it as GitHub's (StatusOf).
		err = &gogithub.ErrorResponse{Response: resp.Response, Message: err.Error()}
	}
	if err != nil {
		return nil, fmt.Errorf("locating the tarball of %s at %s: %w", repo, ref, err)
	}
	body, err := g.fetch(ctx, u.String(), "the tarball of "+repo.String())
	if err != nil {
		return nil, err
	}
	defer body.Close()
	return ReadTestModules(io.LimitReader(body, MaxTarball))
}

// ReadTestModules reads the test modules (*_test.exs, outside deps/ and
// _build/) of a gzipped tarball as GitHub serves one: every path under a
// top folder named for the commit. Only regular files are kept, each of
// at most MaxFileAt bytes, MaxTestFiles and MaxTestBytes in all; past a
// bound it returns what it read with ErrTarballCut.
func ReadTestModules(r io.Reader) (map[string]string, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("reading the tarball: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string]string{}
	total := 0
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			// A download cut at MaxTarball ends here too.
			return files, ErrTarballCut
		}
		name := h.Name
		if i := strings.IndexByte(name, '/'); i >= 0 {
			name = name[i+1:] // the commit's folder
		}
		if h.Typeflag != tar.TypeReg || !strings.HasSuffix(name, "_test.exs") || !path.IsAbs("/"+name) || strings.Contains(name, "..") ||
			strings.HasPrefix(name, "deps/") || strings.HasPrefix(name, "_build/") || h.Size > MaxFileAt {
			continue
		}
		if len(files) >= MaxTestFiles || total+int(h.Size) > MaxTestBytes {
			return files, ErrTarballCut
		}
		b, err := io.ReadAll(io.LimitReader(tr, MaxFileAt+1))
		if err != nil {
			return files, ErrTarballCut
		}
		files[name] = string(b)
		total += len(b)
	}
}
