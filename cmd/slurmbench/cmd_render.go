package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// TODO(owner of cmd_render.go): replace this placeholder.
func renderCommand() *cli.Command {
	return &cli.Command{Name: "render", Hidden: true, Action: func(*cli.Context) error { return errors.New("render: not implemented yet") }}
}
