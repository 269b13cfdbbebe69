package slurm

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
)

// newTransport is the HTTP transport for cfg: no proxy unless
// cfg.UseEnvProxy, and cfg.CAFile's certificates trusted next to the
// system's.
func newTransport(cfg Config) (*http.Transport, error) {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	if cfg.UseEnvProxy {
		t.Proxy = http.ProxyFromEnvironment
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("slurmrestd CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("slurmrestd CA file %s: no PEM certificate in it", cfg.CAFile)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return t, nil
}

// RedirectError is a redirect the client refused: to another host or port,
// or from https to http. Following it would hand the token (and a job
// description carrying the job's environment) to whoever answers there.
type RedirectError struct {
	From, To string // scheme://host/path, without query
}

func (e *RedirectError) Error() string {
	return fmt.Sprintf("refusing slurmrestd's redirect from %s to %s: the token and request body are only sent to the slurmrestd URL configured (set slurm.rest_url to where slurmrestd really is)", e.From, e.To)
}

// maxRedirects bounds redirects within the slurmrestd host.
const maxRedirects = 5

// checkRedirect allows a redirect only to the same scheme, host and port as
// the first request (a path moved behind a reverse proxy).
func checkRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
		return &RedirectError{From: shortURL(via[len(via)-1].URL), To: shortURL(req.URL)}
	}
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	return nil
}

// shortURL drops the query and any user info: neither belongs in a message.
func shortURL(u *url.URL) string {
	v := *u
	v.User, v.RawQuery, v.Fragment = nil, "", ""
	return v.String()
}
