package slurm

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/slurmbench/slurmbench/slurm/wire"
)

// Controller is one slurmctld as ping reports it.
type Controller struct {
	Hostname string        `json:"hostname"`
	Pinged   string        `json:"pinged"` // "UP" or "DOWN"
	Mode     string        `json:"mode,omitempty"`
	Latency  time.Duration `json:"latency"`
}

// PingResult is the answer to Ping.
type PingResult struct {
	Server      ServerInfo   `json:"server"`
	Controllers []Controller `json:"controllers"`
}

type wirePing struct {
	Pings []struct {
		Hostname string     `json:"hostname"`
		Pinged   string     `json:"pinged"`
		Mode     string     `json:"mode"`
		Latency  wire.NoVal `json:"latency"` // microseconds
	} `json:"pings"`
}

func (w wirePing) controllers() []Controller {
	out := make([]Controller, 0, len(w.Pings))
	for _, p := range w.Pings {
		out = append(out, Controller{Hostname: p.Hostname, Pinged: p.Pinged, Mode: p.Mode, Latency: time.Duration(p.Latency.Value(0)) * time.Microsecond})
	}
	return out
}

func anyUp(cs []Controller) bool {
	for _, c := range cs {
		if strings.EqualFold(c.Pinged, "UP") {
			return true
		}
	}
	return false
}

// Ping asks slurmrestd to ping slurmctld. slurmrestd answers 200 even when
// its token is bad, reporting the controller DOWN; so no controller UP is
// an error (ErrControllerDown), retried once with a fresh token when one
// can be had.
func (c *Client) Ping(ctx context.Context) (PingResult, error) {
	for attempt := 0; ; attempt++ {
		var w wirePing
		if err := c.do(ctx, request{method: http.MethodGet, root: "slurm", path: "ping/"}, &w); err != nil {
			return PingResult{}, fmt.Errorf("pinging slurmctld: %w", err)
		}
		res := PingResult{Server: c.Server(), Controllers: w.controllers()}
		if anyUp(res.Controllers) {
			return res, nil
		}
		token, _ := c.auth.Current(ctx)
		if attempt == 0 && c.auth.CanRefresh() {
			if err := c.auth.Refresh(ctx, token); err == nil {
				continue
			}
		}
		hint := "slurmrestd also reports DOWN when its token is bad or expired"
		if c.auth.Expired(token) {
			hint = "the token has expired"
		}
		var states []string
		for _, ctl := range res.Controllers {
			states = append(states, ctl.Hostname+" "+ctl.Pinged)
		}
		return res, fmt.Errorf("pinging slurmctld: %w (%s; %s)", ErrControllerDown, strings.Join(states, ", "), hint)
	}
}
