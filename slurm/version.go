package slurm

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// SupportedVersions are the API versions probed, newest first. Slurm 24.11
// serves v0.0.40..v0.0.42, 25.05 adds v0.0.43, 25.11 adds v0.0.44.
var SupportedVersions = []string{"v0.0.44", "v0.0.43", "v0.0.42", "v0.0.41", "v0.0.40"}

var versionPattern = regexp.MustCompile(`^v0\.0\.[0-9]+$`)

// normalizeVersion accepts "v0.0.41" and "0.0.41".
func normalizeVersion(v string) (string, error) {
	v = strings.TrimSpace(v)
	if !strings.HasPrefix(v, "v") {
		v = "v" + v
	}
	if !versionPattern.MatchString(v) {
		return "", fmt.Errorf("API version %q is not of the form v0.0.NN (e.g. v0.0.41)", v)
	}
	return v, nil
}

// Negotiate chooses the API version now (it is otherwise chosen on first
// use) and returns what is known about the server.
func (c *Client) Negotiate(ctx context.Context) (ServerInfo, error) {
	if _, err := c.negotiate(ctx); err != nil {
		return ServerInfo{}, err
	}
	return c.Server(), nil
}

// negotiate returns the pinned or already chosen version, or probes
// GET /slurm/<v>/ping/ newest first: an unserved version answers a plain
// 404 at once, so this costs one short request per version skipped.
func (c *Client) negotiate(ctx context.Context) (string, error) {
	if v := c.APIVersion(); v != "" {
		return v, nil
	}
	c.negotiateMu.Lock()
	defer c.negotiateMu.Unlock()
	if v := c.APIVersion(); v != "" {
		return v, nil
	}
	for _, v := range SupportedVersions {
		err := c.doVersion(ctx, v, request{method: http.MethodGet, root: "slurm", path: "ping/"}, nil)
		if IsUnsupported(err) {
			continue
		}
		if err != nil && c.cfg.Commands != nil {
			return "", fmt.Errorf("reading Slurm's commands' data_parser version: %w", err)
		}
		if err != nil {
			return "", fmt.Errorf("choosing the slurmrestd API version at %s: %w", c.base, err)
		}
		c.mu.Lock()
		c.server.APIVersion = v
		c.mu.Unlock()
		c.log.Debug("chose slurmrestd API version", "version", v, "slurm", c.Server().SlurmRelease)
		return v, nil
	}
	return "", fmt.Errorf("slurmrestd at %s serves none of the API versions %s (each ping answered 404); pin one with api_version if it serves another",
		c.base, strings.Join(SupportedVersions, ", "))
}
