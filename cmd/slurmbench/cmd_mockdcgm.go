package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/duration"
	"github.com/slurmbench/slurmbench/mockengine"
)

func mockDCGMCommand() *cli.Command {
	var o mockengine.DCGMCommandOptions
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
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:9400", Usage: "address to serve on", Destination: &o.Listen},
			&cli.StringFlag{Name: "gpus", Value: "0,1,2,3", Usage: "comma-separated GPU indices", Destination: &o.GPUList},
			&cli.Float64Flag{Name: "watts", Value: 300, Usage: "power each GPU reports", Destination: &o.Watts, EnvVars: []string{"SLURMBENCH_MOCK_DCGM_WATTS"}},
			&cli.StringFlag{Name: "hostname", Usage: "used in GPU UUIDs (default: this host's name)", Destination: &o.Hostname},
			&cli.GenericFlag{Name: "stall-after", Usage: "start stalling this long after start", EnvVars: []string{"SLURMBENCH_MOCK_DCGM_STALL_AFTER"}, Value: duration.Var(&o.StallAfter, 0, duration.Range{})},
			&cli.GenericFlag{Name: "stall-for", Usage: "hold requests this long", EnvVars: []string{"SLURMBENCH_MOCK_DCGM_STALL_FOR"}, Value: duration.Var(&o.StallFor, 0, duration.Range{})},
		},
		Action: func(c *cli.Context) error {
			o.Args, o.Stdout = c.Args().Slice(), c.App.Writer
			return mockengine.ServeDCGM(c.Context, o)
		},
	}
}
