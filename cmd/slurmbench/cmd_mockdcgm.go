package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/mockengine"
)

func mockDCGMCommand() *cli.Command {
	var (
		listen, gpus, hostname string
		opt                    mockengine.DCGMOptions
	)
	return &cli.Command{
		Name:      "mock-dcgm-exporter",
		Usage:     "serve DCGM exporter-style power metrics (for telemetry tests without GPUs)",
		UsageText: "slurmbench mock-dcgm-exporter --listen HOST:PORT --gpus 0,1,2,3 --watts W [--stall-after D --stall-for D]",
		Description: `Answers GET /metrics with DCGM_FI_DEV_POWER_USAGE for each GPU of --gpus at a
constant --watts, labelled gpu="<index>" and UUID="GPU-<hostname>-<index>" as
NVIDIA's dcgm-exporter labels them. --stall-after/--stall-for hold every
request in that period (a wedged exporter), which exercises the power
package's 3 s sample-gap rule. --watts, --stall-after and --stall-for can
also come from SLURMBENCH_MOCK_DCGM_WATTS, _STALL_AFTER and _STALL_FOR (a
profile's [env] set reaches the exporter step, so a test can stall it).

Examples:
   slurmbench mock-dcgm-exporter --listen 127.0.0.1:9400 --gpus 0,1,2,3 --watts 350
   slurmbench mock-dcgm-exporter --listen :9400 --gpus 0,1 --watts 200 --stall-after 10s --stall-for 5s`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:9400", Usage: "address to serve on", Destination: &listen},
			&cli.StringFlag{Name: "gpus", Value: "0,1,2,3", Usage: "comma-separated GPU indices", Destination: &gpus},
			&cli.Float64Flag{Name: "watts", Value: 300, Usage: "power each GPU reports", Destination: &opt.Watts, EnvVars: []string{"SLURMBENCH_MOCK_DCGM_WATTS"}},
			&cli.StringFlag{Name: "hostname", Usage: "used in GPU UUIDs (default: this host's name)", Destination: &hostname},
			&cli.GenericFlag{Name: "stall-after", Usage: "start stalling this long after start", EnvVars: []string{"SLURMBENCH_MOCK_DCGM_STALL_AFTER"}, Value: duration.Var(&opt.StallAfter, 0, duration.Range{})},
			&cli.GenericFlag{Name: "stall-for", Usage: "hold requests this long", EnvVars: []string{"SLURMBENCH_MOCK_DCGM_STALL_FOR"}, Value: duration.Var(&opt.StallFor, 0, duration.Range{})},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return configErrorf("mock-dcgm-exporter takes no arguments, got %q", c.Args().Slice())
			}
			for _, f := range strings.Split(gpus, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil || n < 0 {
					return configErrorf("--gpus: %q is not a GPU index", f)
				}
				opt.GPUs = append(opt.GPUs, n)
			}
			if opt.Watts < 0 {
				return configErrorf("--watts must not be negative, got %v", opt.Watts)
			}
			opt.Hostname = hostname
			if opt.Hostname == "" {
				opt.Hostname, _ = os.Hostname()
			}
			ln, err := (&net.ListenConfig{}).Listen(c.Context, "tcp", listen)
			if err != nil {
				return fmt.Errorf("listening on %s: %w", listen, err)
			}
			srv := &http.Server{Handler: mockengine.NewDCGMExporter(opt), ReadHeaderTimeout: 10 * time.Second}
			go func() {
				<-c.Context.Done()
				_ = srv.Close()
			}()
			fmt.Fprintf(c.App.Writer, "mock-dcgm-exporter: %d GPUs at %.1f W on http://%s/metrics\n", len(opt.GPUs), opt.Watts, ln.Addr())
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				return fmt.Errorf("serving: %w", err)
			}
			return nil
		},
	}
}
