package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// TODO(owner of cmd_mockengine.go): replace this placeholder.
func mockEngineCommand() *cli.Command {
	return &cli.Command{Name: "mockEngine", Hidden: true, Action: func(*cli.Context) error { return errors.New("mockEngine: not implemented yet") }}
}
