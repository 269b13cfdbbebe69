package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRedirectCarriesNoSecret: a slurmrestd (or a proxy before it) that
// answers the submit with a 307 to another host gets a refusal naming the
// redirect, exit 4, no job; the other host never sees the token or the job
// description (which carries HF_TOKEN), and no process's argv, output or
// file of the run holds either while it runs.
func TestRedirectCarriesNoSecret(t *testing.T) {
	// Not parallel: it samples every process on the machine for secrets,
	// so no other test may run beside it.
	c := setup(t)
	hfMarker := uniqueName("hf_marker_secret")

	var mu sync.Mutex
	var caught []string
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		caught = append(caught, r.Method+" "+r.URL.Path+" token="+r.Header.Get("X-SLURM-USER-TOKEN")+" body="+string(b))
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(catcher.Close)
	// Everything goes to the real slurmrestd except the submit, which is
	// redirected to the catcher.
	upstream := forwardProxy(t, c.Cluster.RestURL, nil, nil)
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/job/submit") {
			http.Redirect(w, r, catcher.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, upstream+r.URL.RequestURI(), r.Body)
		req.Header = r.Header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(redirector.Close)

	name := uniqueName("e2e-redirect")
	r := c.prepare(t, runOpts{name: name, restURL: redirector.URL, recipe: mockRecipe{Name: name}.String(),
		env: []string{"HF_TOKEN=" + hfMarker}})
	stopSampling := sampleProcs(c.Cluster.Token, hfMarker)
	r.start()
	code := r.wait(3 * time.Minute)
	sampled := stopSampling()
	if code != 11 {
		t.Errorf("exit %d, want 11 (slurmrestd erroring: a redirect is refused)\n%s", code, r.output())
	}
	if !strings.Contains(r.stderr.String()+r.stdout.String(), "refusing slurmrestd's redirect from "+redirector.URL) {
		t.Errorf("the error does not name the redirect:\n%s", r.output())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(caught) != 0 {
		t.Errorf("the other host got %d requests: %q", len(caught), caught)
	}
	for _, l := range sampled.leaks {
		t.Errorf("secret in a process's argv: %s", l)
	}
	if jobs := r.jobs(); len(jobs) != 0 {
		t.Errorf("jobs were made: %+v", jobs)
	}
	secrets := []*regexp.Regexp{regexp.MustCompile(regexp.QuoteMeta(hfMarker)), jwtPattern}
	check := func(where string, data []byte) {
		for _, re := range secrets {
			if re.Match(data) {
				t.Errorf("a secret (%s) found in %s", re, where)
			}
		}
	}
	check("run's stdout", []byte(r.stdout.String()))
	check("run's stderr", []byte(r.stderr.String()))
	if dir := r.runDir(); dir != "" {
		scanTree(t, dir, check)
	}
}
