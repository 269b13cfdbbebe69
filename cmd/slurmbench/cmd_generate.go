package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/internal/cliargs"
	"github.com/slurmbench/slurmbench/internal/exitcode"
	"github.com/slurmbench/slurmbench/launcher/login/generate"
)

func generateCommand() *cli.Command {
	return &cli.Command{
		Name:      "generate",
		Usage:     "write the bound recipe of every srt-slurm point of master-config keys, and manifest.json",
		UsageText: "slurmbench generate --master M --key GLOB [--key GLOB…] --out DIR [--runners FILE] [--inferencex-root DIR]",
		Description: `InferenceX's infx generate: each point's recipe fragment composed with its
lane's shared block (and the telemetry block on power rows), its variant
selected, the point bound and its '@dram'/'@fabric' values resolved for the one
cluster its runner label schedules on, written as <key>-<hash>.yaml, plus
manifest.json mapping each file to its matrix point and cluster. DIR must be
empty or absent. Launch-time edits (job name, health floor, --set) are not
applied.`,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "master", Required: true, Usage: "InferenceX master config (configs/nvidia-master.yaml)"},
			&cli.StringSliceFlag{Name: "key", Required: true, Usage: "config keys (shell patterns allowed; repeatable)"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "output directory (empty or absent)"},
			&cli.StringFlag{Name: "runners", Usage: "InferenceX's runners.yaml (default: beside --master)"},
			&cli.StringFlag{Name: "inferencex-root", Usage: "InferenceX's inferencex-e2e/ (default: the directory above --master's configs/)"},
			jsonFlag(),
		},
		OnUsageError: cliargs.UsageError,
		Action: func(c *cli.Context) error {
			_, err := generate.RunFiles(c.Context, generate.FileOptions{Master: c.String("master"), Runners: c.String("runners"),
				Root: c.String("inferencex-root"), Out: c.String("out"), Keys: c.StringSlice("key"), Stdout: c.App.Writer, JSON: c.Bool("json")})
			return exitcode.With(exitcode.Config, err)
		},
	}
}
