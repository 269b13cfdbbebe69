package mockengine

import (
	"fmt"
	"net/http"
	"strings"

	"time"
)

// DCGMOptions configure a mock DCGM exporter: the GPUs of one node, the
// board power each reports, and an optional stall to exercise the power
// contract's sample-gap rules.
type DCGMOptions struct {
	// Hostname makes GPU UUIDs unique across nodes (GPU-<host>-<index>).
	Hostname string
	// GPUs are the indices the node exposes.
	GPUs []int
	// Watts is each GPU's constant power draw.
	Watts float64
	// StallAfter and StallFor: from StallAfter after start, requests are held
	// for StallFor before being answered (a wedged exporter).
	StallAfter, StallFor time.Duration
}

// DCGMExporter serves DCGM exporter-style Prometheus metrics on /metrics.
type DCGMExporter struct {
	opt     DCGMOptions
	started time.Time
}

// NewDCGMExporter returns the handler; the stall clock starts now.
func NewDCGMExporter(opt DCGMOptions) *DCGMExporter {
	return &DCGMExporter{opt: opt, started: time.Now()}
}

// ServeHTTP answers /metrics (and / for convenience).
func (d *DCGMExporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" && r.URL.Path != "/" {
		http.NotFound(w, r)
		return
	}
	if d.opt.StallFor > 0 {
		since := time.Since(d.started)
		if since >= d.opt.StallAfter && since < d.opt.StallAfter+d.opt.StallFor {
			select {
			case <-time.After(d.opt.StallAfter + d.opt.StallFor - since):
			case <-r.Context().Done():
				return
			}
		}
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	fmt.Fprint(w, d.Body())
}

// Body is one scrape's exposition text.
func (d *DCGMExporter) Body() string {
	var b strings.Builder
	b.WriteString("# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n")
	for _, g := range d.opt.GPUs {
		fmt.Fprintf(&b, "DCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=\"GPU-%s-%d\",device=\"nvidia%d\",modelName=\"slurmbench mock\",Hostname=%q} %.6f\n",
			g, d.opt.Hostname, g, g, d.opt.Hostname, d.opt.Watts)
	}
	b.WriteString("# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).\n# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n")
	for _, g := range d.opt.GPUs {
		fmt.Fprintf(&b, "DCGM_FI_DEV_GPU_TEMP{gpu=\"%d\",UUID=\"GPU-%s-%d\"} 40\n", g, d.opt.Hostname, g)
	}
	return b.String()
}
