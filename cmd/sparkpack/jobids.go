package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/sparkpack/sparkpack/api"
)

var jobIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// checkJobID says what a job id looks like and where to find one.
func checkJobID(id string) error {
	if !jobIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a job id: ids are UUIDs such as 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f; list them with sparkpack jobs", id)
	}
	return nil
}

// notFound turns a 404 for a job into a hint.
func notFound(err error, id string) error {
	var he *httpError
	if errors.As(err, &he) && he.Status == http.StatusNotFound && !he.foreign {
		return fmt.Errorf("no job %s on this server; list the jobs with sparkpack jobs (is --server the right sparkpack?)", id)
	}
	return err
}

// parseWithIDs parses flags given before or after job ids, and checks the
// ids (exactly n when n > 0, at least one otherwise).
func parseWithIDs(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	var ids []string
	rest := args
	for {
		if err := parseFlagsOnly(fs, rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case n > 0 && len(ids) != n:
		fmt.Fprintf(fs.Output(), "%s: give one job id (list them with sparkpack jobs); see %s --help\n", fs.Name(), fs.Name())
		return nil, errUsage
	case len(ids) == 0:
		fmt.Fprintf(fs.Output(), "%s: give at least one job id (list them with sparkpack jobs); see %s --help\n", fs.Name(), fs.Name())
		return nil, errUsage
	}
	for _, id := range ids {
		if strings.TrimSpace(id) == "" || strings.HasPrefix(id, "-") {
			return nil, fmt.Errorf("%q is not a job: give a job id, the start of one, or a job's name (list them with sparkpack jobs)", id)
		}
	}
	return ids, nil
}

// resolvePages bounds the pages (of resolvePageSize jobs) resolveIDs
// reads for one argument: a shorter argument that more jobs match is
// refused. Variables for the tests.
var resolvePages, resolvePageSize = 5, 1000

// resolveIDs turns what the user typed into job ids, as kubectl and nomad
// do: a whole id as it is; otherwise the one job whose id starts with it
// or whose name is it (a name or prefix that fits several jobs is an
// error listing them).
func resolveIDs(ctx context.Context, cl *apiClient, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if jobIDPattern.MatchString(a) {
			out = append(out, strings.ToLower(a))
			continue
		}
		// The search also keeps the jobs whose name merely contains a:
		// every page is read (up to resolvePages), or a job older than a
		// page of such jobs would go unseen and another one taken for
		// the only match.
		var byID, byName []api.JobView
		q := url.Values{"q": {a}, "limit": {strconv.Itoa(resolvePageSize)}}
		complete := false
		for range resolvePages {
			var page api.ListResponse
			if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, &page); err != nil {
				return nil, explain(err, "look up job "+a)
			}
			for _, j := range page.Jobs {
				switch {
				case strings.HasPrefix(j.ID, strings.ToLower(a)):
					byID = append(byID, j)
				case j.Name == a:
					byName = append(byName, j)
				}
			}
			if page.Next == "" {
				complete = true
				break
			}
			q.Set("cursor", page.Next)
		}
		matches := byID
		if len(matches) == 0 {
			matches = byName
		}
		switch {
		case len(matches) <= 1 && !complete:
			return nil, fmt.Errorf("more than %d jobs match %q (by name, id or label): give more of the id, or the whole id", resolvePages*resolvePageSize, a)
		case len(matches) == 1:
			out = append(out, matches[0].ID)
		case len(matches) == 0:
			return nil, fmt.Errorf("no job has an id starting with %q or the name %q; list them with sparkpack jobs", a, a)
		default:
			var list []string
			for i, j := range matches {
				if i == 5 {
					list = append(list, fmt.Sprintf("and %d more", len(matches)-5))
					break
				}
				if j.Name == "" {
					list = append(list, fmt.Sprintf("%s (%s)", j.ID, j.State))
					continue
				}
				list = append(list, fmt.Sprintf("%s (%s, %s)", j.ID, j.Name, j.State))
			}
			return nil, fmt.Errorf("%q fits %d jobs: %s; give more of the id", a, len(matches), strings.Join(list, "; "))
		}
	}
	return out, nil
}
