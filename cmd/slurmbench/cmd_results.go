package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// TODO(owner of cmd_results.go): replace this placeholder.
func resultsCommand() *cli.Command {
	return &cli.Command{Name: "results", Hidden: true, Action: func(*cli.Context) error { return errors.New("results: not implemented yet") }}
}
