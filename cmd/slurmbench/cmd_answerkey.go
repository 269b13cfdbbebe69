package main

import (
	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/launcher/clients/gsm8k"
)

// mockAnswerKeyCommand writes a gsm8k answer key for the mock engine, so a
// demo or test eval scores a chosen accuracy exactly.
func mockAnswerKeyCommand() *cli.Command {
	return &cli.Command{
		Name:      "mock-answer-key",
		Usage:     "write a gsm8k answer key for mock-engine --answer-key (demo and tests)",
		UsageText: "slurmbench mock-answer-key [--gsm8k DIR] --accuracy 0.95 --out FILE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "gsm8k", Usage: "directory with the GSM8K test/train files (default: the copy built into slurmbench)"},
			&cli.Float64Flag{Name: "accuracy", Value: 0.95, Usage: "fraction of questions answered right"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "which questions are answered wrong"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "answer key file (JSONL)"},
		},
		Action: func(c *cli.Context) error {
			return gsm8k.AnswerKeyCommand(gsm8k.AnswerKeyOptions{Dir: c.String("gsm8k"), Accuracy: c.Float64("accuracy"), Seed: c.Int64("seed"),
				Out: c.String("out"), Log: c.App.ErrWriter})
		},
	}
}
