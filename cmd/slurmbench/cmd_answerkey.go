package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/slurmbench/slurmbench/clients/gsm8k"
	"github.com/slurmbench/slurmbench/internal/exitcode"
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
			test, _, err := gsm8k.LoadDir(c.String("gsm8k"))
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			key, err := gsm8k.MakeAnswerKey(test, c.Float64("accuracy"), c.Int64("seed"))
			if err != nil {
				return exitcode.With(exitcode.Config, err)
			}
			if err := gsm8k.WriteAnswerKey(c.String("out"), key); err != nil {
				return err
			}
			fmt.Fprintf(c.App.ErrWriter, "wrote %d answers to %s\n", len(key), c.String("out"))
			return nil
		},
	}
}
